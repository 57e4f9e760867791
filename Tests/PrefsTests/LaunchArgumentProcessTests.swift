import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import TestFixtures
import Testing

/// A real process launched as QA or an Xcode scheme launches an app: `-launchCount 5 -greeting hello -flag YES`.
/// prefs-test-child's `arguments` mode reads the keys through `PrefsDefaults` and typed keys (see its header).
@Suite("Launch arguments in a launched process")
struct LaunchArgumentProcessTests {
    static let launch = ["-launchCount", "5", "-greeting", "hello", "-flag", "YES"]

    /// A store file holding launchCount = 2, written by this process (which reads no arguments into it).
    func storeHoldingTwo(_ directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("app.sqlite")
        try Prefs(.sqlite(url), launchArguments: []).set(2, for: .launchCount)
        return url
    }

    func stored(_ url: URL) throws -> [String: StoredValue] {
        try Prefs(.sqlite(url), launchArguments: []).snapshot()
    }

    @Test("PrefsDefaults and typed keys read the arguments above the store; the store holds none of them afterwards")
    func readsArguments() async throws {
        let directory = try TemporaryDirectory()
        let url = try storeHoldingTwo(directory)
        let result = try await ChildProcess.run("prefs-test-child", ["arguments", "sqlite", url.path, "read"] + Self.launch)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "defaults launchCount=5 greeting=hello flag=true",
                "typed launchCount=5 greeting=hello flag=true",
                "lookup launchCount=argument greeting=argument flag=argument",
                "domain flag=YES greeting=hello launchCount=5",
            ])
        #expect(try stored(url) == ["launchCount": StoredValue(type: .int, json: .int(2))], "never written")
    }

    @Test("A write in the process is stored, while the argument still reads for that launch")
    func writeIsStored() async throws {
        let directory = try TemporaryDirectory()
        let url = try storeHoldingTwo(directory)
        let result = try await ChildProcess.run("prefs-test-child", ["arguments", "sqlite", url.path, "write"] + Self.launch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("defaults launchCount=5 greeting=hello flag=true\ntyped launchCount=5 greeting=hello flag=true\n"))
        #expect(
            try stored(url) == ["launchCount": StoredValue(type: .int, json: .int(7)), "greeting": StoredValue(type: .string, json: .string("stored"))])
        let next = try await ChildProcess.run("prefs-test-child", ["arguments", "sqlite", url.path, "read"])
        #expect(
            next.stdout.hasPrefix("defaults launchCount=7 greeting=stored flag=false\ntyped launchCount=7 greeting=stored flag=false\n"),
            "the next launch, without arguments")
    }

    @Test("A value an Int key cannot read is ignored with a diagnostic; PrefsDefaults reads it as UserDefaults would")
    func badValue() async throws {
        let directory = try TemporaryDirectory()
        let url = try storeHoldingTwo(directory)
        let result = try await ChildProcess.run("prefs-test-child", ["arguments", "sqlite", url.path, "read", "-launchCount", "five", "-flag", "YES"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "defaults launchCount=0 greeting=nil flag=true", "integer(forKey:) of \"five\" is 0, as in UserDefaults")
        #expect(lines.dropFirst().first == "typed launchCount=2 greeting=nil flag=true", "the typed key reads the stored value")
        #expect(lines.dropFirst(2).first == "lookup launchCount=stored greeting=initial flag=argument")
        let diagnostics = lines.filter { $0.hasPrefix("diagnostic ") }
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains(#"the launch argument -launchCount "five" cannot be read as int"#) == true, "\(diagnostics)")
    }

    @Test("A store opened with launchArguments: [] reads none of the process's")
    func optOut() async throws {
        let directory = try TemporaryDirectory()
        let url = try storeHoldingTwo(directory)
        let result = try await ChildProcess.run("prefs-test-child", ["arguments", "sqlite", url.path, "ignore"] + Self.launch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.split(separator: "\n").map(String.init) == [
                "defaults launchCount=2 greeting=nil flag=false",
                "typed launchCount=2 greeting=nil flag=false",
                "lookup launchCount=stored greeting=initial flag=initial",
                "domain ",
            ])
    }

    @Test("Prefs.standard, at the default location, reads them too, and keeps none")
    func standardStore() async throws {
        let directory = try TemporaryDirectory()
        let result = try await ChildProcess.run(
            "prefs-test-child", ["arguments", "standard", "-", "read"] + Self.launch, environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("defaults launchCount=5 greeting=hello flag=true\ntyped launchCount=5 greeting=hello flag=true\n"))
        #expect(try stored(directory.url.appendingPathComponent("prefs/prefs-test-child.sqlite")).isEmpty)
    }
}
