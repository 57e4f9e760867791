import Foundation
import Prefs
import PrefsSupport
import PrefsTesting
import Testing

/// Per-test standard stores: `withStandardStore(_:_:)` swaps `Prefs.standard` for its body's task only, without a lock.
@Suite("Per-test standard stores")
struct PerTestStandardStoreTests {
    struct Model { @Pref(.launchCount) var launches }

    @Test("two test bodies run at the same time, each seeing only its own store through @Pref and Prefs.standard")
    func parallelBodiesOverlap() async throws {
        let arrived = Locked(0)
        let seen = try await withThrowingTaskGroup(of: (Int, Int, Int, Bool).self) { group in
            for value in [1, 2] {
                let store = try Prefs(.memory)
                group.addTask {
                    await withStandardStore(store) {
                        let model = Model()
                        model.launches = value
                        // A rendezvous: each body waits, holding its store, until the other has written its own. Bodies that
                        // ran one after the other (a process-wide lock) would never meet: the wait would time out.
                        arrived.withLock { $0 += 1 }
                        let met = await eventually(timeout: .seconds(60)) { arrived.withLock { $0 } == 2 }
                        return (value, Model().launches, Prefs.standard[.launchCount], met && Prefs.standard === store)
                    }
                }
            }
            var seen: [(Int, Int, Int, Bool)] = []
            for try await result in group { seen.append(result) }
            return seen
        }
        #expect(seen.count == 2)
        for (value, throughPref, throughStandard, metAndOwn) in seen {
            #expect(metAndOwn, "the bodies overlapped, each with its own store")
            #expect(throughPref == value, "@Pref reads this body's store")
            #expect(throughStandard == value, "Prefs.standard is this body's store")
        }
    }

    @Test("setting Prefs.standard inside the body replaces it for that body only; child tasks see it, the process does not")
    func settingInsideTheBody() async throws {
        let first = try Prefs(.memory)
        let second = try Prefs(.memory)
        try await withStandardStore(first) {
            #expect(Prefs.standard === first)
            Prefs.standard = second
            #expect(Prefs.standard === second)
            let fromChild = await Task { Prefs.standard === second }.value
            #expect(fromChild, "a task started in the body inherits its store")
            Model().launches = 4
            let nested = try Prefs(.memory)
            withStandardStore(nested) { #expect(Prefs.standard === nested, "a nested body has its own") }
            #expect(Prefs.standard === second)
        }
        #expect(second[.launchCount] == 4)
        #expect(first[.launchCount] == 0)
        #expect(Prefs.standardOverride == nil, "outside the body, Prefs.standard is the process's own again")
    }
}
