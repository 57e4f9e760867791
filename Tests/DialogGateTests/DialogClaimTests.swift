@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport

/// The file stores DialogGate's cross-scene and cross-process tests run on.
enum FileStore: String, CaseIterable, Sendable {
    case json, sqlite

    func storage(_ url: URL) -> Prefs.Storage {
        switch self {
        case .json: .jsonFile(url, lockTimeout: .seconds(30))
        case .sqlite: .sqlite(url, busyTimeout: .seconds(30))
        }
    }

    func file(in directory: TemporaryDirectory) -> URL {
        directory.file(self == .json ? "app.json" : "app.sqlite")
    }
}

/// Runs `body` on `count` threads of their own at once (not a pool's, which may have fewer threads than
/// `count`, so that a barrier inside `body` would wait for ever), and returns when all have ended.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            body(index)
            done.leave()
        }.start()
    }
    done.wait()
}

/// Presenting is one atomic step per dialog and store: two scenes (two gates, two store instances) and
/// eight threads in one process never both present a dialog, and a limit is never exceeded.
@Suite("Local dialogs: claiming a presentation")
struct DialogClaimTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A gate on its own store instance over the file: a scene, or a window, with a store of its own.
    func scene(_ store: FileStore, session: DialogSession = DialogSession(), overrides: DialogOverrides = DialogOverrides()) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(store.storage(store.file(in: directory))), session: session, appVersion: "1.0",
            overrides: overrides, clock: clock.function)
    }

    @Test(
        "two scenes: while one presents, the other is declined; once answered, the limit of 1 is reached for both",
        arguments: FileStore.allCases)
    func twoScenes(store: FileStore) throws {
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let first = try scene(store), second = try scene(store)
        let presentation = try #require(try first.claim(tip).presentation)
        #expect(presentation.decision.reasons == [.eligible(shown: 0, limit: 1)])
        let declined = try second.claim(tip)
        #expect(declined.presentation == nil)
        #expect(declined.decision.description == "tip: not presented: already being presented")
        #expect(second.decision(for: tip).reasons == [.alreadyPresenting])
        try presentation.finish(.dismiss)
        #expect(second.decision(for: tip).reasons == [.presentationLimitReached(shown: 1, limit: 1)])
        #expect(try second.claim(tip).presentation == nil)
        #expect(try first.states().first?.record?.presentations == 1)
    }

    @Test("eight threads claiming a dialog with maximumPresentations 1: one presentation in all", arguments: FileStore.allCases)
    func eightThreadsClaim(store: FileStore) throws {
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let shared = try scene(store)
        // Half the threads share one gate and store; the others each have a scene of their own.
        let gates = try (0..<8).map { $0 < 4 ? shared : try scene(store) }
        let granted = Locked(0)
        onThreads(8) { index in
            for _ in 0..<5 {
                guard let presentation = try? gates[index].claim(tip).presentation else { continue }
                granted.withLock { $0 += 1 }
                try? presentation.finish(.dismiss)
            }
        }
        #expect(granted.withLock { $0 } == 1)
        #expect(try shared.states().first?.record?.presentations == 1, "never shown 2 of 1")
    }

    @Test("eight threads claiming a dialog without a limit while none has answered: it is on screen once", arguments: FileStore.allCases)
    func eightThreadsHold(store: FileStore) throws {
        let news = Dialog("news")
        let gates = try (0..<8).map { _ in try scene(store) }
        let held = Locked<[DialogPresentation]>([])
        onThreads(8) { index in
            if let presentation = try? gates[index].claim(news).presentation { held.withLock { $0.append(presentation) } }
        }
        let presentations = held.withLock { $0 }
        #expect(presentations.count == 1)
        try presentations.first?.finish(.dismiss)
        #expect(try gates[0].claim(news).presentation != nil, "answered: it may be presented again")
    }

    @Test("eight threads doing shouldPresent, then recordPresentation: the limit holds, the others are told why")
    func twoStepPattern() throws {
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let gates = try (0..<8).map { _ in try scene(.sqlite) }
        let decided = DispatchGroup()
        for _ in 0..<8 { decided.enter() }
        let outcomes = Locked<[String]>([])
        onThreads(8) { index in
            let eligible = gates[index].shouldPresent(tip)
            decided.leave()
            decided.wait()  // every thread decided "eligible" before any records
            guard eligible else { return outcomes.withLock { $0.append("ineligible") } }
            do {
                try gates[index].recordPresentation(of: tip)
                outcomes.withLock { $0.append("recorded") }
            } catch let error as DialogGateError {
                outcomes.withLock { $0.append("\(error)") }
            } catch {
                outcomes.withLock { $0.append("store error \(error)") }
            }
        }
        let counted = Dictionary(outcomes.withLock { $0 }.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counted == ["recorded": 1, "not recorded: tip: not presented: shown 1 of 1 times": 7])
        #expect(try gates[0].states().first?.record?.presentations == 1)
    }

    @Test("a presentation is counted when answered, at the time it was shown; one cancelled or dropped is not counted")
    func countedWhenAnswered() throws {
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1, minimumInterval: .seconds(86_400)))
        let gate = try scene(.sqlite)
        try #require(try gate.claim(tip).presentation).cancel()
        #expect(gate.decision(for: tip).reasons == [.eligible(shown: 0, limit: 1)], "cancelled: not shown after all")
        do {
            _ = try #require(try gate.claim(tip).presentation)  // dropped without an answer
        }
        #expect(gate.decision(for: tip).reasons == [.eligible(shown: 0, limit: 1)], "released when dropped")

        let shown = clock.now
        let presentation = try #require(try gate.claim(tip).presentation)
        clock.advance(by: 30)
        try presentation.finish(.hideForSession)
        let record = try #require(try gate.states().first?.record)
        #expect(record.presentations == 1)
        #expect(record.lastPresented == shown)
        #expect(record.claim == nil)
        #expect(throws: DialogGateError.presentationEnded(dialogID: "tip")) { try presentation.finish(.hideForSession) }
        #expect(throws: DialogGateError.presentationEnded(dialogID: "tip")) { try presentation.cancel() }
        #expect(presentation.isEnded)
    }

    @Test("presentIfNeeded: two scenes launching together present once; a presenter that throws counts nothing")
    func presentIfNeededAcrossScenes() async throws {
        struct Interrupted: Error {}
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let first = try scene(.sqlite), second = try scene(.sqlite)
        await #expect(throws: Interrupted.self) { try await first.presentIfNeeded(tip) { _ in throw Interrupted() } }
        let decision = try await first.presentIfNeeded(tip) { _ in
            let inner = try await second.presentIfNeeded(tip) { _ in .hideForSession }
            #expect(inner.reasons == [.alreadyPresenting])
            return .dismiss
        }
        #expect(decision.shouldPresent)
        #expect(try await second.presentIfNeeded(tip) { _ in .hideForSession }.reasons == [.presentationLimitReached(shown: 1, limit: 1)])
    }

    @Test("a decision sees another store instance's write at once, without waiting for a poll", arguments: FileStore.allCases)
    func decisionsAreFresh(store: FileStore) throws {
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let app = try scene(store), other = try scene(store)
        #expect(app.decision(for: tip).reasons == [.eligible(shown: 0, limit: 1)])
        try #require(try other.claim(tip).presentation).finish(.neverRemind)
        #expect(app.decision(for: tip).reasons == [.neverRemind(since: clock.now), .presentationLimitReached(shown: 1, limit: 1)])
        try other.reset(["tip"])
        #expect(app.decision(for: tip).reasons == [.eligible(shown: 0, limit: 1)])
    }

    @Test("a decision under a QA override writes nothing, even with the clock set back")
    func overridesWriteNothing() throws {
        let tip = Dialog("tip", policy: DialogPolicy(minimumInterval: .seconds(600)))
        let gate = try scene(.sqlite)
        try #require(try gate.claim(tip).presentation).finish(.remindLaterAfter(.seconds(600)))
        clock.advance(by: -86_400)
        let before = try gate.prefs.snapshot()
        for overrides in [DialogOverrides(mode: .hideAll), DialogOverrides(mode: .showAll), DialogOverrides(forced: ["tip"])] {
            gate.overrides = overrides
            _ = gate.decision(for: tip)
            #expect(try gate.prefs.snapshot() == before, "\(overrides.mode)")
        }
        gate.overrides = DialogOverrides()
        _ = gate.decision(for: tip)
        #expect(try gate.prefs.snapshot() != before, "without overrides, the anchor is kept")
    }
}
