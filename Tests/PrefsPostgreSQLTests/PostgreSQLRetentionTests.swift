import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 43, item 3: the store bounds a namespace's history as it writes (by count and by age, set at open), and a
/// watch from below what it kept ends with `revisionCompacted` carrying the oldest revision kept.
@Suite("PostgreSQL history retention")
struct PostgreSQLRetentionTests {
    /// The number of history entries of `namespace`.
    private func historyCount(_ namespace: String) throws -> Int {
        Int(try server().psql("SELECT count(*) FROM prefs_history WHERE namespace = '\(namespace)'")) ?? -1
    }

    /// The first change a watch of `.launchCount` after `revision` delivers, or the PostgreSQL error it ends with.
    private func firstChange(_ prefs: Prefs, after revision: Int64) async throws -> Result<Prefs.Revisioned<Int>, PostgreSQLError> {
        do {
            let change = try await withDeadline(.seconds(300)) {
                var iterator = prefs.changes(of: .launchCount, after: revision).makeAsyncIterator()
                return try await iterator.next()
            }
            guard let change else { throw PostgreSQLError(kind: .statementFailed, message: "the watch ended", operation: "watching", target: "") }
            return .success(change)
        } catch {
            guard let error = postgreSQLError(error) else { throw error }
            return .failure(error)
        }
    }

    @Test("by count: a namespace keeps its newest historyRevisions entries; a watch from below them is compacted, with the oldest kept")
    func boundedByCount() async throws {
        let fixture = try PostgreSQLFixture(options: .init(historyRevisions: 5))
        try PostgreSQLDatabase(fixture.url).setHistoryRetention(.seconds(3600), for: fixture.namespace)
        try fixture.prefs.refresh()  // learns at once that the namespace keeps history
        var revisions: [Int64] = []
        for value in 1...30 {
            try fixture.prefs.set(value, for: .launchCount)
            revisions.append(try fixture.prefs.revisioned(.launchCount).revision)
        }
        // A prune every write (5 / 10, at least 1): the five newest entries, none more.
        #expect(try historyCount(fixture.namespace) == 5)
        let kept = try server().psql("SELECT revision FROM prefs_history WHERE namespace = '\(fixture.namespace)' ORDER BY revision")
        #expect(kept.split(separator: "\n").compactMap { Int64($0) } == Array(revisions.suffix(5)))

        // From below the retained range: compacted, naming the oldest revision kept (that of the 26th write).
        switch try await firstChange(fixture.prefs, after: revisions[0]) {
        case .success(let change): Issue.record("the watch delivered \(change.value) instead of ending")
        case .failure(let error):
            #expect(error.kind == .revisionCompacted && error.sqlState == "55000")
            #expect(error.oldestRevision == revisions[25], "\(error)")
        }
        // After it: every later change, from the 27th write on.
        switch try await firstChange(fixture.prefs, after: revisions[25]) {
        case .success(let change): #expect(change.value == 27 && change.revision == revisions[26])
        case .failure(let error): Issue.record("\(error)")
        }
    }

    @Test("by age: the namespace's window and historyAge, the shorter, prune at a store's first write")
    func boundedByAge() throws {
        // PostgreSQL's now() is real time: the rows are aged by hand instead (their changed_at set back).
        let fixture = try PostgreSQLFixture()
        try PostgreSQLDatabase(fixture.url).setHistoryRetention(.seconds(86_400), for: fixture.namespace)
        try fixture.prefs.refresh()
        for value in 1...10 { try fixture.prefs.set(value, for: .launchCount) }
        #expect(try historyCount(fixture.namespace) == 10)
        let ns = fixture.namespace
        try server().psql(
            """
            WITH ranked AS (SELECT revision, row_number() OVER (ORDER BY revision) AS n FROM prefs_history WHERE namespace = '\(ns)')
            UPDATE prefs_history h SET changed_at = now() - CASE WHEN r.n <= 3 THEN interval '2 days' ELSE interval '2 hours' END
            FROM ranked r WHERE h.namespace = '\(ns)' AND h.revision = r.revision AND r.n <= 6
            """)
        // Another store with the default bounds (the namespace's day): its first write deletes the 3 two days old.
        let other = try fixture.reopen()
        try other.set(11, for: .launchCount)
        #expect(try historyCount(ns) == 8)
        // One bounded to an hour at open: the 3 two hours old go too.
        let hourly = try Prefs(.postgreSQL(fixture.url, namespace: ns, options: .init(historyAge: .seconds(3600))))
        try hourly.set(12, for: .launchCount)
        #expect(try historyCount(ns) == 6)
        let oldest = try server().psql("SELECT min(changed_at) > now() - interval '1 hour' FROM prefs_history WHERE namespace = '\(ns)'")
        #expect(oldest == "t")
    }

    @Test("PostgreSQLDatabase.prune() applies its options' bounds to namespaces no store writes any more")
    func pruneByDatabase() throws {
        // A database of its own: prune() bounds every namespace, and the other tests' must keep their history.
        let name = "retention_\(UUID().uuidString.prefix(8).lowercased())"
        try server().psql("CREATE DATABASE \(name)")
        let fixture = try PostgreSQLFixture(url: try server().url(database: name))
        try PostgreSQLDatabase(fixture.url).setHistoryRetention(.seconds(3600), for: fixture.namespace)
        try fixture.prefs.refresh()
        for value in 1...10 { try fixture.prefs.set(value, for: .launchCount) }
        let count = "SELECT count(*) FROM prefs_history WHERE namespace = '\(fixture.namespace)'"
        #expect(try server().psql(count, database: name) == "10")
        let report = try PostgreSQLDatabase(fixture.url, options: .init(historyRevisions: 3)).prune()
        #expect(report.historyEntries == 7)
        #expect(try server().psql(count, database: name) == "3")
    }

    @Test("a namespace that keeps no history: compacted, with the key's current revision as the oldest kept")
    func noHistory() async throws {
        let fixture = try PostgreSQLFixture()
        let early = try fixture.prefs.set(1, for: .launchCount, ifRevision: 0)
        try fixture.prefs.set(2, for: .launchCount)
        let current = try fixture.prefs.revisioned(.launchCount).revision
        switch try await firstChange(fixture.prefs, after: early) {
        case .success(let change): Issue.record("the watch delivered \(change.value) instead of ending")
        case .failure(let error): #expect(error.kind == .revisionCompacted && error.oldestRevision == current, "\(error)")
        }
    }

    @Test("stores writing and pruning one namespace at once neither fail nor wait for each other, and keep the bound")
    func concurrentPruning() throws {
        let fixture = try PostgreSQLFixture(options: .init(historyRevisions: 20))
        try PostgreSQLDatabase(fixture.url).setHistoryRetention(.seconds(3600), for: fixture.namespace)
        // Each store a pool of its own (the application name keys it), as separate processes would have.
        let stores = try (0..<4).map { index in
            try Prefs(.postgreSQL(fixture.url, namespace: fixture.namespace, options: .init(applicationName: "pruner-\(index)", historyRevisions: 20)))
        }
        for store in stores { try store.refresh() }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            for value in 0..<100 {
                do {
                    // Each store its own key and a shared one: their history rows interleave in one namespace.
                    try stores[index].set(value, for: Prefs.Key<Int>("count-\(index)", initial: 0))
                    try stores[index].set(value, for: .launchCount)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        // 800 entries written; a prune every 2 writes per store: at most 20 + 2 per store remain, and never fewer than 20.
        let count = try historyCount(fixture.namespace)
        #expect((20...28).contains(count), "\(count) entries")
    }
}
