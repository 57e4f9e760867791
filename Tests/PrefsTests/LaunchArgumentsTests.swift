import Foundation
import Prefs
import PrefsJSON
import PrefsTesting
import PrefsUserDefaults
import TestFixtures
import Testing

/// How `-NAME VALUE` arguments are paired and read: swift-corelibs-foundation's `UserDefaults._parseArguments` rule,
/// and the OpenStep property-list text it reads a value that starts like one as.
@Suite("Launch arguments: pairing and property-list text")
struct LaunchArgumentParsingTests {
    static func string(_ text: String) -> StoredValue { StoredValue(type: .string, json: .string(text)) }

    @Test("-NAME VALUE pairs; -NAME before another -x or at the end is no pair; '-' alone names nothing")
    func pairing() {
        let domain = LaunchArguments.domain(["run", "-a", "1", "-b", "-c", "2", "-", "x", "--d", "3", "-a", "again", "-e"])
        #expect(domain == ["a": Self.string("again"), "c": Self.string("2"), "-d": Self.string("3")])
        #expect(LaunchArguments.domain(["-count", "-1"]).isEmpty, "a negative number is never a value, as in UserDefaults")
        #expect(LaunchArguments.domain(["-x"]).isEmpty)
        #expect(LaunchArguments.domain([]).isEmpty)
    }

    @Test("A value is trimmed as Foundation trims whitespace and newlines, its shortcut for visible ASCII ends included")
    func trimming() {
        for text in [
            "dark", " dark ", "\tx\n", "a b", "\u{A0}x\u{3000}", "x\u{2028}", "\u{85}", "!", "~ ", "é", "x\u{301}", "", " ", "\u{1F600}",
            "-1", "(a, b)", "\u{0}x\u{0}", "x\r\n",
        ] {
            #expect(LaunchArguments.value(text) == Self.string(text.trimmingCharacters(in: .whitespacesAndNewlines)) || "({<\"[".contains(text.first ?? " "))
        }
    }

    @Test("Numbers, YES and words stay strings, trimmed; a typed key reads them by its type")
    func scalarsAreStrings() {
        #expect(LaunchArguments.value("5") == Self.string("5"))
        #expect(LaunchArguments.value("YES") == Self.string("YES"))
        #expect(LaunchArguments.value("  hello world \n") == Self.string("hello world"))
        #expect(LaunchArguments.value("'single'") == Self.string("'single'"), "a quote UserDefaults does not treat as a property list")
    }

    @Test("Quoted strings with C escapes, \\U and octal")
    func quotedStrings() {
        #expect(LaunchArguments.value(#""hello world""#) == Self.string("hello world"))
        #expect(LaunchArguments.value(#""a\"b\\c\nd\te\U00e9\101""#) == Self.string("a\"b\\c\nd\te\u{E9}A"))
        #expect(LaunchArguments.value(#""""#) == Self.string(""))
    }

    @Test("(a, b) arrays: one element type is [T], mixed or empty is json; a trailing comma and comments are fine")
    func arrays() {
        #expect(LaunchArguments.value("(a, b)") == StoredValue(type: .array(.string), json: .array([.string("a"), .string("b")])))
        #expect(
            LaunchArguments.value("( 1, \"two words\", /* note */ 3, // end\n )")
                == StoredValue(type: .array(.string), json: .array([.string("1"), .string("two words"), .string("3")])))
        #expect(LaunchArguments.value("()") == StoredValue(type: .json, json: .array([])))
        #expect(LaunchArguments.value("(a, (b, c))") == StoredValue(type: .json, json: .array([.string("a"), .array([.string("b"), .string("c")])])))
        #expect(
            LaunchArguments.value("((a), (b, c))")
                == StoredValue(type: .array(.array(.string)), json: .array([.array([.string("a")]), .array([.string("b"), .string("c")])])))
    }

    @Test("{k = v;} dictionaries and <hex> data")
    func dictionariesAndData() {
        #expect(
            LaunchArguments.value("{ name = Ada; \"full name\" = \"Ada L\"; }")
                == StoredValue(type: .dictionary(.string), json: .object(["name": .string("Ada"), "full name": .string("Ada L")])))
        #expect(
            LaunchArguments.value("{a = (1, 2);}")
                == StoredValue(type: .dictionary(.array(.string)), json: .object(["a": .array([.string("1"), .string("2")])])))
        #expect(LaunchArguments.value("<0102 0aFF>") == StoredValue(type: .data, json: .string(Data([1, 2, 10, 255]).base64EncodedString())))
        #expect(LaunchArguments.value("(a, <01>)") == StoredValue(type: .json, json: .array([.string("a"), .object(["$data": .string("AQ==")])])))
    }

    @Test("Text that starts like a property list but is not one is the string, as UserDefaults keeps it")
    func notAPropertyList() {
        for text in ["(a, b", "{a = b}", "{oops}", "[1, 2]", "<01 2>", "(a) b", "\"open", "<plist><true/></plist>"] {
            #expect(LaunchArguments.value(text) == Self.string(text), "\(text)")
        }
        let deep = String(repeating: "(", count: 5_000) + String(repeating: ")", count: 5_000)
        #expect(LaunchArguments.value(deep) == Self.string(deep), "nesting past the depth limit is refused, never a crash")
    }

    @Test("Stored forms are those PropertyListValue gives the same property list (what PrefsDefaults reads back)")
    func sameFormAsPropertyListValue() throws {
        let cases: [(String, Any)] = [
            ("(a, b)", ["a", "b"]),
            ("(a, (b), <0102>)", ["a", ["b"], Data([1, 2])] as [Any]),
            ("{k = v; n = (1);}", ["k": "v", "n": ["1"]] as [String: Any]),
            ("{\"$data\" = x;}", ["$data": "x"]),
            ("((), {})", [[Any](), [String: Any]()] as [Any]),
        ]
        for (text, object) in cases {
            #expect(LaunchArguments.value(text) == (try PropertyListValue.encode(object)), "\(text)")
        }
    }
}

/// Typed keys and `PrefsDefaults` over a store given launch arguments (`launchArguments:`): the argument is read above
/// every other value, for this store's process only, and never written.
@Suite("Launch arguments: reads, writes, observers")
struct LaunchArgumentStoreTests {
    static let arguments = ["-launchCount", "5", "-name", "5", "-flag", "YES", "-nickname", "\"Ada L\""]

    func store(_ directory: TemporaryDirectory, arguments: [String] = Self.arguments, log: DiagnosticLog = DiagnosticLog()) throws -> Prefs {
        try Prefs(.sqlite(directory.file("prefs.sqlite")), pollInterval: .milliseconds(20), launchArguments: arguments) { log.append($0) }
    }

    @Test("Typed keys read the argument above the stored value; lookup says .argument; isStored says what the store holds")
    func typedReads() throws {
        let directory = try TemporaryDirectory()
        try Prefs(.sqlite(directory.file("prefs.sqlite")), launchArguments: []).set(2, for: .launchCount)
        let prefs = try store(directory)
        #expect(prefs[.launchCount] == 5)
        #expect(prefs[.launchCount] == 5, "the cached read too")
        #expect(prefs[.name] == "5", "a String key reads the text, not a number")
        #expect(prefs[.flag] == true)
        #expect(prefs[.nickname] == "Ada L")
        guard case .argument(5) = prefs.lookup(.launchCount) else { Issue.record("\(prefs.lookup(.launchCount))"); return }
        #expect(!prefs.lookup(.launchCount).isStored)
        #expect(prefs.isStored(.launchCount), "2 is stored beneath")
        #expect(!prefs.isStored(.flag))
        #expect(prefs[.ratio] == 0.5, "a key no argument names reads as usual")
        #expect(try prefs.snapshot() == ["launchCount": StoredValue(type: .int, json: .int(2))], "nothing read was written")
    }

    @Test("Each type reads its text: bool, int, double, date, data, url, collections, Codable, enums, optionals")
    func typesReadTheirText() throws {
        let arguments = [
            "-flag", "no", "-launchCount", " 42 ", "-ratio", "0.25", "-lastLaunch", "2026-05-01", "-blob", "<0102>",
            "-homepage", "https://example.org/a?b#c", "-tags", "(x, \"y z\")", "-scores", "{a = 1; b = 2;}",
            "-visits", #"{"d": ["2026-05-01T10:00:00Z"]}"#, "-theme", "dark", "-frame", #"{"width": 1, "height": 2, "title": "T"}"#,
        ]
        let prefs = try Prefs(.memory, launchArguments: arguments)
        #expect(prefs[.flag] == false)
        #expect(prefs[.launchCount] == 42)
        #expect(prefs[.ratio] == 0.25)
        #expect(prefs[.lastLaunch] == Date(timeIntervalSince1970: 1_777_593_600))
        #expect(prefs[.blob] == Data([1, 2]))
        #expect(prefs[.homepage] == URL(string: "https://example.org/a?b#c"))
        #expect(prefs[.tags] == ["x", "y z"])
        #expect(prefs[.scores] == ["a": 1, "b": 2])
        #expect(prefs[.visits] == ["d": [Date(timeIntervalSince1970: 1_777_629_600)]])
        #expect(prefs[.theme] == .dark)
        #expect(prefs[.frame] == WindowFrame(width: 1, height: 2, title: "T"))
        #expect(try Prefs(.memory, launchArguments: ["-tags", "[\"j\", \"k\"]"])[.tags] == ["j", "k"], "JSON text for a collection")
        #expect(try Prefs(.memory, launchArguments: ["-blob", "AQI="])[.blob] == Data([1, 2]), "base64 for data")
        #expect(try Prefs(.memory, launchArguments: ["-flag", "1"])[.flag] == true)
    }

    @Test("A value the key's type cannot read is ignored, with one diagnostic; the key reads as without it")
    func badValueIgnored() throws {
        let directory = try TemporaryDirectory()
        try Prefs(.sqlite(directory.file("prefs.sqlite")), launchArguments: []).set(2, for: .launchCount)
        let log = DiagnosticLog()
        let prefs = try store(directory, arguments: ["-launchCount", "five", "-flag", "maybe", "-theme", "purple", "-scores", "{a = x;}"], log: log)
        #expect(prefs[.launchCount] == 2, "the stored value")
        #expect(prefs[.launchCount] == 2)
        guard case .stored(2) = prefs.lookup(.launchCount) else { Issue.record("\(prefs.lookup(.launchCount))"); return }
        #expect(prefs[.flag] == false, "the initial value")
        #expect(prefs[.theme] == .light)
        #expect(prefs[.scores] == [:])
        let ignored = log.all.compactMap { diagnostic -> String? in
            guard case .argumentIgnored(let mismatch) = diagnostic.kind else { return nil }
            return "\(diagnostic.key ?? "") \(mismatch.stored.jsonText)"
        }
        #expect(ignored.sorted() == [#"flag "maybe""#, #"launchCount "five""#, #"scores {"a":"x"}"#, #"theme "purple""#], "once each")
        let message = log.all.first { $0.key == "launchCount" }?.description ?? ""
        #expect(message.contains(#"the launch argument -launchCount "five" cannot be read as int"#) && message.contains("ignored"), "\(message)")
    }

    @Test("A write is stored while the argument still reads; a reset too; another store sees the written value")
    func writesAreKept() throws {
        let directory = try TemporaryDirectory()
        let prefs = try store(directory)
        #expect(prefs[.launchCount] == 5)
        try prefs.set(9, for: .launchCount)
        #expect(prefs[.launchCount] == 5)
        #expect(try prefs.storedValue(forKey: "launchCount") == StoredValue(type: .int, json: .int(9)))
        #expect(
            try prefs.update(.launchCount) {
                $0 += 1; return $0
            } == 10, "a transaction reads and writes the store itself")
        #expect(prefs[.launchCount] == 5)
        let other = try Prefs(.sqlite(directory.file("prefs.sqlite")), launchArguments: [])
        #expect(other[.launchCount] == 10)
        try prefs.reset(.launchCount)
        #expect(prefs[.launchCount] == 5, "removed from the store: the argument still reads")
        guard case .argument = prefs.lookup(.launchCount) else { Issue.record("\(prefs.lookup(.launchCount))"); return }
        try prefs.resetAll()
        #expect(prefs[.launchCount] == 5)
        try other.refresh()
        #expect(other[.launchCount] == 0)
    }

    @Test("Another process's write seen on refresh does not hide the argument")
    func refreshKeepsArgument() throws {
        let directory = try TemporaryDirectory()
        let prefs = try store(directory)
        #expect(prefs[.launchCount] == 5)
        try Prefs(.sqlite(directory.file("prefs.sqlite")), launchArguments: []).set(8, for: .launchCount)
        try prefs.refresh()
        #expect(prefs[.launchCount] == 5)
        #expect(prefs.isStored(.launchCount))
    }

    @Test("Observers see the argument, and no change when the key is written")
    func observers() async throws {
        let directory = try TemporaryDirectory()
        let prefs = try store(directory)
        var values = prefs.values(for: .launchCount, .ratio).makeAsyncIterator()
        let first = await values.next()
        #expect(first?.0 == 5 && first?.1 == 0.5)
        try prefs.set(9, for: .launchCount)
        try prefs.set(0.75, for: .ratio)
        let second = await values.next()
        #expect(second?.0 == 5 && second?.1 == 0.75, "the write of launchCount yielded nothing: the argument still reads")
        let observed = prefs.observable(.launchCount)
        #expect(observed.value == 5)
    }

    @Test("launchArguments: [] reads none; a memory store reads none by default")
    func optOut() throws {
        let directory = try TemporaryDirectory()
        let ignoring = try store(directory, arguments: [])
        try ignoring.set(2, for: .launchCount)
        #expect(ignoring[.launchCount] == 2)
        #expect(ignoring.launchArgumentValues.isEmpty)
        #expect(try Prefs(.memory).launchArgumentValues.isEmpty, "whatever the test runner was given")
        #expect(try PrefsDefaults(.memory).volatileDomain(forName: PrefsDefaults.argumentDomain).isEmpty)
    }

    @Test("A closed store reads initial values, arguments included")
    func closedStore() throws {
        let directory = try TemporaryDirectory()
        let prefs = try store(directory)
        #expect(prefs[.launchCount] == 5)
        try prefs.close()
        #expect(prefs[.launchCount] == 0)
    }

    @Test("An enum key reads the argument, converted to the type it is read as")
    func enumKeys() throws {
        let prefs = try Prefs(.memory, launchArguments: ["-lastMessageId", "0", "-dialog_neverAgain", "YES"])
        try prefs.set(3, for: AppKey.lastMessageId)
        let id: Int = prefs[AppKey.lastMessageId]
        #expect(id == 0)
        let never: Bool = prefs[AppKey.dialogNoMore]
        #expect(never)
        guard case .argument(0) = prefs.lookup(AppKey.lastMessageId, as: Int.self) else {
            Issue.record("\(prefs.lookup(AppKey.lastMessageId, as: Int.self))")
            return
        }
        guard case .argument(0.0) = prefs.lookup(AppKey.lastMessageId, as: Double.self) else {
            Issue.record("\(prefs.lookup(AppKey.lastMessageId, as: Double.self))")
            return
        }
    }

    @Test("PrefsDefaults reads the argument domain as UserDefaults does: strings its getters convert")
    func defaults() throws {
        let defaults = try PrefsDefaults(.memory, launchArguments: ["-launchCount", "5", "-greeting", "hello", "-flag", "YES", "-list", "(a, b)"])
        defaults.set(2, forKey: "launchCount")
        #expect(defaults.integer(forKey: "launchCount") == 5)
        #expect(defaults.object(forKey: "launchCount") as? String == "5", "UserDefaults gives the string")
        #expect(defaults.string(forKey: "greeting") == "hello")
        #expect(defaults.bool(forKey: "flag"))
        #expect(defaults.stringArray(forKey: "list") == ["a", "b"])
        #expect(defaults.volatileDomainNames.contains(PrefsDefaults.argumentDomain))
        let domain = defaults.volatileDomain(forName: PrefsDefaults.argumentDomain)
        #expect(domain.keys.sorted() == ["flag", "greeting", "launchCount", "list"])
        #expect(defaults.dictionaryRepresentation()["launchCount"] as? String == "5")
        #expect(defaults.prefs[.launchCount] == 5, "the store's typed keys read the same domain")
        #expect(try defaults.prefs.snapshot().keys.sorted() == ["launchCount"], "only what was set is stored")
    }

    @Test("setVolatileDomain(_:forName: argumentDomain) replaces the domain for every reader of the store")
    func setArgumentDomain() async throws {
        let defaults = try PrefsDefaults(.memory, launchArguments: ["-launchCount", "5"])
        let prefs = defaults.prefs
        try prefs.set(2, for: .launchCount)
        var values = prefs.values(for: .launchCount).makeAsyncIterator()
        #expect(await values.next() == 5)
        defaults.setVolatileDomain(["launchCount": 7, "flag": true], forName: PrefsDefaults.argumentDomain)
        #expect(prefs[.launchCount] == 7)
        #expect(prefs[.flag])
        #expect(defaults.integer(forKey: "launchCount") == 7)
        #expect(await values.next() == 7, "observers see the new argument")
        defaults.removeVolatileDomain(forName: PrefsDefaults.argumentDomain)
        #expect(prefs[.launchCount] == 2)
        #expect(await values.next() == 2)
        #expect(defaults.volatileDomain(forName: PrefsDefaults.argumentDomain).isEmpty)
    }
}
