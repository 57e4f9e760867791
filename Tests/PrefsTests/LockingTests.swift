import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("Locks, timeouts, durability options, snapshots")
struct LockingTests {
    @Test("a JSON store whose lock is held past the timeout fails with lockTimeout, and nothing is written")
    func jsonLockTimeout() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let holder = try Prefs(.jsonFile(url))
        let waiter = try Prefs(.jsonFile(url, lockTimeout: .milliseconds(100)))
        try holder.transaction { transaction in
            transaction[.name] = "holder"
            #expect(throws: PrefsError.lockTimeout(path: url.path + ".lock", seconds: 0.1, heldInThisProcess: true)) {
                try waiter.set(1, for: .launchCount)
            }
        }
        #expect(try Prefs(.jsonFile(url)).storedValue(forKey: "launchCount") == nil)
        #expect(try Prefs(.jsonFile(url))[.name] == "holder")
        #expect(waiter[.launchCount] == 0, "the failed write is not in memory either")
        let error = PrefsError.lockTimeout(path: url.path + ".lock", seconds: 0.1, heldInThisProcess: true)
        #expect(error.description.hasSuffix("p.json.lock: another store on this file in this process held the store's lock for more than 0.1 s"))
    }

    /// The write lock is a robust mutex in the lock file's mapped page (FileLock): the kernel hands it on when its
    /// holder dies, as it releases a `flock`.
    @Test("a JSON writer SIGKILLed while it holds the write lock: the next writer takes the lock, and the dead one's write is not there")
    func killedLockHolder() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Prefs(.jsonFile(url)).set(1, for: .launchCount)
        let (process, out, err) = try ChildProcess.start("prefs-test-child", ["hold", "json", url.path, "held"])
        _ = try await ChildProcess.read(out.fileHandleForReading) { $0 == "holding" }
        let waiter = try Prefs(.jsonFile(url, lockTimeout: .milliseconds(300)))
        #expect(throws: PrefsError.lockTimeout(path: url.path + ".lock", seconds: 0.3, heldInThisProcess: false)) {
            try waiter.set(2, for: .launchCount)
        }
        kill(process.processIdentifier, SIGKILL)
        let result = try await ChildProcess.finish(process, out, err)
        #expect(result.signaled && result.status == SIGKILL, "\(result.stderr)")
        try waiter.set(3, for: .launchCount)
        let fresh = try Prefs(.jsonFile(url))
        #expect(fresh[.launchCount] == 3)
        #expect(try fresh.storedValue(forKey: "held") == nil, "never committed")
        #expect(try fresh.integrityProblems() == [])
    }

    @Test("an SQLite store busy past its timeout fails with SQLITE_BUSY, and nothing is written")
    func sqliteBusy() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.sqlite")
        let holder = try Prefs(.sqlite(url))
        let waiter = try Prefs(.sqlite(url, busyTimeout: .milliseconds(100)))
        try holder.transaction { transaction in
            transaction[.name] = "holder"
            #expect {
                try waiter.set(1, for: .launchCount)
            } throws: { error in
                guard case PrefsError.database(let database) = error else { return false }
                return database.code == 5 && database.isBusy && error.localizedDescription.isEmpty == false
            }
        }
        #expect(try Prefs(.sqlite(url)).storedValue(forKey: "launchCount") == nil)
        #expect(waiter[.launchCount] == 0)
    }

    @Test("power-loss durability writes and reads like the default", arguments: [Backend.json, .sqlite])
    func powerLoss(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let storage: Prefs.Storage =
            backend == .json
            ? .jsonFile(directory.file("p.json"), durability: .powerLoss) : .sqlite(directory.file("p.sqlite"), durability: .powerLoss)
        try Prefs(storage).set(7, for: .launchCount)
        #expect(try Prefs(storage)[.launchCount] == 7)
    }

    @Test("a memory store starts from another store's snapshot")
    func memorySnapshot() throws {
        let directory = try TemporaryDirectory()
        let file = try Prefs(.sqlite(directory.file("p.sqlite")))
        try file.set(3, for: .launchCount)
        try file.set(["a"], for: .tags)
        let preview = try Prefs(.memory(file.snapshot()))
        #expect(preview[.launchCount] == 3)
        #expect(preview[.tags] == ["a"])
        preview[.launchCount] = 4
        #expect(file[.launchCount] == 3, "the snapshot is a copy")
    }

    @Test("invalid key names are clear errors at declaration")
    func keyNames() {
        #expect(throws: PrefsError.invalidKeyName("", reason: "a key name cannot be empty")) { try Prefs.Key(validating: "", initial: 0) }
        #expect(throws: PrefsError.invalidKeyName("a\u{1B}b", reason: "a key name cannot contain the control character U+001B")) {
            try Prefs.Key(validating: "a\u{1B}b", initial: 0)
        }
        let long = String(repeating: "k", count: 257)
        #expect(throws: PrefsError.invalidKeyName(long, reason: "a key name is at most 256 bytes; this one is 257")) {
            try Prefs.Key(validating: long, initial: 0)
        }
        #expect(throws: PrefsError.self) { try Prefs.Key(validating: " padded", initial: 0) }
        #expect(PrefsError.invalidKeyName("a\u{1B}b", reason: "r").description == #"invalid key name "a\u001bb": r"#)
        #expect((try? Prefs.Key(validating: "dialogs.welcome", initial: 0)) != nil)
        #expect((try? Prefs.Key(validating: "ключ 🔑", initial: 0)) != nil)
    }

    @Test("a closed store refuses writes with a clear error")
    func closed() throws {
        let prefs = try Prefs(.memory)
        try prefs.close()
        #expect(throws: PrefsError.closed(store: ".memory")) { try prefs.set(1, for: .launchCount) }
    }
}
