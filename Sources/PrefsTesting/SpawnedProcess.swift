import Foundation
import PrefsSupport

/// A child process started with `posix_spawn`: the one way the tests, the torture harness and the benchmark start
/// programs.
///
/// Not Foundation's `Process`: on Linux (corelibs Foundation up to 6.3.1) `Process.run()` lists `/proc/self/fd` with
/// a 256-byte over-read of each directory entry and now and then crashes the *parent* with SIGSEGV, the more often the
/// more descriptors it has open (swift-corelibs-foundation pull request 5472). A test process with a thousand open
/// descriptors (stores, pipes, server connections of tests running side by side) met it in CI.
///
/// The child inherits no descriptor but its three standard streams (`posix_spawn_file_actions_addclosefrom_np`
/// on Linux, `POSIX_SPAWN_CLOEXEC_DEFAULT` on Apple platforms): a server a test starts does not keep another test's
/// pipe open, so reading a pipe to its end never waits on an unrelated process.
///
/// Reaping happens under a lock, and ``signal(_:)`` takes the same lock, so a signal never reaches a process id the
/// system has reused for someone else.
package final class SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream {
        /// The parent's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// A file the child opens for writing (created with mode 0644; truncated, or appended to).
        case file(String, append: Bool = false)
        /// This descriptor of the parent (a pipe's end, say), duplicated into place; the parent keeps and closes its copy.
        case descriptor(Int32)
        /// For standard error: wherever standard output goes.
        case standardOutput
    }

    package let processIdentifier: pid_t
    package let executable: String
    package let arguments: [String]
    /// The raw `wait` status and resource usage, once reaped.
    private let reaped = Locked<Reaped?>(nil)

    private struct Reaped {
        var status: Int32
        var usage: rusage
    }

    private init(processIdentifier: pid_t, executable: String, arguments: [String]) {
        self.processIdentifier = processIdentifier
        self.executable = executable
        self.arguments = arguments
    }

    /// Starts `executable` (an absolute path) with `arguments`. `environment` nil inherits the parent's.
    package static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit
    ) throws -> SpawnedProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var passed: [Int32] = []
        for (stream, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path, let append):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o644)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
                passed.append(descriptor)
            case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, target)
            }
        }
        #if canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #else
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, 3)
        } else {
            for descriptor in Set(passed) where descriptor > 2 { posix_spawn_file_actions_addclose(&actions, descriptor) }
        }
        #endif
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { (argv + (envp ?? [])).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned: Int32
        if let envp {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        } else {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard spawned == 0 else { throw SpawnFailed(executable: executable, code: spawned) }
        return SpawnedProcess(processIdentifier: pid, executable: executable, arguments: arguments)
    }

    /// Runs `executable` to completion with the given streams; returns its exit status (128 + N after signal N).
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws -> Int32 {
        let process = try spawn(executable, arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr)
        process.waitUntilExit()
        return process.wasSignaled ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Runs `executable` to completion and returns what it printed on standard output (standard error discarded),
    /// or nil when it could not start or exited with a status other than 0.
    package static func output(_ executable: String, _ arguments: [String]) -> String? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        let reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        let process: SpawnedProcess
        do {
            process = try spawn(executable, arguments, stdout: .descriptor(ends[1]), stderr: .null)
        } catch {
            close(ends[1])
            return nil
        }
        close(ends[1])
        let data = reading.readDataToEndOfFile()
        process.waitUntilExit()
        guard !process.wasSignaled, process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// True until the process has exited (reaping it when it has).
    package var isRunning: Bool {
        reaped.withLock { status in
            if status != nil { return false }
            return !Self.reapIfExited(processIdentifier, into: &status)
        }
    }

    /// Blocks the calling thread until the process has exited, and reaps it.
    package func waitUntilExit() {
        while true {
            // Wait without reaping: the process stays a zombie (its id not reusable) until reaped under the lock.
            var info = siginfo_t()
            let waited = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT)
            if waited < 0, errno == EINTR { continue }
            let done = reaped.withLock { status in
                status != nil || Self.reapIfExited(processIdentifier, into: &status) || waited < 0
            }
            if done { return }
        }
    }

    /// Sends `signal` unless the process has been reaped; true when it was sent.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool {
        reaped.withLock { status in status == nil && kill(processIdentifier, signal) == 0 }
    }

    /// Sends SIGTERM.
    package func terminate() { signal(SIGTERM) }

    /// The exit status, or the signal number when ``wasSignaled``; -1 while running.
    package var terminationStatus: Int32 {
        guard let status = reaped.withLock({ $0?.status }) else { return -1 }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
        return status & 0x7F != 0 ? status & 0x7F : (status >> 8) & 0xFF
    }

    /// True when the process was ended by a signal.
    package var wasSignaled: Bool {
        guard let status = reaped.withLock({ $0?.status }) else { return false }
        return status & 0x7F != 0
    }

    /// The child's peak resident set size in bytes (`wait4`'s `ru_maxrss`); 0 while running.
    package var peakResidentBytes: Int {
        guard let usage = reaped.withLock({ $0?.usage }) else { return 0 }
        #if canImport(Darwin)
        return Int(usage.ru_maxrss)
        #else
        return Int(usage.ru_maxrss) * 1024
        #endif
    }

    private static func reapIfExited(_ pid: pid_t, into reaped: inout Reaped?) -> Bool {
        var raw: Int32 = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &raw, WNOHANG, &usage)
            if result < 0, errno == EINTR { continue }
            if result == pid {
                reaped = Reaped(status: raw, usage: usage)
                return true
            }
            return false
        }
    }

    #if !canImport(Darwin)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which the Glibc module does not export to Swift.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
    #endif
}

/// `posix_spawn` refused to start a program.
package struct SpawnFailed: Error, CustomStringConvertible {
    package var executable: String
    package var code: Int32
    package var description: String { "cannot start \(executable): \(String(cString: strerror(code))) (errno \(code))" }
}
