import Foundation
import Observation
import TestFixtures
@testable import Prefs
import PrefsTestHarness
import PrefsTesting
import PrefsSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `suspend()` releases every lock on the store's files until the next call (iOS ends an app suspended while it holds
/// one in a shared container: 0xdead10cc). The locks are read where the kernel lists them, `/proc/locks`.
@Suite("Suspension: no file lock while suspended", .timeLimit(.minutes(2)))
struct SuspensionTests {
    #if os(Linux)
    /// The locks this process holds, as `/proc/locks` lists them, on the files in a directory, a file removed since
    /// included (an SQLite `-shm` removed when its last connection closed, a snapshot replaced by a compaction). A lock
    /// needs an open descriptor, so the files are those this process has open there (`/proc/self/fd`), matched by
    /// inode: another test's file, elsewhere, that reuses a removed file's inode is not taken for it (an inode seen
    /// earlier in the directory was, and failed this suite under load).
    struct LockTable: Sendable {
        let directory: String

        init(_ directory: String) {
            // Descriptors' paths are resolved: compare with the resolved directory.
            self.directory = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        }

        /// The lock lines on the directory's files, each with the file's name.
        func locks() throws -> [String] {
            var files: [String: String] = [:]  // "major:minor:inode" as /proc/locks writes it -> file name
            for descriptor in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
                let link = "/proc/self/fd/" + descriptor
                // A descriptor closed since the listing (another test's) has no link: nothing of ours.
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link), target.hasPrefix(directory + "/") else {
                    continue
                }
                var info = stat()
                guard stat(link, &info) == 0 else { continue }
                let device = UInt64(info.st_dev)
                let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
                let minor = (device & 0xff) | ((device >> 12) & ~0xff)
                var name = String(target.dropFirst(directory.count + 1))
                if name.hasSuffix(" (deleted)") { name = String(name.dropLast(" (deleted)".count)) }
                files[String(format: "%02llx:%02llx:%llu", major, minor, UInt64(info.st_ino))] = name
            }
            // Read to its end: `String(contentsOfFile:)` reads a /proc file's first page only, and the table passes a page
            // while another test holds hundreds of stores open.
            let locks = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/locks"))
            defer { try? locks.close() }  // read-only: nothing to lose
            let table = String(decoding: locks.readDataToEndOfFile(), as: UTF8.self)
            return table.split(separator: "\n").compactMap { line -> String? in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true).filter { $0 != "->" }
                guard fields.count >= 6, fields[4] == "\(getpid())", let name = files[String(fields[5])] else { return nil }
                return "\(name): \(fields[1]) \(fields[3]) pid \(fields[4])"
            }
        }
    }

    /// Values a stream delivered, collected on its own task.
    final class Seen: Sendable {
        let values = Locked<[Int]>([])
        var all: [Int] { values.withLock { $0 } }
    }

    @Test(
        "suspend() with an observer and a watcher running: no lock on the store's files while suspended, polls included; the next get sees another process's write, and observers go on",
        arguments: [Backend.sqlite, .json])
    func noLockWhileSuspended(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let path = try #require(fixture.path)
        let table = LockTable(fixture.directory.url.path)
        try prefs.set(1, for: .launchCount)
        // An observer (a stream, as a `for await` loop has it) and a watcher (an `Observable`, as a view has it).
        let seen = Seen()
        let stream = prefs.values(for: .launchCount)
        let loop = Task { for await value in stream { seen.values.withLock { $0.append(value) } } }
        defer { loop.cancel() }
        let watched = prefs.observable(.launchCount)
        let watcherCalled = Locked(false)
        withObservationTracking {
            _ = watched.value
        } onChange: {
            watcherCalled.withLock { $0 = true }
        }
        #expect(await eventually { seen.all == [1] })
        func waitForPolls(_ count: Int) async {
            let ticks = prefs.state.withLock { $0.refresher.ticks }
            _ = await eventually { prefs.state.withLock { $0.refresher.ticks } >= ticks + count }
        }
        await waitForPolls(3)

        let idle = try table.locks()
        if backend == .sqlite {
            // SQLite's WAL locks: a read lock on the database and one on its -shm index, held by an idle connection.
            #expect(idle.contains { $0.hasPrefix("prefs.sqlite: POSIX") }, "\(idle)")
            #expect(idle.contains { $0.hasPrefix("prefs.sqlite-shm: POSIX") }, "\(idle)")
        } else {
            #expect(idle.isEmpty, "an idle JSON store holds no lock between writes: \(idle)")
        }

        prefs.suspend()
        #expect(try table.locks() == [])
        await waitForPolls(3)
        #expect(try table.locks() == [], "polls take no lock while suspended")

        // Another process writes while this one is suspended.
        let child = try await ChildProcess.run("prefs-test-child", ["set", backend == .json ? "json" : "sqlite", path, "launchCount", "int", "5"])
        #expect(child.status == 0 && child.stdout == "ack\n", "\(child.stderr)")
        await waitForPolls(5)
        #expect(try table.locks() == [], "polls take no lock while suspended")
        #expect(seen.all == [1], "no poll looked at the store while it was suspended")
        #expect(!watcherCalled.withLock { $0 })

        // The next call resumes the store by itself, and sees the write.
        #expect(prefs[.launchCount] == 5)
        #expect(await eventually { seen.all == [1, 5] }, "\(seen.all)")
        #expect(await eventually { watcherCalled.withLock { $0 } })
        #expect(watched.value == 5)
        if backend == .sqlite { #expect(try !table.locks().isEmpty, "the connection is open again") }

        // Observers go on: another process's next write reaches them by the polls, and this process's writes work.
        let again = try await ChildProcess.run("prefs-test-child", ["set", backend == .json ? "json" : "sqlite", path, "launchCount", "int", "6"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(await eventually { seen.all == [1, 5, 6] }, "\(seen.all)")
        try prefs.set(7, for: .launchCount)
        #expect(await eventually { seen.all == [1, 5, 6, 7] }, "\(seen.all)")
        #expect(try fixture.reopen()[.launchCount] == 7)
        #expect(fixture.diagnostics.all.isEmpty, "\(fixture.diagnostics.all)")
    }

    @Test("the first calls after suspend() on several threads at once all see what another process wrote meanwhile", arguments: [Backend.sqlite, .json])
    func concurrentResume(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let other = try fixture.reopen()
        for round in 1...50 {
            try prefs.set(round, for: .launchCount)  // cached here
            prefs.suspend()
            try other.set(round * 1000, for: .launchCount)
            let reads = Locked<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                let value = index == 0 ? prefs.lookup(.launchCount).value : prefs[.launchCount]
                reads.withLock { $0.append(value) }
            }
            #expect(reads.withLock { $0 } == Array(repeating: round * 1000, count: 4), "round \(round)")
        }
        let table = LockTable(fixture.directory.url.path)
        prefs.suspend()
        other.suspend()
        #expect(try table.locks() == [])
        #expect(fixture.diagnostics.all.isEmpty, "\(fixture.diagnostics.all)")
    }
    #endif

    @Test("suspend() and the next call on every backend: what another store wrote meanwhile is read", arguments: Backend.allCases.filter(\.isShared))
    func resumeSeesOtherWrites(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let other = try fixture.reopen()
        try prefs.set("before", for: .name)
        #expect(prefs[.name] == "before")
        prefs.suspend()
        prefs.suspend()  // twice: nothing more
        try other.set("meanwhile", for: .name)
        #expect(prefs[.name] == "meanwhile")
        try prefs.set("after", for: .name)
        #expect(try fixture.reopen()[.name] == "after")
        #expect(fixture.diagnostics.all.isEmpty, "\(fixture.diagnostics.all)")
    }

    @Test("suspend() on a memory store does nothing, inside a transaction body it reports and does nothing, on a closed store nothing")
    func edges() throws {
        let log = DiagnosticLog()
        let prefs = try Prefs(.memory) { log.append($0) }
        prefs[.launchCount] = 3
        prefs.suspend()
        #expect(prefs[.launchCount] == 3)
        try prefs.transaction { transaction in
            transaction[.launchCount] = 4
            prefs.suspend()
        }
        #expect(prefs[.launchCount] == 4)
        #expect(!prefs.io.isSuspended)
        #expect(log.all.count == 1)
        #expect(log.all.first.map { "\($0)" }?.contains("suspend()") == true, "\(log.all)")
        try prefs.close()
        prefs.suspend()
        #expect(log.all.count == 1)
    }
}
