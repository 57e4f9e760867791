import Foundation
import PrefsSupport
public import Prefs
public import PrefsSync

/// A sync server in PostgreSQL: each user's devices push and pull their synced keys through a table of its own,
/// `prefs_sync`, where the server applies sync's rule itself (per key, the greatest hybrid timestamp wins; a change id
/// already held is a no-op), so devices writing at once converge whatever order their pushes arrive in.
///
/// Each user is a PostgreSQL role: a device connects as its user, and row-level security gives a role its own rows only
/// (`user_name = current_user`), so one user's credentials reach none of another's keys.
///
/// ```swift
/// let transport = try PostgreSQLSyncTransport("postgresql://alice@db.internal/prefs?sslmode=verify-full")
/// let engine = try SyncEngine(prefs: prefs, transport: transport, namespaces: ["editor."])
/// try await engine.sync()
/// ```
///
/// The tables are created on first use by a role that may (the database's owner, once; then every role may use them),
/// versioned in `prefs_sync_meta`: a release refuses a database in a newer format with
/// `PrefsError.unsupportedFormatVersion`. Calls block the calling task while they wait for
/// the server, each bounded by `timeout`.
public final class PostgreSQLSyncTransport: SyncTransport {
    /// The format of the tables this release reads and writes.
    static let formatVersion = 1
    private let connectionString: PostgreSQLConnectionString
    private let target: String
    private let timeout: Duration
    private let maximumSkew: Duration
    private let connection = Locked<ConnectionBox>(ConnectionBox())

    /// A transport to the database of `conninfo` (a URL or `key=value` pairs, as for the PostgreSQL store), as the
    /// role it names. Connecting waits for the first call.
    ///
    /// ```swift
    /// let transport = try PostgreSQLSyncTransport("postgresql://alice@db.internal/prefs", timeout: .seconds(5))
    /// ```
    ///
    /// A push whose timestamps are more than `maximumSkew` ahead of the server's clock is refused whole (a device whose
    /// clock is wrong cannot win on the server; its changes stay queued until its clock is right).
    ///
    /// Throws `PrefsError.database` (a ``PostgreSQLError``) for a connection string that does not read.
    public init(_ conninfo: String, timeout: Duration = .seconds(10), maximumSkew: Duration = .seconds(300)) throws(PrefsError) {
        target = PostgreSQLRedaction.redact(conninfo)
        do {
            connectionString = try PostgreSQLConnectionString.parse(conninfo)
        } catch {
            throw PostgreSQLError(
                kind: .connectionFailed, sqlState: PostgreSQLError.ClientCode.cannotConnect, message: error.message,
                operation: "reading the connection string", target: target
            ).prefsError
        }
        self.timeout = timeout
        self.maximumSkew = maximumSkew
    }

    /// Applies `changes` for the connected user, in one transaction: per key, a change replaces the row only when its
    /// timestamp is greater (`INSERT … ON CONFLICT … DO UPDATE … WHERE excluded.hlc > prefs_sync.hlc`), each accepted
    /// change with a new revision.
    ///
    /// ```swift
    /// try await transport.push(try engine.pendingChanges())
    /// ```
    public func push(_ changes: [SyncChange]) async throws(PrefsError) {
        let (seconds, attoseconds) = maximumSkew.components
        let bound = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let refused = try run("pushing changes") { connection, deadline throws(PostgreSQLError) -> (SyncChange, Int64)? in
            let now =
                try connection.execute(
                    "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", deadline: deadline, operation: "reading the server's clock"
                ).firstInteger ?? 0
            if let ahead = changes.first(where: { $0.timestamp.milliseconds - now > bound }) {
                return (ahead, ahead.timestamp.milliseconds - now)
            }
            for change in changes {
                let value = change.valueText
                try connection.execute(
                    """
                    INSERT INTO prefs_sync AS t (user_name, key, type, value, hlc, change_id, revision)
                    VALUES (current_user, $1, $2, $3, $4, $5, nextval('prefs_sync_revision'))
                    ON CONFLICT (user_name, key) DO UPDATE
                    SET type = excluded.type, value = excluded.value, hlc = excluded.hlc, change_id = excluded.change_id,
                    revision = excluded.revision
                    WHERE excluded.hlc > t.hlc
                    """,
                    [change.key, value?.type, value?.json, change.timestamp.description, change.id], deadline: deadline,
                    operation: "pushing the change of \(change.key)")
            }
            return nil
        }
        if let (change, ahead) = refused {
            throw .backend(
                "PostgreSQL sync",
                reason: "\(target): refused the push: \(change) is \(ahead) ms ahead of the server's clock (at most \(bound) allowed)")
        }
    }

    /// The connected user's changes accepted after revision `cursor`, in revision order; `compacted` (with every row)
    /// when removals after `cursor` were forgotten by ``compact(tombstonesBefore:)``.
    ///
    /// ```swift
    /// let (changes, cursor, compacted) = try await transport.pull(since: nil)
    /// ```
    public func pull(since cursor: String?) async throws(PrefsError) -> (changes: [SyncChange], cursor: String?, compacted: Bool) {
        guard let from = cursor.map({ Int64($0) }) ?? 0 else {
            throw .backend("PostgreSQL sync", reason: "the cursor \(cursor ?? "") is not a revision")
        }
        let (rows, compactedThrough) = try run("pulling changes") { connection, deadline throws(PostgreSQLError) in
            let compacted =
                try connection.execute(
                    "SELECT coalesce(max(compacted_through), 0) FROM prefs_sync_users WHERE user_name = current_user", deadline: deadline,
                    operation: "reading the compaction horizon"
                ).firstInteger ?? 0
            let after = from < compacted ? 0 : from
            let rows = try connection.execute(
                "SELECT key, type, value, hlc, change_id, revision FROM prefs_sync WHERE user_name = current_user AND revision > $1 ORDER BY revision",
                [String(after)], deadline: deadline, operation: "pulling changes"
            ).rows
            return (rows, compacted)
        }
        var changes: [SyncChange] = []
        var last = from < compactedThrough ? 0 : from
        for row in rows {
            guard row.count == 6, let key = row[0], let hlc = row[3], let stamp = HybridTimestamp(hlc), let id = row[4],
                let revision = row[5].flatMap({ Int64($0) })
            else {
                throw .backend("PostgreSQL sync", reason: "\(target): a row of prefs_sync is not a change: \(row.map { $0 ?? "NULL" })")
            }
            var value: StoredValue?
            if let type = row[1], let json = row[2] { value = try SyncChange.value(type: type, json: json, key: key) }
            changes.append(SyncChange(key: key, value: value, timestamp: stamp, id: id))
            last = max(last, revision)
        }
        return (changes, String(last), from < compactedThrough)
    }

    /// Forgets the connected user's removals whose timestamp is before `milliseconds` (since 1970); a device whose
    /// cursor is older than the last one forgotten resyncs from scratch at its next pull. Run it from a periodic job.
    ///
    /// ```swift
    /// try transport.compact(tombstonesBefore: Int64(Date().timeIntervalSince1970 * 1000) - 90 * 86_400_000)
    /// ```
    @discardableResult
    public func compact(tombstonesBefore milliseconds: Int64) throws(PrefsError) -> Int {
        try run("compacting removals") { connection, deadline throws(PostgreSQLError) in
            let threshold = HybridTimestamp(milliseconds: milliseconds, counter: 0, device: "0").description
            let removed = try connection.execute(
                "DELETE FROM prefs_sync WHERE user_name = current_user AND value IS NULL AND hlc < $1 RETURNING revision", [threshold],
                deadline: deadline, operation: "compacting removals"
            ).rows.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } }
            guard let horizon = removed.max() else { return 0 }
            try connection.execute(
                """
                INSERT INTO prefs_sync_users (user_name, compacted_through) VALUES (current_user, $1)
                ON CONFLICT (user_name) DO UPDATE SET compacted_through = greatest(prefs_sync_users.compacted_through, excluded.compacted_through)
                """, [String(horizon)], deadline: deadline, operation: "recording the compaction horizon")
            return removed.count
        }
    }

    // MARK: - Connection and schema

    /// Runs `body` in one transaction on this transport's connection (connecting, and preparing the schema, first),
    /// under the user's advisory lock, so that one user's revisions are committed in the order they are drawn and a
    /// pull never passes one that commits later.
    private func run<Result>(
        _ operation: String, _ body: (PostgreSQLConnection, ContinuousClock.Instant) throws(PostgreSQLError) -> Result
    ) throws(PrefsError) -> Result {
        let deadline = ContinuousClock.now + timeout
        do {
            return try connection.withLock { box throws -> Result in
                if box.connection?.isOpen != true || box.connection?.isHealthy != true {
                    box.connection?.close()
                    box.connection = nil
                    let made = try PostgreSQLConnection(
                        settings: [("connect_timeout", String(max(1, Int(timeout.components.seconds))))] + connectionString.settings,
                        target: target, secrets: connectionString.secrets, deadline: deadline)
                    try Self.prepare(made, deadline: deadline)
                    box.connection = made
                }
                let connection = box.connection!
                do {
                    try connection.execute("BEGIN", deadline: deadline, operation: operation)
                    try connection.execute(
                        "SELECT pg_advisory_xact_lock(hashtext('prefs_sync:' || current_user))", deadline: deadline, operation: operation)
                    let result = try body(connection, deadline)
                    try connection.execute("COMMIT", deadline: deadline, commits: true, operation: operation)
                    return result
                } catch {
                    if connection.isOpen, connection.isInTransaction {
                        _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back")
                    }
                    throw error
                }
            }
        } catch let error as PostgreSQLError {
            throw error.prefsError
        } catch let error as PrefsError {
            throw error
        } catch {
            throw .backend("PostgreSQL sync", reason: "\(target): \(operation): \(error)")
        }
    }

    /// The tables, format 1.
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS prefs_sync_meta (name text PRIMARY KEY, value text NOT NULL)",
        "CREATE SEQUENCE IF NOT EXISTS prefs_sync_revision",
        """
        CREATE TABLE IF NOT EXISTS prefs_sync (user_name text NOT NULL DEFAULT current_user, key text NOT NULL, type text, value text, \
        hlc text COLLATE "C" NOT NULL, change_id text NOT NULL, revision bigint NOT NULL, PRIMARY KEY (user_name, key), \
        CHECK ((type IS NULL) = (value IS NULL)))
        """,
        "CREATE INDEX IF NOT EXISTS prefs_sync_by_revision ON prefs_sync (user_name, revision)",
        """
        CREATE TABLE IF NOT EXISTS prefs_sync_users (user_name text PRIMARY KEY DEFAULT current_user, \
        compacted_through bigint NOT NULL DEFAULT 0)
        """,
        "ALTER TABLE prefs_sync ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE prefs_sync_users ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY prefs_sync_own ON prefs_sync USING (user_name = current_user) WITH CHECK (user_name = current_user)",
        "CREATE POLICY prefs_sync_users_own ON prefs_sync_users USING (user_name = current_user) WITH CHECK (user_name = current_user)",
        // Every role may use the tables; row-level security gives each its own rows.
        "GRANT SELECT, INSERT, UPDATE, DELETE ON prefs_sync, prefs_sync_users TO PUBLIC",
        "GRANT SELECT ON prefs_sync_meta TO PUBLIC",
        "GRANT USAGE ON SEQUENCE prefs_sync_revision TO PUBLIC",
    ]

    /// Creates the tables when the database has none (under an advisory lock, so that two devices starting together
    /// agree), and refuses a format newer than this release's.
    static func prepare(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws {
        var found = try formatVersion(connection, deadline: deadline)
        if found == nil {
            let operation = "creating the sync tables"
            try connection.execute("BEGIN", deadline: deadline, operation: operation)
            do {
                try connection.execute("SELECT pg_advisory_xact_lock(1349674612)", deadline: deadline, operation: operation)
                if try formatVersion(connection, deadline: deadline) == nil {
                    for statement in createStatements { try connection.execute(statement, deadline: deadline, operation: operation) }
                    try connection.execute(
                        "INSERT INTO prefs_sync_meta (name, value) VALUES ('format_version', $1)", [String(formatVersion)], deadline: deadline,
                        operation: operation)
                }
                try connection.execute("COMMIT", deadline: deadline, commits: true, operation: operation)
            } catch {
                if connection.isOpen, connection.isInTransaction { _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back") }
                throw error
            }
            found = try formatVersion(connection, deadline: deadline)
        }
        guard let found, found <= formatVersion else {
            throw PrefsError.unsupportedFormatVersion(path: connection.target, found: found ?? 0, supported: formatVersion)
        }
    }

    private static func formatVersion(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws -> Int? {
        let operation = "reading the sync tables' format"
        let exists = try connection.execute("SELECT to_regclass('prefs_sync_meta') IS NOT NULL", deadline: deadline, operation: operation)
        guard exists.rows.first?.first == "t" else { return nil }
        let row = try connection.execute("SELECT value FROM prefs_sync_meta WHERE name = 'format_version'", deadline: deadline, operation: operation)
        guard let text = row.rows.first?.first ?? nil else { return nil }
        guard let version = Int(text) else {
            throw PrefsError.corruptStore(path: connection.target, reason: "prefs_sync_meta.format_version is \(text), not a number")
        }
        return version
    }
}

/// The transport's one connection, used under its mutex.
// @unchecked Sendable: the connection is only touched inside `Locked.withLock`.
private final class ConnectionBox: @unchecked Sendable {
    var connection: PostgreSQLConnection?
}
