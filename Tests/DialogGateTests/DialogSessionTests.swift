@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// A session is the process, on one store: gates made without a session share "OK" and once-per-session with every gate
/// of the process on the same store, and with no gate on another store (a server with a store per user).
@Suite("Local dialogs: a session per store")
struct DialogSessionTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A gate as the README makes it: no session given.
    func gate(_ name: String, _ frequency: DisplayFrequency = .unlimited) throws -> DialogGate {
        DialogGate(prefs: try Prefs(.sqlite(directory.file(name))), overrides: DialogOverrides(), displayFrequency: frequency)
    }

    /// Reported: with a store per user and `DialogGate(prefs:)`, user A's "OK" made B's dialog "suppressed for this session".
    @Test("two users' stores in one process: A's OK does not hide B's dialog")
    func okPerUser() throws {
        let rate = Dialog("rate-app")
        let userA = try gate("user-a.sqlite"), userB = try gate("user-b.sqlite")
        try #require(try userA.claim(rate).presentation).finish(.hideForSession)
        #expect(userA.decision(for: rate).reasons == [.suppressedForSession])
        #expect(userB.decision(for: rate).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(try gate("user-a.sqlite").decision(for: rate).reasons == [.suppressedForSession], "another gate on A's store shares A's session")
    }

    @Test("two users' stores in one process: oncePerSession counts each user's presentations, not the other's")
    func oncePerSessionPerUser() throws {
        let userA = try gate("user-a.sqlite", .oncePerSession), userB = try gate("user-b.sqlite", .oncePerSession)
        try #require(try userA.claim(Dialog("rate")).presentation).finish(.dismiss)
        #expect(userA.decision(for: Dialog("tips")).reasons == [.anotherDialogThisSession])
        #expect(try userB.claim(Dialog("tips")).presentation != nil, "B's first dialog of the session")
    }

    /// Issue 42, item 8: frequency counts per store's session, as "OK" answers, with the README's `DialogGate(prefs:)`.
    @Test("two users' memory stores in one process: A's presentation does not use up B's oncePerSession")
    func oncePerSessionPerMemoryStore() throws {
        let storeA = try Prefs(.memory), storeB = try Prefs(.memory)
        let userA = DialogGate(prefs: storeA, displayFrequency: .oncePerSession)
        let userB = DialogGate(prefs: storeB, displayFrequency: .oncePerSession)
        try #require(try userA.claim(Dialog("rate")).presentation).finish(.dismiss)
        #expect(try userA.claim(Dialog("tips")).decision.reasons == [.anotherDialogThisSession])
        #expect(DialogGate(prefs: storeA, displayFrequency: .oncePerSession).decision(for: Dialog("tips")).reasons == [.anotherDialogThisSession])
        #expect(try userB.claim(Dialog("rate")).presentation != nil, "B's first dialog of B's session")
        #expect(try userB.claim(Dialog("tips")).decision.reasons == [.anotherDialogThisSession], "and B's own count holds B")
    }

    @Test("JSON stores and memory stores: one session per store; two scenes on one store file share it")
    func perStoreKinds() throws {
        let rate = Dialog("rate")
        let jsonA = DialogGate(prefs: try Prefs(.jsonFile(directory.file("a.json"))))
        let jsonAgain = DialogGate(prefs: try Prefs(.jsonFile(directory.file("a.json"))))
        let jsonB = DialogGate(prefs: try Prefs(.jsonFile(directory.file("b.json"))))
        #expect(jsonA.session === jsonAgain.session)
        #expect(jsonA.session !== jsonB.session)
        let memory = try Prefs(.memory), otherMemory = try Prefs(.memory)
        #expect(DialogGate(prefs: memory).session === DialogGate(prefs: memory).session)
        #expect(DialogGate(prefs: memory).session !== DialogGate(prefs: otherMemory).session)
        #expect(DialogSession.store(memory) !== DialogSession.process)
        try #require(try jsonA.claim(rate).presentation).finish(.hideForSession)
        #expect(!jsonAgain.shouldPresent(rate))
        #expect(jsonB.shouldPresent(rate))
    }

    /// LocalDialogs.md's recipe: an app that stays in memory for days asks again when the user comes back.
    @Test("a new session when the user comes back: OK of the last visit no longer hides the dialog; never remind still does")
    func userComesBack() throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        var gate = DialogGate(prefs: prefs, session: DialogSession())
        try #require(try gate.claim(Dialog("tips")).presentation).finish(.hideForSession)
        try #require(try gate.claim(Dialog("intro")).presentation).finish(.neverRemind)
        #expect(!gate.shouldPresent(Dialog("tips")))
        gate = DialogGate(prefs: prefs, session: DialogSession())  // userCameBack()
        #expect(gate.shouldPresent(Dialog("tips")))
        #expect(!gate.shouldPresent(Dialog("intro")))
    }
}
