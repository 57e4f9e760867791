import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Runs `body` on a thread of its own and returns its outcome, or nil when it has not returned within `limit` (a hang
/// guard: the calls under test must end by their own deadline, long before it).
func outcome<T: Sendable>(within limit: Duration = .seconds(120), _ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error>? {
    let result = Locked<Result<T, any Error>?>(nil)
    Thread.detachNewThread {
        let value = Result { try body() }
        result.withLock { $0 = value }
    }
    _ = await eventually(timeout: limit) { result.withLock { $0 } != nil }
    return result.withLock { $0 }
}

/// Issue 31, finding 2: every call ends by its deadline, with a typed error, when the server stops answering.
@Suite("PostgreSQL deadlines")
struct PostgreSQLDeadlineTests {
    @Test(
        "a frozen server (SIGSTOP on the postmaster and every backend): reads, writes, updates, refresh and opening end by their deadline with a typed timeout")
    func frozenServer() async throws {
        let server = try TestPostgreSQLServer()
        defer { server.stop() }
        // Deadlines of seconds, not less: under ThreadSanitizer, with every suite running, the calls made before the freeze
        // and after the thaw take over half a second.
        let options = PostgreSQLOptions(connectTimeout: .seconds(5), timeout: .seconds(5), stalenessBound: .zero, listens: false)
        let namespace = freshNamespace()
        let prefs = try Prefs(.postgreSQL(server.url, namespace: namespace, options: options))
        // Twice: the second write has the shape of the frozen one below (the namespace registered), prepared on the
        // connection, so that the frozen write is sent at once.
        try prefs.set(0, for: .launchCount)
        try prefs.set(1, for: .launchCount)
        #expect(prefs[.launchCount] == 1)

        let frozen = server.freeze()
        #expect(!frozen.isEmpty)
        defer { server.thaw() }
        // Each call returns (an error) while the server is still frozen: the guard's limit is two minutes, the
        // deadline five seconds; before deadlines, each waited for the thaw.
        let set = await outcome { try prefs.set(2, for: .launchCount) }
        let setError = try #require(set.map { result -> (any Error)? in if case .failure(let error) = result { error } else { nil } } ?? nil)
        let setFailure = try #require(postgreSQLError(setError), "\(setError)")
        // The write was sent: its outcome is unknown, and it is a timeout.
        #expect(setFailure.kind == .commitOutcomeUnknown && setFailure.isTimeout, "\(setFailure)")
        #expect(setFailure.sqlState == "57014", "\(setFailure)")

        let refresh = await outcome { try prefs.refresh() }
        guard case .failure(let failure)? = refresh, let refreshError = postgreSQLError(failure) else {
            Issue.record("refresh() did not fail by its deadline: \(String(describing: refresh))")
            return
        }
        #expect(refreshError.kind == .timedOut && refreshError.isTimeout, "\(refreshError)")

        let update = await outcome { try prefs.update(.launchCount) { $0 += 1 } }
        guard case .failure(let failure)? = update, let updateError = postgreSQLError(failure) else {
            Issue.record("update did not fail by its deadline: \(String(describing: update))")
            return
        }
        #expect(updateError.isTimeout, "\(updateError)")

        // A read must answer (the subscript cannot throw): from the cache, with a diagnostic, by the deadline.
        let read = await outcome { prefs[.launchCount] }
        #expect(read != nil, "a read waited for the frozen server")

        let open = await outcome {
            try Prefs(
                .postgreSQL(
                    server.url, namespace: namespace,
                    options: PostgreSQLOptions(connectTimeout: .seconds(5), timeout: .seconds(5), applicationName: "late")))
        }
        guard case .failure(let failure)? = open, let openError = postgreSQLError(failure) else {
            Issue.record("opening did not fail by its deadline: \(String(describing: open))")
            return
        }
        #expect(openError.kind == .timedOut, "\(openError)")
        #expect(openError.sqlState == "08001", "\(openError)")

        server.thaw()
        // Thawed, the store works again, and the write whose outcome was unknown is read from the server.
        try prefs.refresh()
        let stored = try server.psql("SELECT value FROM prefs_values WHERE namespace = '\(namespace)' AND key = 'launchCount'")
        #expect(prefs[.launchCount] == Int(stored))
        try prefs.set(10, for: .launchCount)
        #expect(try Prefs(.postgreSQL(server.url, namespace: namespace))[.launchCount] == 10)
    }

    @Test("a store has a default deadline of 5 s and a per-store one; the server's own limit (lock_timeout) ends a write the client would still wait for")
    func defaultsAndServerSide() throws {
        #expect(PostgreSQLOptions().timeout == .seconds(5))
        #expect(PostgreSQLOptions().statementTimeout == .seconds(5))
        #expect(PostgreSQLOptions(timeout: .milliseconds(250)).timeout == .milliseconds(250))
        // A server limit of a second: the store's open (its schema check) runs under it too, and under a sanitizer with
        // every suite running a check took more than 200 ms.
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(60), statementTimeout: .seconds(1)))
        try fixture.prefs.set(1, for: .launchCount)
        let holder = try server().session()
        defer { holder.close() }
        try holder.run("BEGIN; SELECT 1 FROM prefs_values WHERE namespace = '\(fixture.namespace)' AND key = 'launchCount' FOR UPDATE")
        #expect {
            try fixture.prefs.set(2, for: .launchCount)
        } throws: { error in
            // The server's answer (not the client's one-minute deadline), so the outcome is known: not applied.
            postgreSQLError(error).map { $0.kind == .timedOut && ["55P03", "57014"].contains($0.sqlState ?? "") } ?? false
        }
        try holder.run("ROLLBACK")
        try fixture.prefs.refresh()
        #expect(fixture.prefs[.launchCount] == 1)
    }

    @Test("a transaction's commit that waits for a row another session holds ends by the client's deadline when the server sets no limit")
    func clientDeadlineWithoutServerLimit() async throws {
        // A deadline of seconds: under ThreadSanitizer, with every suite running, opening the store took over half a second.
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(10), statementTimeout: nil, stalenessBound: .seconds(600)))
        try fixture.prefs.set(1, for: .launchCount)
        let holder = try server().session()
        defer { holder.close() }
        try holder.run("BEGIN; SELECT 1 FROM prefs_values WHERE namespace = '\(fixture.namespace)' AND key = 'launchCount' FOR UPDATE")
        let prefs = fixture.prefs
        let update = await outcome { try prefs.update(.launchCount) { $0 += 1 } }
        guard case .failure(let failure)? = update, let error = postgreSQLError(failure) else {
            Issue.record("the update did not end by its deadline: \(String(describing: update))")
            return
        }
        #expect(error.isTimeout, "\(error)")
        // The client's cancel ends the waiting statement while the row is still held: checked before the holder lets
        // go, since a cancel the server handled only after the ROLLBACK would let the update through (under load the
        // two race), and then the update's outcome would be what a client deadline leaves it: unknown.
        #expect(
            await ChildProcess.eventually {
                (try? server().psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) == "0"
            })
        try holder.run("ROLLBACK")
        try prefs.refresh()
        #expect(prefs[.launchCount] == 1)
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(prefs[.launchCount] == 2)
    }
}
