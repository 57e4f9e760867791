import Foundation
import PrefsSQLite

/// The SQLite store's schema, version by version, as GRDB's `DatabaseMigrator` keeps an app's: an ordered list of
/// migrations, each identified by the version it reaches, recorded in `PRAGMA user_version`
/// (https://www.sqlite.org/pragma.html#pragma_user_version) beside `PRAGMA application_id` 0x50726673.
///
/// - Opening a store runs the migrations past its version, all in **one transaction** (`BEGIN IMMEDIATE`) with the
///   `user_version` they reach: a store is at one version or the next, never between, and a migration that fails
///   leaves it as it was.
/// - **Two processes upgrading at once** run each migration once: the second waits for the first's write lock (the
///   busy timeout), then reads the version again inside its own transaction and finds nothing left to do.
/// - A store of a **newer** version is refused with ``PrefsError/unsupportedFormatVersion(path:found:supported:)`` and
///   left untouched: a migration raises the version only for a change an older release would misread. One it reads
///   right (a table it ignores: `prefs_renamed`, created by the first declaration with former names) keeps the version,
///   so that release 0.1, which reads version 1, keeps working on the store.
///
/// Version 1, release 0.1's schema, is the only one so far. Each later version is a migration appended to
/// ``standard``, with a fixture of the previous release's store that the tests upgrade (`Tests/Releases/`).
struct SQLiteMigrations: Sendable {
    /// One step of the schema.
    struct Migration: Sendable {
        /// The `user_version` the store has once this migration ran.
        let version: Int64
        /// What it does, for errors and the docs.
        let summary: String
        /// The statements, run in order inside the upgrade's transaction.
        let statements: [String]
    }

    let migrations: [Migration]

    /// The version a store has once every migration ran: the newest this release reads and writes.
    var newest: Int64 { migrations.last?.version ?? 0 }

    /// Release 0.1's schema (version 1), and every version since.
    static let standard = SQLiteMigrations(migrations: [
        Migration(
            version: 1, summary: "the values and the key declarations",
            statements: [
                "CREATE TABLE prefs (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID",
                "CREATE TABLE prefs_declared (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, initial TEXT) WITHOUT ROWID",
            ])
    ])

    /// These migrations and one more, reaching `version` (tests: a schema of a later release).
    func appending(version: Int64, summary: String, statements: [String]) -> SQLiteMigrations {
        SQLiteMigrations(migrations: migrations + [Migration(version: version, summary: summary, statements: statements)])
    }

    /// Brings the store `connection` has open from `version` (0 for a database nobody has used) to ``newest``, inside
    /// the caller's transaction, and records the version reached (and, on a new store, the application id).
    func migrate(_ connection: SQLiteConnection, from version: Int64) throws(SQLiteError) {
        for migration in migrations where migration.version > version {
            for statement in migration.statements { try connection.execute(statement) }
        }
        if version == 0 { try connection.execute("PRAGMA application_id = \(SQLiteBackend.applicationID)") }
        try connection.execute("PRAGMA user_version = \(newest)")
    }
}
