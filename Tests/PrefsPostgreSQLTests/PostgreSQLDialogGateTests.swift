import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// A server deciding dialogs and remote messages for many users from one database: one namespace per user.
@Suite("DialogGate per user on PostgreSQL")
@MainActor
struct PostgreSQLDialogGateTests {
    /// The state of one user on one instance of the fleet.
    private func gate(_ url: String, user: String) throws -> DialogGate {
        DialogGate(prefs: try Prefs(.postgreSQL(url, namespace: user)), session: DialogSession(), overrides: DialogOverrides())
    }

    @Test("one server decides the same dialog for user A and user B; another instance sees each user's answer; QA resets one user")
    func dialogsPerUser() async throws {
        let url = try server().url
        let base = freshNamespace()
        let userA = base + "/user-a", userB = base + "/user-b"
        let dialog = Dialog("rate-app")
        let gateA = try gate(url, user: userA), gateB = try gate(url, user: userB)
        #expect(gateA.shouldPresent(dialog) && gateB.shouldPresent(dialog))

        // User A answers "don't remind me"; user B is not affected.
        try gateA.recordPresentation(of: dialog)
        try gateA.record(.neverRemind, for: dialog)
        #expect(!gateA.shouldPresent(dialog))
        #expect(gateB.shouldPresent(dialog))

        // Another instance behind the load balancer (its own connections) decides the same for each user.
        let otherA = try gate(url, user: userA), otherB = try gate(url, user: userB)
        #expect(!otherA.shouldPresent(dialog), "\(otherA.decision(for: dialog))")
        #expect(otherB.shouldPresent(dialog))

        // QA resets user A's dialog with prefs-tool; every instance shows it to A again after a refresh.
        let reset = try await ChildProcess.run(
            "prefs-tool", ["--store", url, "--namespace", userA, "dialogs", "reset", "rate-app"],
            environment: ["XDG_CONFIG_HOME": "/nonexistent-prefs-tool-test", "PREFS_STORE": ""])
        #expect(reset.status == 0, "\(reset.stderr)")
        try gateA.prefs.refresh()
        #expect(gateA.shouldPresent(dialog), "\(gateA.decision(for: dialog))")
        #expect(try gate(url, user: userA).shouldPresent(dialog))
    }

    /// Reported: with the README's `DialogGate(prefs:)`, the session was the process, so user A's "OK" hid B's dialog and
    /// `oncePerSession` blocked B after A's.
    @Test("DialogGate(prefs:) on each user's namespace: a session per user; A's OK and A's presentation do not touch B")
    func sessionPerUser() throws {
        let url = try server().url
        let base = freshNamespace()
        let storeA = try Prefs(.postgreSQL(url, namespace: base + "/user-a"))
        let storeB = try Prefs(.postgreSQL(url, namespace: base + "/user-b"))
        let gateA = DialogGate(prefs: storeA, displayFrequency: .oncePerSession)
        let gateB = DialogGate(prefs: storeB, displayFrequency: .oncePerSession)
        try #require(try gateA.claim(Dialog("rate-app")).presentation).finish(.hideForSession)
        #expect(gateA.decision(for: Dialog("rate-app")).reasons == [.suppressedForSession, .anotherDialogThisSession])
        #expect(gateB.decision(for: Dialog("rate-app")).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(try gateB.claim(Dialog("tips")).presentation != nil, "B's first dialog of B's session")
        let againA = DialogGate(prefs: try Prefs(.postgreSQL(url, namespace: base + "/user-a")))
        #expect(againA.session === gateA.session, "another store instance on A's namespace: A's session")
    }

    @Test("the remote message feed is acknowledged per user; prefs-tool resets lastMessageId for one user")
    func messagesPerUser() async throws {
        let url = try server().url
        let base = freshNamespace()
        let userA = base + "/user-a", userB = base + "/user-b"
        let directory = try TemporaryDirectory()
        let feed = directory.file("messages.json")
        try Data(#"[{"id": 1, "bundleId": "com.example.server", "title": "Maintenance", "text": "Tonight.", "confirmLabel": "OK"}]"#.utf8).write(to: feed)
        let context = MessageContext(bundleIdentifier: "com.example.server", appVersion: "1.0", osVersion: "1.0", localeIdentifier: "en_US")
        func center(_ user: String) throws -> MessageCenter {
            MessageCenter(feedURL: feed, prefs: try Prefs(.postgreSQL(url, namespace: user)), context: context)
        }

        let centerA = try center(userA)
        await centerA.refresh()
        let message = try #require(centerA.pendingMessage, "\(String(describing: centerA.lastError))")
        _ = centerA.acknowledge(.confirm, for: message)

        // Another instance: user A has seen message 1, user B has not.
        let otherA = try center(userA), otherB = try center(userB)
        await otherA.refresh()
        await otherB.refresh()
        #expect(otherA.pendingMessage == nil)
        #expect(otherB.pendingMessage?.id == 1)
        _ = otherB.acknowledge(.confirm, for: try #require(otherB.pendingMessage))
        await otherB.flush()
        #expect(try Prefs(.postgreSQL(url, namespace: userB))[Prefs.Key<Int>("lastMessageId", initial: 0)] == 1)

        // QA: reset lastMessageId for user A only.
        let reset = try await ChildProcess.run(
            "prefs-tool", ["--store", url, "--namespace", userA, "reset", "lastMessageId"],
            environment: ["XDG_CONFIG_HOME": "/nonexistent-prefs-tool-test", "PREFS_STORE": ""])
        #expect(reset.status == 0, "\(reset.stderr)")
        let againA = try center(userA), againB = try center(userB)
        await againA.refresh()
        await againB.refresh()
        #expect(againA.pendingMessage?.id == 1)
        #expect(againB.pendingMessage == nil)
    }
}
