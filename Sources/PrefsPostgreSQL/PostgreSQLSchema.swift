import Foundation
@_spi(Tooling) import Prefs

/// The store's tables: created on first use under an advisory lock (so instances starting together agree), versioned
/// in `prefs_meta`, checked on every open.
enum PostgreSQLSchema {
    /// The advisory lock key under which the schema is created ("Prfs").
    static let advisoryLock = "1349674611"

    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS prefs_meta (name text PRIMARY KEY, value text NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS prefs_namespaces (namespace text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0, \
        updated_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS prefs (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, value text NOT NULL, \
        PRIMARY KEY (namespace, key))
        """,
        """
        CREATE TABLE IF NOT EXISTS prefs_declared (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, initial text, \
        PRIMARY KEY (namespace, key))
        """,
        """
        CREATE TABLE IF NOT EXISTS prefs_renamed (namespace text NOT NULL, key text NOT NULL, position integer NOT NULL, \
        former text NOT NULL, PRIMARY KEY (namespace, key, position))
        """,
    ]

    /// Statements whose success proves the schema usable (run with LIMIT 0, writing nothing).
    static let probes = [
        "SELECT namespace, generation, updated_at FROM prefs_namespaces LIMIT 0",
        "SELECT namespace, key, type, value FROM prefs LIMIT 0",
        "SELECT namespace, key, type, initial FROM prefs_declared LIMIT 0",
        "SELECT namespace, key, position, former FROM prefs_renamed LIMIT 0",
    ]

    /// Creates the schema when the database has none, refuses a newer format, and registers `namespace`.
    static func prepare(_ connection: PostgreSQLConnection, namespace: String) throws {
        let operation = "preparing the schema"
        if let version = try formatVersion(connection) {
            try check(version, connection)
        } else {
            try connection.execute("BEGIN", operation: operation)
            do {
                try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [advisoryLock], operation: operation)
                if let version = try formatVersion(connection) {
                    try check(version, connection)
                } else {
                    for statement in createStatements { try connection.execute(statement, operation: operation) }
                    // ON CONFLICT: the catalog lookup above may predate a creator that committed while this one
                    // waited for the lock; what counts is the version recorded once this row is settled.
                    try connection.execute(
                        "INSERT INTO prefs_meta (name, value) VALUES ('format_version', $1) ON CONFLICT (name) DO NOTHING",
                        [String(PostgreSQLStore.formatVersion)], operation: operation)
                    if let version = try formatVersion(connection) { try check(version, connection) }
                }
                try connection.execute("COMMIT", operation: operation)
            } catch {
                if connection.isInTransaction { _ = try? connection.execute("ROLLBACK", operation: operation) }
                throw error
            }
        }
        try connection.execute(
            "INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT (namespace) DO NOTHING", [namespace],
            operation: "registering namespace \(PostgreSQLBackend.quoted(namespace))")
    }

    /// The format version recorded in the database, or nil when it has no `prefs_meta` table yet.
    private static func formatVersion(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> Int? {
        let operation = "reading the format version"
        let exists = try connection.execute("SELECT to_regclass('prefs_meta') IS NOT NULL", operation: operation)
        guard exists.rows.first?.first == "t" else { return nil }
        let row = try connection.execute("SELECT value FROM prefs_meta WHERE name = 'format_version'", operation: operation)
        guard let text = row.rows.first?.first ?? nil else { return nil }
        guard let version = Int(text) else {
            throw PostgreSQLError(
                kind: .unexpectedSchema, message: "prefs_meta.format_version is \(PostgreSQLBackend.quoted(text)), not a number",
                operation: operation, target: connection.target)
        }
        return version
    }

    private static func check(_ version: Int, _ connection: PostgreSQLConnection) throws {
        guard version <= PostgreSQLStore.formatVersion else {
            // Written by a newer release: its rows may mean something this one would misread or overwrite.
            throw PrefsError.unsupportedFormatVersion(path: connection.target, found: version, supported: PostgreSQLStore.formatVersion)
        }
        let problems = try problems(connection)
        if !problems.isEmpty {
            throw PostgreSQLError(
                kind: .unexpectedSchema, message: problems.joined(separator: "; "), operation: "checking the schema", target: connection.target)
        }
    }

    /// What is missing from the schema (each probe that fails), empty when it is usable.
    static func problems(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> [String] {
        var problems: [String] = []
        for probe in probes {
            do {
                try connection.execute(probe, operation: "checking the schema")
            } catch  where error.kind == .statementFailed {
                problems.append("\(probe.replacingOccurrences(of: " LIMIT 0", with: "")) fails: \(error.message)")
            }
        }
        return problems
    }
}
