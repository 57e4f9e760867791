import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TestPostgreSQLServer {
    /// Stops the server and every process it started with `SIGSTOP`, as a server that hangs (swapping, a stalled
    /// disk, a debugger): connections stay open and nothing answers. ``thaw()`` resumes them. Returns the processes.
    @discardableResult
    package func freeze() -> [pid_t] {
        guard let pid = postmasterPID else { return [] }
        let processes = [pid] + Self.children(of: pid)
        for process in processes { signalProcess(process, SIGSTOP) }
        return processes
    }

    /// Resumes what ``freeze()`` stopped (`SIGCONT`).
    package func thaw() {
        guard let pid = postmasterPID else { return }
        for process in [pid] + Self.children(of: pid) { signalProcess(process, SIGCONT) }
    }

    /// A `psql` session of its own that stays open, for holding a lock or a transaction while a test runs.
    package func session(database: String = TestPostgreSQLServer.database, user: String = TestPostgreSQLServer.user) throws -> PsqlSession {
        try PsqlSession(psql: binDirectory + "/psql", url: url(database: database, user: user))
    }

    /// A libpq URL for the Unix socket, as `user`.
    package func url(database: String, user: String) -> String {
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socketDirectory
        return "postgresql://\(user)@/\(database)?host=\(host)&port=\(port)"
    }

    /// Waits until a standby has replayed everything its primary has written so far (`pg_current_wal_lsn` of the
    /// primary reached by `pg_last_wal_replay_lsn` here); false after `timeout`.
    package func catchUp(with primary: TestPostgreSQLServer, timeout: Duration = .seconds(60)) throws -> Bool {
        let target = try primary.psql("SELECT pg_current_wal_lsn()")
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try psql("SELECT pg_last_wal_replay_lsn() >= '\(target)'::pg_lsn") == "t" { return true }
            usleep(20_000)
        }
        return false
    }
}

/// `kill(2)`, under a name the server's ``TestPostgreSQLServer/kill()`` does not hide.
private func signalProcess(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// A `psql` process that runs what it is given, one statement at a time, in one session (one connection), until
/// closed: a transaction it opens stays open, with its locks, between calls.
package final class PsqlSession: @unchecked Sendable {
    private let process: SpawnedProcess
    private let input: FileHandle
    private let output: FileHandle
    private var buffer = Data()
    private var counter = 0

    init(psql: String, url: String) throws {
        let stdin = Pipe(), stdout = Pipe()
        process = try SpawnedProcess.spawn(
            psql, ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0", "-d", url],
            stdin: .descriptor(stdin.fileHandleForReading.fileDescriptor), stdout: .descriptor(stdout.fileHandleForWriting.fileDescriptor),
            stderr: .standardOutput)
        try stdin.fileHandleForReading.close()
        try stdout.fileHandleForWriting.close()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
    }

    deinit { close() }

    /// Runs `sql` (one statement or several, the last `;` optional) and returns what it printed (errors included), once
    /// it has run.
    @discardableResult
    package func run(_ sql: String) throws -> String {
        counter += 1
        let marker = "--done-\(counter)--"
        let terminated = sql.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(";") ? sql : sql + ";"
        try input.write(contentsOf: Data((terminated + "\n\\echo \(marker)\n").utf8))
        while true {
            if let range = buffer.range(of: Data((marker + "\n").utf8)) {
                let text = String(decoding: buffer[buffer.startIndex..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex..<range.upperBound)
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var bytes = [UInt8](repeating: 0, count: 4096)
            let count = read(output.fileDescriptor, &bytes, bytes.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw TestPostgreSQLServer.Failed(description: "psql ended: \(String(decoding: buffer, as: UTF8.self))") }
            buffer.append(contentsOf: bytes[0..<count])
        }
    }

    /// Ends the session (a transaction still open is rolled back by the server). Idempotent.
    package func close() {
        try? input.close()
        process.waitUntilExit()
        try? output.close()
    }
}
