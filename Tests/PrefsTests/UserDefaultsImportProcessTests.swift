import Foundation
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// `PrefsDefaults.importValues(from:suiteName:replacingExisting:)` against swift-corelibs-foundation's own `UserDefaults`,
/// in a child process whose `XDG_CONFIG_HOME` is a temporary folder, so that `UserDefaults` writes nothing in the real
/// home (prefs-test-child's `import-defaults` mode sets the values through `UserDefaults.set`).
@Suite("Import from a running UserDefaults")
struct UserDefaultsImportProcessTests {
    /// A store holding "existing" = "from the store", and the folder both live in.
    func store() throws -> (TemporaryDirectory, URL) {
        let directory = try TemporaryDirectory()
        let url = directory.file("app.sqlite")
        try Prefs(.sqlite(url), launchArguments: []).set("from the store", for: Prefs.Key("existing", initial: ""))
        return (directory, url)
    }

    func run(_ url: URL, suite: String, _ mode: String, in directory: TemporaryDirectory) async throws -> String {
        let result = try await ChildProcess.run(
            "prefs-test-child", ["import-defaults", url.path, suite, mode, "-argued", "x"],
            environment: ["XDG_CONFIG_HOME": directory.file("config").path, "HOME": directory.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test("Every property-list type keeps its type; the store's values are kept; what cannot be held is listed")
    func typesKept() async throws {
        let (directory, url) = try store()
        let report = try await run(url, suite: "com.example.legacy", "keep", in: directory)
        #expect(report.hasPrefix(#"imported 10 values from UserDefaults domain "com.example.legacy""#), "\(report)")
        #expect(report.contains(#"kept 1 existing: "existing""#), "\(report)")
        #expect(report.contains(#""huge": value for key "huge" is"#), "\(report)")
        let prefs = try Prefs(.sqlite(url), launchArguments: [])
        let stored = try prefs.snapshot()
        #expect(stored.keys.sorted() == ["bool", "data", "date", "double", "existing", "int", "mixed", "nested", "size", "string", "strings"])
        #expect(stored["bool"] == StoredValue(type: .bool, json: .bool(true)))
        #expect(stored["int"] == StoredValue(type: .int, json: .int(42)))
        #expect(stored["double"] == StoredValue(type: .double, json: .double(2.5)))
        #expect(stored["string"] == StoredValue(type: .string, json: .string("text")))
        #expect(prefs[Prefs.Key("date", initial: Date.distantPast)] == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(prefs[Prefs.Key("data", initial: Data())] == Data([0, 1, 255]))
        #expect(prefs[Prefs.Key("strings", initial: [String]())] == ["a", "b"])
        #expect(prefs[Prefs.Key("size", initial: [String: Int]())] == ["width": 800, "height": 600])
        #expect(stored["mixed"]?.type == .json)
        #expect(stored["nested"]?.type == .json)
        #expect(prefs[Prefs.Key("existing", initial: "")] == "from the store", "nothing the store held is overwritten")
        #expect(stored["registered"] == nil && stored["argued"] == nil, "registered defaults and launch arguments are not the app's values")
    }

    @Test("replacingExisting: true replaces what the store holds")
    func replacing() async throws {
        let (directory, url) = try store()
        let report = try await run(url, suite: "com.example.legacy", "replace", in: directory)
        #expect(report.hasPrefix("imported 11 values"), "\(report)")
        #expect(try Prefs(.sqlite(url), launchArguments: [])[Prefs.Key("existing", initial: "")] == "from UserDefaults")
    }

    @Test("UserDefaults.standard: the app's domain, named by the process")
    func standard() async throws {
        let (directory, url) = try store()
        let report = try await run(url, suite: "-", "keep", in: directory)
        #expect(report.hasPrefix(#"imported 10 values from UserDefaults domain "prefs-test-child""#), "\(report)")
        #expect(try Prefs(.sqlite(url), launchArguments: [])[Prefs.Key("int", initial: 0)] == 42)
    }
}
