import BenchCPU
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Temporary directories for every store, and child processes of this same binary.

/// Every store lives in a fresh directory under one per-run root, removed afterwards.
enum Scratch {
    static let root: String = {
        let base = ProcessInfo.processInfo.environment["PREFS_BENCH_TMPDIR"] ?? NSTemporaryDirectory()
        return makeDirectory((base as NSString).appendingPathComponent("prefs-bench-XXXXXX"))
    }()

    /// `mkdtemp(3)`: a new directory named after `template`, whose trailing XXXXXX are replaced.
    private static func makeDirectory(_ template: String) -> String {
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { fatalError("mkdtemp \(template): errno \(errno)") }
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Where UserDefaults keeps its suites on Linux: `$XDG_CONFIG_HOME` as set at launch (CoreFoundation reads it
    /// before `main`, so it cannot be redirected from inside), else `~/.config`. Suites are unique per run and removed.
    static var configHome: String {
        if let config = getenv("XDG_CONFIG_HOME"), config.pointee != 0 { return String(cString: config) }
        return NSHomeDirectory() + "/.config"
    }

    /// A fresh empty directory.
    static func directory(_ label: String) -> String {
        makeDirectory((root as NSString).appendingPathComponent("\(label)-XXXXXX"))
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static func removeAll() {
        remove(root)
    }
}

/// This program's executable, to spawn children of the same build.
let selfExecutable: String = {
    if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
    return CommandLine.arguments[0]
}()

/// What a child printed and how long the whole process took, spawn to exit.
struct ChildResult {
    var output: String
    var elapsed: Duration
}

/// Runs `prefs-bench ARGUMENTS` and waits for it. Its stdout is returned; its stderr passes through.
func runChild(_ arguments: [String]) throws -> ChildResult {
    if getenv("PREFS_BENCH_TMPDIR") == nil { setenv("PREFS_BENCH_TMPDIR", Scratch.root, 1) }  // a child's directories go inside the run's
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe: errno \(errno)") }
    // Close-on-exec: a child gets the write end only as its standard output (spawnSelf's dup2), so the pipe reaches
    // its end when this child exits.
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    let reader = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true)
    let start = clock.now
    let child: pid_t
    do {
        child = try spawnSelf(arguments, output: pipeEnds[1])
    } catch {
        close(pipeEnds[1])
        throw error
    }
    close(pipeEnds[1])
    let data = reader.readDataToEndOfFile()
    let exit = try waitForExit(child)
    let elapsed = clock.now - start
    let output = String(decoding: data, as: UTF8.self)
    guard !exit.signaled, exit.status == 0 else {
        throw BenchError(
            "child \(arguments.joined(separator: " ")) \(exit.signaled ? "killed by signal" : "exited with status") \(exit.status): \(output)")
    }
    return ChildResult(output: output, elapsed: elapsed)
}

/// Starts this binary with `arguments` through `posix_spawn`, its standard output on `output` (a pipe's write end),
/// its standard input and error this process's own, and returns its process id.
///
/// Not Foundation's `Process`: on Linux its `waitUntilExit` polls in 50 ms steps, which would land in the time of
/// every child this benchmark times spawn to exit (cold start, app launch); ``waitForExit(_:)`` blocks in `waitpid`.
private func spawnSelf(_ arguments: [String], output: Int32) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    let argv = ([selfExecutable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var child: pid_t = 0
    let code = posix_spawn(&child, selfExecutable, &actions, nil, argv, environ)
    guard code == 0 else { throw BenchError("cannot start \(selfExecutable): \(String(cString: strerror(code))) (errno \(code))") }
    return child
}

/// Waits for `child` to end (`waitpid`, again after a signal interrupts it) and reaps it: its exit status, or the number
/// of the signal that ended it.
private func waitForExit(_ child: pid_t) throws -> (status: Int32, signaled: Bool) {
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 {
        guard errno == EINTR else { throw BenchError("waitpid \(child): errno \(errno)") }
    }
    // WIFSIGNALED, WTERMSIG and WEXITSTATUS, which Swift does not import.
    return status & 0x7F != 0 ? (status & 0x7F, true) : ((status >> 8) & 0xFF, false)
}

/// A `name=value` field of a child's output.
func field(_ name: String, in output: String) -> String? {
    for line in output.split(separator: "\n") where line.hasPrefix(name + "=") {
        return String(line.dropFirst(name.count + 1))
    }
    return nil
}

/// Peak resident set size of this process in KiB (VmHWM from /proc/self/status).
func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}

/// The benchmark and a server on one CPU, for the one-client rows of the PostgreSQL workload.
///
/// A round trip over a Unix socket wakes the other side. With client and server on two CPUs of this VM, that wake-up
/// lands on an idle virtual CPU as often as not, and the round trip then takes 95–130 µs instead of 22–25 µs, in runs
/// minutes apart and within one run, for raw libpq as much as for the store: its ratios measured the VM. On one CPU
/// the server runs as the client blocks, and the round trip is steady (an IQR under 1 µs). Every thread of this
/// process and every process of the server (the postmaster, so that backends it starts later inherit the CPU, and its
/// children) are moved; ``release()`` moves them all back to the CPUs this process had.
struct OneCPU {
    private let postmaster: pid_t
    private let allowed: UInt64
    /// The CPU everything runs on.
    let cpu: Int

    /// Moves this process and the server whose postmaster is `postmaster` to the last CPU this process may use; nil
    /// when there is one CPU only or affinity cannot be set (the rows then measure as before).
    init?(postmaster: pid_t) {
        let allowed = prefs_bench_cpus(0)
        guard allowed.nonzeroBitCount > 1 else { return nil }
        self.postmaster = postmaster
        self.allowed = allowed
        self.cpu = 63 - allowed.leadingZeroBitCount
        guard Self.apply(1 << UInt64(cpu), postmaster: postmaster) else {
            _ = Self.apply(allowed, postmaster: postmaster)
            return nil
        }
    }

    /// Every thread and server process back on the CPUs this process had.
    func release() {
        _ = Self.apply(allowed, postmaster: postmaster)
    }

    /// Sets `mask` on every thread of this process, the postmaster and its children; false if any refused.
    private static func apply(_ mask: UInt64, postmaster: pid_t) -> Bool {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.compactMap(pid_t.init) ?? []
        var ok = !threads.isEmpty
        for id in threads + [postmaster] + children(of: postmaster) where prefs_bench_set_cpus(id, mask) != 0 { ok = false }
        return ok
    }

    /// The processes whose parent is `pid`.
    private static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { parent(of: $0) == pid }
    }

    /// A process's parent (the fourth field of /proc/PID/stat, after the command in parentheses, which may hold any
    /// character); nil when the process has ended.
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }
}
