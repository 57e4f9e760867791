import Foundation
import TestFixtures
import Observation
@testable import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults
import PrefsSupport

/// The store as apps use it over several releases: renamed keys, handlers that call back into the store, clean exits.
/// Each test reproduces a failure found in real use.
@Suite("The core in real apps", .timeLimit(.minutes(2)))
struct RealAppCoreTests {
    static let launches = Prefs.Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])
    static let launchCounter = Prefs.Key<Int>("launchCounter", initial: 0)
    static let token = Prefs.Key<String?>("token", formerNames: ["authToken"])
    static let authToken = Prefs.Key<String?>("authToken")

    // MARK: - Renames

    @Test("update and transaction read a value still stored under a former name, and move it", arguments: Backend.allCases)
    func updateSeesFormerName(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.reopen().set(41, for: Self.launchCounter)  // written by version 1
        let prefs = try fixture.reopen()
        #expect(
            try prefs.update(Self.launches) { count -> Int in
                count += 1
                return count
            } == 42)
        #expect(try prefs.transaction { t in t[Self.launches] } == 42)
        let stored = try fixture.reopen().snapshot()
        #expect(stored["launches"]?.json == .int(42))
        #expect(stored["launchCounter"] == nil, "the former name's value stays for ever")
    }

    @Test("a transaction reads the former name's value before any write", arguments: Backend.allCases)
    func transactionReadsFormerName(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.reopen().set(41, for: Self.launchCounter)
        let prefs = try fixture.reopen()
        #expect(try prefs.transaction { t in t[Self.launches] } == 41)
    }

    @Test("resetAll(keeping:) keeps a kept key's value still under its former name", arguments: Backend.allCases)
    func resetAllKeepsFormerValue(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let old = try fixture.reopen()
        try old.set(41, for: Self.launchCounter)
        try old.set("x", for: .name)
        let prefs = try fixture.reopen()
        try prefs.resetAll(keeping: [Self.launches])
        let reopened = try fixture.reopen()
        #expect(reopened[Self.launches] == 41)
        #expect(try reopened.snapshot().keys.sorted() == ["launches"])
    }

    @Test("a removed value does not come back from a former name at the next launch", arguments: Backend.allCases)
    func removalSettlesFormerNames(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.reopen().set("old-secret", for: Self.authToken)
        let prefs = try fixture.reopen()
        prefs[Self.token] = "fresh-login"
        prefs[Self.token] = nil  // a logout
        #expect(prefs.diagnostics.isEmpty)
        #expect(try fixture.reopen()[Self.token] == nil)
        #expect(try fixture.reopen().snapshot().isEmpty)
    }

    @Test("a transaction's write of a renamed key removes the former names' values", arguments: Backend.allCases)
    func transactionWriteSettlesFormerNames(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.reopen().set("old-secret", for: Self.authToken)
        let prefs = try fixture.reopen()
        try prefs.transaction { t in t[Self.token] = "fresh-login" }
        try prefs.transaction { t in t[Self.token] = nil }
        #expect(try fixture.reopen()[Self.token] == nil)
    }

    @Test("the first former name that holds a value wins")
    func firstFormerNameWins() throws {
        let prefs = try Prefs(.memory(["oldName": StoredValue(type: .int, json: .int(1)), "olderName": StoredValue(type: .int, json: .int(2))]))
        #expect(try prefs.transaction { t in t[.renamed] } == 1)
        #expect(prefs[.renamed] == 1)
        try prefs.update(.renamed) { $0 += 1 }
        #expect(try prefs.snapshot() == ["newName": StoredValue(type: .int, json: .int(2))])
    }

    // MARK: - Calling the store from inside its own locks

    @Test("a transaction body that reads the store itself gets the committed value instead of hanging", arguments: Backend.allCases)
    func reentrantReadInTransaction(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.reopen().set(5, for: .launchCount)
        let prefs = try fixture.reopen()  // nothing cached
        try prefs.transaction { t in
            t[.ratio] = Double(prefs[.launchCount]) + 1
            #expect(prefs.isStored(.launchCount))
            #expect(prefs.lookup(Self.launches).isStored == false)
        }
        #expect(try fixture.reopen()[.ratio] == 6)
    }

    @Test("writing the store itself inside its transaction fails at once with reentrantCall; the transaction still commits", arguments: Backend.allCases)
    func reentrantWriteInTransaction(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.transaction { t in
            t[.launchCount] = 1
            #expect(throws: PrefsError.reentrantCall(store: prefs.storage.description, operation: "update(_:_:)")) {
                try prefs.update(.ratio) { $0 += 1 }
            }
            #expect(throws: PrefsError.reentrantCall(store: prefs.storage.description, operation: "transaction(_:)")) {
                try prefs.transaction { _ in }
            }
            #expect(throws: PrefsError.reentrantCall(store: prefs.storage.description, operation: "set(_:for:)")) {
                try prefs.set("x", for: .name)
            }
            prefs[.name] = "y"  // reported, not written
        }
        #expect(prefs[.launchCount] == 1)
        #expect(prefs[.name] == "anonymous")
        let reported = fixture.diagnostics.all.map(\.description)
        #expect(reported.contains { $0.contains("set(_:for:) was called from inside a transaction") }, "\(reported)")
        #expect(try fixture.reopen()[.launchCount] == 1)
    }

    @Test("an onDiagnostic handler that resets the bad key, reported from update, runs after the lock is released", arguments: Backend.allCases)
    func diagnosticHandlerWritesDuringUpdate(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let storage = backend.storage(directory)
        let seed = try Prefs(storage)
        try seed.setStoredValue(StoredValue(type: .string, json: .string("many")), forKey: "launchCount")
        let handled = Locked<[String]>([])
        let holder = Locked<Prefs?>(nil)
        let prefs = try Prefs(backend.isShared ? storage : .memory(try seed.snapshot())) { diagnostic in
            guard case .typeMismatch = diagnostic.kind, let prefs = holder.withLock({ $0 }) else { return }
            do {
                try prefs.reset(.launchCount)  // the app's fix for a bad value
                handled.withLock { $0.append("reset") }
            } catch {
                handled.withLock { $0.append("\(error)") }
            }
        }
        holder.withLock { $0 = prefs }
        try prefs.update(.launchCount) { $0 += 1 }  // reads the initial 0: the stored text is reported
        #expect(handled.withLock { $0 } == ["reset"])
        #expect(prefs.isStored(.launchCount) == false)
    }

    @Test("an onDiagnostic handler that writes the key a values(for:) stream delivers does not deadlock", arguments: Backend.allCases)
    func diagnosticHandlerWritesDuringDelivery(backend: Backend) async throws {
        let holder = Locked<Prefs?>(nil)
        let handled = Locked<Int>(0)
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(backend.storage(directory), pollInterval: .milliseconds(20)) { diagnostic in
            guard case .typeMismatch = diagnostic.kind, let prefs = holder.withLock({ $0 }) else { return }
            try? prefs.set(7, for: .launchCount)  // the handler repairs the value (its failure would show below)
            handled.withLock { $0 += 1 }
        }
        holder.withLock { $0 = prefs }
        var values = prefs.values(for: .launchCount).makeAsyncIterator()
        #expect(await values.next() == 0)
        try prefs.setStoredValue(StoredValue(type: .string, json: .string("many")), forKey: "launchCount")
        var seen: [Int] = []
        while let value = await values.next() {
            seen.append(value)
            if value == 7 { break }
        }
        #expect(seen.last == 7)
        #expect(handled.withLock { $0 } == 1)
    }

    // MARK: - A clean exit

    @Test("a coalesced JSON store held in a global keeps its last write when the process exits normally", arguments: ["exit", "return"])
    func coalescedWriteSurvivesCleanExit(mode: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("app.json").path
        let result = try await ChildProcess.run("prefs-test-child", ["coalesced", "json", path, "launches", "42", mode])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "set\n")
        #expect(try Prefs(.jsonFile(URL(fileURLWithPath: path)))[Self.launches] == 42)
    }

    @Test("coalesced mode: the last flush wins for a key another process wrote in between; other keys are kept")
    func coalescedLastFlushWins() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("shared.json")
        let coalesced = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(3600))))
        let immediate = try Prefs(.jsonFile(url))
        try coalesced.set(1, for: .launchCount)
        try immediate.set(2, for: .launchCount)
        try immediate.set("other", for: .name)
        try coalesced.flush()
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[.launchCount] == 1)
        #expect(reopened[.name] == "other")
    }

    // MARK: - Location

    @Test(
        "default identifiers are reverse-DNS names; anything that could leave the folder is refused",
        arguments: [
            "", "../../escaped", "a/b", ".hidden", "-flag", "a..b", "com.example.app\n", "naïve", String(repeating: "a", count: 201),
        ])
    func invalidIdentifiers(identifier: String) {
        #expect(throws: PrefsError.self) {
            _ = try Prefs.Storage.defaultURL(identifier: identifier, environment: ["HOME": "/home/ada"])
        }
    }

    @Test("a valid identifier lives under an absolute XDG_CONFIG_HOME or HOME")
    func defaultLocation() throws {
        #expect(
            try Prefs.Storage.defaultURL(identifier: "com.example.App_2-beta", environment: ["HOME": "/home/ada"]).path
                == "/home/ada/.config/prefs/com.example.App_2-beta.sqlite")
        #expect(
            try Prefs.Storage.defaultURL(identifier: "app", environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg"]).path
                == "/cfg/prefs/app.sqlite")
        #expect(
            try Prefs.Storage.defaultURL(identifier: "app", environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "cfg"]).path
                == "/home/ada/.config/prefs/app.sqlite")
    }

    @Test("an empty or relative HOME never puts the store under the current directory")
    func relativeHome() throws {
        for home in ["", "relative/home", "."] {
            let result = Result { () throws(PrefsError) in try Prefs.Storage.defaultURL(identifier: "app", environment: ["HOME": home]) }
            switch result {
            case .success(let url):
                // The user database's home directory, which is absolute.
                #expect(url.path.hasPrefix("/") && url.path.hasSuffix("/.config/prefs/app.sqlite"), "\(url.path)")
                #expect(!url.path.hasPrefix(FileManager.default.currentDirectoryPath + "/"), "\(url.path)")
            case .failure(let error):
                #expect("\(error)".contains("no absolute home directory"), "\(error)")
            }
        }
    }

    // MARK: - Observation and polling

    @Test("a new observable(_:) does not call onChange when nothing changed")
    func observableHasNoSpuriousChange() throws {
        let prefs = try Prefs(.memory)
        prefs[.launchCount] = 3
        for _ in 0..<50 {
            let observable = prefs.observable(.launchCount)
            let fired = Locked(false)
            withObservationTracking {
                _ = observable.value
            } onChange: {
                fired.withLock { $0 = true }
            }
            observable.queue.sync {}  // every notification the object queued so far has run
            #expect(fired.withLock { $0 } == false)
        }
    }

    @Test("an observable(_:) still reports a real change once")
    func observableReportsChange() async throws {
        let prefs = try Prefs(.memory)
        let observable = prefs.observable(.launchCount)
        let fired = Locked(0)
        withObservationTracking {
            _ = observable.value
        } onChange: {
            fired.withLock { $0 += 1 }
        }
        prefs[.launchCount] = 4
        observable.queue.sync {}
        #expect(fired.withLock { $0 } == 1)
        #expect(observable.value == 4)
    }

    @Test("an observed JSON store with a hand-edited typo is reported once, not on every poll; a different problem is reported again")
    func unreadableFileReportedOncePerVersion() async throws {
        let fixture = try StoreFixture(.json)
        let prefs = fixture.prefs
        try prefs.set(1, for: .launchCount)
        let stream = prefs.values(for: .launchCount)
        _ = stream
        let path = try #require(fixture.path)
        // Atomic writes, as an editor saves: a poll never sees a half-written file (which would be another problem).
        try Data("{\"format\": \"prefs\", oops".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        func refreshFailures() -> Int {
            fixture.diagnostics.all.filter { if case .refreshFailed = $0.kind { true } else { false } }.count
        }
        #expect(await eventually { refreshFailures() == 1 })
        let ticks = prefs.state.withLock { $0.refresher.ticks }
        #expect(await eventually { prefs.state.withLock { $0.refresher.ticks } >= ticks + 10 })
        #expect(refreshFailures() == 1)
        try Data("[1, 2".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)  // another version, another problem
        #expect(await eventually { refreshFailures() >= 2 })
        #expect(refreshFailures() == 2)
    }

    // MARK: - Smaller bugs

    @Test("after close(), reads return initial values, cached keys too", arguments: Backend.allCases)
    func closedStoreReadsInitialValues(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.set(9, for: .launchCount)
        #expect(prefs[.launchCount] == 9)
        try prefs.close()
        #expect(prefs[.launchCount] == 0)
        #expect(prefs[.name] == "anonymous")
        #expect(fixture.diagnostics.all.isEmpty)
        #expect(throws: PrefsError.closed(store: prefs.storage.description)) { try prefs.set(1, for: .launchCount) }
    }

    @Test("a URL made relative to a base reads back in its absolute form, in this process as after a relaunch", arguments: Backend.allCases)
    func relativeURL(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let url = try #require(URL(string: "page?q=1", relativeTo: URL(string: "https://example.com/a/")))
        fixture.prefs[.homepage] = url
        #expect(fixture.prefs[.homepage] == url.absoluteURL)
        #expect(try fixture.reopen()[.homepage] == url.absoluteURL)
        #expect(fixture.prefs[.homepage].absoluteString == "https://example.com/a/page?q=1")
    }

    @Test("a type mismatch names the Swift type the app reads")
    func mismatchNamesSwiftType() throws {
        let prefs = try Prefs(.memory(["theme": StoredValue(type: .string, json: .string("sepia")), "frame": StoredValue(type: .int, json: .int(3))]))
        #expect(prefs[.theme] == .light)
        #expect(prefs[.frame].width == 800)
        let messages = prefs.diagnostics.map(\.description)
        #expect(messages.contains { $0.contains("cannot be read as Theme (stored form string)") }, "\(messages)")
        #expect(messages.contains { $0.contains("cannot be read as WindowFrame (stored form json)") }, "\(messages)")
    }

    @Test("SQLITE_BUSY says a writer holds the store and names busyTimeout")
    func busyNamesTimeout() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.sqlite")
        let holder = try Prefs(.sqlite(url))
        let waiter = try Prefs(.sqlite(url, busyTimeout: .milliseconds(50)))
        try holder.transaction { _ in
            do {
                try waiter.set(1, for: .launchCount)
                Issue.record("the write should have waited for the holder")
            } catch {
                #expect("\(error)".contains("held the store's write lock past the busy timeout (`busyTimeout:`"), "\(error)")
            }
        }
    }
}

/// A process that only reads leaves the store as it found it: the JSON document byte for byte, the SQLite database's
/// contents as `sqlite3 .dump` prints them.
@Suite("A read never writes")
struct ReadNeverWritesTests {
    @Test("reads, lookups, observation, tools' reads and a release change nothing in the store", arguments: [Backend.json, .sqlite])
    func readOnlySession(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let storage = backend.storage(directory)
        let path = try #require(storage.path)
        do {
            let writer = try Prefs(storage)
            try writer.set(3, for: .launchCount)
            try writer.setStoredValue(StoredValue(type: .int, json: .int(7)), forKey: "olderName")  // a value under a former name
            try writer.setStoredValue(StoredValue(type: .string, json: .string("x")), forKey: "ratio")  // a mismatch
            try writer.close()
        }
        let before = try await contents(of: path, backend: backend)
        do {
            let reader = try Prefs(storage, pollInterval: .milliseconds(10))
            _ = (reader[.launchCount], reader[.renamed], reader[.ratio], reader[.name], reader.lookup(.frame))
            _ = reader.isStored(.nickname)
            let greeting: String? = reader[AppKey.greeting]
            _ = greeting
            var values = reader.values(for: .launchCount).makeAsyncIterator()
            _ = await values.next()
            let observable = reader.observable(.renamed)
            _ = observable.value
            let ticks = reader.state.withLock { $0.refresher.ticks }
            #expect(await eventually { reader.state.withLock { $0.refresher.ticks } >= ticks + 3 })
            _ = (try reader.snapshot(), try reader.declaredKeys(), try reader.storedValue(forKey: "newName"))
            let defaults = PrefsDefaults(reader)
            _ = (defaults.integer(forKey: "launchCount"), defaults.dictionaryRepresentation())
            try reader.refresh()
            try reader.flush()
        }
        #expect(try await contents(of: path, backend: backend) == before)
    }

    /// The JSON file's bytes, or the database's contents as the sqlite3 shell dumps them.
    private func contents(of path: String, backend: Backend) async throws -> Data {
        switch backend {
        case .sqlite:
            let result = try await ChildProcess.runSystem("/usr/bin/sqlite3", [path, ".dump"])
            #expect(result.status == 0, "\(result.stderr)")
            return Data(result.stdout.utf8)
        default:
            return try Data(contentsOf: URL(fileURLWithPath: path))
        }
    }
}
