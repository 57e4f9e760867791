import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 31, finding 3: every error carries a SQLSTATE, connection-time ones included, so that an app can tell "too
/// many connections" (53300, in PostgreSQLFaultTests) from "server down" (08001) from "no such database" (3D000).
@Suite("PostgreSQL error codes")
struct PostgreSQLErrorCodeTests {
    @Test("connecting to a port nobody listens on: 08001")
    func refused() throws {
        let refused = try ClosedPort()  // refuses every connection while the test runs; no other server takes it
        defer { withExtendedLifetime(refused) {} }
        let port = refused.port
        #expect {
            try Prefs(.postgreSQL("postgresql://prefs@127.0.0.1:\(port)/postgres", namespace: "n"))
        } throws: { error in
            guard let error = postgreSQLError(error) else { return false }
            return error.kind == .connectionFailed && error.sqlState == "08001" && error.isConnectionFailure
        }
    }

    @Test("a database that does not exist: the server's 3D000, read from its refusal while connecting")
    func unknownDatabase() throws {
        let url = try server().url(database: "no_such_database_\(UUID().uuidString.prefix(6).lowercased())")
        do {
            _ = try Prefs(.postgreSQL(url, namespace: "n"))
            Issue.record("opened a database that does not exist")
        } catch let thrown {
            let error = try #require(postgreSQLError(thrown), "\(thrown)")
            #expect(error.kind == .connectionFailed, "\(error)")
            #expect(error.sqlState == "3D000", "\(error)")
            #expect(error.message.contains("does not exist"), "\(error.message)")
        }
    }

    @Test("a role the server's pg_hba.conf rejects: 28000")
    func rejectedRole() throws {
        let server = try TestPostgreSQLServer()
        defer { server.stop() }
        let role = "rejected_\(UUID().uuidString.prefix(6).lowercased())"
        try server.psql("CREATE ROLE \(role) LOGIN")
        let hba = server.dataDirectory + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("local all \(role) reject\nhost all \(role) 127.0.0.1/32 reject\n" + rules).write(toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        #expect {
            try Prefs(.postgreSQL(server.url(database: TestPostgreSQLServer.database, user: role), namespace: "n"))
        } throws: { error in
            guard let error = postgreSQLError(error) else { return false }
            return error.kind == .connectionFailed && error.sqlState == "28000"
        }
    }

    @Test("errors the store finds itself carry the standard code: a bad namespace 22023, a write to a read-only store 25006")
    func storeCodes() throws {
        let url = try server().url
        #expect {
            try Prefs(.postgreSQL(url, namespace: ""))
        } throws: { error in
            postgreSQLError(error)?.sqlState == "22023"
        }
        let writer = try PostgreSQLFixture()
        try writer.prefs.set(1, for: .launchCount)
        let reader = try Prefs(.postgreSQL(url, namespace: writer.namespace, options: PostgreSQLOptions(readOnly: true)))
        #expect(reader[.launchCount] == 1)
        #expect {
            try reader.set(2, for: .launchCount)
        } throws: { error in
            guard let error = postgreSQLError(error) else { return false }
            return error.sqlState == "25006" && error.kind == .statementFailed
        }
    }

    @Test("a server's failure through a store call is a PrefsError with its SQLSTATE, message, statement and database")
    func serverFailureIsPrefsError() throws {
        let server = try server()
        let database = "typed_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let prefs = try Prefs(.postgreSQL(server.tcpURL(password: "hunter2-secret", database: database), namespace: "n"))
        try server.psql("DROP TABLE prefs_values", database: database)
        #expect(throws: PrefsError.self) { try prefs.set(1, for: .launchCount) }
        do {
            try prefs.set(1, for: .launchCount)
            Issue.record("a write to a dropped table succeeded")
        } catch PrefsError.database(let error) {
            #expect(error.engine == "PostgreSQL")
            #expect(error.codeName == "42P01", "\(error)")  // undefined_table, the server's own
            #expect(error.message.contains("prefs_values"), "\(error.message)")
            #expect(error.statement?.isEmpty == false, "\(error)")
            #expect(error.path == "postgresql://prefs:***@127.0.0.1:\(server.port)/\(database)", "\(error)")
            #expect((error.underlying as? PostgreSQLError)?.kind == .statementFailed, "\(error)")
            #expect(PrefsError.database(error).description == error.description)
        } catch {
            Issue.record("not a server failure: \(error)")
        }
    }
}
