import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 27 (the PostgreSQL part): the schema is versioned and migrated in one transaction under an advisory lock,
/// from a database the format-1 release wrote (Fixtures/format-1.sql).
@Suite("PostgreSQL schema migrations")
struct PostgreSQLMigrationTests {
    /// A new database holding Fixtures/format-1.sql; returns its URL and name.
    private func formatOneDatabase() throws -> (url: String, name: String) {
        let server = try server()
        let name = "v1_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(name)")
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format-1.sql")
        try server.psql(String(contentsOf: fixture, encoding: .utf8), database: name)
        #expect(try server.psql("SELECT value FROM prefs_meta WHERE name = 'format_version'", database: name) == "1")
        return (server.url(database: name), name)
    }

    @Test("a format-1 database opened writable is upgraded to format 2, every value, declaration and rename read exactly")
    func upgradesFormatOne() throws {
        let (url, name) = try formatOneDatabase()
        let theme = Prefs.Key<String>("theme", initial: "light", formerNames: ["colorScheme", "appearance"])
        let lastSync = Prefs.Key<Date?>("lastSync", initial: nil)
        let user1 = try Prefs(.postgreSQL(url, namespace: "user-1"))
        #expect(try server().psql("SELECT value FROM prefs_meta WHERE name = 'format_version'", database: name) == "2")
        #expect(user1[.launchCount] == 3)
        #expect(user1[.name] == "ada \"lovelace\" é")
        #expect(user1[.tags] == ["a", "b"])
        #expect(try user1.storedValue(forKey: "lastSync")?.json == .string("2026-11-30T10:00:00.123456789Z"))
        #expect(user1[lastSync] != nil)
        #expect(user1[theme] == "dark", "read under its first former name")
        let declared = try user1.declaredKeys()
        #expect(declared["theme"]?.formerNames == ["colorScheme", "appearance"])
        #expect(declared["launchCount"]?.type == .int)
        #expect(try Prefs(.postgreSQL(url, namespace: "user-2"))[.launchCount] == 9)
        // Every value got a revision of its own; both namespaces are registered; the format-1 table is gone.
        #expect(
            try server().psql("SELECT count(*), count(DISTINCT revision), min(revision) > 0 FROM prefs_values", database: name) == "6|6|t")
        #expect(try server().psql("SELECT string_agg(namespace, ',' ORDER BY namespace) FROM prefs_namespaces", database: name) == "user-1,user-2")
        #expect(try server().psql("SELECT to_regclass('prefs') IS NULL", database: name) == "t")
        // Writes work on the upgraded database, with revisions and one statement each.
        try user1.set("light", for: theme)
        #expect(try user1.snapshot()["colorScheme"] == nil, "the write removed the former name's value")
        #expect(try Prefs(.postgreSQL(url, namespace: "user-1"))[theme] == "light")
        #expect(try user1.integrityProblems().isEmpty)
    }

    @Test("a read-only store does not upgrade a format-1 database: it says so and changes nothing")
    func readOnlyDoesNotUpgrade() throws {
        let (url, name) = try formatOneDatabase()
        do {
            _ = try Prefs(.postgreSQL(url, namespace: "user-1", options: PostgreSQLOptions(readOnly: true)))
            Issue.record("a read-only store opened a format-1 database")
        } catch let thrown {
            let error = try #require(postgreSQLError(thrown), "\(thrown)")
            #expect(error.kind == .unexpectedSchema && error.sqlState == "55000", "\(error)")
            #expect(error.message.contains("format 1"), "\(error.message)")
        }
        #expect(try server().psql("SELECT value FROM prefs_meta WHERE name = 'format_version'", database: name) == "1")
        #expect(try server().psql("SELECT count(*) FROM prefs", database: name) == "6")
    }

    @Test("processes upgrading at once: one migration (under the advisory lock), and every process's updates counted")
    func concurrentUpgrade() async throws {
        let (url, name) = try formatOneDatabase()
        let children = 4, perChild = 10
        let results = try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for _ in 0..<children {
                group.addTask {
                    try await ChildProcess.run("prefs-test-child", ["update", "postgresql:user-1", url, "launchCount", "\(perChild)"])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0 && result.stdout == "done\n", "\(result.stderr)") }
        #expect(try server().psql("SELECT value FROM prefs_meta WHERE name = 'format_version'", database: name) == "2")
        let prefs = try Prefs(.postgreSQL(url, namespace: "user-1"))
        #expect(prefs[.launchCount] == 3 + children * perChild)
        #expect(prefs[.name] == "ada \"lovelace\" é")
    }

    @Test("after the upgrade, a format-1 process still running fails at its next statement instead of misreading format 2")
    func previousReleaseFails() throws {
        let (url, name) = try formatOneDatabase()
        _ = try Prefs(.postgreSQL(url, namespace: "user-1"))
        // The statements the format-1 release runs to read, to lock its namespace and to write.
        for statement in [
            "SELECT type, value FROM prefs WHERE namespace = 'user-1' AND key = 'launchCount'",
            "SELECT generation FROM prefs_namespaces WHERE namespace = 'user-1' FOR UPDATE",
            "INSERT INTO prefs (namespace, key, type, value) VALUES ('user-1', 'k', 'int', '1')",
        ] {
            #expect(throws: TestPostgreSQLServer.Failed.self) { try server().psql(statement, database: name) }
        }
    }
}
