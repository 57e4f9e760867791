import Foundation
import Prefs
import PrefsSupport
import PrefsTestHarness
import PrefsTesting
import Testing

/// `Prefs.standard`'s default store, when it cannot be opened at first use: it waits for it instead of forgetting. These
/// run on the package's seam (`Prefs.openDefault`), which takes the environment and a clock, so that they share no
/// process state; the child-process tests below run the real `Prefs.standard`.
@Suite("A standard store that waits for its folder")
struct StandardStoreWaitingTests {
    /// A configuration directory that cannot be made (a file stands where a folder of its path should be), and the store
    /// the default location puts under it once it can.
    struct Blocked {
        let directory: TemporaryDirectory
        let blocker: URL
        let config: URL
        var environment: [String: String] { ["XDG_CONFIG_HOME": config.path] }
        var storeURL: URL { config.appendingPathComponent("prefs/com.example.app.sqlite") }
        /// The store of `prefs-test-child`'s `Prefs.standard` (its identifier is its process name).
        var childStoreURL: URL { config.appendingPathComponent("prefs/prefs-test-child.sqlite") }

        init() throws {
            directory = try TemporaryDirectory()
            blocker = directory.file("blocker")
            config = blocker.appendingPathComponent("config")
            try Data("not a folder".utf8).write(to: blocker)
        }

        /// Removes the file in the way: the folders can be made now.
        func unblock() throws {
            try FileManager.default.removeItem(at: blocker)
        }
    }

    static let title = Prefs.Key<String>("title", initial: "untitled")
    struct Model { @Pref(.launchCount) var launches }

    @Test("a folder that cannot be made: reads say initial, writes are kept, a retry on access once the clock moves commits them")
    func missingFolderThenMade() throws {
        let blocked = try Blocked()
        let clock = StoreClock.Manual()
        let log = DiagnosticLog()
        let prefs = Prefs.openDefault(
            identifier: "com.example.app", environment: blocked.environment, clock: StoreClock(clock), onDiagnostic: log.append)

        let reason = try #require(prefs.waitingReason)
        guard case .unusableFolder(let path, _) = reason else {
            Issue.record("expected unusableFolder naming the folder, got \(reason)")
            return
        }
        #expect(path == blocked.config.path, "the error names the folder, not the identifier")
        #expect(!"\(reason)".contains("store identifier"), "\(reason)")
        #expect(prefs.storage.path == blocked.storeURL.path, "named by the file it will be")
        guard case .refreshFailed(let reported as PrefsError, _)? = log.all.first?.kind else {
            Issue.record("the wait is reported: \(log.all)")
            return
        }
        #expect(reported == reason)

        #expect(prefs.lookup(Self.title).isStored == false, "a read while waiting says it is the initial value")
        withStandardStore(prefs) { Model().launches = 5 }  // through @Pref
        #expect(prefs[.launchCount] == 5, "this process reads back what it wrote")
        #expect(prefs.isStored(.launchCount))
        #expect(throws: PrefsError.self) { try prefs.flush() }  // not durable yet, and flush says so

        try blocked.unblock()
        #expect(prefs[Self.title] == "untitled")
        #expect(prefs.waitingReason != nil, "no retry before the retry interval: reads do not each try to open the store")
        #expect(!FileManager.default.fileExists(atPath: blocked.storeURL.path))

        clock.advance(by: .seconds(1))
        #expect(prefs[Self.title] == "untitled")  // this read retries, and the store opens
        #expect(prefs.waitingReason == nil)
        #expect(prefs[.launchCount] == 5)
        #expect(try Prefs(.sqlite(blocked.storeURL))[.launchCount] == 5, "the write made while waiting is on disk")
        try prefs.flush()
        prefs[Self.title] = "ada"
        #expect(try Prefs(.sqlite(blocked.storeURL))[Self.title] == "ada", "later writes go straight to the store")
        #expect(log.all.count == 1, "\(log.all)")
    }

    @Test("once it opens, a kept write never replaces a value the store holds; observers see the store's values")
    func mergeKeepsTheStoresValues() async throws {
        let blocked = try Blocked()
        let clock = StoreClock.Manual()
        let log = DiagnosticLog()
        let prefs = Prefs.openDefault(
            identifier: "com.example.app", environment: blocked.environment, clock: StoreClock(clock), onDiagnostic: log.append)
        prefs[.launchCount] = 1  // from the initial value 0: this process never saw the store's count
        prefs[Self.title] = "kept"
        prefs[.nickname] = "same"
        let observed = Locked<[Int]>([])
        let watching = Task { for await count in prefs.values(for: .launchCount) { observed.withLock { $0.append(count) } } }
        defer { watching.cancel() }
        #expect(await eventually { observed.withLock { $0 } == [1] })

        // Meanwhile another process (the test, here) can reach the folder, and stores its own values.
        try blocked.unblock()
        try Prefs.Storage.createFolders(of: blocked.storeURL.path)
        let other = try Prefs(.sqlite(blocked.storeURL))
        try other.set(41, for: .launchCount)
        try other.set("same", for: .nickname)
        try other.set(true, for: .flag)

        try prefs.retryOpening()  // the app's signal: no need to wait for the retry interval
        #expect(prefs.waitingReason == nil)
        #expect(prefs[.launchCount] == 41, "the store's value wins over a write made from the initial value")
        #expect(prefs[Self.title] == "kept", "a key the store did not hold gets the kept write")
        #expect(prefs[.flag], "and the store's other values read")
        #expect(try other.snapshot().count == 4)
        try other.refresh()
        #expect(other[.launchCount] == 41)
        #expect(other[Self.title] == "kept")
        let dropped = log.all.compactMap { diagnostic -> [String]? in
            guard case .pendingWritesDropped(let keys, _) = diagnostic.kind else { return nil }
            return keys
        }
        #expect(dropped == [["launchCount"]], "the overridden write is reported; an equal one is not: \(log.all)")
        #expect(await eventually { observed.withLock { $0 } == [1, 41] }, "observers are told the store's values: \(observed.withLock { $0 })")
    }

    @Test("retryOpening throws why it still waits; released while waiting, the kept writes are reported, never silently lost")
    func retryAndRelease() throws {
        let blocked = try Blocked()
        let log = DiagnosticLog()
        var prefs: Prefs? = Prefs.openDefault(
            identifier: "com.example.app", environment: blocked.environment, clock: StoreClock(StoreClock.Manual()), onDiagnostic: log.append)
        prefs?[.launchCount] = 3
        #expect(throws: PrefsError.self) { try prefs?.retryOpening() }
        #expect(try prefs?.snapshot() == ["launchCount": StoredValue(type: .int, json: .int(3))])
        prefs = nil
        guard case .pendingWritesDropped(let keys, let reason)? = log.all.last?.kind else {
            Issue.record("expected pendingWritesDropped, got \(log.all)")
            return
        }
        #expect(keys == ["launchCount"])
        #expect(reason.contains(blocked.config.path), "\(reason)")
    }

    @Test("an open store never waits: retryOpening does nothing and waitingReason is nil")
    func openStore() throws {
        let directory = try TemporaryDirectory()
        let prefs = Prefs.openDefault(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(prefs.waitingReason == nil)
        try prefs.retryOpening()
        prefs[.launchCount] = 2
        #expect(try Prefs(.sqlite(directory.file("prefs/com.example.app.sqlite")))[.launchCount] == 2)
    }
}

/// The real `Prefs.standard`, in child processes whose environment chooses a default folder that is not usable yet.
@Suite("Prefs.standard waits for its folder: child processes", .serialized)
struct StandardStoreChildTests {
    static var child: String { ChildProcess.executable("prefs-test-child").path }

    @Test("a folder that appears after the first write keeps that write: on retry, or at the latest at exit")
    func folderAppearsAfterTheFirstWrite() async throws {
        for ending in ["retry", "exit"] {
            let blocked = try StandardStoreWaitingTests.Blocked()
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CONFIG_HOME"] = blocked.config.path
            let session = try ChildSession.start(Self.child, ["standard-session"], environment: environment)
            session.send("set launches 7")
            #expect(await session.nextLine() == "set launches")
            session.send("state")
            let waiting = await session.nextLine()
            #expect(waiting?.hasPrefix("waiting \(blocked.config.path): this folder cannot hold a store") == true, "\(waiting ?? "")")
            session.send("get launches")
            #expect(await session.nextLine() == "launches=7 stored")
            session.send("get other")
            #expect(await session.nextLine() == "other=0 initial")

            try blocked.unblock()
            if ending == "retry" {
                session.send("retry")
                #expect(await session.nextLine() == "open \(blocked.childStoreURL.path)")
            }
            let result = try await session.finish()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("were not stored"), "\(result.stderr)")
            #expect(try Prefs(.sqlite(blocked.childStoreURL))[Prefs.Key("launches", initial: 0)] == 7, "\(ending): \(result.stderr)")
        }
    }

    @Test("a process that exits while still waiting reports the writes it kept, by key, on standard error")
    func exitWhileWaiting() async throws {
        let blocked = try StandardStoreWaitingTests.Blocked()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = blocked.config.path
        let session = try ChildSession.start(Self.child, ["standard-session"], environment: environment)
        session.send("set launches 7")
        session.send("set volume 3")
        #expect(await session.nextLine() == "set launches")
        #expect(await session.nextLine() == "set volume")
        let result = try await session.finish()
        #expect(result.status == 0)
        #expect(
            result.stderr.contains(
                "writes to \"launches\", \"volume\", kept in memory while the store waited to open, were not stored: the process exited while the store still waited: \(blocked.config.path)"
            ), "\(result.stderr)")
        #expect(result.stderr.contains("Prefs: Prefs.standard: "), "the wait itself was reported at first use: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: blocked.config.path))
    }

    /// Root reads any folder: an unreadable one needs another user. The folder is theirs, mode 000, until the test gives
    /// it mode 700, as the first unlock makes an iOS app's protected files readable.
    @Test("a folder that cannot be read, then can: the write made meanwhile reaches the store", .enabled(if: OtherUser.canRun))
    func unreadableThenReadable() async throws {
        let mallory = try OtherUser.ensure()
        let (binary, executable) = try OtherUser.reachableExecutable("prefs-test-child")
        let home = try OtherUser.reachableDirectory()
        let config = home.file("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: false)
        #expect(chown(config.path, mallory.uid, mallory.gid) == 0)
        #expect(chmod(config.path, 0) == 0)
        func start() throws -> ChildSession {
            try ChildSession.start(
                "/usr/bin/setpriv", ["--reuid=\(mallory.uid)", "--regid=\(mallory.gid)", "--clear-groups", "--", executable, "standard-session"],
                environment: Self.childEnvironment(["XDG_CONFIG_HOME": config.path, "PATH": "/usr/bin:/bin"]))
        }
        let session = try start()
        session.send("set launches 7")
        // Once (1 run in 5 of the whole suite, under load), no line came within the deadline: say what the child said.
        #expect(await session.nextLine() == "set launches", "\(session.soFar)")
        session.send("state")
        let waiting = await session.nextLine() ?? session.soFar
        #expect(waiting.hasPrefix("waiting ") && waiting.contains(config.path), "\(waiting)")
        #expect(waiting.contains("Permission denied"), "\(waiting)")

        #expect(chmod(config.path, 0o700) == 0)
        session.send("retry")
        let store = config.appendingPathComponent("prefs/prefs-test-child.sqlite")
        #expect(await session.nextLine() == "open \(store.path)", "\(session.soFar)")
        let result = try await session.finish()
        #expect(result.status == 0, "\(result.stderr)")
        // The folder is theirs, which this process (root) refuses by the trust rule: a new process of theirs reads it.
        let next = try start()
        next.send("get launches")
        #expect(await next.nextLine() == "launches=7 stored", "the write made while waiting is in the store; \(next.soFar)")
        let ended = try await next.finish()
        #expect(ended.status == 0, "\(ended.stderr)")
        withExtendedLifetime(binary) {}
    }
}

extension StandardStoreChildTests {
    /// `environment` and the sanitizers' options of this process: a child given an environment of its own would run
    /// AddressSanitizer with LeakSanitizer on, whose report at exit fails the child (CI runs the suite with it off).
    static func childEnvironment(_ environment: [String: String]) -> [String: String] {
        var merged = environment
        for name in ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"] {
            if let value = ProcessInfo.processInfo.environment[name] { merged[name] = value }
        }
        return merged
    }
}
