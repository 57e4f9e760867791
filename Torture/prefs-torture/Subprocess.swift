import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of this same binary (`--child …`), with its stdout read line by line as it arrives
/// and its stdin kept open until ``closeInput()``.
///
/// Spawned with `posix_spawn` rather than `Foundation.Process` so the harness knows the pid at once,
/// can SIGKILL it at an exact moment and reaps it itself, with no monitoring thread in between.
final class Subprocess {
    let pid: pid_t
    private var output: Int32
    private var input: Int32
    private var pending = Data()
    private(set) var lines: [String] = []
    private(set) var sawEnd = false
    /// The exit status once reaped: `.exited(code)` or `.signaled(number)`.
    private(set) var status: Status?

    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// The running binary, re-executed through `/proc/self/exe` (its path on disk may have been replaced by a rebuild).
    static var selfExecutable: String {
        #if os(Linux)
        "/proc/self/exe"
        #else
        CommandLine.arguments[0]
        #endif
    }

    /// Starts this binary with `arguments`; stderr is inherited unless `errorPath` names a file to send it to.
    init(_ arguments: [String], errorPath: String? = nil) throws {
        var outPipe: [Int32] = [0, 0], inPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&inPipe) == 0 else { throw TortureError("pipe: \(String(cString: strerror(errno)))") }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
        for fd in [outPipe[0], outPipe[1], inPipe[0], inPipe[1]] { posix_spawn_file_actions_addclose(&actions, fd) }

        let executable = Self.selfExecutable
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, envp)
        close(outPipe[1])
        close(inPipe[0])
        guard code == 0 else {
            close(outPipe[0])
            close(inPipe[1])
            throw TortureError("posix_spawn \(executable): \(String(cString: strerror(code)))")
        }
        _ = fcntl(outPipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(inPipe[1], F_SETFD, FD_CLOEXEC)
        pid = child
        output = outPipe[0]
        input = inPipe[1]
    }

    deinit {
        if output >= 0 { close(output) }
        if input >= 0 { close(input) }
        if status == nil {
            _ = sendSignal(pid, SIGKILL)
            _ = waitStatus()
        }
    }

    /// Waits up to `timeout` for output; appends complete lines to ``lines``. Returns false at end of output
    /// (the child closed stdout or died).
    @discardableResult
    func readAvailable(timeout: Duration) -> Bool {
        guard !sawEnd else { return false }
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(max(0, min(timeout.milliseconds, 60_000)))
        let ready = poll(&descriptor, 1, milliseconds)
        guard ready > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = read(output, &buffer, buffer.count)
        if count <= 0 {
            if count < 0, errno == EINTR { return true }
            sawEnd = true
            return false
        }
        pending.append(contentsOf: buffer[0..<count])
        while let newline = pending.firstIndex(of: 0x0A) {
            lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
            pending.removeSubrange(pending.startIndex...newline)
        }
        return true
    }

    /// Reads until the child closes its output (after a kill: everything it printed before dying).
    func drain() {
        while readAvailable(timeout: .seconds(60)) {}
    }

    /// Reads until `condition` holds for the lines so far, the output ends, or `timeout` passes.
    @discardableResult
    func readLines(until condition: ([String]) -> Bool, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(lines) {
            let left = deadline - ContinuousClock.now
            guard left > .zero, readAvailable(timeout: min(left, .milliseconds(100))) else { return condition(lines) }
        }
        return true
    }

    func kill(_ signal: Int32 = SIGKILL) {
        if status == nil { _ = sendSignal(pid, signal) }
    }

    /// Closes the child's stdin (children that wait for it then finish).
    func closeInput() {
        if input >= 0 { close(input); input = -1 }
    }

    /// Waits for the child to end and returns how it ended.
    @discardableResult
    func wait() -> Status {
        if let status { return status }
        let result = waitStatus()
        status = result
        return result
    }

    private func waitStatus() -> Status {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            if errno != EINTR { return .exited(-1) }
        }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros Swift cannot import.
        let signal = raw & 0x7F
        return signal != 0 ? .signaled(signal) : .exited((raw >> 8) & 0xFF)
    }
}

extension Duration {
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// `kill(2)`, under a name the `kill(_:)` method does not shadow.
private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}

/// A failure of the harness itself (not of the store under test).
struct TortureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
