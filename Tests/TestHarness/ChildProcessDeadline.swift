import Foundation
import PrefsTesting
import Prefs
import PrefsSupport

extension ChildProcess {
    /// A child process that was still running at its deadline; it was killed with SIGKILL.
    package struct TimedOut: Error, CustomStringConvertible {
        package var executable: String
        package var arguments: [String]
        package var timeout: Duration
        /// What the process printed before it was killed.
        package var output: Result

        package var description: String {
            "\(([executable] + arguments).joined(separator: " ")) still running after \(timeout): killed"
                + "\nstdout: \(output.stdout)\nstderr: \(output.stderr)"
        }
    }

    /// A pipe or file descriptor that ended before the awaited line was read.
    package struct LineNotSeen: Error, CustomStringConvertible {
        /// Everything that was read.
        package var read: String
        /// Why reading stopped: the end of the output, or the deadline.
        package var reason: String

        package var description: String { "the awaited line was not printed (\(reason)); read so far: \(read.debugDescription)" }
    }

    /// Reads `handle` until a complete line satisfying `matches` has been read, without holding a pool thread.
    ///
    /// Returns every byte read (they are gone from the pipe, so keep them: the output is that plus what a later
    /// ``finish(_:_:_:timeout:)`` reads). Throws ``LineNotSeen`` when the output ends or `timeout` passes first:
    /// a child that never prints what a test waits for fails the test instead of hanging it.
    package static func read(
        _ handle: FileHandle, untilLine matches: @escaping @Sendable (Substring) -> Bool, timeout: Duration = defaultTimeout
    ) async throws -> String {
        let descriptor = handle.fileDescriptor
        let outcome = await offPool { () -> (String, String?) in
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8]()
            var chunk = [UInt8](repeating: 0, count: 4096)
            var scanned = 0  // bytes before this index hold only lines already checked
            while true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return (String(decoding: buffer, as: UTF8.self), "deadline \(timeout) passed") }
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
                let polled = poll(&ready, 1, milliseconds)
                if polled < 0, errno == EINTR { continue }
                guard polled > 0 else { continue }
                let count = Foundation.read(descriptor, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return (String(decoding: buffer, as: UTF8.self), "end of output") }
                buffer.append(contentsOf: chunk[0..<count])
                while let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[scanned..<newline], as: UTF8.self)
                    scanned = newline + 1
                    if matches(line[...]) { return (String(decoding: buffer, as: UTF8.self), nil) }
                }
            }
        }
        if let reason = outcome.1 { throw LineNotSeen(read: outcome.0, reason: reason) }
        return outcome.0
    }
}

/// Kills a process that outlives its deadline. `finish()` disarms it and tells whether it fired.
final class Watchdog: Sendable {
    private let fired = Locked(false)
    private let done = Locked(false)

    init(_ process: SpawnedProcess, timeout: Duration) {
        let fired = fired, done = done
        let seconds = timeout.timeInterval
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            // `done` is held while killing, so no kill lands after finish() has returned (and the pid been reused).
            done.withLock { isDone in
                guard !isDone, process.signal(SIGKILL) else { return }
                fired.withLock { $0 = true }
            }
        }
    }

    /// Disarms the watchdog; true when it killed the process.
    func finish() -> Bool {
        done.withLock { $0 = true }
        return fired.withLock { $0 }
    }
}
