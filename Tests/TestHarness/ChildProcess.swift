import Foundation
import PrefsTesting
import Prefs

/// Runs an executable built by this package (found beside the test bundle) and collects its output.
///
/// Both pipes are read to the end before waiting, so a child that writes a lot never blocks.
/// Waiting is `async` and happens on a thread of its own (``offPool(_:)``): Swift concurrency has one
/// pool thread per core, and a test blocked in `waitUntilExit()` on one of them stalls every other test
/// (under ThreadSanitizer, where a child takes seconds to start, for over a minute).
package struct ChildProcess: Sendable {
    package struct Result: Sendable {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        /// True when the process was ended by a signal (`status` is then the signal number).
        package var signaled: Bool
    }

    /// The directory holding the package's built products (`.build/debug`), derived from the running test bundle.
    package static var productsDirectory: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            url = bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        // swift-testing may run from the .xctest binary inside .build/debug or from a swiftpm-testing-helper.
        while !url.path.isEmpty, url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("prefs-tool").path)
                || FileManager.default.fileExists(atPath: url.appendingPathComponent("prefs-test-child").path)
            {
                return url
            }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// The path of the product `name`.
    package static func executable(_ name: String) -> URL {
        productsDirectory.appendingPathComponent(name)
    }

    /// Starts `name` with `arguments`; returns the running process and its pipes.
    package static func start(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil
    ) throws -> (SpawnedProcess, Pipe, Pipe) {
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        return try launch(executable(name).path, arguments, environment: merged, stdin: stdin)
    }

    /// Starts `executable` with pipes for its output; `stdin` is written and closed (no data: `/dev/null`).
    static func launch(_ executable: String, _ arguments: [String], environment: [String: String]?, stdin: Data?) throws -> (SpawnedProcess, Pipe, Pipe) {
        let out = Pipe(), err = Pipe(), input = stdin.map { _ in Pipe() }
        let process = try SpawnedProcess.spawn(
            executable, arguments, environment: environment,
            stdin: input.map { .descriptor($0.fileHandleForReading.fileDescriptor) } ?? .null,
            stdout: .descriptor(out.fileHandleForWriting.fileDescriptor), stderr: .descriptor(err.fileHandleForWriting.fileDescriptor))
        // The child's ends are the child's: closed here, its output ends when it does.
        try out.fileHandleForWriting.close()
        try err.fileHandleForWriting.close()
        if let input, let stdin {
            try input.fileHandleForReading.close()
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        return (process, out, err)
    }

    /// How long a test waits for a child before killing it: generous (a child under ThreadSanitizer takes seconds to
    /// start), so that only a hang reaches it, and a hang then fails its test instead of stalling the suite.
    package static let defaultTimeout: Duration = .seconds(120)

    /// Runs `name` to completion; throws ``TimedOut`` (after killing it) if it runs longer than `timeout`.
    package static func run(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
        timeout: Duration = defaultTimeout
    ) async throws -> Result {
        let (process, out, err) = try start(name, arguments, environment: environment, stdin: stdin)
        return try await finish(process, out, err, timeout: timeout)
    }

    /// Reads both pipes to the end (concurrently), then waits for the process, without holding a pool thread.
    ///
    /// A process still running after `timeout` is killed with SIGKILL and ``TimedOut`` is thrown, carrying what it
    /// printed: a test awaiting a child that hangs fails with that error instead of hanging the suite.
    package static func finish(_ process: SpawnedProcess, _ out: Pipe, _ err: Pipe, timeout: Duration = defaultTimeout) async throws -> Result {
        let parts = UncheckedSendable((process, out, err))
        let watchdog = Watchdog(process, timeout: timeout)
        let result = await offPool { finishBlocking(parts.value.0, parts.value.1, parts.value.2) }
        if watchdog.finish() {
            throw TimedOut(
                executable: (process.executable as NSString).lastPathComponent, arguments: process.arguments,
                timeout: timeout, output: result)
        }
        return result
    }

    /// Reads one line from `pipe` (a running child's output), without the newline; nil at the end of output.
    /// Reads a byte at a time, so what follows the line stays in the pipe for ``finish(_:_:_:)``.
    package static func readLine(_ pipe: Pipe) async -> String? {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        return await offPool {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while readOneByte(descriptor, &byte) == 1 {
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Runs blocking `body` (a wait, a pipe read) on a new thread and awaits its result.
    package static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.start()
        }
    }

    /// As PrefsTesting's `eventually`, for a condition that blocks (one that runs `psql`, say): each check runs on a
    /// thread of its own (``offPool(_:)``), every `interval`, so that a test polling for a minute never holds one of
    /// the pool's threads, which the other tests wait for.
    package static func eventually(
        timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(50), _ condition: @escaping @Sendable () -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await offPool(condition) { return true }
            // Real time is the point: what is awaited happens in another process (or on the server), on its own time.
            try? await Task.sleep(for: interval)
        }
        return await offPool(condition)
    }

    private static func finishBlocking(_ process: SpawnedProcess, _ out: Pipe, _ err: Pipe) -> Result {
        let group = DispatchGroup()
        let errorData = LockedData()
        group.enter()
        DispatchQueue.global().async {
            errorData.set(err.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData.get(), as: UTF8.self),
            signaled: process.wasSignaled
        )
    }
}

private final class LockedData: Sendable {
    private let data = Locked(Data())
    func set(_ value: Data) { data.withLock { $0 = value } }
    func get() -> Data { data.withLock { $0 } }
}

extension ChildProcess {
    /// Runs a system program by absolute path (for example `/usr/bin/sqlite3`) to completion.
    package static func runSystem(_ path: String, _ arguments: [String], stdin: Data? = nil) async throws -> Result {
        let (process, out, err) = try launch(path, arguments, environment: nil, stdin: stdin)
        return try await finish(process, out, err)
    }
}

/// Carries a value that is used by one thread at a time across an isolation boundary.
// @unchecked Sendable: `Pipe`s are handed from the test to the waiting thread and not used by both at once.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}

/// `read(2)` of one byte, outside `ChildProcess`, whose own `read(_:untilLine:)` hides the system call's name there.
private func readOneByte(_ descriptor: Int32, _ byte: inout UInt8) -> Int {
    read(descriptor, &byte, 1)
}

#if os(Linux)
extension ChildProcess {
    /// A finished child with its peak resident memory.
    package struct MeasuredResult: Sendable {
        package var result: Result
        /// The child's peak resident set size in bytes (`wait4`'s `ru_maxrss`).
        package var peakResidentBytes: Int
    }

    /// Runs the product `name` to completion, as ``run(_:_:environment:stdin:timeout:)`` does, and reports its peak
    /// memory (`wait4`'s `ru_maxrss`, which Foundation's `Process` keeps to itself).
    ///
    /// The child is started by `prefs-test-child measure`, not by this process: `posix_spawn` shares the parent's
    /// memory until the child's `exec`, and Linux then records that memory's high-water mark as the child's, so a child
    /// of a test process that once held 1 GiB reported 1 GiB whatever it used. Started by the small helper, the figure
    /// is the child's own, or the helper's few MiB.
    package static func runMeasured(_ name: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> MeasuredResult {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-measured-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (process, out, err) = try start("prefs-test-child", ["measure", output, executable(name).path] + arguments, environment: environment)
        let result = try await finish(process, out, err)
        guard let text = try? String(contentsOfFile: output, encoding: .utf8), let peak = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw MeasurementMissing(program: name, stderr: result.stderr)
        }
        return MeasuredResult(result: result, peakResidentBytes: peak)
    }

    /// `prefs-test-child measure` wrote no peak for `program` (it could not start it); its error output says why.
    package struct MeasurementMissing: Error, CustomStringConvertible {
        package var program: String
        package var stderr: String
        package var description: String { "no peak memory measured for \(program): \(stderr)" }
    }
}
#endif
import PrefsSupport
