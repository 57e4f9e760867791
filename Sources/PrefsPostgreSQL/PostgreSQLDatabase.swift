import Foundation
import Prefs

/// A PostgreSQL database's namespaces, to manage: list them, delete one, delete those not written for a while, keep a
/// history for watches from a revision, and prune what retention no longer needs.
///
/// ```swift
/// let database = PostgreSQLDatabase("postgresql://admin@db.internal/prefs")
/// for namespace in try database.namespaces() where namespace.values == 0 { try database.deleteNamespace(namespace.name) }
/// try database.deleteNamespaces(inactiveFor: .seconds(365 * 86_400))
/// try database.setHistoryRetention(.seconds(7 * 86_400), for: "user-42")
/// try database.prune()   // from a daily job
/// ```
/// Stores open on a namespace that is deleted read it as empty from their next check; a store that writes to it
/// afterwards registers it again.
public struct PostgreSQLDatabase: Sendable {
    /// The connection string, as given (it may hold a password: never shown).
    private let conninfo: String
    private let options: PostgreSQLOptions

    /// The database of `conninfo` (a URL or `key=value` pairs, as for `Prefs.Storage.postgreSQL(_:namespace:options:)`).
    /// Connecting waits for the first call.
    public init(_ conninfo: String, options: PostgreSQLOptions = .init()) {
        self.conninfo = conninfo
        self.options = options
    }

    /// One namespace of the database.
    public struct Namespace: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// How many values it holds.
        public var values: Int
        /// When it was last written (a value's write or removal); nil when it holds no row.
        public var lastWrite: Date?
        /// How long its history is kept for watches from a revision; nil when it keeps none.
        public var historyRetention: Duration?
    }

    /// What ``prune(tombstonesOlderThan:)`` removed.
    public struct PruneReport: Sendable, Hashable {
        /// History entries past their namespace's retention window or the options' bounds.
        public var historyEntries: Int
        /// Records of removed values (tombstones) older than the age given.
        public var tombstones: Int
    }

    /// The database with the password hidden.
    public var description: String { PostgreSQLRedaction.redact(conninfo) }

    /// Every namespace that is registered or holds a row, by name.
    public func namespaces() throws(PostgreSQLError) -> [Namespace] {
        let rows = try run("listing the namespaces") { connection, deadline in
            try connection.execute(
                """
                SELECT a.namespace, count(v.value), extract(epoch FROM max(v.changed_at)), extract(epoch FROM n.history_retention)
                FROM (SELECT namespace FROM prefs_namespaces UNION SELECT namespace FROM prefs_values) AS a
                LEFT JOIN prefs_values v ON v.namespace = a.namespace
                LEFT JOIN prefs_namespaces n ON n.namespace = a.namespace
                GROUP BY a.namespace, n.history_retention ORDER BY a.namespace
                """, deadline: deadline, operation: "listing the namespaces"
            ).rows
        }
        return rows.compactMap { row in
            guard let name = row[0] else { return nil }
            return Namespace(
                name: name, values: row[1].flatMap { Int($0) } ?? 0, lastWrite: row[2].flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) },
                historyRetention: row[3].flatMap { Double($0) }.map { .milliseconds(Int64(($0 * 1000).rounded())) })
        }
    }

    /// Deletes a namespace: its values, declarations, history and registration, in one transaction. Returns whether
    /// it held anything.
    @discardableResult
    public func deleteNamespace(_ name: String) throws(PostgreSQLError) -> Bool {
        try delete([name]) > 0
    }

    /// Deletes every namespace not written for `age` (retention by age), each wholly; returns their names.
    @discardableResult
    public func deleteNamespaces(inactiveFor age: Duration) throws(PostgreSQLError) -> [String] {
        let operation = "finding the namespaces not written for \(age)"
        let names = try run(operation) { connection, deadline in
            try connection.execute(
                """
                SELECT a.namespace FROM (SELECT namespace FROM prefs_namespaces UNION SELECT namespace FROM prefs_values) AS a
                LEFT JOIN prefs_values v ON v.namespace = a.namespace
                GROUP BY a.namespace
                HAVING coalesce(max(v.changed_at), '-infinity') < now() - $1::bigint * interval '1 millisecond'
                ORDER BY a.namespace
                """, [String(age.milliseconds)], deadline: deadline, operation: operation
            ).rows.compactMap { $0.first ?? nil }
        }
        guard !names.isEmpty else { return [] }
        try delete(names)
        return names
    }

    @discardableResult
    private func delete(_ names: [String]) throws(PostgreSQLError) -> Int {
        let operation = "deleting namespace\(names.count == 1 ? " \(PostgreSQLBackend.quoted(names[0]))" : "s")"
        return try run(operation) { connection, deadline in
            // One statement: the rows go, and the stores listening on these namespaces are told at its commit.
            let result = try connection.execute(
                """
                WITH v AS (DELETE FROM prefs_values WHERE namespace = ANY($1::text[]) RETURNING 1),
                d AS (DELETE FROM prefs_declared WHERE namespace = ANY($1::text[]) RETURNING 1),
                r AS (DELETE FROM prefs_renamed WHERE namespace = ANY($1::text[]) RETURNING 1),
                h AS (DELETE FROM prefs_history WHERE namespace = ANY($1::text[]) RETURNING 1),
                n AS (DELETE FROM prefs_namespaces WHERE namespace = ANY($1::text[]) RETURNING 1),
                notified AS (SELECT pg_notify(c, ns) FROM unnest($2::text[], $1::text[]) AS u(c, ns))
                SELECT (SELECT count(*) FROM v) + (SELECT count(*) FROM d) + (SELECT count(*) FROM r) + (SELECT count(*) FROM h)
                    + (SELECT count(*) FROM n) + 0 * (SELECT count(*) FROM notified)
                """, [PostgreSQLBackend.arrayLiteral(names), PostgreSQLBackend.arrayLiteral(names.map(PostgreSQLStore.notificationChannel))],
                deadline: deadline, commits: true, operation: operation)
            return Int(result.firstInteger ?? 0)
        }
    }

    /// Keeps `namespace`'s history for `retention` (nil: keeps none, and forgets what it kept), so that a watch from a
    /// revision (`Prefs.changes(of:after:)`) delivers every change within that window. Each write then also writes
    /// its history entry: a store learns of the change when notified (listening), else at its next check (within its
    /// staleness bound of a read), else within a second of its next write. A watch from a revision older than the
    /// history ends with ``PostgreSQLError/Kind/revisionCompacted``: each entry names the revision it replaced, so a gap
    /// always shows.
    public func setHistoryRetention(_ retention: Duration?, for namespace: String) throws(PostgreSQLError) {
        let operation = "setting the history retention of namespace \(PostgreSQLBackend.quoted(namespace))"
        _ = try run(operation) { connection, deadline in
            // Stores listening on the namespace learn of it at once (the others at their next check).
            try connection.execute(
                """
                WITH kept AS (INSERT INTO prefs_namespaces (namespace, history_retention)
                              VALUES ($1, $2::bigint * interval '1 millisecond')
                              ON CONFLICT (namespace) DO UPDATE SET history_retention = excluded.history_retention RETURNING 1),
                forgotten AS (DELETE FROM prefs_history WHERE namespace = $1 AND $2::bigint IS NULL AND EXISTS (SELECT 1 FROM kept))
                SELECT pg_notify($3, $4) FROM kept
                """,
                [
                    namespace, retention.map { String(max(1, $0.milliseconds)) }, PostgreSQLStore.notificationChannel(for: namespace),
                    PostgreSQLStore.settingsPayload(for: namespace),
                ], deadline: deadline, commits: true, operation: operation)
        }
    }

    /// Removes what retention no longer needs, in every namespace: history entries older than their namespace's
    /// retention window or this database's ``PostgreSQLOptions/historyAge``, or past its newest
    /// ``PostgreSQLOptions/historyRevisions`` (watches from before them then end with
    /// ``PostgreSQLError/Kind/revisionCompacted``; stores prune the namespaces they write themselves), and records
    /// of removed values older than `age` (a store that has not checked for changes since then reads its namespace
    /// again). Run it from a periodic job.
    @discardableResult
    public func prune(tombstonesOlderThan age: Duration = .seconds(30 * 86_400)) throws(PostgreSQLError) -> PruneReport {
        let operation = "pruning"
        return try run(operation) { connection, deadline in
            let history = try connection.execute(
                """
                WITH ranked AS (SELECT h.namespace, h.key, h.revision, h.changed_at, n.history_retention,
                                       row_number() OVER (PARTITION BY h.namespace ORDER BY h.revision DESC) AS newer
                                FROM prefs_history h JOIN prefs_namespaces n ON n.namespace = h.namespace),
                doomed AS (SELECT namespace, key, revision FROM ranked
                           WHERE history_retention IS NOT NULL
                               AND (changed_at < now() - least(history_retention, $1::bigint * interval '1 millisecond') OR newer > $2::bigint)),
                gone AS (DELETE FROM prefs_history h USING doomed d
                         WHERE h.namespace = d.namespace AND h.key = d.key AND h.revision = d.revision RETURNING 1)
                SELECT count(*) FROM gone
                """,
                [options.historyAge.map { String(max(1, $0.milliseconds)) }, options.historyRevisions.map { String(max(1, $0)) }],
                deadline: deadline, commits: true, operation: operation)
            let tombstones = try connection.execute(
                """
                WITH gone AS (DELETE FROM prefs_values WHERE value IS NULL AND changed_at < now() - $1::bigint * interval '1 millisecond'
                              RETURNING namespace, revision),
                marked AS (UPDATE prefs_namespaces n SET pruned_xid = pg_current_xact_id()
                           WHERE n.namespace IN (SELECT namespace FROM gone WHERE revision > 0))
                SELECT count(*) FROM gone
                """, [String(age.milliseconds)], deadline: deadline, commits: true, operation: operation)
            return PruneReport(historyEntries: Int(history.firstInteger ?? 0), tombstones: Int(tombstones.firstInteger ?? 0))
        }
    }

    /// Runs `body` on a connection of this database's pool, with the deadline of one call.
    private func run<Result>(
        _ operation: String, _ body: (PostgreSQLConnection, ContinuousClock.Instant) throws -> Result
    ) throws(PostgreSQLError) -> Result {
        let pool = try PostgreSQLPool.shared(conninfo: conninfo, options: options)
        let deadline = ContinuousClock.now + options.timeout
        do {
            return try pool.withConnection(deadline: deadline, readOnly: options.readOnly, operation: operation) { try body($0, deadline) }
        } catch let error as PostgreSQLError {
            throw error
        } catch {
            // `body` (a connection's calls) and the pool throw only this type: not reached.
            throw PostgreSQLError(
                kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer, message: "\(error)", operation: operation,
                target: description)
        }
    }
}
