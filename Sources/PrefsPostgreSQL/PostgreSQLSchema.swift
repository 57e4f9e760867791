import Foundation
import Prefs

/// The store's tables, format 2: created on first use, or migrated from an older format, under an advisory lock (so
/// instances starting together agree); versioned in `prefs_meta`; checked on every new connection.
///
/// ```sql
/// prefs_meta (name text PRIMARY KEY, value text NOT NULL)              -- ('format_version', '2')
/// prefs_values (namespace, key, type, value, revision, previous_revision, xid, changed_at) -- PRIMARY KEY (namespace, key)
/// prefs_namespaces (namespace PRIMARY KEY, created_xid, pruned_xid, history_retention)
/// prefs_history (namespace, key, revision, previous_revision, type, value, changed_at) -- PRIMARY KEY (namespace, key, revision)
/// prefs_declared (namespace, key, type, initial), prefs_renamed (namespace, key, position, former)
/// SEQUENCE prefs_revision
/// ```
/// A row of `prefs_values` whose `value` is NULL is a removed value (a tombstone: its revision says when), kept so that
/// other instances see the removal. `type` and `value` are NULL together: the store's statements write them so, and a
/// row that breaks the rule reads as a value of an unknown type, or as removed. No CHECK constraint says so, because
/// the server reads a CHECK's expression again at every write: 6% of a one-key upsert's work (a database created by an
/// earlier release has one, `prefs_values_check`, which its owner may drop). `xid` is the writing transaction's id,
/// which the staleness check compares with a snapshot; `revision` comes from the sequence, drawn under the row's lock,
/// so one key's revisions grow in commit order, and `previous_revision` is the one it replaced, so that a key's history
/// is a chain whose gaps show.
enum PostgreSQLSchema {
    /// The advisory lock key under which the schema is created or migrated ("Prfs").
    static let advisoryLock = "1349674611"

    /// Format 2, from nothing.
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS prefs_meta (name text PRIMARY KEY, value text NOT NULL)",
        "CREATE SEQUENCE IF NOT EXISTS prefs_revision",
        """
        CREATE TABLE IF NOT EXISTS prefs_namespaces (namespace text PRIMARY KEY, \
        created_xid xid8 NOT NULL DEFAULT pg_current_xact_id(), pruned_xid xid8, history_retention interval)
        """,
        """
        CREATE TABLE IF NOT EXISTS prefs_values (namespace text NOT NULL, key text NOT NULL, type text, value text, \
        revision bigint NOT NULL, previous_revision bigint NOT NULL DEFAULT 0, xid xid8 NOT NULL, changed_at timestamptz NOT NULL, \
        PRIMARY KEY (namespace, key))
        """,
        historyTable,
        """
        CREATE TABLE IF NOT EXISTS prefs_declared (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, initial text, \
        PRIMARY KEY (namespace, key))
        """,
        """
        CREATE TABLE IF NOT EXISTS prefs_renamed (namespace text NOT NULL, key text NOT NULL, position integer NOT NULL, \
        former text NOT NULL, PRIMARY KEY (namespace, key, position))
        """,
    ]

    static let historyTable = """
        CREATE TABLE IF NOT EXISTS prefs_history (namespace text NOT NULL, key text NOT NULL, revision bigint NOT NULL, \
        previous_revision bigint NOT NULL, type text, value text, changed_at timestamptz NOT NULL, PRIMARY KEY (namespace, key, revision))
        """

    /// The migrations: `migrations[n]` takes format `n` to `n + 1`, in one transaction.
    static let migrations: [Int: [String]] = [
        // 1 → 2: revisions, removals kept as tombstones, the transaction id each value was written by, history, and
        // no generation counter (its row lock made every writer of a namespace wait). `prefs` is renamed, so that a
        // process of the previous release still running fails at its next statement instead of misreading a tombstone.
        1: [
            "CREATE SEQUENCE IF NOT EXISTS prefs_revision",
            "ALTER TABLE prefs RENAME TO prefs_values",
            "ALTER INDEX prefs_pkey RENAME TO prefs_values_pkey",
            """
            ALTER TABLE prefs_values ALTER COLUMN type DROP NOT NULL, ALTER COLUMN value DROP NOT NULL, \
            ADD COLUMN revision bigint, ADD COLUMN previous_revision bigint NOT NULL DEFAULT 0, ADD COLUMN xid xid8, \
            ADD COLUMN changed_at timestamptz
            """,
            """
            UPDATE prefs_values v SET revision = nextval('prefs_revision'), xid = pg_current_xact_id(), \
            changed_at = coalesce((SELECT n.updated_at FROM prefs_namespaces n WHERE n.namespace = v.namespace), now())
            """,
            """
            ALTER TABLE prefs_values ALTER COLUMN revision SET NOT NULL, ALTER COLUMN xid SET NOT NULL, \
            ALTER COLUMN changed_at SET NOT NULL
            """,
            """
            ALTER TABLE prefs_namespaces DROP COLUMN generation, DROP COLUMN updated_at, \
            ADD COLUMN created_xid xid8 NOT NULL DEFAULT pg_current_xact_id(), ADD COLUMN pruned_xid xid8, \
            ADD COLUMN history_retention interval
            """,
            "INSERT INTO prefs_namespaces (namespace) SELECT DISTINCT namespace FROM prefs_values ON CONFLICT (namespace) DO NOTHING",
            historyTable,
        ]
    ]

    /// Statements whose success proves the schema usable (run with LIMIT 0, writing nothing).
    static let probes = [
        "SELECT namespace, created_xid, pruned_xid, history_retention FROM prefs_namespaces LIMIT 0",
        "SELECT namespace, key, type, value, revision, previous_revision, xid, changed_at FROM prefs_values LIMIT 0",
        "SELECT namespace, key, revision, previous_revision, type, value, changed_at FROM prefs_history LIMIT 0",
        "SELECT namespace, key, type, initial FROM prefs_declared LIMIT 0",
        "SELECT namespace, key, position, former FROM prefs_renamed LIMIT 0",
        "SELECT 'prefs_revision'::regclass LIMIT 0",
    ]

    /// Brings the database to this release's format: creates the schema when it has none, migrates an older format,
    /// refuses a newer one (``PrefsError/unsupportedFormatVersion(path:found:supported:)``, changing nothing). With
    /// `readOnly` (a read-only store, or a hot standby), it only checks.
    static func prepare(_ connection: PostgreSQLConnection, readOnly: Bool, deadline: ContinuousClock.Instant) throws {
        let found = try formatVersion(connection, deadline: deadline)
        if found == PostgreSQLStore.formatVersion { return }
        if let found, found > PostgreSQLStore.formatVersion {
            // Written by a newer release: its rows may mean something this one would misread or overwrite.
            throw PrefsError.unsupportedFormatVersion(path: connection.target, found: found, supported: PostgreSQLStore.formatVersion)
        }
        guard !readOnly else {
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: found == nil ? "42P01" : "55000",
                message: found.map {
                    "the database holds the store's format \($0), older than this release's \(PostgreSQLStore.formatVersion); a read-only store or a standby does not upgrade it (open it once with a store that may write, on the primary)"
                } ?? "the database has no Prefs tables yet; a read-only store or a standby does not create them",
                operation: "checking the schema", target: connection.target)
        }
        if found == nil { try create(connection, deadline: deadline) }
        while let version = try formatVersion(connection, deadline: deadline), version < PostgreSQLStore.formatVersion {
            try migrate(from: version, connection, deadline: deadline)
        }
    }

    /// Creates format 2, unless a process that held the lock first did.
    private static func create(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws {
        try inLockedTransaction(connection, deadline: deadline, operation: "creating the schema") {
            // The catalog lookup before the lock may predate a creator that committed while this one waited.
            guard try formatVersion(connection, deadline: deadline) == nil else { return }
            for statement in createStatements { try connection.execute(statement, deadline: deadline, operation: "creating the schema") }
            try connection.execute(
                "INSERT INTO prefs_meta (name, value) VALUES ('format_version', $1) ON CONFLICT (name) DO NOTHING",
                [String(PostgreSQLStore.formatVersion)], deadline: deadline, operation: "creating the schema")
        }
    }

    /// Runs the migration from `version` in one transaction, unless another process did while this one waited for the lock.
    private static func migrate(from version: Int, _ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws {
        guard let statements = migrations[version] else {
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer,
                message: "no migration from format \(version) (this release knows formats 1 to \(PostgreSQLStore.formatVersion))",
                operation: "upgrading the schema", target: connection.target)
        }
        let operation = "upgrading the schema from format \(version) to \(version + 1)"
        try inLockedTransaction(connection, deadline: deadline, operation: operation) {
            guard try formatVersion(connection, deadline: deadline) == version else { return }
            for statement in statements { try connection.execute(statement, deadline: deadline, operation: operation) }
            try connection.execute(
                "UPDATE prefs_meta SET value = $1 WHERE name = 'format_version'", [String(version + 1)], deadline: deadline, operation: operation)
        }
    }

    /// `BEGIN`, the advisory lock, `body`, `COMMIT`; `ROLLBACK` when `body` throws.
    private static func inLockedTransaction(
        _ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant, operation: String, _ body: () throws -> Void
    ) throws {
        try connection.execute("BEGIN", deadline: deadline, operation: operation)
        do {
            try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [advisoryLock], deadline: deadline, operation: operation)
            try body()
            try connection.execute("COMMIT", deadline: deadline, commits: true, operation: operation)
        } catch {
            if connection.isOpen, connection.isInTransaction {
                _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back")
            }
            throw error
        }
    }

    /// The format version recorded in the database, or nil when it has no `prefs_meta` table yet.
    static func formatVersion(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws(PostgreSQLError) -> Int? {
        let operation = "reading the format version"
        let exists = try connection.execute("SELECT to_regclass('prefs_meta') IS NOT NULL", deadline: deadline, operation: operation)
        guard exists.rows.first?.first == "t" else { return nil }
        let row = try connection.execute("SELECT value FROM prefs_meta WHERE name = 'format_version'", deadline: deadline, operation: operation)
        guard let text = row.rows.first?.first ?? nil else { return nil }
        guard let version = Int(text) else {
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer,
                message: "prefs_meta.format_version is \(PostgreSQLBackend.quoted(text)), not a number", operation: operation,
                target: connection.target)
        }
        return version
    }

    /// Throws unless the database is in this release's format and (`probing`) its tables answer.
    static func checkVersion(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant, probing: Bool) throws {
        let version = try formatVersion(connection, deadline: deadline)
        guard version == PostgreSQLStore.formatVersion else {
            if let version, version > PostgreSQLStore.formatVersion {
                throw PrefsError.unsupportedFormatVersion(path: connection.target, found: version, supported: PostgreSQLStore.formatVersion)
            }
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer,
                message: "the database is in format \(version.map(String.init) ?? "none"), not \(PostgreSQLStore.formatVersion)",
                operation: "checking the schema", target: connection.target)
        }
        guard probing else { return }
        let problems = try problems(connection, deadline: deadline)
        if !problems.isEmpty {
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer, message: problems.joined(separator: "; "),
                operation: "checking the schema", target: connection.target)
        }
    }

    /// What is missing from the schema (each probe that fails), empty when it is usable.
    static func problems(_ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant) throws(PostgreSQLError) -> [String] {
        var problems: [String] = []
        for probe in probes {
            do {
                try connection.execute(probe, deadline: deadline, operation: "checking the schema")
            } catch  where error.kind == .statementFailed {
                problems.append("\(probe.replacingOccurrences(of: " LIMIT 0", with: "")) fails: \(error.message)")
            }
        }
        return problems
    }
}
