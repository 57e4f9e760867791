import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// `get` and `list` with `--arguments ARGS`: what an app launched with those arguments reads, and where it comes from.
@Suite("prefs-tool: an app's launch arguments")
struct LaunchArgumentsToolTests {
    /// A store with launchCount (declared Int) = 2 and greeting = "hi".
    func store(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.file("app.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: path)), launchArguments: [])
        try prefs.set(2, for: Prefs.Key("launchCount", initial: 0))
        try prefs.set("hi", for: Prefs.Key("greeting", initial: ""))
        try prefs.declare(Prefs.Key("flag", initial: false))
        return path
    }

    @Test("list shows the arguments' values, read as each key's type, marked (argument); --json says the source")
    func list() async throws {
        let directory = try TemporaryDirectory()
        let path = try store(directory)
        let arguments = #"-launchCount 5 -greeting "hello world" -flag YES -extra x"#
        let listed = try await tool("--store", path, "list", "--arguments", arguments)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout
                == "extra\tstring\tx\t(argument)\nflag\tbool\ttrue\t(argument)\ngreeting\tstring\thello world\t(argument)\nlaunchCount\tint\t5\t(argument)\n")
        let plain = try await tool("--store", path, "list")
        #expect(plain.stdout == "flag\tbool\tfalse\t(initial)\ngreeting\tstring\thi\nlaunchCount\tint\t2\n", "without --arguments, the store")
        let json = try await tool("--store", path, "list", "--json", "--arguments", "-launchCount 5")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: [String: Any]]
        #expect(object?["launchCount"]?["source"] as? String == "argument")
        #expect(object?["launchCount"]?["value"] as? Int == 5)
        #expect(object?["launchCount"]?["stored"] as? Bool == true)
        #expect(object?["greeting"]?["source"] as? String == "stored")
        #expect(object?["flag"]?["source"] as? String == "initial")
    }

    @Test("get prints the argument's value and says on standard error where it comes from")
    func get() async throws {
        let directory = try TemporaryDirectory()
        let path = try store(directory)
        let read = try await tool("--store", path, "get", "launchCount", "--arguments", "-launchCount 5")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "5\n")
        #expect(read.stderr.contains("launchCount: from the launch argument") && read.stderr.contains("stored: 2"), "\(read.stderr)")
        let other = try await tool("--store", path, "get", "greeting", "--arguments", "-launchCount 5")
        #expect(other.stdout == "hi\n" && other.stderr.isEmpty, "a key no argument names: the store, no note")
    }

    @Test("An argument the key's type cannot read is ignored with a warning, as the app ignores it")
    func unreadable() async throws {
        let directory = try TemporaryDirectory()
        let path = try store(directory)
        let read = try await tool("--store", path, "get", "launchCount", "--arguments", "-launchCount five")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "2\n")
        #expect(read.stderr.contains(#"warning: the launch argument -launchCount "five" cannot be read as int"#), "\(read.stderr)")
        let unterminated = try await tool("--store", path, "get", "launchCount", "--arguments", #"-greeting "open"#)
        #expect(unterminated.status == 64, "a usage error: \(unterminated.stderr)")
    }
}
