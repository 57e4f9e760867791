import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Many instances on one namespace: visibility, observation, contention, across threads, connections and processes.
@Suite("PostgreSQL sharing")
struct PostgreSQLSharingTests {
    @Test("two stores on one namespace see each other's writes after refresh()")
    func refreshSeesOtherWrites() throws {
        let fixture = try PostgreSQLFixture()
        let a = fixture.prefs, b = try fixture.reopen()
        #expect(b[.launchCount] == 0)  // cached
        try a.set(5, for: .launchCount)
        try b.refresh()
        #expect(b[.launchCount] == 5)
        try b.set(6, for: .launchCount)
        try a.refresh()
        #expect(a[.launchCount] == 6)
        try a.reset(.launchCount)
        try b.refresh()
        #expect(!b.isStored(.launchCount))
    }

    @Test("values(for:) and observers in one store see another store's writes within a bound")
    func observationAcrossConnections() async throws {
        let fixture = try PostgreSQLFixture()
        let writer = fixture.prefs, reader = try fixture.reopen(pollInterval: .milliseconds(10))
        let seen = Locked<[Int]>([])
        let task = Task {
            for await value in reader.values(for: .launchCount) {
                seen.withLock { $0.append(value) }
                if value == 3 { return }
            }
        }
        #expect(await eventually(timeout: .seconds(300)) { seen.withLock { $0 } == [0] })
        for value in 1...3 {
            try writer.set(value, for: .launchCount)
            // The bound is generous: the whole suite runs in parallel on few cores, and a starved poll is late, not lost.
            #expect(await eventually(timeout: .seconds(300)) { seen.withLock { $0.last } == value }, "value \(value) seen within 300 s")
        }
        _ = await task.value
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
        // Observable values too.
        let observable = reader.observable(.name)
        try writer.set("changed", for: .name)
        #expect(await eventually(timeout: .seconds(300)) { observable.value == "changed" })
    }

    @Test("an observed store sees another instance's write when notified, long before its poll interval; without LISTEN it waits for the poll")
    func notificationWakesObservers() async throws {
        let fixture = try PostgreSQLFixture()
        // A poll interval of ten minutes: only the notification can bring the change in time.
        let reader = try fixture.reopen(pollInterval: .seconds(600))
        let seen = Locked<[Int]>([])
        let task = Task {
            for await value in reader.values(for: .launchCount) {
                seen.withLock { $0.append(value) }
                if value == 7 { return }
            }
        }
        #expect(await eventually(timeout: .seconds(300)) { seen.withLock { $0 } == [0] })
        // No wait for the listener: values(for:) returns listening.
        try fixture.prefs.set(7, for: .launchCount)
        #expect(await eventually(timeout: .seconds(300)) { seen.withLock { $0 }.last == 7 }, "\(seen.withLock { $0 })")
        task.cancel()

        // The same with listening off (as behind PgBouncer in transaction mode): nothing arrives before the poll.
        let quiet = try PostgreSQLFixture(options: PostgreSQLOptions(listens: false))
        let deaf = try Prefs(.postgreSQL(quiet.url, namespace: quiet.namespace, options: quiet.options), pollInterval: .seconds(600))
        let heard = Locked<[Int]>([])
        let second = Task {
            for await value in deaf.values(for: .launchCount) { heard.withLock { $0.append(value) } }
        }
        #expect(await eventually(timeout: .seconds(300)) { heard.withLock { $0 } == [0] })
        try quiet.prefs.set(7, for: .launchCount)
        // Real time is the point: that nothing arrives shows only by waiting, here a window many times what a
        // notification takes (milliseconds).
        try await Task.sleep(for: .seconds(2))
        #expect(heard.withLock { $0 } == [0], "a store that does not listen saw the write before its poll")
        second.cancel()
    }

    @Test("concurrent updates from many threads and connections lose nothing")
    func threadsAndConnections() async throws {
        let fixture = try PostgreSQLFixture()
        let stores = [fixture.prefs] + (try (0..<3).map { _ in try fixture.reopen() })
        let perThread = 40
        await withTaskGroup(of: Void.self) { group in
            for store in stores {
                for _ in 0..<2 {
                    group.addTask {
                        for _ in 0..<perThread { try? store.update(.launchCount) { $0 += 1 } }
                    }
                }
            }
        }
        #expect(try fixture.reopen()[.launchCount] == stores.count * 2 * perThread)
        for store in stores { #expect(store.diagnostics.isEmpty, "\(store.diagnostics)") }
    }

    @Test("concurrent updates from several child processes and this one lose nothing")
    func childProcesses() async throws {
        let fixture = try PostgreSQLFixture()
        let children = 3, perChild = 60
        let results = try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for _ in 0..<children {
                group.addTask {
                    try await ChildProcess.run("prefs-test-child", ["update", "postgresql:\(fixture.namespace)", fixture.url, "launchCount", "\(perChild)"])
                }
            }
            for _ in 0..<perChild { try fixture.prefs.update(.launchCount) { $0 += 1 } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0 && result.stdout == "done\n", "\(result.stderr)") }
        #expect(try fixture.reopen()[.launchCount] == (children + 1) * perChild)
    }

    @Test("a batch is atomic for another connection: it sees none or all of it")
    func batchAtomicAcrossProcesses() async throws {
        let fixture = try PostgreSQLFixture()
        let reader = try fixture.reopen()
        let keys = (0..<100).map { Prefs.Key<Int>("batch-\($0)", initial: -1) }
        let writer = Task.detached {
            for round in 0..<20 {
                try fixture.prefs.batch { transaction in
                    for key in keys { try transaction.set(round, for: key) }
                }
            }
        }
        var torn = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let snapshot = try reader.snapshot()
            let values = Set(snapshot.values.map(\.json))
            if values.count > 1 || (!snapshot.isEmpty && snapshot.count != 100) { torn += 1 }
            if snapshot["batch-0"]?.json == .int(19) { break }
        }
        try await writer.value
        #expect(torn == 0)
    }

    @Test("notification latency: a write in this process seen by a watching child process (median reported)")
    func notificationLatency() async throws {
        let fixture = try PostgreSQLFixture()
        // The child watches until its stdin closes: keep it open.
        let out = Pipe(), input = Pipe()
        let process = try SpawnedProcess.spawn(
            ChildProcess.executable("prefs-test-child").path, ["watch", "postgresql:\(fixture.namespace)", fixture.url, "launchCount"],
            stdin: .descriptor(input.fileHandleForReading.fileDescriptor), stdout: .descriptor(out.fileHandleForWriting.fileDescriptor))
        try input.fileHandleForReading.close()
        try out.fileHandleForWriting.close()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        let lines = LineReader(out.fileHandleForReading)
        #expect(await lines.wait(for: "value 0", timeout: .seconds(60)) != nil, "the child starts watching")
        var latencies: [Duration] = []
        for value in 1...25 {
            let started = ContinuousClock.now
            try fixture.prefs.set(value, for: .launchCount)
            guard let seen = await lines.wait(for: "value \(value)", timeout: .seconds(60)) else {
                Issue.record("value \(value) not seen within 60 s")
                break
            }
            latencies.append(seen - started)
            // Real time is the point: a real process's latency, each write past the last one's notification interval
            // (5 ms, during which a notification waits for others to share it), so each is measured on its own.
            try await Task.sleep(for: .milliseconds(15))
        }
        latencies.sort()
        if !latencies.isEmpty {
            print(
                "PostgreSQL notification latency (write → seen by another process, its poll interval 20 ms): median \(latencies[latencies.count / 2]), max \(latencies.last!)"
            )
        }
        #expect(latencies.count == 25)
    }
}

/// Reads a pipe's lines on a thread of its own, noting when each arrived.
final class LineReader: Sendable {
    private let arrived = Locked<[(line: String, at: ContinuousClock.Instant)]>([])

    init(_ handle: FileHandle) {
        let arrived = arrived
        let descriptor = handle.fileDescriptor
        Thread.detachNewThread {
            var buffer = Data()
            var bytes = [UInt8](repeating: 0, count: 4096)
            while true {
                // read(2), not FileHandle.availableData, which traps on EINTR (a child's SIGCHLD can interrupt it).
                let count = read(descriptor, &bytes, bytes.count)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return }
                let now = ContinuousClock.now
                buffer.append(contentsOf: bytes[0..<count])
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    arrived.withLock { $0.append((line, now)) }
                }
            }
        }
    }

    /// When `line` arrived, waiting up to `timeout` for it (without holding a thread of the shared pool).
    func wait(for line: String, timeout: Duration) async -> ContinuousClock.Instant? {
        let arrival = { self.arrived.withLock { $0.first(where: { $0.line == line })?.at } }
        // The time is the reading thread's, taken as the line arrived: how soon this task looks does not change it.
        _ = await eventually(timeout: timeout) { arrival() != nil }
        return arrival()
    }
}
