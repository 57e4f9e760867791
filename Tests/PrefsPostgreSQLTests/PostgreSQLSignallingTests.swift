import Foundation
import TestFixtures
import Prefs
import PrefsPostgreSQL
import PrefsSupport
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 43, item 2: the signalling connection sends one notification per namespace per round (5 ms) while a process
/// writes, and its thread wakes once per round: writers wake it only when no round is open. Whatever the moment of a
/// write, another process's listening store hears of it long before its ten-minute bound, and before the thread's
/// idle wait (10 s) would have ended.
@Suite("PostgreSQL signalling")
struct PostgreSQLSignallingTests {
    /// A writer and a reader with pools of their own (another application name: another signalling connection), as
    /// two processes have; the reader's bound is ten minutes, so that only a notification brings a write in time.
    private func pair() async throws -> (writer: Prefs, reader: Prefs) {
        let url = try server().url
        let namespace = freshNamespace()
        let writer = try Prefs(.postgreSQL(url, namespace: namespace, options: PostgreSQLOptions(applicationName: "signalling-writer")))
        let reader = try Prefs(
            .postgreSQL(url, namespace: namespace, options: PostgreSQLOptions(stalenessBound: .seconds(600), applicationName: "signalling-reader")))
        try #require(await eventually(timeout: .seconds(60)) { reader.isListeningForChanges }, "the reader listens")
        #expect(reader[.launchCount] == 0)
        return (writer, reader)
    }

    @Test("a write after a quiet moment (no round open) wakes the signalling thread: it is heard at once, not after its idle wait")
    func writeAfterQuiet() async throws {
        let (writer, reader) = try await pair()
        try writer.set(1, for: .launchCount)
        #expect(await eventually(timeout: .seconds(8)) { reader[.launchCount] == 1 })
        // Real time is the point: past the round (5 ms) the signalling thread waits for the next write, which has to
        // wake it.
        try await Task.sleep(for: .milliseconds(200))
        try writer.set(2, for: .launchCount)
        #expect(await eventually(timeout: .seconds(8)) { reader[.launchCount] == 2 })
    }

    @Test("writes in a loop, each inside an open round (no wake-up): the last one is heard with its round")
    func writesInALoop() async throws {
        let (writer, reader) = try await pair()
        for value in 1...300 { try writer.set(value, for: .launchCount) }
        #expect(await eventually(timeout: .seconds(8)) { reader[.launchCount] == 300 })
        // And a second burst, right after the first was heard (its round may still be open).
        for value in 301...310 { try writer.set(value, for: .launchCount) }
        #expect(await eventually(timeout: .seconds(8)) { reader[.launchCount] == 310 })
    }

    /// Not under a sanitizer: there, in this session's CI runs, the spawned psql was either never seen running its
    /// `pg_sleep` in `pg_stat_activity` although it ran it to the end (the failure message showed its output), or
    /// heard none of 842 writes' notifications; the plain run passes. Unexplained as yet: see the closing note of
    /// 2026-12-06.
    @Test(
        "a process writing on for a second shares a notification per round of up to 40 ms: about 30, not 200",
        .enabled(if: !Sanitizer.isActive, "a count of another process's notifications in real time; flaky under a sanitizer, cause unknown"))
    func roundsGrowWhileWriting() async throws {
        let server = try server()
        let namespace = freshNamespace()
        let writer = try Prefs(.postgreSQL(server.url, namespace: namespace, options: PostgreSQLOptions(applicationName: "signalling-writer")))
        try writer.set(0, for: .launchCount)
        // Another process listening on the namespace's channel: psql, which prints what it heard after each statement
        // (its sleep, cancelled once the writes are over, and one more). Started here, not in a task, so that it runs
        // whatever holds the pool's threads.
        let application = "signalling-count-\(UUID().uuidString.prefix(8))"
        let output = "/tmp/prefs-signalling-\(UUID().uuidString).txt"
        defer { unlink(output) }
        let psql = try SpawnedProcess.spawn(
            server.binDirectory + "/psql",
            [
                "-X", "-q", "-d", server.url + "&application_name=\(application)",
                "-c", "LISTEN \"\(PostgreSQLStore.notificationChannel(for: namespace))\"", "-c", "SELECT pg_sleep(300)", "-c", "SELECT 1",
            ], stdout: .file(output, append: false))
        defer { if psql.isRunning { psql.terminate() } }
        // What the last check saw, for the failure's message: this wait has timed out in a full run under load. Each
        // check runs psql, off the pool's threads (a minute of checks on one would stall the other tests).
        let lastCheck = Locked("no check")
        try #require(
            await ChildProcess.eventually {
                let seen: String
                do {
                    seen = try server.psql(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)' AND query LIKE '%pg_sleep%'")
                } catch {
                    seen = "\(error)"
                }
                lastCheck.withLock { $0 = seen }
                return seen == "1"
            },
            """
            psql listens (last check: \(lastCheck.withLock { $0 }); psql running: \(psql.isRunning); its output: \
            \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "none"); the server's sessions: \
            \((try? server.psql("SELECT application_name, state, left(query, 40) FROM pg_stat_activity")) ?? "unknown"))
            """)
        // Still sleeping, so still listening: under load the wait above can take most of a minute, and a psql whose
        // sleep had ended before the writes began would hear none of them (0 of 4,413 once, with a 60 s sleep).
        try #require(psql.isRunning, "psql ended before the writes: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "no output")")
        let start = ContinuousClock.now
        var writes = 0
        while ContinuousClock.now - start < .seconds(1) {
            writes += 1
            try writer.set(writes, for: .launchCount)
        }
        try writer.close()  // its last notification sent
        try server.psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '\(application)'")
        psql.waitUntilExit()
        let heard = (try String(contentsOfFile: output, encoding: .utf8)).components(separatedBy: "Asynchronous notification").count - 1
        // Rounds of 5, 10, 20, then 40 ms: about 28 in a second, and one at the close. At 5 ms each, 200.
        #expect(heard >= 1 && heard <= 60, "\(heard) notifications for \(writes) writes in a second")
    }
}
