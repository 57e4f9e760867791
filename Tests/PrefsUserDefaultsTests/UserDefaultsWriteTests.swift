import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults

/// UserDefaults' setters: what they store, what they refuse without trapping, and what they announce.
@Suite("PrefsDefaults writes")
struct UserDefaultsWriteTests {
    @Test("set(_:forKey:) with Any maps every property-list type to its Prefs type", arguments: Backend.allCases)
    func anyMapping(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let values: [(String, Any, ValueType)] = [
            ("bool", true, .bool), ("int", 7, .int), ("int8", Int8(-8), .int), ("uint64", UInt64(64), .int),
            ("float", Float(1.5), .double), ("double", 2.0, .double), ("string", "s", .string),
            ("date", Date(), .date), ("data", Data([1]), .data), ("url", URL(fileURLWithPath: "/tmp"), .url),
            ("nsBool", NSNumber(value: false), .bool), ("nsInt", NSNumber(value: 1), .int), ("nsDouble", NSNumber(value: 1.0), .double),
            ("nsString", NSString(string: "n"), .string), ("nsArray", NSArray(array: ["a", "b"]), .array(.string)),
            ("strings", ["a"], .array(.string)), ("dates", ["d": Date()], .dictionary(.date)),
            ("nested", [[1, 2], [3]], .array(.array(.int))), ("mixed", [1, "a"] as [Any], .json), ("empty", [Int](), .json),
            ("optional", Int?.some(4) as Any, .int),
        ]
        for (key, value, _) in values { defaults.set(value, forKey: key) }
        for (key, _, type) in values {
            #expect(try fixture.stored(key)?.type == type, "\(key)")
        }
        #expect(fixture.diagnostics.isEmpty)
    }

    @Test("a value that is not a property-list type writes nothing: set reports it, setChecked throws", arguments: Backend.allCases)
    func unsupportedValue(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        defaults.set(1, forKey: "origin")
        let log = NotificationLog(defaults)

        defaults.set(Point(x: 1, y: 2), forKey: "origin")
        #expect(defaults.integer(forKey: "origin") == 1, "the earlier value is untouched")
        #expect(
            fixture.diagnostics.map(\.description) == [
                #"key "origin" in \#(fixture.prefs.storage): write failed: value for key "origin" could not be encoded: Point is not a property-list type (Bool, numbers, String, Date, Data, URL, and arrays and string-keyed dictionaries of them)"#
            ])

        #expect {
            try defaults.setChecked(["ok": 1, "bad": [1, Point(x: 0, y: 0)]] as [String: Any], forKey: "origin")
        } throws: { error in
            (error as? PrefsError)?.description
                == #"value for key "origin" could not be encoded: at $.bad[1]: Point is not a property-list type (Bool, numbers, String, Date, Data, URL, and arrays and string-keyed dictionaries of them)"#
        }
        #expect(throws: PrefsError.self) { try defaults.setChecked([1: "a"], forKey: "origin") }
        #expect(throws: PrefsError.self) { try defaults.setChecked(NSNull(), forKey: "origin") }
        #expect(throws: PrefsError.self) { try defaults.setChecked([Int?.none as Any], forKey: "origin") }
        #expect(throws: PrefsError.self) { try defaults.setChecked(UInt64.max, forKey: "origin") }
        #expect(defaults.integer(forKey: "origin") == 1)
        #expect(log.posted.isEmpty, "nothing changed, nothing is announced")
    }

    @Test("the error messages of unsupported values name the part and the reason")
    func unsupportedMessages() {
        func message(_ value: Any) -> String {
            do {
                _ = try PropertyListValue.encode(value)
                return "encoded"
            } catch {
                return error.description
            }
        }
        #expect(message([1: "a"]) == "a dictionary with Int keys is not a property-list type; keys must be strings")
        #expect(message(["a": 1, 2: "b"] as [AnyHashable: Any]) == "a dictionary with Int keys is not a property-list type; keys must be strings")
        #expect(
            message(["a": [NSNull()]])
                == "at $.a[0]: NSNull is not a property-list type (Bool, numbers, String, Date, Data, URL, and arrays and string-keyed dictionaries of them)")
        #expect(message([Int?.none as Any]) == "at $[0]: nil has no property-list form")
        #expect(message(UInt64.max) == "integer 18446744073709551615 is outside Int's range and no double holds it exactly")
        #expect(message(NSNumber(value: UInt64.max)) == "integer 18446744073709551615 is outside Int's range and no double holds it exactly")
        #expect(message(UInt64(1) << 63) == "encoded", "2^63 is exactly a double")
    }

    @Test("key names no store holds alike and oversized values are refused without trapping", arguments: Backend.allCases)
    func refusedWrites(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        defaults.set(true, forKey: "a\u{0}b")
        let reason = "a key name cannot contain the character U+0000"
        #expect(throws: PrefsError.invalidKeyName("a\u{0}b", reason: reason)) { try defaults.setChecked(true, forKey: "a\u{0}b") }
        #expect(defaults.bool(forKey: "a\u{0}b") == false)
        let huge = String(repeating: "x", count: Prefs.maximumValueBytes + 1)
        #expect(throws: PrefsError.valueTooLarge(key: "huge", bytes: Prefs.maximumValueBytes + 1, limit: Prefs.maximumValueBytes)) {
            try defaults.setChecked(huge, forKey: "huge")
        }
        #expect(try fixture.prefs.snapshot().isEmpty)
        #expect(
            fixture.diagnostics.map(\.description) == [
                #"key "a\u0000b" in \#(fixture.prefs.storage): write failed: invalid key name "a\u0000b": \#(reason)"#
            ])

        // Any other name UserDefaults accepts is a key here too, the empty string included.
        defaults.set(true, forKey: "")
        #expect(defaults.bool(forKey: ""))
    }

    @Test("nil, removeObject and setValue behave as in UserDefaults", arguments: Backend.allCases)
    func removalAndSetValue(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        defaults.setValue(3, forKey: "a")
        defaults.setValue("x", forKey: "b")
        defaults.set(URL(string: "https://example.com"), forKey: "c")
        #expect(defaults.integer(forKey: "a") == 3)
        defaults.set(nil, forKey: "a")
        defaults.setValue(nil, forKey: "b")
        defaults.set(nil as URL?, forKey: "c")
        defaults.removeObject(forKey: "never-set")
        #expect(try fixture.prefs.snapshot().isEmpty)
        #expect(fixture.diagnostics.isEmpty)
    }

    @Test("every write posts PrefsDefaultsDidChange with the instance and feeds changedKeys()", arguments: Backend.allCases)
    func changeNotifications(backend: Backend) async throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let log = NotificationLog(defaults)
        let other = PrefsDefaults(fixture.prefs)
        let otherLog = NotificationLog(other)
        let stream = defaults.changedKeys()

        defaults.set(true, forKey: "a")
        defaults.set(2, forKey: "b")
        defaults.removeObject(forKey: "a")
        defaults.set(Point(x: 0, y: 0), forKey: "c")  // refused: not announced
        defaults.set("z", forKey: "c")

        #expect(PrefsDefaults.didChangeNotification.rawValue == "PrefsDefaultsDidChange")
        #expect(log.posted == [["a"], ["b"], ["a"], ["c"]])
        #expect(otherLog.posted.isEmpty, "the notification's object is the instance that wrote")
        var received: [String] = []
        for await key in stream {
            received.append(key)
            if received.count == 4 { break }
        }
        #expect(received == ["a", "b", "a", "c"])
    }

    @Test("synchronize flushes a coalesced JSON store, reads others' writes and returns true; false on a closed store")
    func synchronize() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let defaults = try PrefsDefaults(.jsonFile(url, writeMode: .coalesced(.seconds(3600))))
        defaults.set(true, forKey: "flag")
        #expect(!FileManager.default.fileExists(atPath: url.path), "coalesced: nothing on disk yet")
        #expect(defaults.synchronize())
        let otherProcess = PrefsDefaults(try Prefs(.jsonFile(url)))
        #expect(otherProcess.bool(forKey: "flag"))
        otherProcess.set(7, forKey: "count")
        #expect(defaults.synchronize())
        #expect(defaults.integer(forKey: "count") == 7, "synchronize() also reads other processes' writes")

        try defaults.prefs.close()
        #expect(defaults.synchronize() == false)
        #expect(defaults.prefs.diagnostics.last?.description == #".jsonFile("\#(url.path)"): write failed: synchronize: .jsonFile("\#(url.path)") is closed"#)
    }
}
