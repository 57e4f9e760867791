import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults

/// UserDefaults' getters and their documented conversions, on every backend.
@Suite("PrefsDefaults getters")
struct UserDefaultsGetterTests {
    @Test("a key never written reads nil, 0 and false", arguments: Backend.allCases)
    func absent(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        #expect(defaults.object(forKey: "missing") == nil)
        #expect(defaults.string(forKey: "missing") == nil)
        #expect(defaults.array(forKey: "missing") == nil)
        #expect(defaults.dictionary(forKey: "missing") == nil)
        #expect(defaults.stringArray(forKey: "missing") == nil)
        #expect(defaults.data(forKey: "missing") == nil)
        #expect(defaults.url(forKey: "missing") == nil)
        #expect(defaults.integer(forKey: "missing") == 0)
        #expect(defaults.float(forKey: "missing") == 0)
        #expect(defaults.double(forKey: "missing") == 0)
        #expect(defaults.bool(forKey: "missing") == false)
        #expect(defaults.dictionaryRepresentation().isEmpty)
    }

    @Test("each typed setter stores its Prefs type, and a reopened store reads it back", arguments: Backend.allCases)
    func typedSetters(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let url = try #require(URL(string: "https://user@example.com:8443/a/b%20c?q=1&r=%C3%A9#frag"))
        let date = Date(timeIntervalSinceReferenceDate: 12345.678)
        defaults.set(true, forKey: "bool")
        defaults.set(42, forKey: "int")
        defaults.set(Float(0.1), forKey: "float")
        defaults.set(2.5, forKey: "double")
        defaults.set(url, forKey: "url")
        defaults.set("text", forKey: "string")
        defaults.set(date, forKey: "date")
        defaults.set(Data([0, 1, 255]), forKey: "data")

        #expect(try fixture.stored("bool") == StoredValue(type: .bool, json: .bool(true)))
        #expect(try fixture.stored("int") == StoredValue(type: .int, json: .int(42)))
        #expect(
            try fixture.stored("float") == StoredValue(type: .double, json: .double(Double(Float(0.1)))), "a Float as the double it converts to, as Apple's")
        #expect(try fixture.stored("double") == StoredValue(type: .double, json: .double(2.5)))
        #expect(try fixture.stored("url") == StoredValue(type: .url, json: .string(url.absoluteString)))
        #expect(try fixture.stored("string") == StoredValue(type: .string, json: .string("text")))
        #expect(try fixture.stored("date")?.type == .date)
        #expect(try fixture.stored("data") == StoredValue(type: .data, json: .string("AAH/")))

        for reader in [defaults, PrefsDefaults(try fixture.store.reopen())] {
            #expect(reader.bool(forKey: "bool"))
            #expect(reader.integer(forKey: "int") == 42)
            #expect(reader.float(forKey: "float") == 0.1)
            #expect(reader.double(forKey: "float") == Double(Float(0.1)), "as Apple's UserDefaults: 0.10000000149011612")
            #expect(reader.double(forKey: "double") == 2.5)
            #expect(reader.url(forKey: "url") == url)
            #expect(reader.url(forKey: "url")?.absoluteString == url.absoluteString, "the whole URL, not just its path")
            #expect(reader.string(forKey: "string") == "text")
            #expect(reader.object(forKey: "date") as? Date == date)
            #expect(reader.data(forKey: "data") == Data([0, 1, 255]))
        }
    }

    @Test("bool(forKey:) reads YES, true and non-zero numbers as true, like UserDefaults", arguments: Backend.allCases)
    func boolConversions(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        let cases: [(Any, Bool)] = [
            ("YES", true), ("yes", true), ("true", true), ("TRUE", true), ("1", true), (" 1 ", true), ("2", true),
            ("NO", false), ("false", false), ("0", false), ("0.0", false), ("maybe", false), ("", false),
            (0, false), (1, true), (-7, true), (0.0, false), (0.5, true), (true, true), (false, false),
            (Date(), false), (Data([1]), false), (["YES"], false),
        ]
        for (index, (value, expected)) in cases.enumerated() {
            defaults.set(value, forKey: "k\(index)")
            #expect(defaults.bool(forKey: "k\(index)") == expected, "\(value)")
        }
    }

    @Test("integer(forKey:) reads numeric strings, truncates doubles and reads Booleans as 1 or 0", arguments: Backend.allCases)
    func integerConversions(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        let cases: [(Any, Int)] = [
            ("1234", 1234), ("-12", -12), ("+5", 5), ("12.7", 12), (" -3px", -3), ("1e3", 1), ("abc", 0), ("", 0),
            ("99999999999999999999", Int.max), (3.9, 3), (-3.9, -3), (1e300, 0), (Double.nan, 0),
            (true, 1), (false, 0), (Int.min, Int.min), (Date(), 0), ([1], 0),
        ]
        for (index, (value, expected)) in cases.enumerated() {
            defaults.set(value, forKey: "k\(index)")
            #expect(defaults.integer(forKey: "k\(index)") == expected, "\(value)")
        }
    }

    @Test("double(forKey:) and float(forKey:) convert numbers, Booleans and numeric strings", arguments: Backend.allCases)
    func floatingConversions(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        let cases: [(Any, Double)] = [
            (7, 7), (2.5, 2.5), (true, 1), (false, 0), ("2.5", 2.5), ("1e3", 1000), (" -0.25kg", -0.25), ("x", 0),
            (Double.infinity, .infinity), (Data(), 0),
        ]
        for (index, (value, expected)) in cases.enumerated() {
            defaults.set(value, forKey: "k\(index)")
            #expect(defaults.double(forKey: "k\(index)") == expected, "\(value)")
            #expect(defaults.float(forKey: "k\(index)") == Float(expected), "\(value)")
        }
        defaults.set(Double.nan, forKey: "nan")
        #expect(defaults.double(forKey: "nan").isNaN)
    }

    @Test("string(forKey:) reads numbers and Booleans as NSNumber text, and nothing else", arguments: Backend.allCases)
    func stringConversions(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        let url = try #require(URL(string: "https://example.com"))
        let cases: [(Any, String?)] = [
            ("text", "text"), (1, "1"), (-42, "-42"), (1.5, "1.5"), (2.0, "2"), (1e20, "1e+20"), (0.1, "0.1"),
            (true, "1"), (false, "0"), (Date(), nil), (Data([1]), nil), (url, nil), (["a"], nil), (["a": 1], nil),
        ]
        for (index, (value, expected)) in cases.enumerated() {
            defaults.set(value, forKey: "k\(index)")
            #expect(defaults.string(forKey: "k\(index)") == expected, "\(value)")
        }
    }

    @Test("url(forKey:) reads URLs whole, paths as file URLs with ~ expanded, and archived URL data", arguments: Backend.allCases)
    func urlConversions(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        let web = try #require(URL(string: "https://example.com/feed.json?v=2#top"))
        defaults.set(web, forKey: "web")
        defaults.set("~/Documents", forKey: "tilde")
        defaults.set("/tmp/a b", forKey: "absolute")
        defaults.set("https://example.com/x?y=1", forKey: "text")
        defaults.set(try NSKeyedArchiver.archivedData(withRootObject: web as NSURL, requiringSecureCoding: true), forKey: "archived")
        defaults.set(Data("not an archive".utf8), forKey: "data")
        defaults.set(3, forKey: "number")

        #expect(defaults.url(forKey: "web") == web)
        #expect(defaults.url(forKey: "tilde") == URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Documents"))
        #expect(defaults.url(forKey: "absolute")?.path == "/tmp/a b")
        #expect(defaults.url(forKey: "absolute")?.isFileURL == true)
        #expect(defaults.url(forKey: "text")?.absoluteString == "https://example.com/x?y=1")
        #expect(defaults.url(forKey: "archived") == web, "Apple's UserDefaults stores URLs as NSKeyedArchiver data")
        #expect(defaults.url(forKey: "data") == nil)
        #expect(defaults.url(forKey: "number") == nil)
    }

    @Test("array, dictionary, stringArray and data read their kinds and nothing else", arguments: Backend.allCases)
    func collections(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        defaults.set(["a", "b"], forKey: "strings")
        defaults.set([1, "a"] as [Any], forKey: "mixed")
        defaults.set([1, 2, 3], forKey: "ints")
        defaults.set(["w": 1, "h": 2], forKey: "size")
        defaults.set("a", forKey: "string")

        #expect(defaults.stringArray(forKey: "strings") == ["a", "b"])
        #expect(defaults.array(forKey: "strings") as? [String] == ["a", "b"])
        #expect(defaults.stringArray(forKey: "mixed") == nil, "an element is not a string")
        #expect(defaults.array(forKey: "mixed")?.count == 2)
        #expect(defaults.array(forKey: "ints") as? [Int] == [1, 2, 3])
        #expect(defaults.stringArray(forKey: "ints") == nil)
        #expect(defaults.dictionary(forKey: "size") as? [String: Int] == ["w": 1, "h": 2])
        #expect(defaults.array(forKey: "size") == nil)
        #expect(defaults.dictionary(forKey: "strings") == nil)
        #expect(defaults.array(forKey: "string") == nil)
        #expect(defaults.data(forKey: "string") == nil, "a string is not read as data")
    }

    @Test("object(forKey:) returns numbers as NSNumber, so as? Int, Double and Bool work as on Apple platforms", arguments: Backend.allCases)
    func numbersAsNSNumber(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)  // keeps the temporary directory alive
        let defaults = fixture.defaults
        defaults.set(3, forKey: "int")
        defaults.set(true, forKey: "bool")
        defaults.set(1.5, forKey: "double")
        #expect(defaults.object(forKey: "int") as? Int == 3)
        #expect(defaults.object(forKey: "int") as? Double == 3)
        #expect(defaults.object(forKey: "bool") as? Bool == true)
        #expect(defaults.object(forKey: "double") as? Double == 1.5)
        #expect(defaults.object(forKey: "double") as? Int == nil)
    }

    @Test("values written by typed keys read through the getters, and the other way round", arguments: Backend.allCases)
    func typedKeyInterplay(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let prefs = fixture.prefs
        try prefs.set(["x", "y"], for: .tags)
        try prefs.set(["d": [Date(timeIntervalSinceReferenceDate: 0)]], for: .visits)
        #expect(defaults.stringArray(forKey: "tags") == ["x", "y"])
        #expect(defaults.dictionary(forKey: "visits")?["d"] as? [Date] == [Date(timeIntervalSinceReferenceDate: 0)])

        defaults.set(5, forKey: "launchCount")
        defaults.set(true, forKey: "flag")
        defaults.set(0.25, forKey: "ratio")
        defaults.set(["a": 1], forKey: "scores")
        #expect(prefs[.launchCount] == 5)
        #expect(prefs[.flag] == true)
        #expect(prefs[.ratio] == 0.25)
        #expect(prefs[.scores] == ["a": 1])
    }

    @Test("registered defaults belong to the instance: read while nothing is stored, never written", arguments: Backend.allCases)
    func registration(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        defaults.register(defaults: ["quality": 0.8, "showTips": true, "name": "anon", "bad": Point(x: 1, y: 2)])
        #expect(defaults.double(forKey: "quality") == 0.8)
        #expect(defaults.bool(forKey: "showTips"))
        #expect(defaults.string(forKey: "name") == "anon")
        #expect(try fixture.prefs.snapshot().isEmpty, "registration writes nothing")
        #expect(PrefsDefaults(fixture.prefs).object(forKey: "quality") == nil, "another instance does not see them")
        #expect(defaults.object(forKey: "bad") == nil)
        #expect(
            fixture.diagnostics.map(\.description) == [
                #"key "bad" in \#(fixture.prefs.storage): write failed: register(defaults:) skipped it: Point is not a property-list type (Bool, numbers, String, Date, Data, URL, and arrays and string-keyed dictionaries of them)"#
            ])

        defaults.set(0.5, forKey: "quality")
        #expect(defaults.double(forKey: "quality") == 0.5)
        defaults.removeObject(forKey: "quality")
        #expect(defaults.double(forKey: "quality") == 0.8, "the registered value shows through again")
        defaults.register(defaults: ["quality": 0.9])
        #expect(defaults.double(forKey: "quality") == 0.9, "a later registration replaces the earlier one")

        defaults.set("stored", forKey: "name")
        let all = defaults.dictionaryRepresentation()
        #expect(Set(all.keys) == ["quality", "showTips", "name"])
        #expect(all["name"] as? String == "stored")
        #expect(all["quality"] as? Double == 0.9)
    }

    @Test("a stored value whose JSON does not fit its type reads as absent, is reported once and kept", arguments: Backend.allCases)
    func unreadableValue(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let broken = StoredValue(type: .date, json: .string("yesterday"))
        try fixture.prefs.setStoredValue(broken, forKey: "when")
        #expect(fixture.defaults.object(forKey: "when") == nil)
        #expect(fixture.defaults.string(forKey: "when") == nil)
        #expect(fixture.defaults.dictionaryRepresentation().isEmpty)
        #expect(try fixture.stored("when") == broken)
        #expect(fixture.diagnostics.count == 1)
        #expect(fixture.diagnostics.first?.description.hasPrefix(#"key "when" in "#) == true)
    }
}

/// DialogGate reads a never-remind key that older code wrote with `StoredValue.isTruthy`, without linking
/// PrefsUserDefaults: it must answer as `PrefsDefaults.bool(forKey:)` does, for every stored form.
@Suite("One truthiness rule")
struct TruthinessTests {
    static let forms: [StoredValue] = [
        StoredValue(type: .bool, json: .bool(true)), StoredValue(type: .bool, json: .bool(false)),
        StoredValue(type: .int, json: .int(1)), StoredValue(type: .int, json: .int(0)), StoredValue(type: .int, json: .int(-3)),
        StoredValue(type: .uint, json: .int(7)), StoredValue(type: .uint, json: .int(0)),
        StoredValue(type: .double, json: .double(0.5)), StoredValue(type: .double, json: .double(0)),
        StoredValue(type: .double, json: .string("nan")),
        StoredValue(type: .string, json: .string("YES")), StoredValue(type: .string, json: .string(" true ")),
        StoredValue(type: .string, json: .string("NO")), StoredValue(type: .string, json: .string("1")),
        StoredValue(type: .string, json: .string("0")), StoredValue(type: .string, json: .string("2.5kg")),
        StoredValue(type: .string, json: .string("")), StoredValue(type: .string, json: .string("maybe")),
        StoredValue(type: .json, json: .bool(true)), StoredValue(type: .json, json: .int(0)),
        StoredValue(type: .json, json: .string("yes")),
        StoredValue(type: .data, json: .string("AQ==")), StoredValue(type: .array(.int), json: .array([.int(1)])),
    ]

    @Test("StoredValue.isTruthy reads each stored form as PrefsDefaults.bool(forKey:) does", arguments: forms)
    func sameAsPrefsDefaults(stored: StoredValue) throws {
        let prefs = try Prefs(.memory)
        try prefs.setStoredValue(stored, forKey: "legacy")
        #expect(stored.isTruthy == PrefsDefaults(prefs).bool(forKey: "legacy"), "\(stored)")
    }
}
