import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Connection refused, a server killed and restarted mid-use, statement timeouts, and passwords never shown.
@Suite("PostgreSQL faults")
struct PostgreSQLFaultTests {
    @Test("connection refused is a typed error naming the target, with the password hidden")
    func connectionRefused() throws {
        let refused = try ClosedPort()  // refuses every connection while the test runs; no other server takes it
        defer { withExtendedLifetime(refused) {} }
        let port = refused.port
        let url = "postgresql://prefs:hunter2-secret@127.0.0.1:\(port)/postgres"
        do {
            _ = try Prefs(.postgreSQL(url, namespace: "n", options: PostgreSQLOptions(connectTimeout: .seconds(2))))
            Issue.record("connected to a port nobody listens on")
        } catch let thrown {
            let error = try #require(postgreSQLError(thrown), "\(thrown)")
            #expect(error.kind == .connectionFailed)
            #expect(error.isConnectionFailure)
            #expect(error.target == "postgresql://prefs:***@127.0.0.1:\(port)/postgres")
            #expect(error.message.lowercased().contains("refused"), "\(error.message)")
            #expect(!"\(error)".contains("hunter2"), "\(error)")
            #expect("\(error)".contains("127.0.0.1:\(port)"), "\(error)")
        }
    }

    @Test("the password never appears in description, errors or diagnostics")
    func passwordNeverShown() throws {
        let server = try server()
        let url = server.tcpURL(password: "hunter2-secret")
        let log = DiagnosticLog()
        // The default statement timeout: a store opening on the shared server under load (a sanitizer's whole run) once
        // took more than the 200 ms this store had, which this test is not about.
        let prefs = try Prefs(.postgreSQL(url, namespace: freshNamespace()), pollInterval: .milliseconds(20)) { log.append($0) }
        #expect(!prefs.storage.description.contains("hunter2"))
        // A failing statement: a key too long for nothing but… a value of a type the server cannot hold is impossible,
        // so make the server refuse: drop the table under the store.
        let database = "pw_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let broken = try Prefs(
            .postgreSQL(server.tcpURL(password: "hunter2-secret", database: database), namespace: "n"),
            pollInterval: .milliseconds(20)
        ) { log.append($0) }
        try server.psql("DROP TABLE prefs_values", database: database)
        do {
            try broken.set(1, for: .launchCount)
            Issue.record("a write to a dropped table succeeded")
        } catch {
            #expect(!"\(error)".contains("hunter2"), "\(error)")
            #expect("\(error)".contains("prefs:***@127.0.0.1"), "\(error)")
            #expect(postgreSQLError(error)?.sqlState == "42P01", "\(error)")
        }
        _ = broken[.name]  // a failing read is a diagnostic
        #expect(!log.all.isEmpty)
        for diagnostic in log.all { #expect(!"\(diagnostic)".contains("hunter2"), "\(diagnostic)") }
        #expect(try broken.integrityProblems().contains { $0.contains("prefs_values") })
    }

    @Test("lock timeout: a write of a key whose row another session holds gives up with a typed timeout, and writes nothing")
    func lockTimeout() throws {
        // A server limit of a second, which the store's open (its schema check) runs under too (see the deadline tests).
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(30), statementTimeout: .seconds(1)))
        try fixture.prefs.set(1, for: .launchCount)
        let holder = try server().session()
        defer { holder.close() }
        let held = try holder.run(
            "BEGIN; SELECT 1 FROM prefs_values WHERE namespace = '\(fixture.namespace)' AND key = 'launchCount' FOR UPDATE")
        #expect(held == "1", "\(held)")
        do {
            try fixture.prefs.update(.launchCount) { $0 += 1 }
            Issue.record("the update did not time out")
        } catch let thrown {
            let error = try #require(postgreSQLError(thrown), "\(thrown)")
            // lock_timeout (55P03) or statement_timeout (57014): the server's limit, reported as a timeout.
            #expect(["55P03", "57014"].contains(error.sqlState ?? ""), "\(error)")
            #expect(error.kind == .timedOut && error.isTimeout, "\(error)")
        }
        try holder.run("ROLLBACK")
        // The store's connection is still usable, and its update never happened.
        try fixture.prefs.refresh()
        #expect(fixture.prefs[.launchCount] == 1)
        try fixture.prefs.update(.launchCount) { $0 += 1 }
        #expect(try fixture.reopen()[.launchCount] == 2)
    }

    @Test("a full server (no connection slot left) is a typed error with the server's SQLSTATE 53300; the store connects once a slot is free")
    func fullServer() async throws {
        let server = try TestPostgreSQLServer(settings: ["max_connections": "4", "superuser_reserved_connections": "0"])
        defer { server.stop() }
        var stores: [Prefs] = []
        var refusal: PostgreSQLError?
        for index in 0..<10 {
            do {
                // An application name each: a pool each, as separate processes have (a process's stores share one).
                let options = PostgreSQLOptions(applicationName: "client-\(index)", listens: false)
                stores.append(try Prefs(.postgreSQL(server.url, namespace: "n\(index)", options: options)))
            } catch let thrown {
                let error = try #require(postgreSQLError(thrown), "\(thrown)")
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "10 connections opened on a server allowing 4")
        #expect(error.kind == .connectionFailed, "\(error)")
        #expect(error.sqlState == "53300", "\(error)")
        #expect(error.message.contains("too many clients") || error.message.contains("connection slots"), "\(error.message)")
        #expect(!error.message.contains("LOCATION"), "\(error.message)")
        try stores.removeLast().close()
        // The server frees the slot when its process for the closed connection has exited: soon, not at once.
        var opened: Prefs?
        _ = await eventually(timeout: .seconds(30)) {
            opened = try? Prefs(.postgreSQL(server.url, namespace: "after", options: PostgreSQLOptions(applicationName: "after", listens: false)))
            return opened != nil
        }
        let store = try #require(opened, "a slot was freed")
        try store.set(1, for: .launchCount)
        #expect(store[.launchCount] == 1)
    }

    @Test("server killed with SIGKILL mid-use and restarted: the next call reconnects, nothing acknowledged is lost, nothing half-applied")
    func serverKilledAndRestarted() throws {
        let server = try TestPostgreSQLServer()  // a server of its own: the others' tests keep theirs
        defer { server.stop() }
        let fixture = try PostgreSQLFixture(url: server.url)
        let prefs = fixture.prefs
        let keys = (0..<10).map { Prefs.Key<Int>("k\($0)", initial: -1) }
        for (index, key) in keys.enumerated() { try prefs.set(index, for: key) }  // acknowledged

        // Killed between transactions: the next call reconnects by itself (a read, or the start of a transaction,
        // is safe to repeat on a new connection).
        server.kill()
        try server.start()
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(try fixture.reopen()[.launchCount] == 1)

        // Killed in the middle of a transaction: the commit fails with a typed error, and nothing of it is applied.
        do {
            try prefs.transaction { transaction in
                for key in keys { transaction[key] = 1000 }
                server.kill()
            }
            Issue.record("a transaction whose server was killed committed")
        } catch let thrown {
            let error = try #require(postgreSQLError(thrown), "\(thrown)")
            #expect(error.isConnectionFailure, "\(error)")
        }
        // While the server is down, calls fail with connection errors, and the store keeps serving its cache.
        #expect { try prefs.set(5, for: .launchCount) } throws: { postgreSQLError($0)?.isConnectionFailure == true }
        try server.start()
        let other = try fixture.reopen()
        for (index, key) in keys.enumerated() { #expect(other[key] == index, "acknowledged writes survive; the killed transaction left nothing") }
        #expect(other[.launchCount] == 1, "the write refused while the server was down did not happen")
        // The first store reconnects on its next call.
        try prefs.update(.launchCount) { $0 += 1 }
        try other.refresh()
        #expect(try other.storedValue(forKey: "launchCount")?.json == .int(2))
        try prefs.refresh()
        #expect(prefs[keys[3]] == 3)
    }

    @Test("a pooled connection used moments ago is taken as it is; one idle past the window is checked, and dropped when the server closed it")
    func idleConnectionsChecked() async throws {
        let server = try server()
        // Over TCP, where a write sent on a connection the server has closed may have reached it (an unknown outcome);
        // a pool of its own (its options differ from every other test's), so that the counts are this test's.
        let url = "postgresql://\(TestPostgreSQLServer.user)@127.0.0.1:\(server.port)/\(TestPostgreSQLServer.database)"
        let name = "liveness-\(UUID().uuidString.prefix(8))"
        let backend = try PostgreSQLBackend(conninfo: url, namespace: freshNamespace(), options: PostgreSQLOptions(applicationName: name, listens: false))
        defer { backend.close() }
        func write(_ value: Int) throws { try backend.apply(Changeset(values: ["launchCount": .set(try StoredValue(value))])) }
        backend.connectionLivenessWindow = .seconds(3600)
        try write(1)
        let checks = backend.connectionLivenessChecks
        try write(2)
        #expect(backend.connectionLivenessChecks == checks, "returned within the window: taken without a poll")

        // Past the window (zero here), the idle connection is checked first; closed by the server, it is dropped and a
        // new one made: the write goes through, where sent on the closed one it would have failed.
        backend.connectionLivenessWindow = .zero
        try write(3)
        #expect(backend.connectionLivenessChecks == checks + 1)
        let sessions = "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(name)'"
        try server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'")
        #expect(await ChildProcess.eventually { (try? server.psql(sessions)) == "0" })
        try write(4)
        #expect(backend.connectionLivenessChecks == checks + 2)
        #expect(try backend.value(forKey: "launchCount") == (try StoredValue(4)))
    }

    @Test("a row whose type and value are not NULL together (no CHECK forbids it) reads as unreadable, or as removed")
    func typeAndValueApart() throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(stalenessBound: .seconds(600), listens: false))
        try fixture.prefs.set(5, for: .launchCount)
        // A new revision, as a write would draw, so that other stores see the row changed.
        let row = "revision = nextval('prefs_revision'), xid = pg_current_xact_id() WHERE namespace = '\(fixture.namespace)' AND key = 'launchCount'"
        // The table has no CHECK constraint: the server takes the row as it is.
        try server().psql("UPDATE prefs_values SET type = NULL, \(row)")
        try fixture.prefs.refresh()
        guard case .unreadable(initial: 0, _) = fixture.prefs.lookup(.launchCount) else {
            Issue.record("a value without a type read as \(fixture.prefs.lookup(.launchCount))")
            return
        }
        try server().psql("UPDATE prefs_values SET type = 'int', value = NULL, \(row)")
        try fixture.prefs.refresh()
        guard case .initial(0) = fixture.prefs.lookup(.launchCount) else {
            Issue.record("a type without a value read as \(fixture.prefs.lookup(.launchCount))")
            return
        }
    }
}
