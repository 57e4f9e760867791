@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// QA's handles on remote messages: a message for test devices only (the installation id `prefs-tool messages
/// device-id` prints), a message forced for one launch (`prefs-tool messages force ID`, or the launch argument
/// `-DialogGateForceMessage ID` in a QA build), and `prefs-tool feed explain` listing every condition with its value.
@Suite("MessageCenter: QA")
@MainActor
struct MessageQATests {
    let clock = TestClock(feedEpoch)
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    var storePath: String { directory.file("app.sqlite").path }

    func launch(_ server: TestFeedServer, store: String = "app.sqlite") throws -> MessageCenter {
        MessageCenter(
            feedURL: server.url, prefs: try Prefs(.sqlite(directory.file(store))), context: .seedApp, options: .unhurried,
            clock: clock.function, random: { 0 })
    }

    func tool(_ arguments: String...) async throws -> ChildProcess.Result {
        try await ChildProcess.run("prefs-tool", ["--store", storePath] + arguments)
    }

    @Test("testDevices: the installation id prefs-tool prints shows the message there, and nowhere else")
    func testDevices() async throws {
        _ = try Prefs(.sqlite(directory.file("app.sqlite")))
        let printed = try await tool("messages", "device-id")
        #expect(printed.status == 0 && printed.stderr.contains("created"), "\(printed.stderr)")
        let id = printed.stdout.trimmingCharacters(in: .newlines)
        #expect(UUID(uuidString: id) != nil)
        #expect(try await tool("messages", "device-id").stdout == printed.stdout, "the same id every time")

        let server = try TestFeedServer(Feeds.of(Feeds.wrapped(id: 5, #""testDevices": ["\#(id.lowercased())"]"#)))
        let qa = try launch(server)
        #expect(qa.installationId() == id)
        await qa.refresh()
        #expect(qa.pendingMessage?.id == 5)
        let other = try launch(server, store: "other.sqlite")
        await other.refresh()
        #expect(other.pendingMessage == nil)
        #expect(other.lastReport?.evaluations.first?.check(.testDevices)?.passed == false)
    }

    @Test("prefs-tool messages force ID: the next refresh shows it whatever its targeting, once")
    func forcedByTool() async throws {
        let server = try TestFeedServer(Feeds.of(Feeds.message(id: 1), Feeds.wrapped(id: 2, #""conditions": {"launchesAtLeast": 50}"#)))
        let first = try launch(server)
        await first.refresh()
        first.acknowledge(.confirm, for: try #require(first.pendingMessage))
        await first.flush()
        #expect(try await tool("messages", "force", "1").status == 0)
        #expect(try await tool("messages", "force", "0").status == 64)

        let forced = try launch(server)
        await forced.refresh()
        #expect(forced.pendingMessage?.id == 1, "acknowledged already, and forced")
        #expect(forced.lastReport?.forced == true)
        #expect(try forced.prefs.storedValue(forKey: "lastMessageId.forced") == nil, "consumed")
        await forced.refresh()
        #expect(forced.pendingMessage?.id == 1, "kept while it is on screen")
        forced.dismissWithoutAcknowledging()
        await forced.refresh()
        #expect(forced.pendingMessage == nil, "once")

        #expect(try await tool("messages", "force", "2").status == 0)
        let conditional = try launch(server)
        await conditional.refresh()
        #expect(conditional.pendingMessage?.id == 2, "its condition unmet, and forced")
    }

    @Test("the launch argument -DialogGateForceMessage ID (or the environment), read only when the app asks")
    func launchArgument() async throws {
        #expect(MessageCenter.forcedMessageId(arguments: ["MyApp", "-DialogGateForceMessage", "7"], environment: [:]) == (7, nil))
        #expect(MessageCenter.forcedMessageId(arguments: ["MyApp"], environment: ["DIALOGGATE_FORCE_MESSAGE": " 8 "]) == (8, nil))
        #expect(MessageCenter.forcedMessageId(arguments: ["MyApp", "-DialogGateForceMessage", "seven"], environment: [:]) == (nil, "seven"))
        #expect(MessageCenter.forcedMessageId(arguments: ["MyApp", "-DialogGateForceMessage"], environment: [:]).unrecognized != nil)
        #expect(MessageCenter.forcedMessageId(arguments: ["MyApp"], environment: [:]) == (nil, nil))

        let feed = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 7), Feeds.message(id: 9)).utf8).write(to: feed)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        try prefs.set(9, for: Prefs.Key<Int>("lastMessageId", initial: 0))
        try prefs.flush()
        let plain = try await ChildProcess.run("dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", "-", "dismiss"])
        #expect(plain.stdout == "none\n", "\(plain.stderr)")
        let forced = try await ChildProcess.run(
            "dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", "-", "dismiss"],
            environment: ["DIALOGGATE_FORCE_MESSAGE": "7"])
        #expect(forced.stdout == "pending 7\nfinished\n", "\(forced.stderr)")
    }

    @Test("prefs-tool feed explain lists every condition of a message with its value from the store, and what --parameters gives")
    func feedExplain() async throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "1.0", clock: clock.function)
        try gate.recordLaunch()
        try gate.donate("photoSaved")
        try gate.storeParameter("country", "DE")
        let feed = directory.file("messages.json")
        try Data(
            Feeds.of(
                Feeds.wrapped(
                    id: 4,
                    #""conditions": {"launchesAtLeast": 3, "events": {"photoSaved": {"atLeast": 1}}, "parameters": {"country": ["DE", "AT"], "plan": "free"}}"#
                )
            ).utf8
        ).write(to: feed)
        let context = ["--bundle-id", Feeds.seedBundle, "--app-version", "1.0", "--os-version", "17.2"]
        let result = try await ChildProcess.run("prefs-tool", ["--store", storePath, "feed", "explain", feed.path] + context)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "  conditions:"))
        #expect(
            Array(lines[start...]) == [
                "  conditions:",
                "    not met\tall of:",
                "      not met\tlaunches ≥ 3\tnow 1",
                "      met\tphotoSaved ≥ 1\tnow 1",
                "      met\tany of:",
                "        met\tcountry = \"DE\"\tnow \"DE\"",
                "        not met\tcountry = \"AT\"\tnow \"DE\"",
                "      unknown\tplan = \"free\"\tnow not stored (the app may set it in memory)",
                "selected: none",
            ])
        #expect(
            lines.contains(#"  fail: conditions (not met: launches ≥ 3 (now 1); plan = "free" (now not stored (the app may set it in memory)))"#),
            "\(lines)")

        let given = try await ChildProcess.run(
            "prefs-tool", ["--store", storePath, "feed", "explain", feed.path, "--json", "--parameters", "plan=free"] + context)
        let json = try JSON.parse(given.stdout)
        let rows = try #require(json["messages"]?[0]?["conditions"])
        #expect(rows[6]?["condition"] == .string(#"plan = "free""#) && rows[6]?["met"] == .bool(true))
    }
}
