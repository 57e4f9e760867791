import Foundation
import PrefsSupport
import PrefsTesting

/// A child process the test talks to line by line: commands on its standard input, answers on its standard output,
/// read as they come, so that the test can act between two of its steps (make a folder, change a mode). Closing its
/// input (``finish()``) ends a session child, which then exits normally.
///
/// ```swift
/// let child = try ChildSession.start(ChildProcess.executable("prefs-test-child").path, ["standard-session"])
/// child.send("set launches 7")
/// #expect(await child.nextLine() == "set launches")
/// let result = try await child.finish()
/// ```
package final class ChildSession: Sendable {
    package let process: SpawnedProcess
    private let input: FileHandle
    private let lines = Locked<[String]>([])
    private let read = Locked(0)
    private let outputEnded = Locked(false)
    private let errors = Locked(Data())
    private let errorsEnded = Locked(false)

    private init(process: SpawnedProcess, input: FileHandle, output: FileHandle, error: FileHandle) {
        self.process = process
        self.input = input
        let lines = lines, outputEnded = outputEnded, errors = errors, errorsEnded = errorsEnded
        Thread.detachNewThread {
            Self.readLines(output.fileDescriptor) { line in lines.withLock { $0.append(line) } }
            try? output.close()  // best effort: the child is gone, its output read
            outputEnded.withLock { $0 = true }
        }
        Thread.detachNewThread {
            Self.readLines(error.fileDescriptor, raw: { data in errors.withLock { $0.append(data) } }) { _ in }
            try? error.close()  // best effort, as above
            errorsEnded.withLock { $0 = true }
        }
    }

    /// Starts `executable` (an absolute path) with `arguments`, its three streams piped to this session; `environment`
    /// nil inherits this process's.
    package static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ChildSession {
        let input = Pipe(), output = Pipe(), error = Pipe()
        let process = try SpawnedProcess.spawn(
            executable, arguments, environment: environment, stdin: .descriptor(input.fileHandleForReading.fileDescriptor),
            stdout: .descriptor(output.fileHandleForWriting.fileDescriptor), stderr: .descriptor(error.fileHandleForWriting.fileDescriptor))
        // The child's ends are the child's.
        try input.fileHandleForReading.close()
        try output.fileHandleForWriting.close()
        try error.fileHandleForWriting.close()
        return ChildSession(
            process: process, input: input.fileHandleForWriting, output: output.fileHandleForReading, error: error.fileHandleForReading)
    }

    /// Writes `command` and a newline to the child's input.
    package func send(_ command: String) {
        input.write(Data((command + "\n").utf8))
    }

    /// The child's next line of output not yet returned, waiting up to `timeout` for it; nil when its output ended or
    /// the time passed first.
    package func nextLine(timeout: Duration = ChildProcess.defaultTimeout) async -> String? {
        let index = read.withLock { $0 }
        let arrived = await eventually(timeout: timeout) {
            lines.withLock { $0.count > index } || outputEnded.withLock { $0 }
        }
        guard arrived, let line = lines.withLock({ $0.count > index ? $0[index] : nil }) else { return nil }
        read.withLock { $0 = index + 1 }
        return line
    }

    /// What the child wrote to standard error so far, and whether its output ended: for a test's message when a line
    /// did not come (`#expect(await child.nextLine() == "ok", "\(child.soFar)")`).
    package var soFar: String {
        let ended = outputEnded.withLock { $0 } ? "output ended" : "output open"
        return "\(ended), stderr so far: \(String(decoding: errors.withLock { $0 }, as: UTF8.self))"
    }

    /// Closes the child's input and waits for it to exit (killing it after `timeout`); its status, the output lines
    /// not yet returned by ``nextLine(timeout:)``, and all it wrote to standard error.
    package func finish(timeout: Duration = ChildProcess.defaultTimeout) async throws -> ChildProcess.Result {
        try input.close()
        let exited = await eventually(timeout: timeout) { outputEnded.withLock { $0 } && errorsEnded.withLock { $0 } }
        if !exited { process.signal(SIGKILL) }
        let parts = UncheckedSendable(process)
        await ChildProcess.offPool { parts.value.waitUntilExit() }
        let index = read.withLock { $0 }
        let rest = lines.withLock { Array($0.dropFirst(index)) }
        let result = ChildProcess.Result(
            status: process.terminationStatus, stdout: rest.map { $0 + "\n" }.joined(),
            stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self), signaled: process.wasSignaled)
        guard exited else {
            throw ChildProcess.TimedOut(
                executable: (process.executable as NSString).lastPathComponent, arguments: process.arguments, timeout: timeout, output: result)
        }
        return result
    }

    /// Reads `descriptor` to its end, handing each chunk to `raw` and each complete line to `line`.
    private static func readLines(_ descriptor: Int32, raw: (Data) -> Void = { _ in }, _ line: (String) -> Void) {
        var buffer = Data()
        var bytes = [UInt8](repeating: 0, count: 4096)
        while true {
            // read(2), not FileHandle.availableData, which traps on EINTR (a child's SIGCHLD can interrupt it).
            let count = Foundation.read(descriptor, &bytes, bytes.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            raw(Data(bytes[0..<count]))
            buffer.append(contentsOf: bytes[0..<count])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                line(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                buffer.removeSubrange(buffer.startIndex...newline)
            }
        }
        if !buffer.isEmpty { line(String(decoding: buffer, as: UTF8.self)) }
    }
}
