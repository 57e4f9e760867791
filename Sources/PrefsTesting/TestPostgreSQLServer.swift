import Foundation
import Prefs
import PrefsSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL server on this machine for your tests of a PostgreSQL store: `initdb` into a fresh temporary
/// directory, then `pg_ctl start`, listening on a Unix socket in that directory and on 127.0.0.1 at a free port, with
/// trust authentication for the superuser `prefs` and `fsync` off (a test loses nothing the operating system holds).
/// As root, the server programs run as the `postgres` user (`runuser`), which owns the directory. The server is
/// stopped and its directory removed by ``stop()``, when the test process exits, or, should the process be killed, by
/// a small watcher process started with it.
///
/// ```swift
/// import PrefsPostgreSQL
/// import PrefsTesting
///
/// @Test func aWriteReachesAnotherInstance() throws {
///     let server = try TestPostgreSQLServer.shared()   // started once per test process, stopped at exit
///     let namespace = "test-\(UUID())"                  // a namespace per test: tests run in parallel
///     let phone = try Prefs(.postgreSQL(server.url, namespace: namespace))
///     let laptop = try Prefs(.postgreSQL(server.url, namespace: namespace))
///     try phone.update(.launchCount) { $0 += 1 }
///     try laptop.refresh()
///     #expect(laptop[.launchCount] == 1)
/// }
/// ```
///
/// It needs PostgreSQL's server programs (Debian: `apt-get install postgresql`); without them, starting one throws
/// ``Missing``, whose description says how to install them.
public final class TestPostgreSQLServer: Sendable {
    /// The server programs (`initdb`, `pg_ctl`) are not installed, or, as root, there is no `postgres` user to run
    /// them. The description says how to install them.
    ///
    /// ```swift
    /// do {
    ///     server = try TestPostgreSQLServer()
    /// } catch let missing as TestPostgreSQLServer.Missing {
    ///     print(missing)   // "PostgreSQL's server programs (initdb, pg_ctl) were not found (…). Install them: …"
    /// }
    /// ```
    public struct Missing: Error, CustomStringConvertible {
        /// What is missing and how to install it.
        ///
        /// ```swift
        /// missing.description   // "… Install them: apt-get install postgresql libpq-dev"
        /// ```
        public var description: String
    }

    /// A server program failed: `initdb` or `pg_ctl` exited with an error, or a port was taken meanwhile.
    ///
    /// ```swift
    /// do { _ = try TestPostgreSQLServer() } catch let failed as TestPostgreSQLServer.Failed { print(failed) }
    /// ```
    public struct Failed: Error, CustomStringConvertible {
        /// The program, its arguments, its exit status and output, and the end of the server's log.
        ///
        /// ```swift
        /// failed.description   // "pg_ctl -D … start failed with status 1: …"
        /// ```
        public var description: String
    }

    /// The directory holding `data/`, `socket/` and the server's log.
    package let directory: String
    package let dataDirectory: String
    package let socketDirectory: String
    package let port: Int
    package let binDirectory: String
    /// How long `initdb` plus the first `pg_ctl start` took.
    package var startDuration: Duration { startTime.withLock { $0 } }
    private let startTime = Locked(Duration.zero)
    /// Server settings beyond the defaults, passed as `-c NAME=VALUE` at every start.
    package let settings: [String: String]
    /// Whether ``stop()`` ran since the last start.
    private let stopped = Locked(false)
    /// Stops the server and removes its directory if this process dies without doing so (see ``startReaper(directory:)``).
    private let reaper: SpawnedProcess?

    /// The superuser, and the database the URLs name.
    package static let user = "prefs"
    package static let database = "postgres"

    /// A libpq connection URL for the server's Unix socket, as the superuser, to the database `postgres`: what a
    /// PostgreSQL store opens.
    ///
    /// ```swift
    /// let prefs = try Prefs(.postgreSQL(server.url, namespace: "test-\(UUID())"))
    /// server.url   // "postgresql://prefs@/postgres?host=%2Ftmp%2Fprefs-pg-1A2B3C4D%2Fsocket&port=41234"
    /// ```
    public var url: String { url(database: Self.database) }

    package func url(database: String) -> String {
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socketDirectory
        return "postgresql://\(Self.user)@/\(database)?host=\(host)&port=\(port)"
    }

    /// A libpq URL over TCP to 127.0.0.1, with `password` in it (trust authentication ignores it; the tests check
    /// that it is never shown).
    package func tcpURL(password: String? = nil, database: String = TestPostgreSQLServer.database) -> String {
        let credentials = password.map { "\(Self.user):\($0)" } ?? Self.user
        return "postgresql://\(credentials)@127.0.0.1:\(port)/\(database)"
    }

    // MARK: - The shared server

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var sharedServer: Result<TestPostgreSQLServer, any Error>?

    /// The server of this test process, started on first use and stopped when the process exits: one server for
    /// every test, each test in a namespace of its own. A failure to start is remembered: every later call throws it.
    ///
    /// ```swift
    /// let server = try TestPostgreSQLServer.shared()
    /// let prefs = try Prefs(.postgreSQL(server.url, namespace: "test-\(UUID())"))
    /// ```
    public static func shared() throws -> TestPostgreSQLServer {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let sharedServer { return try sharedServer.get() }
        let result = Result { try TestPostgreSQLServer() }
        sharedServer = result
        return try result.get()
    }

    // MARK: - Starting and stopping

    /// Starts a server of your test's own, in a new temporary directory, with `settings` beyond the defaults
    /// (`-c NAME=VALUE` of `postgres`), waiting until it accepts connections: for a test that needs a server no other
    /// test uses. Stop it with ``stop()``; otherwise it runs until the test process exits.
    ///
    /// ```swift
    /// let server = try TestPostgreSQLServer(settings: ["log_statement": "all"])
    /// defer { server.stop() }
    /// ```
    ///
    /// - Throws: ``Missing`` without the server programs; ``Failed`` when one of them fails.
    public convenience init(settings: [String: String] = [:]) throws {
        try self.init(settings: settings, primary: nil)
    }

    /// Creates a hot standby of `primary` in a new temporary directory and starts it: a copy made with
    /// `pg_basebackup -R` (which writes `standby.signal` and the connection to the primary), replaying its changes as
    /// they stream in.
    package convenience init(settings: [String: String] = [:], standbyOf primary: TestPostgreSQLServer) throws {
        try self.init(settings: settings, primary: primary)
    }

    private init(settings: [String: String], primary: TestPostgreSQLServer?) throws {
        self.settings = settings
        let started = ContinuousClock.now
        binDirectory = try Self.findBinDirectory()
        port = try Self.freePort()
        directory = "/tmp/prefs-pg-\(UUID().uuidString.prefix(8))"
        dataDirectory = directory + "/data"
        socketDirectory = directory + "/socket"
        try FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard let owner = accountIDs(named: "postgres") else {
                throw Missing(
                    description:
                        "running as root, PostgreSQL's server must run as the user 'postgres', which does not exist; install postgresql (apt-get install postgresql)"
                )
            }
            for path in [directory, socketDirectory] where chown(path, owner.uid, owner.gid) != 0 {
                throw Failed(description: "chown \(path) to postgres (uid \(owner.uid)) failed: errno \(errno)")
            }
        }
        reaper = Self.startReaper(directory: directory)
        Self.registerForExit(self)
        if let primary {
            try run("pg_basebackup", ["-d", primary.url, "-D", dataDirectory, "-R", "-X", "stream", "--no-sync"])
            chmod(dataDirectory, 0o700)
        } else {
            try run("initdb", ["-D", dataDirectory, "-A", "trust", "-U", Self.user, "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
        }
        try start()
        startTime.withLock { $0 = ContinuousClock.now - started }
    }

    deinit { stop() }

    /// Starts the server (again, after ``kill()``), waiting until it accepts connections.
    package func start() throws {
        // fsync off (-F): a killed server loses nothing the operating system holds. synchronous_commit stays on: off,
        // a commit returns before its WAL is written, and a killed server loses acknowledged commits.
        let options =
            "-F -k \(socketDirectory) -p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_permissions=0777 -c max_connections=200 -c full_page_writes=off"
            + settings.sorted { $0.key < $1.key }.map { " -c \($0.key)=\($0.value)" }.joined()
        try run("pg_ctl", ["-D", dataDirectory, "-l", directory + "/server.log", "-w", "-t", "60", "-o", options, "start"])
        stopped.withLock { $0 = false }
    }

    /// The server's process id (from `postmaster.pid`), while it runs.
    package var postmasterPID: pid_t? {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces))
        else { return nil }
        return Self.hasEnded(pid) ? nil : pid
    }

    /// Kills the server and every process it started with SIGKILL, as a crash or a power cut of its machine would
    /// (without losing what the operating system holds), and waits until they are gone.
    package func kill() {
        guard let pid = postmasterPID else { return }
        let children = Self.children(of: pid)
        _ = sendSignal(pid, SIGKILL)
        for child in children { _ = sendSignal(child, SIGKILL) }
        Self.waitUntilGone([pid] + children, timeout: .seconds(10))
        // A killed server leaves its lock files. Whoever reaps orphans here may not (a container's first process),
        // and the server takes a zombie for a running server: the files go, as an operator would remove it.
        unlink(dataDirectory + "/postmaster.pid")
        unlink(socketDirectory + "/.s.PGSQL.\(port).lock")
        unlink(socketDirectory + "/.s.PGSQL.\(port)")
    }

    /// Stops the server at once (`SIGQUIT`: immediate shutdown) and removes its directory. Calling it again does
    /// nothing.
    ///
    /// ```swift
    /// let server = try TestPostgreSQLServer()
    /// defer { server.stop() }
    /// ```
    public func stop() {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if !alreadyStopped, let pid = postmasterPID {
            let children = Self.children(of: pid)
            // A server still frozen (`SIGSTOP`, by a test that never thawed it) would hold the `SIGQUIT` pending.
            for process in [pid] + children { _ = sendSignal(process, SIGCONT) }
            _ = sendSignal(pid, SIGQUIT)
            Self.waitUntilGone([pid], timeout: .seconds(10))
            // What outlived the wait goes now: the postmaster too, not only its children.
            for process in [pid] + children where !Self.hasEnded(process) { _ = sendSignal(process, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: directory)
        if !alreadyStopped, let reaper {
            reaper.signal(SIGKILL)
            reaper.waitUntilExit()
        }
    }

    /// A shell in a session of its own that waits for this process to end, then stops the server (`SIGQUIT`:
    /// immediate shutdown) and removes its directory: a test process that crashes or is killed (SIGKILL, where no
    /// `atexit` runs) leaves no server and no files behind. ``stop()`` ends it. Nil where it cannot start (the server
    /// then lives until stopped, as before).
    private static func startReaper(directory: String) -> SpawnedProcess? {
        let script = """
            parent=$1; directory=$2
            alive() { state=$(sed 's/.*) //' "/proc/$parent/stat" 2>/dev/null | cut -d' ' -f1); [ -n "$state" ] && [ "$state" != Z ]; }
            while alive; do sleep 0.5; done
            pid=$(head -n 1 "$directory/data/postmaster.pid" 2>/dev/null)
            kill -CONT "$pid" 2>/dev/null
            if [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null; then
                tries=0
                while kill -0 "$pid" 2>/dev/null && [ $tries -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
            fi
            rm -rf "$directory"
            """
        let setsid = ["/usr/bin/setsid", "/bin/setsid"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let command = ["/bin/sh", "-c", script, "prefs-pg-reaper", String(getpid()), directory]
        let argv = setsid.map { [$0] + command } ?? command
        return try? SpawnedProcess.spawn(argv[0], Array(argv.dropFirst()), stdin: .null, stdout: .null, stderr: .null)
    }

    /// The server's log so far, for a failing test's message.
    ///
    /// ```swift
    /// #expect(laptop[.launchCount] == 1, "\(server.log.suffix(2_000))")
    /// ```
    public var log: String {
        (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
    }

    /// Runs one SQL script through `psql` as the superuser; returns its output (unaligned, tuples only).
    @discardableResult
    package func psql(_ sql: String, database: String = TestPostgreSQLServer.database) throws -> String {
        let output = try capture(
            binDirectory + "/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url(database: database), "-c", sql], asServerUser: false)
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - Helpers

    private func run(_ program: String, _ arguments: [String]) throws {
        _ = try capture(binDirectory + "/" + program, arguments, asServerUser: true)
    }

    /// Runs a program to completion with its output in a file (the server inherits nothing that could keep a pipe
    /// open). `posix_spawn` and `waitpid`, not `Process`: this blocks the calling thread only, and never waits on a
    /// run loop.
    private func capture(_ executable: String, _ arguments: [String], asServerUser: Bool) throws -> String {
        var argv = [executable] + arguments
        if asServerUser && getuid() == 0 {
            let runuser = FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser"
            argv = [runuser, "-u", "postgres", "--"] + argv
        }
        let outputPath = "/tmp/prefs-pg-output-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        let status = try SpawnedProcess.run(argv[0], Array(argv.dropFirst()), stdout: .file(outputPath), stderr: .standardOutput)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failed(
                description:
                    "\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed with status \(status): \(text)\n\(log.suffix(2000))"
            )
        }
        return text
    }

    /// The directory of `initdb` and `pg_ctl`: `pg_config --bindir`, else the newest /usr/lib/postgresql/N/bin.
    static func findBinDirectory() throws -> String {
        var candidates: [String] = []
        if let environment = ProcessInfo.processInfo.environment["PREFS_PG_BINDIR"] { candidates.append(environment) }
        for configPath in ["/usr/bin/pg_config", "/usr/local/bin/pg_config"] where FileManager.default.isExecutableFile(atPath: configPath) {
            if let text = SpawnedProcess.output(configPath, ["--bindir"])?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
                candidates.append(text)
            }
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "/usr/lib/postgresql/\($0)/bin" }
        for candidate in candidates
        where FileManager.default.isExecutableFile(atPath: candidate + "/initdb") && FileManager.default.isExecutableFile(atPath: candidate + "/pg_ctl") {
            return candidate
        }
        throw Missing(
            description: """
                PostgreSQL's server programs (initdb, pg_ctl) were not found (looked in: \(candidates.isEmpty ? "pg_config --bindir, /usr/lib/postgresql/*/bin" : candidates.joined(separator: ", "))). \
                Install them: apt-get install postgresql libpq-dev
                """)
    }

    /// A TCP port on 127.0.0.1 nobody listens on now (bound a moment, then released, for a server to take).
    package static func freePort() throws -> Int {
        try ClosedPort().port
    }

    /// The processes whose parent is `pid` (from /proc).
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid
        }
    }

    static func waitUntilGone(_ pids: [pid_t], timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if pids.allSatisfy(hasEnded) { return }
            usleep(10_000)
        }
    }

    /// Whether process `pid` has ended: gone, or a zombie nobody has reaped yet (a server's postmaster, orphaned, waits
    /// for this machine's first process to reap it).
    package static func hasEnded(_ pid: pid_t) -> Bool {
        sendSignal(pid, 0) != 0 || isZombie(pid)
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    // MARK: - Stopping at exit

    nonisolated(unsafe) private static var running: [ObjectIdentifier: TestPostgreSQLServer] = [:]
    nonisolated(unsafe) private static var exitHandlerInstalled = false

    private static let exitLock = NSLock()

    private static func registerForExit(_ server: TestPostgreSQLServer) {
        exitLock.lock()
        defer { exitLock.unlock() }
        running[ObjectIdentifier(server)] = server
        if !exitHandlerInstalled {
            exitHandlerInstalled = true
            atexit { TestPostgreSQLServer.stopAllAtExit() }
        }
    }

    private static func stopAllAtExit() {
        let servers = exitLock.withLock { Array(running.values) }
        for server in servers { server.stop() }
    }
}

/// `kill(2)`, under a name the server's ``TestPostgreSQLServer/kill()`` does not hide.
private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}
