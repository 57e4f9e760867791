import Foundation
import Prefs
import PrefsSync
import PrefsTesting
import Synchronization
import Testing

extension Prefs.Keys {
    fileprivate static let theme = Key<String>("theme", initial: "light")
    fileprivate static let fontSize = Key<Int>("editor.fontSize", initial: 12)
}

/// Events an engine reported, for assertions.
final class EventLog: Sendable {
    private let events = Mutex<[SyncEvent]>([])
    var all: [SyncEvent] { events.withLock { $0 } }
    var record: @Sendable (SyncEvent) -> Void { { event in self.events.withLock { $0.append(event) } } }
}

/// One simulated device: a store, its wall clock, an engine.
struct Device {
    let prefs: Prefs
    let clock: TestClock
    let engine: SyncEngine
    let events = EventLog()

    init(_ name: String, server: some SyncTransport, prefs: Prefs? = nil, clock: TestClock = TestClock(), maximumSkew: Duration = .seconds(300)) throws {
        let prefs = try prefs ?? Prefs(.memory)
        self.prefs = prefs
        self.clock = clock
        let events = self.events
        engine = try SyncEngine(
            prefs: prefs, transport: server, keys: [Prefs.Keys.theme], namespaces: ["editor."], device: name, clock: clock.function,
            maximumSkew: maximumSkew, onEvent: events.record)
    }
}

@Suite struct SyncEngineTests {
    /// Defaults #172 and #206, Zephyr #35 and #50: a new installation pushed its initial values on first launch and
    /// overwrote what the user had set on another device. Here the new device's clock is later than the phone's, so any
    /// version of `theme` it pushed (its initial value, or a removal for "nothing stored") would win.
    @Test func aNewDeviceNeverOverwritesTheUsersValuesWithItsInitialOnes() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        try phone.prefs.set("dark", for: .theme)
        try phone.prefs.set(16, for: .fontSize)
        try await phone.engine.sync()

        let laptopClock = TestClock()
        laptopClock.advance(by: 60)
        let laptop = try Device("laptop", server: server, clock: laptopClock)
        #expect(laptop.prefs[.theme] == "light")  // the app reads its initial values at first launch
        #expect(laptop.prefs[.fontSize] == 12)
        try await laptop.engine.sync()
        #expect(laptop.prefs[.theme] == "dark")
        #expect(laptop.prefs[.fontSize] == 16)
        #expect(try laptop.engine.pendingChanges().isEmpty)
        try await phone.engine.sync()
        #expect(phone.prefs[.theme] == "dark")
        #expect(server.current["theme"]?.value == (try StoredValue("dark")))
        #expect(try laptop.engine.conflictCount() == 0)
    }

    @Test func concurrentWritesConvergeOnTheLaterOneByHybridClock() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        let laptop = try Device("laptop", server: server)
        try phone.prefs.set("dark", for: .theme)
        try phone.engine.captureLocalChanges()
        phone.clock.advance(by: 5)
        laptop.clock.advance(by: 5)
        try laptop.prefs.set("solarized", for: .theme)
        try laptop.engine.captureLocalChanges()
        try await laptop.engine.sync()
        try await phone.engine.sync()  // the phone's change is older: it loses, and says so
        try await laptop.engine.sync()
        #expect(phone.prefs[.theme] == "solarized")
        #expect(laptop.prefs[.theme] == "solarized")
        #expect(try phone.engine.conflictCount() == 1)
        let merges = phone.events.all.compactMap { event -> (SyncChange, SyncChange?, Bool)? in
            if case .merged("theme", let winner, let loser, let conflict) = event { return (winner, loser, conflict) }
            return nil
        }
        #expect(merges.count == 1)
        #expect(merges.first?.0.value == (try StoredValue("solarized")))
        #expect(merges.first?.1?.value == (try StoredValue("dark")))
        #expect(merges.first?.2 == true)
        let log = try #require(try phone.prefs.storedValue(forKey: "prefs.sync.log")?.decode([String].self))
        #expect(log.contains { $0.hasPrefix("merged theme: kept string") && $0.hasSuffix("(conflict)") })
    }

    /// A write is stamped when it is made, not when its device next syncs: the phone's offline write came first, so
    /// the laptop's later one wins though the phone syncs last (stamped at its sync, the phone's would win).
    @Test func aWriteIsStampedWhenItIsMadeNotWhenItsDeviceSyncs() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        let laptop = try Device("laptop", server: server)
        try phone.prefs.set("dark", for: .theme)
        try phone.prefs.set(14, for: .fontSize)
        phone.clock.advance(by: 60)
        laptop.clock.advance(by: 60)
        try laptop.prefs.set("solarized", for: .theme)
        try await laptop.engine.sync()
        phone.clock.advance(by: 3_600)
        laptop.clock.advance(by: 3_600)
        try await phone.engine.sync()
        try await laptop.engine.sync()
        #expect(phone.prefs[.theme] == "solarized")
        #expect(laptop.prefs[.theme] == "solarized")
        #expect(laptop.prefs[.fontSize] == 14, "the phone's other change, uncontested, reaches the laptop")
        #expect(try phone.engine.conflictCount() == 1)
    }

    @Test func aRemovalSyncsAsATombstone() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        let laptop = try Device("laptop", server: server)
        try phone.prefs.set(18, for: .fontSize)
        try await phone.engine.sync()
        try await laptop.engine.sync()
        #expect(laptop.prefs[.fontSize] == 18)
        laptop.clock.advance(by: 1)
        try laptop.prefs.reset(.fontSize)
        try await laptop.engine.sync()
        try await phone.engine.sync()
        #expect(!phone.prefs.isStored(.fontSize))
        #expect(server.current["editor.fontSize"]?.isTombstone == true)
    }

    @Test func aLostAnswerMakesTheEnginePushAgainAndTheServerApplyOnce() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        try phone.prefs.set("dark", for: .theme)
        server.losesNextAnswer()
        await #expect(throws: PrefsError.self) { try await phone.engine.sync() }
        #expect(try phone.engine.pendingChanges().map(\.key) == ["theme"])  // not known to be pushed: still queued
        try await phone.engine.sync()
        #expect(try phone.engine.pendingChanges().isEmpty)
        #expect(server.timesApplied.count == 1)
        #expect(server.timesApplied.values.allSatisfy { $0 == 1 })
    }

    @Test func changesMadeOfflineSurviveACrashAndArePushedOnce() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let server = InProcessSyncTransport()
        do {
            let phone = try Device("phone", server: server, prefs: Prefs(.jsonFile(url)))
            try phone.prefs.set("dark", for: .theme)  // stamped and queued in the file as it commits
            #expect(try phone.engine.pendingChanges().map(\.key) == ["theme"])
            // Another process's write (a widget's): in the file, not yet seen by the engine; a crash comes now.
            try Prefs(.jsonFile(url)).set(20, for: .fontSize)
        }
        let reopened = try Device("phone", server: server, prefs: Prefs(.jsonFile(url)))
        #expect(try reopened.engine.pendingChanges().map(\.key) == ["theme"])
        try await reopened.engine.sync()
        #expect(server.current["theme"]?.value == (try StoredValue("dark")))
        #expect(server.current["editor.fontSize"]?.value == (try StoredValue(20)))
        let laptop = try Device("laptop", server: server)
        try await laptop.engine.sync()
        #expect(laptop.prefs[.theme] == "dark" && laptop.prefs[.fontSize] == 20)
    }

    @Test func aTimestampTooFarAheadIsRefusedNotAdopted() async throws {
        let server = InProcessSyncTransport()
        let aheadClock = TestClock()
        aheadClock.advance(by: 365 * 86_400)  // a year ahead
        let broken = try Device("broken", server: server, clock: aheadClock)
        let phone = try Device("phone", server: server)
        try phone.prefs.set("dark", for: .theme)
        try await phone.engine.sync()
        try broken.prefs.set("neon", for: .theme)
        try await broken.engine.sync()
        try await phone.engine.sync()
        #expect(phone.prefs[.theme] == "dark")
        let refusals = phone.events.all.filter { if case .refused = $0 { true } else { false } }
        #expect(refusals.count == 1)
        // The phone's clock was not dragged a year ahead: its next change is stamped with its own time.
        phone.clock.advance(by: 1)
        try phone.prefs.set("light", for: .theme)
        try phone.engine.captureLocalChanges()
        let stamp = try #require(try phone.engine.pendingChanges().first?.timestamp)
        #expect(stamp.milliseconds < Int64(aheadClock.now.timeIntervalSince1970 * 1000) - 86_400_000)
    }

    @Test func aDeviceOfflineForAMonthConverges() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        let tablet = try Device("tablet", server: server)
        try phone.prefs.set("dark", for: .theme)
        try phone.prefs.set(14, for: .fontSize)
        try await phone.engine.sync()
        try await tablet.engine.sync()
        try tablet.prefs.set(22, for: .fontSize)  // offline, then a month passes
        try tablet.engine.captureLocalChanges()
        for clock in [phone.clock, tablet.clock] { clock.advance(by: 30 * 86_400) }
        try phone.prefs.set("sepia", for: .theme)
        try await phone.engine.sync()
        try await tablet.engine.sync()
        try await phone.engine.sync()
        for device in [phone, tablet] {
            #expect(device.prefs[.theme] == "sepia")
            #expect(device.prefs[.fontSize] == 22)
        }
    }

    @Test func aDeviceBehindACompactionResyncsFromScratch() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        let tablet = try Device("tablet", server: server)
        try phone.prefs.set(14, for: .fontSize)
        try phone.prefs.set("dark", for: .theme)
        try await phone.engine.sync()
        try await tablet.engine.sync()
        phone.clock.advance(by: 1)
        try phone.prefs.reset(.fontSize)
        try await phone.engine.sync()
        phone.clock.advance(by: 100 * 86_400)
        tablet.clock.advance(by: 100 * 86_400)
        server.compact(tombstonesBefore: Int64(phone.clock.now.timeIntervalSince1970 * 1000) - 90 * 86_400_000)
        #expect(server.current["editor.fontSize"] == nil)
        try await tablet.engine.sync()
        #expect(!tablet.prefs.isStored(.fontSize))
        #expect(tablet.prefs[.theme] == "dark")
        #expect(try tablet.prefs.storedValue(forKey: "prefs.sync.record.editor.fontSize") == nil)
    }

    @Test func aRemovalIsForgottenAfterItsRetentionNotBefore() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        try phone.prefs.set(18, for: .fontSize)
        try await phone.engine.sync()
        try phone.prefs.reset(.fontSize)
        try await phone.engine.sync()
        let record = "prefs.sync.record.editor.fontSize"
        phone.clock.advance(by: 89 * 86_400)
        try phone.engine.captureLocalChanges()
        #expect(try phone.prefs.storedValue(forKey: record) != nil)  // 89 days: still remembered
        phone.clock.advance(by: 2 * 86_400)
        try phone.engine.captureLocalChanges()
        #expect(try phone.prefs.storedValue(forKey: record) == nil)
        #expect(phone.events.all.contains { if case .tombstoneExpired(let change) = $0 { change.key == "editor.fontSize" } else { false } })
        #expect(try phone.engine.pendingChanges().isEmpty)  // forgetting is not a change
    }

    @Test func syncsKeysAndNamespacesOnlyAndRefusesTheReservedNames() async throws {
        let server = InProcessSyncTransport()
        let phone = try Device("phone", server: server)
        try phone.prefs.setStoredValue(try StoredValue("local"), forKey: "window.frame")
        try phone.prefs.setStoredValue(try StoredValue(true), forKey: "editor.wrap")
        try await phone.engine.sync()
        #expect(Set(server.current.keys) == ["editor.wrap"])
        #expect(throws: PrefsError.self) {
            _ = try SyncEngine(prefs: phone.prefs, transport: server, namespaces: ["prefs."])
        }
        #expect(throws: PrefsError.self) {
            _ = try SyncEngine(prefs: phone.prefs, transport: server, device: "not a device")
        }
    }
}
