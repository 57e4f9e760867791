import Foundation
import TestFixtures
@testable import Prefs
import PrefsSQLite
import PrefsTestHarness
import PrefsTesting
import Testing

/// The SQLite store's schema migrations (`SQLiteMigrations`): versioned in `user_version`, all pending ones in one
/// transaction, once however many processes open the store at the same moment, from every older release's store
/// (`Tests/Releases/VERSION/sqlite/store.sqlite`). Only version 1 exists so far, so the tests add a version 2 as a later
/// release would (`Storage.addingSQLiteMigration`).
@Suite("SQLite schema migrations")
struct SQLiteMigrationTests {
    static let releases = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Releases")
    /// Every release's SQLite store the tests keep.
    static let olderStores = ["0.1"]
    static let version2 = [
        "CREATE TABLE prefs_meta (name TEXT PRIMARY KEY NOT NULL, value TEXT) WITHOUT ROWID", "INSERT INTO prefs_meta VALUES ('upgraded', 'yes')",
    ]

    static func pragma(_ name: String, of path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path, options: .init(readOnly: true))
        defer { connection.close() }
        guard case .integer(let value)? = try connection.rows("PRAGMA \(name)").first?.first else { return 0 }
        return value
    }

    static func copyStore(of release: String, into directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("store.sqlite")
        try Data(contentsOf: releases.appendingPathComponent("\(release)/sqlite/store.sqlite")).write(to: url)
        return url
    }

    @Test("a new store is created by the migrations: the newest version, the application id, the tables")
    func newStore() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.sqlite")
        try Prefs(.sqlite(url)).set(1, for: .launchCount)
        #expect(try Self.pragma("user_version", of: url.path) == SQLiteMigrations.standard.newest)
        #expect(try Self.pragma("application_id", of: url.path) == 0x5072_6673)
        #expect(SQLiteMigrations.standard.newest == 1, "release 0.1's version: no change an older release would misread yet")
    }

    @Test("every older release's store upgrades to a later schema once, in one transaction, keeping every value", arguments: olderStores)
    func upgradesOlderStores(release: String) throws {
        let directory = try TemporaryDirectory()
        let url = try Self.copyStore(of: release, into: directory)
        let before = try Prefs(.sqlite(url)).snapshot()
        #expect(try Self.pragma("user_version", of: url.path) == 1, "opening at the store's own version changes nothing")
        let upgraded = try Prefs(Prefs.Storage.sqlite(url).addingSQLiteMigration(version: 2, Self.version2))
        #expect(try upgraded.snapshot() == before)
        try upgraded.close()
        #expect(try Self.pragma("user_version", of: url.path) == 2)
        let connection = try SQLiteConnection(path: url.path, options: .init(readOnly: true))
        #expect(try connection.rows("SELECT name, value FROM prefs_meta") == [[.text("upgraded"), .text("yes")]])
        connection.close()
        // Opened again at version 2, the migration does not run again (its INSERT would fail on the primary key).
        #expect(try Prefs(Prefs.Storage.sqlite(url).addingSQLiteMigration(version: 2, Self.version2)).snapshot() == before)
        // This release (version 1) meets the upgraded store as release 0.1 meets one of this release's: refused.
        #expect(throws: PrefsError.unsupportedFormatVersion(path: url.path, found: 2, supported: 1)) { _ = try Prefs(.sqlite(url)) }
    }

    @Test("a migration that fails leaves the store as it was, at its version, and says which statement", arguments: olderStores)
    func failedMigrationRollsBack(release: String) throws {
        let directory = try TemporaryDirectory()
        let url = try Self.copyStore(of: release, into: directory)
        let original = try Data(contentsOf: url)
        let failing = Prefs.Storage.sqlite(url).addingSQLiteMigration(
            version: 2, ["CREATE TABLE prefs_meta (name TEXT)", "INSERT INTO no_such_table VALUES (1)"])
        #expect {
            _ = try Prefs(failing)
        } throws: { error in
            guard case PrefsError.database(let database) = error else { return false }
            return database.description.contains("no_such_table")
        }
        #expect(try Data(contentsOf: url) == original, "not a byte changed")
        #expect(try Self.pragma("user_version", of: url.path) == 1)
        let connection = try SQLiteConnection(path: url.path, options: .init(readOnly: true))
        #expect(try connection.rows("SELECT count(*) FROM sqlite_master WHERE name = 'prefs_meta'") == [[.integer(0)]], "the first statement rolled back")
        connection.close()
        #expect(try Prefs(.sqlite(url)).snapshot().count == 28)
    }

    @Test("four processes opening an older store at once run the migration once; all of them then use it", arguments: olderStores)
    func concurrentUpgrade(release: String) async throws {
        let directory = try TemporaryDirectory()
        let url = try Self.copyStore(of: release, into: directory)
        let count = try Prefs(.sqlite(url)).snapshot().count
        let results = try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for _ in 0..<4 { group.addTask { try await ChildProcess.run("prefs-test-child", ["migrate", url.path]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0 && result.stdout == "migrated \(count)\n", "\(result.stderr)") }
        let connection = try SQLiteConnection(path: url.path, options: .init(readOnly: true))
        #expect(try connection.rows("SELECT count(*) FROM prefs_migration_log") == [[.integer(1)]], "one process migrated")
        connection.close()
        #expect(try Self.pragma("user_version", of: url.path) == 2)
    }
}
