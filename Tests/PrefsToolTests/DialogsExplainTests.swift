import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// `prefs-tool dialogs explain ID`: every condition of a dialog's policy with its current value, from the store, as QA
/// asks "why does the review prompt not show?".
@Suite("prefs-tool: dialogs explain")
struct DialogsExplainTests {
    let directory: TemporaryDirectory
    /// The app ran ten days ago: the tool, on the real clock, sees ten days since its first launch.
    let clock = TestClock(Date().addingTimeInterval(-10 * 86_400))

    init() throws {
        directory = try TemporaryDirectory()
    }

    var store: String { directory.file("app.sqlite").path }

    func app(_ version: String = "2.0") throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(URL(fileURLWithPath: store))), session: DialogSession(), appVersion: version, overrides: DialogOverrides(),
            clock: clock.function)
    }

    @Test("lists every condition with its current value and whether it is met; a parameter kept in memory is unknown")
    func explain() async throws {
        let review = Dialog(
            "review",
            policy: DialogPolicy(
                conditions: .all([
                    .launches(atLeast: 5), .daysSinceFirstLaunch(atLeast: 3), .event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)),
                    .any([.parameter("isPro", equals: false), .parameter("plan", equals: "free")]),
                ])))
        let gate = try app()
        try gate.recordLaunch()
        for _ in 0..<2 { try gate.donate("photoSaved") }
        try gate.storeParameter("plan", "team")
        #expect(!gate.decision(for: review).shouldPresent)  // the app's decision records the conditions

        let result = try await tool("--store", store, "dialogs", "explain", "review")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "review\tshown 0")
        #expect(lines.dropFirst().first?.hasPrefix("launches 1 (first ") == true, "\(lines)")
        #expect(lines.dropFirst().first?.hasSuffix("; last in \"2.0\")") == true, "\(lines)")
        #expect(
            Array(lines.dropFirst(2)) == [
                "  not met\tall of:",
                "    not met\tlaunches ≥ 5\tnow 1",
                "    met\tdays since first launch ≥ 3\tnow 10 days",
                "    not met\tphotoSaved ≥ 5 in the last 30 days\tnow 2",
                "    unknown\tany of:",
                "      unknown\tisPro = false\tnow not stored (the app may set it in memory)",
                "      not met\tplan = \"free\"\tnow \"team\"",
                "",
            ])

        let json = try JSON.parse(try await tool("--store", store, "dialogs", "explain", "review", "--json").stdout)
        #expect(json["id"] == .string("review"))
        #expect(json["launches"] == .int(1))
        guard case .array(let conditions)? = json["conditions"] else {
            Issue.record("no conditions in \(json)")
            return
        }
        #expect(conditions.count == 7)
        #expect(conditions.first?["met"] == .bool(false))
        #expect(conditions.dropFirst(4).first?["met"] == .null)
        #expect(conditions.dropFirst(2).first?["current"] == .string("10 days"))
    }

    @Test("a dialog without recorded conditions, or without stored state")
    func nothingToExplain() async throws {
        let gate = try app()
        try gate.record(.dismiss, for: Dialog("welcome"))
        let plain = try await tool("--store", store, "dialogs", "explain", "welcome")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(
            plain.stdout
                == "welcome\tshown 0\tanswered dismiss\nlaunches: none recorded (the app calls DialogGate.recordLaunch)\nconditions: none recorded (the app records them at a decision or with DialogGate.declare)\n"
        )
        let unknown = try await tool("--store", store, "dialogs", "explain", "welcom")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "prefs-tool: error: no dialog \"welcom\" has stored state; did you mean \"welcome\"?\n")
        #expect(try await tool("--store", store, "dialogs", "explain").status == 64)
    }
}
