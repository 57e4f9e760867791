import Foundation
import PrefsTestHarness
import PrefsTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of this same binary (`--child …`), with its stdout read line by line as it arrives
/// and its stdin kept open until ``closeInput()``.
///
/// Started through ``SpawnedProcess`` (`posix_spawn`, no inherited descriptors) so the harness knows the pid at once,
/// can SIGKILL it at an exact moment and reaps it itself, with no monitoring thread in between.
final class Subprocess {
    let process: SpawnedProcess
    var pid: pid_t { process.processIdentifier }
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
        _ = fcntl(outPipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(inPipe[1], F_SETFD, FD_CLOEXEC)
        defer {
            close(outPipe[1])
            close(inPipe[0])
        }
        do {
            process = try SpawnedProcess.spawn(
                Self.selfExecutable, arguments, stdin: .descriptor(inPipe[0]), stdout: .descriptor(outPipe[1]),
                stderr: errorPath.map { .file($0, append: true) } ?? .inherit)
        } catch {
            close(outPipe[0])
            close(inPipe[1])
            throw TortureError("\(error)")
        }
        output = outPipe[0]
        input = inPipe[1]
    }

    deinit {
        if output >= 0 { close(output) }
        if input >= 0 { close(input) }
        if status == nil {
            process.signal(SIGKILL)
            process.waitUntilExit()
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
        process.signal(signal)
    }

    /// Closes the child's stdin (children that wait for it then finish).
    func closeInput() {
        if input >= 0 { close(input); input = -1 }
    }

    /// Waits for the child to end and returns how it ended.
    @discardableResult
    func wait() -> Status {
        if let status { return status }
        process.waitUntilExit()
        let result: Status = process.wasSignaled ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
        status = result
        return result
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

/// A failure of the harness itself (not of the store under test).
struct TortureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
