import Foundation
import Prefs
import PrefsJSON
import PrefsSupport

/// Revisions: a key's value with the revision it was written at, a write only if that revision still holds, and the
/// changes of a key after a revision (from the namespace's history).
extension PostgreSQLBackend {
    /// `name`'s stored value and revision, read from the server; while `name` holds no value, the value of the first
    /// of `formerNames` that holds one (the revision stays `name`'s own: the one a guarded write of `name` compares).
    func revisioned(_ name: String, formerNames: [String]) throws -> (stored: StoredValue?, revision: Int64) {
        let canonical = Self.canonicalName(name)
        let entry = try fetch(canonical)
        setLatest(entry, for: canonical)
        if entry.stored != nil { return (entry.stored, entry.revision) }
        for former in formerNames {
            let formerEntry = try fetch(Self.canonicalName(former))
            if let stored = formerEntry.stored { return (stored, entry.revision) }
        }
        return (nil, entry.revision)
    }

    /// Writes `changes` (which change `name`) in one statement if `name`'s revision is still `expected`; returns the
    /// new revision, or nil (having written nothing) when it moved.
    func write(_ changes: Changeset, ifRevisionOf name: String, is expected: Int64) throws -> Int64? {
        let canonical = Self.canonicalName(name)
        do {
            try commitGuarded(changes, reads: ReadRevisions(canonical, revision: expected))
        } catch is BackendTransactionConflict {
            setLatest(nil, for: canonical)
            return nil
        }
        return cache[canonical]?.revision
    }

    /// What reads a namespace's history, apart from the store (a watch runs on a thread of its own).
    func historyReader() -> PostgreSQLHistoryReader {
        PostgreSQLHistoryReader(pool: pool, namespace: namespace, options: options, waiter: subscription != nil ? waiters.makeWaiter() : nil)
    }
}

/// Reads one key's changes after a revision from `prefs_history`, for a watch. Used by one thread.
final class PostgreSQLHistoryReader: @unchecked Sendable {
    // @unchecked Sendable: made by the store, then used by the watch's thread alone.
    let pool: PostgreSQLPool
    let namespace: String
    let options: PostgreSQLOptions
    /// Woken by the namespace's notifications (nil where the pool cannot listen: the watch polls).
    let waiter: PostgreSQLChangeWaiter?

    init(pool: PostgreSQLPool, namespace: String, options: PostgreSQLOptions, waiter: PostgreSQLChangeWaiter?) {
        self.pool = pool
        self.namespace = namespace
        self.options = options
        self.waiter = waiter
    }

    /// One change: the value written (nil: removed) and its revision.
    struct Change {
        var stored: StoredValue?
        var revision: Int64
    }

    /// The most changes one read returns.
    static let changesLimit = 1000

    /// $1 the namespace, $2 the key, $3 the revision: whether the namespace keeps history, the key's revision now, and
    /// its history entries after $3 (revision, the revision each replaced, type, value), oldest first.
    static let changesStatement = PreparedSQL(
        """
        SELECT n.history_retention IS NOT NULL, coalesce(v.revision, 0), h.revision, h.previous_revision, h.type, h.value
        FROM (SELECT 1) AS one
        LEFT JOIN prefs_namespaces n ON n.namespace = $1
        LEFT JOIN prefs_values v ON v.namespace = $1 AND v.key = $2
        LEFT JOIN LATERAL (SELECT revision, previous_revision, type, value FROM prefs_history
                           WHERE namespace = $1 AND key = $2 AND revision > $3::bigint ORDER BY revision LIMIT \(changesLimit)) h ON true
        ORDER BY h.revision
        """)

    /// The changes of `key` after `revision`, oldest first (at most 1,000 at a time). Throws
    /// ``PostgreSQLError/Kind/revisionCompacted`` when the key changed after `revision` and the namespace's history does
    /// not hold every change: each entry names the revision it replaced, so a gap in the chain shows (the namespace
    /// keeps no history, kept none then, or its retention window has passed).
    func changes(of key: String, after revision: Int64) throws -> [Change] {
        let name = PostgreSQLBackend.canonicalName(key)
        let operation = "reading the changes of key \(PostgreSQLBackend.quoted(name)) after revision \(revision)"
        let result = try pool.withConnection(deadline: .now + options.timeout, readOnly: options.readOnly, operation: operation) { connection in
            try connection.execute(
                Self.changesStatement, [namespace, name, String(revision)], deadline: .now + options.timeout, operation: operation)
        }
        guard let first = result.rows.first else { return [] }
        let keepsHistory = first[0] == "t"
        let current = first[1].flatMap { Int64($0) } ?? 0
        guard current > revision else { return [] }  // nothing after it (placeholders and never-written keys are 0)
        var changes: [Change] = []
        var links: [(revision: Int64, previous: Int64?)] = []
        var previous = revision
        var unbroken = true
        for row in result.rows {
            guard let written = row[2].flatMap({ Int64($0) }) else { continue }
            let replaced = row[3].flatMap { Int64($0) }
            if replaced != previous { unbroken = false }
            links.append((written, replaced))
            changes.append(Change(stored: row[5].map { PostgreSQLBackend.storedValue(type: row[4] ?? "", text: $0) }, revision: written))
            previous = written
        }
        let complete = unbroken && !changes.isEmpty && (changes.count == Self.changesLimit || previous == current)
        guard complete else {
            var error = PostgreSQLError(
                kind: .revisionCompacted, sqlState: "55000",
                message: keepsHistory
                    ? "the namespace's history does not hold every change after revision \(revision) (it was not kept then, or its retention passed them); watch after revision \(Self.oldestRevision(links, current: current)), or read the value and its revision again and watch from there"
                    : "the namespace keeps no history (PostgreSQLDatabase.setHistoryRetention); read the value and its revision again, and watch from there",
                operation: operation, target: pool.target)
            error.oldestRevision = Self.oldestRevision(links, current: current)
            throw error
        }
        return changes
    }

    /// The oldest revision after which every change is in `links` (the entries after a revision, oldest first):
    /// the start of the unbroken chain that ends at `current`, or `current` when the last entry is not it.
    static func oldestRevision(_ links: [(revision: Int64, previous: Int64?)], current: Int64) -> Int64 {
        guard let last = links.last, last.revision == current else { return current }
        var oldest = last.revision
        var index = links.count - 1
        while index > 0, links[index].previous == links[index - 1].revision {
            index -= 1
            oldest = links[index].revision
        }
        return oldest
    }

    /// Waits up to `timeout` for a notification of the namespace.
    func wait(upTo timeout: Duration) {
        if let waiter {
            _ = waiter.wait(upTo: timeout)
        } else {
            Thread.sleep(forTimeInterval: timeout.timeInterval)
        }
    }

    func close() {
        waiter?.signal()
        waiter?.close()
    }
}
