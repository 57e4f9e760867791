import DialogGate
import Foundation
import Observation
import Prefs
import PrefsTesting
import PrefsUserDefaults
import Synchronization
import Testing

/// Every public closure parameter of the libraries, handed over from a `@MainActor` view controller the way an iOS
/// developer writes it: no `@Sendable`, and, where the library calls the closure on the caller's actor (bodies that do
/// not escape, `presentIfNeeded`'s presenter, MessageCenter's `onEvent`), using the controller's own state. That this
/// file compiles under Swift 6 is most of the test; the tests below check that each closure ran where it says.
@MainActor
final class SettingsViewController {
    let prefs: Prefs
    var step = 2
    var log: [String] = []

    init(prefs: Prefs) { self.prefs = prefs }

    /// Bodies that run before the call returns: they may read and write the controller.
    func bodies() throws {
        try prefs.update(.launchCount) { $0 += step }
        try prefs.transaction { transaction in
            transaction[.launchCount] += step
            log.append("transaction")
        }
        try prefs.batch { batch in batch[.username] = "step \(step)" }
        let observed = prefs.observable(.launchCount)
        try observed.update { $0 += step }
    }

    /// DialogGate's presenter runs on the main actor, between the claim and the answer.
    func presenter(_ gate: DialogGate) async throws -> DialogDecision {
        try await gate.presentIfNeeded(Dialog("tip")) { dialog in
            log.append("present \(dialog.id)")
            return .neverRemind
        }
    }

    /// Handlers the library calls on a thread of its own are `@Sendable` already; the controller passes them as
    /// closures, and hops to the main actor itself for its state.
    func handlers() throws -> (Prefs, DialogGate) {
        let store = try Prefs(.memory, onDiagnostic: { diagnostic in print(diagnostic) })
        let gate = DialogGate(prefs: store, onEvent: { event in print(event) }, clock: { Date() })
        return (store, gate)
    }

    /// A body that runs before the call returns, and a stream of several keys: the controller's state is at hand.
    func silentWriteAndSeveralKeys() async {
        prefs.withoutNotifyingObservers { prefs[.launchCount] = step }
        for await (count, name) in prefs.values(for: .launchCount, .username, lossless: true) {
            log.append("\(count) \(name ?? "-")")
            break
        }
    }

    /// Streams and Observation, consumed on the main actor.
    func observation() async {
        for await count in prefs.values(for: .launchCount) {
            log.append("count \(count)")
            if count >= 1 { break }
        }
        let model = prefs.observable(.launchCount)
        withObservationTracking {
            _ = model.value
        } onChange: {
            print("changed")
        }
    }
}

extension Prefs.Keys {
    /// A dynamic initial value declared in main-actor code: the closure is `@Sendable` and runs on the reading thread.
    static let firstSeen = Key<Date>("firstSeen") { Date.now }
}

@Suite("Closure parameters from a @MainActor view controller")
@MainActor
struct ClosureParameterTests {
    @Test("update, transaction, batch and an observable's update run their bodies with the controller's state")
    func bodies() throws {
        let controller = SettingsViewController(prefs: try Prefs(.memory))
        try controller.bodies()
        #expect(controller.prefs[.launchCount] == 6)
        #expect(controller.prefs[.username] == "step 2")
        #expect(controller.log == ["transaction"])
    }

    @Test("presentIfNeeded's presenter runs on the main actor and its answer is recorded")
    func presenter() async throws {
        let prefs = try Prefs(.memory)
        let controller = SettingsViewController(prefs: prefs)
        let gate = DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides())
        #expect(try await controller.presenter(gate).shouldPresent)
        #expect(try await !controller.presenter(gate).shouldPresent, "Never remind me was recorded")
        #expect(controller.log == ["present tip"])
    }

    @Test("presentIfNeeded's presenter runs on the main actor, and the claim and the answer are recorded off it")
    func presentIfNeededRecordsOffTheMainActor() async throws {
        let prefs = try Prefs(.memory)
        let onMainActor = Mutex<[Bool]>([])
        let gate = DialogGate(
            prefs: prefs, session: DialogSession(), overrides: DialogOverrides(),
            onEvent: { _ in onMainActor.withLock { $0.append(MainQueue.isCurrent) } })
        #expect(MainQueue.isCurrent)
        var presentedOnMainActor = false
        try await gate.presentIfNeeded(Dialog("tip")) { _ in
            presentedOnMainActor = MainQueue.isCurrent
            return .hideForSession
        }
        #expect(presentedOnMainActor)
        #expect(onMainActor.withLock { $0 } == [false, false], "presented and answered, each recorded off the main actor")
    }

    @Test("withoutNotifyingObservers' body, a stream of several keys and a dynamic initial value, from the main actor")
    func silentWriteAndSeveralKeys() async throws {
        let prefs = try Prefs(.memory)
        let controller = SettingsViewController(prefs: prefs)
        await controller.silentWriteAndSeveralKeys()
        #expect(controller.log == ["2 -"])
        let before = Date.now
        #expect(prefs[.firstSeen] >= before)
    }

    @Test("the handlers compile from the main actor, and a stream is consumed there")
    func handlersAndStreams() async throws {
        let prefs = try Prefs(.memory)
        let controller = SettingsViewController(prefs: prefs)
        _ = try controller.handlers()
        prefs[.launchCount] = 1
        await controller.observation()
        #expect(controller.log == ["count 1"])
    }
}

/// Whether the caller runs on the main queue, which is the main actor's executor (on Linux, `Thread.isMainThread`
/// does not say so under `swift test`).
enum MainQueue {
    private nonisolated static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    nonisolated static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
