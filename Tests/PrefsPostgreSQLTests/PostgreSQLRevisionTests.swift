import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 31, finding 6: compare-and-set on a revision across requests, and a watch from a revision that delivers
/// every change after it while the namespace's history holds them (etcd v3's mod_revision, Compare and Watch).
@Suite("PostgreSQL revisions")
struct PostgreSQLRevisionTests {
    @Test("set(_:for:ifRevision:) writes when the revision still holds, and otherwise fails with the current value and revision")
    func compareAndSet() throws {
        let fixture = try PostgreSQLFixture()
        let a = fixture.prefs, b = try fixture.reopen()
        let never = try a.revisioned(.launchCount)
        #expect(never.revision == 0 && !never.isStored && never.value == 0)
        let first = try a.set(10, for: .launchCount, ifRevision: 0)  // create-only
        #expect(first > 0)
        #expect {
            try b.set(99, for: .launchCount, ifRevision: 0)
        } throws: { error in
            guard let conflict = error as? Prefs.RevisionConflict<Int> else { return false }
            return conflict.key == "launchCount" && conflict.expected == 0 && conflict.current.value == 10 && conflict.current.revision == first
        }
        // Read, decide, write back, across requests: the first writer wins, the second learns what it lost to.
        let read = try b.revisioned(.launchCount)
        #expect(read.value == 10 && read.revision == first && read.isStored)
        let second = try a.set(read.value - 1, for: .launchCount, ifRevision: read.revision)
        #expect(second > first)
        do {
            try b.set(read.value - 1, for: .launchCount, ifRevision: read.revision)
            Issue.record("a stale revision was accepted")
        } catch let conflict as Prefs.RevisionConflict<Int> {
            #expect(conflict.current.value == 9 && conflict.current.revision == second)
            #expect("\(conflict)" == "revision conflict on key \"launchCount\": expected revision \(first), found \(second)")
        }
        // The store's own reads see the value written (cache and observers updated as by a set).
        #expect(a[.launchCount] == 9)
        try b.refresh()
        #expect(b[.launchCount] == 9)
        // A removal has a revision of its own, and compares like a value.
        let removed = try a.set(nil, for: Prefs.Key<Int?>("optional", initial: nil), ifRevision: 0)
        #expect(removed > second)
        #expect(try a.revisioned(Prefs.Key<Int?>("optional", initial: nil)).revision == removed)
    }

    @Test("revisions follow commits: concurrent compare-and-set loops on one key lose no increment")
    func casLoops() async throws {
        let fixture = try PostgreSQLFixture()
        let stores = [fixture.prefs] + (try (0..<3).map { _ in try fixture.reopen() })
        let perStore = 20
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask {
                    for _ in 0..<perStore {
                        var current = try store.revisioned(.launchCount)
                        while true {
                            do {
                                try store.set(current.value + 1, for: .launchCount, ifRevision: current.revision)
                                break
                            } catch let conflict as Prefs.RevisionConflict<Int> {
                                current = conflict.current
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try fixture.reopen().revisioned(.launchCount).value == stores.count * perStore)
    }

    @Test("a watch from a revision delivers every change after it, in order, removals included, then each new one, from any instance")
    func watchFromRevision() async throws {
        let fixture = try PostgreSQLFixture()
        try PostgreSQLDatabase(fixture.url).setHistoryRetention(.seconds(3600), for: fixture.namespace)
        let writer = try fixture.reopen()
        let start = try writer.set(1, for: .launchCount, ifRevision: 0)
        for value in 2...5 { try writer.set(value, for: .launchCount) }
        try writer.reset(.launchCount)
        try writer.set(7, for: .launchCount)
        let seen = Locked<[Prefs.Revisioned<Int>]>([])
        let failure = Locked<(any Error)?>(nil)
        let task = Task {
            do {
                for try await change in fixture.prefs.changes(of: .launchCount, after: start) {
                    seen.withLock { $0.append(change) }
                    if change.value == 9 { return }
                }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        // Everything after `start`, merged by nothing: 2, 3, 4, 5, the removal, 7. Generous: under a sanitizer, with
        // every suite running beside it, the consuming task waited over a minute for a thread (twice in CI runs); the
        // watch had delivered everything by then.
        #expect(await eventually(timeout: .seconds(300)) { seen.withLock { $0.count } == 6 })
        try writer.set(8, for: .launchCount)
        try writer.set(9, for: .launchCount)
        _ = await task.value
        #expect(failure.withLock { $0 } == nil)
        let changes = seen.withLock { $0 }
        #expect(changes.map(\.value) == [2, 3, 4, 5, 0, 7, 8, 9])
        #expect(changes.map(\.isStored) == [true, true, true, true, false, true, true, true])
        #expect(changes.map(\.revision) == changes.map(\.revision).sorted() && Set(changes.map(\.revision)).count == 8)
        #expect(changes.allSatisfy { $0.revision > start })
        // Resuming from the last one received delivers nothing more until the next change.
        let resumed = try await withDeadline(.seconds(300)) {
            for try await change in fixture.prefs.changes(of: .launchCount, after: changes[5].revision) { return change.value }
            return -1
        }
        #expect(resumed == 8)
    }

    @Test("a watch from a revision the history no longer holds ends with revisionCompacted, skipping nothing silently")
    func compacted() async throws {
        let fixture = try PostgreSQLFixture()
        let database = PostgreSQLDatabase(fixture.url)
        let early = try fixture.prefs.set(1, for: .launchCount, ifRevision: 0)
        try fixture.prefs.set(2, for: .launchCount)
        // No history kept: a watch from before the last change cannot deliver every change.
        await expectCompacted(fixture.prefs.changes(of: .launchCount, after: early))
        // From the current revision, it waits for the next change... which, without history, it cannot deliver whole.
        try database.setHistoryRetention(.seconds(3600), for: fixture.namespace)
        try fixture.prefs.refresh()  // a check learns of it at once (a notification soon, a write within a second)
        await expectCompacted(fixture.prefs.changes(of: .launchCount, after: early), "history kept only from now on")
        let current = try fixture.prefs.revisioned(.launchCount).revision
        try fixture.prefs.set(3, for: .launchCount)
        let next = try await withDeadline(.seconds(300)) {
            for try await change in fixture.prefs.changes(of: .launchCount, after: current) { return change.value }
            return -1
        }
        #expect(next == 3)
        // Pruned past the retention window: compacted again.
        try server().psql("UPDATE prefs_history SET changed_at = now() - interval '2 hours' WHERE namespace = '\(fixture.namespace)'")
        try database.setHistoryRetention(.seconds(60), for: fixture.namespace)
        #expect(try database.prune().historyEntries >= 1)
        await expectCompacted(fixture.prefs.changes(of: .launchCount, after: current), "pruned")
    }

    private func expectCompacted<Value>(_ stream: AsyncThrowingStream<Prefs.Revisioned<Value>, any Error>, _ comment: Comment? = nil) async {
        do {
            let first = try await withDeadline(.seconds(300)) {
                var iterator = stream.makeAsyncIterator()
                return try await iterator.next().map { "\($0.value)" }
            }
            Issue.record("the watch delivered \(String(describing: first)) instead of ending", sourceLocation: .__here())
        } catch {
            guard let error = postgreSQLError(error) else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.kind == .revisionCompacted, comment)
            #expect(error.sqlState == "55000", comment)
        }
    }

    @Test("revisions are the PostgreSQL store's: another store's revisioned(_:) says so")
    func otherStores() throws {
        let prefs = try Prefs(.memory)
        #expect { try prefs.revisioned(.launchCount) } throws: { postgreSQLError($0)?.sqlState == "0A000" }
    }
}
