import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// The test support's waits on child processes end: a hang fails its test instead of stalling the suite.
@Suite("Child processes: no wait can hang")
struct ChildProcessTests {
    @Test("a child still running at its deadline is killed and the wait throws TimedOut with its output")
    func deadline() async throws {
        let directory = try TemporaryDirectory()
        // `repeat` writes until it is killed: it never ends by itself.
        let (process, out, err) = try ChildProcess.start("prefs-test-child", ["repeat", "sqlite", directory.file("p.sqlite").path, "r", "set"])
        _ = try await ChildProcess.read(out.fileHandleForReading) { $0 == "ack 0" }
        await #expect {
            _ = try await ChildProcess.finish(process, out, err, timeout: .milliseconds(200))
        } throws: { error in
            guard let timedOut = error as? ChildProcess.TimedOut else { return false }
            return timedOut.output.signaled && timedOut.output.status == SIGKILL && timedOut.arguments.first == "repeat"
        }
        #expect(!process.isRunning)
    }

    @Test("waiting for a line the child never prints ends at the end of its output, with what it printed")
    func lineNeverPrinted() async throws {
        let (process, out, err) = try ChildProcess.start("prefs-test-child", ["nonsense"])
        await #expect {
            _ = try await ChildProcess.read(err.fileHandleForReading) { $0 == "never printed" }
        } throws: { error in
            guard let notSeen = error as? ChildProcess.LineNotSeen else { return false }
            return notSeen.reason == "end of output" && notSeen.read.hasPrefix("prefs-test-child: usage")
        }
        #expect(try await ChildProcess.finish(process, out, err).status == 2)
    }

    @Test("withDeadline returns what its body returns, and throws DeadlinePassed for an await that never ends")
    func deadlineForAwaits() async throws {
        #expect(try await withDeadline(.seconds(60)) { 7 } == 7)
        let (never, _) = AsyncStream<Void>.makeStream()
        await #expect(throws: DeadlinePassed.self) {
            try await withDeadline(.milliseconds(50), "an event never signalled") {
                var it = never.makeAsyncIterator(); await it.next()
            }
        }
    }

    @Test("a spawned child inherits only its three standard streams, not the parent's other descriptors")
    func noInheritedDescriptors() async throws {
        // A pipe without close-on-exec, as Foundation's Pipe and many C libraries make them.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let result = try await ChildProcess.runSystem("/bin/sh", ["-c", "ls /proc/$$/fd"])
        let descriptors = Set(result.stdout.split(separator: "\n").compactMap { Int32($0) })
        #expect(result.status == 0)
        #expect(descriptors.isSubset(of: [0, 1, 2, 3]), "inherited: \(descriptors.sorted())")
        #expect(!descriptors.contains(ends[0]) && !descriptors.contains(ends[1]))
    }

    @Test("a reaped child is never signalled again (its process id may belong to someone else by then)")
    func noSignalAfterReaping() throws {
        let process = try SpawnedProcess.spawn("/bin/sh", ["-c", "exit 3"])
        process.waitUntilExit()
        #expect(process.terminationStatus == 3 && !process.wasSignaled)
        #expect(!process.isRunning)
        #expect(!process.signal(SIGKILL))
        let sleeper = try SpawnedProcess.spawn("/bin/sleep", ["60"])
        #expect(sleeper.isRunning)
        #expect(sleeper.signal(SIGKILL))
        sleeper.waitUntilExit()
        #expect(sleeper.wasSignaled && sleeper.terminationStatus == SIGKILL)
    }
}
