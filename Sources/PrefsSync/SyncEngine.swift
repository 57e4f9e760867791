import Foundation
import PrefsSupport
public import Prefs

/// Syncs chosen keys of a local store with other devices through a ``SyncTransport``, one key at a time: the version
/// with the greatest ``HybridTimestamp`` wins, on every device and on the server, whatever order the changes arrive in.
///
/// Only what the user stored syncs: a key that holds nothing on this device (it reads its initial value) is never
/// pushed, so a new installation adopts the values set on the user's other devices instead of overwriting them with
/// its initial ones. A removal syncs as a tombstone, kept for `tombstoneRetention`.
///
/// A change this process makes to a synced key is stamped when it is made: right after its commit, the engine records
/// it (with its ``HybridTimestamp``) in the store, so the later write wins whenever each device syncs. A change another
/// process makes to the store (a widget, `prefs-tool`) is found by comparing the store with the engine's records at the
/// next ``sync()`` or ``captureLocalChanges()``, and stamped then. The engine keeps its records, its queue of unpushed
/// changes and its cursor in the store itself under the reserved prefix `prefs.sync.`. So a change made offline, or
/// before a crash, is pushed at the next sync, and a push repeated after a crash applies once (changes carry ids).
///
/// ```swift
/// let engine = try SyncEngine(prefs: prefs, transport: transport, keys: [Prefs.Keys.theme], namespaces: ["editor."])
/// try await engine.sync()   // pull, merge, push
/// ```
public actor SyncEngine {
    /// This device's id, in every timestamp it makes: given, or made once and kept in the store.
    public nonisolated let device: String
    private let prefs: Prefs
    private let transport: any SyncTransport
    private let keys: Set<String>
    private let namespaces: [String]
    private let clock: HybridClock
    private let tombstoneRetention: Duration
    private let onEvent: @Sendable (SyncEvent) -> Void
    /// The sync running now; a second ``sync()`` waits for it.
    private var running: Task<Void, Never>?
    /// The store's report of this process's changes, which stamps each when it is made (``captureWritten(_:)``).
    private let subscription = Locked<Prefs.ChangeSubscription?>(nil)

    /// An engine for `prefs`' keys named in `keys` and those under the name prefixes in `namespaces` (`"editor."`).
    ///
    /// - Parameters:
    ///   - prefs: the local store, where the synced values and the engine's records live.
    ///   - transport: where changes go and come from.
    ///   - keys: keys synced by name.
    ///   - namespaces: name prefixes whose every key syncs (`"editor."`); none may be under `prefs.sync.`.
    ///   - device: this device's id (``HybridTimestamp/isValidDevice(_:)``); nil: the one stored, or a new random one.
    ///   - clock: the wall clock (tests pass a `TestClock`'s `function`).
    ///   - maximumSkew: a remote change whose timestamp is further ahead of `clock` is refused (``SyncEvent/refused(_:aheadBy:)``).
    ///   - tombstoneRetention: how long a synced removal is remembered.
    ///   - onEvent: told every merge, refusal and forgotten removal, after the store holds the result.
    ///
    /// ```swift
    /// let engine = try SyncEngine(prefs: prefs, transport: transport, namespaces: ["editor."]) { event in print(event) }
    /// ```
    ///
    /// Throws `PrefsError.invalidKeyName` for a key or namespace under `prefs.sync.` and
    /// `PrefsError.invalidIdentifier` for a device id that is not one; the store's errors otherwise.
    public init(
        prefs: Prefs, transport: any SyncTransport, keys: [Prefs.Keys] = [], namespaces: [String] = [], device: String? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }, maximumSkew: Duration = .seconds(300),
        tombstoneRetention: Duration = .seconds(90 * 86_400), onEvent: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) throws(PrefsError) {
        for name in keys.map(\.name) + namespaces where name.hasPrefix(SyncNames.prefix) || SyncNames.prefix.hasPrefix(name) {
            throw .invalidKeyName(name, reason: "the names under \(SyncNames.prefix) are sync's own")
        }
        let stored = try Self.read(String.self, SyncNames.device, in: prefs)
        let chosen = device ?? stored ?? "d" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        guard HybridTimestamp.isValidDevice(chosen) else {
            throw .invalidIdentifier(chosen, reason: "a device id is 1 to 64 ASCII letters, digits, '.', '_' or '-'")
        }
        if stored != chosen { try prefs.setStoredValue(try Self.stored(chosen), forKey: SyncNames.device) }
        let last = try Self.read(String.self, SyncNames.clock, in: prefs).flatMap(HybridTimestamp.init)
        self.device = chosen
        self.prefs = prefs
        self.transport = transport
        self.keys = Set(keys.map(\.name))
        self.namespaces = namespaces
        self.clock = HybridClock(device: chosen, wallClock: clock, maximumSkew: maximumSkew, last: last)
        self.tombstoneRetention = tombstoneRetention
        self.onEvent = onEvent
        let listening = prefs.onChange { [weak self] names in self?.captureWritten(names) }
        subscription.withLock { $0 = listening }
    }

    /// Pulls other devices' changes and merges them, then pushes this device's: its changes since the last sync (found
    /// by ``captureLocalChanges()``) and those a failed sync left. Concurrent calls run one after the other.
    ///
    /// ```swift
    /// try await engine.sync()
    /// ```
    ///
    /// Throws the store's and the transport's `PrefsError`; nothing is lost then (the next sync pushes again).
    public func sync() async throws(PrefsError) {
        let previous = running
        let task = Task { () -> Result<Void, PrefsError> in
            await previous?.value
            return await self.syncOnce()
        }
        running = Task { _ = await task.value }
        try await task.value.get()
    }

    /// Stamps the changes made to synced keys since the engine last looked, with this device's clock now, and queues
    /// them (in the store) for the next push. ``sync()`` does this first; call it right after a write to give the
    /// change the time it was made rather than the time of the next sync.
    ///
    /// ```swift
    /// prefs[.theme] = "dark"
    /// try engine.captureLocalChanges()
    /// ```
    public nonisolated func captureLocalChanges() throws(PrefsError) {
        let events = try inTransaction { (t: inout Prefs.Transaction, events: inout [SyncEvent]) throws(PrefsError) in
            try capture(&t, events: &events)
        }
        deliver(events)
    }

    /// Stamps and queues this process's change to synced keys `names` as it is committed. Another process's changes
    /// (nil) wait for the next capture. A capture that fails leaves the change as it is in the store: the next one
    /// finds it, and stamps it then.
    private nonisolated func captureWritten(_ names: Set<String>?) {
        guard let names else { return }
        let synced = names.filter(syncs)
        guard !synced.isEmpty else { return }
        do {
            let events = try inTransaction { (t: inout Prefs.Transaction, events: inout [SyncEvent]) throws(PrefsError) in
                try capture(&t, events: &events, only: synced)
            }
            deliver(events)
        } catch {
            // Nothing is lost: the value is in the store and the next capture compares it with its record.
        }
    }

    /// The local changes not yet pushed, read from the store.
    ///
    /// ```swift
    /// try engine.pendingChanges().count   // 0 after a sync that reached the transport
    /// ```
    public nonisolated func pendingChanges() throws(PrefsError) -> [SyncChange] {
        try SyncStatus(prefs.snapshot()).pending
    }

    /// How many merges found a local change not yet pushed (``SyncEvent/merged(key:winner:loser:conflict:)``'s
    /// `conflict`), since the store first synced.
    ///
    /// ```swift
    /// try engine.conflictCount()   // 0
    /// ```
    public nonisolated func conflictCount() throws(PrefsError) -> Int {
        try Self.read(Int.self, SyncNames.conflicts, in: prefs) ?? 0
    }

    // MARK: - One sync

    private func syncOnce() async -> Result<Void, PrefsError> {
        do {
            try captureLocalChanges()
            let cursor = try Self.read(String.self, SyncNames.cursor, in: prefs)
            let pulled = try await transport.pull(since: cursor)
            let events = try inTransaction { (t: inout Prefs.Transaction, events: inout [SyncEvent]) throws(PrefsError) in
                try capture(&t, events: &events)  // what the app wrote while the pull was under way competes too
                try apply(pulled.changes, compacted: pulled.compacted, to: &t, events: &events)
                var cursor: StoredValue?
                if let next = pulled.cursor { cursor = try Self.stored(next) }
                try t.setStoredValue(cursor, forKey: SyncNames.cursor)
            }
            deliver(events)
            let pending = try pendingChanges()
            if !pending.isEmpty {
                try await transport.push(pending)
                _ = try inTransaction { (t: inout Prefs.Transaction, _: inout [SyncEvent]) throws(PrefsError) in
                    for change in pending {
                        guard var record = try record(change.key, in: t), record.id == change.id else { continue }
                        record.pending = false
                        try t.setStoredValue(try Self.stored(record), forKey: SyncNames.record(change.key))
                    }
                    try persistClock(&t)
                }
            }
            try prefs.setStoredValue(try Self.stored(Date(timeIntervalSince1970: Double(clock.physicalNow) / 1000)), forKey: SyncNames.lastSync)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Whether `name` is one of the synced keys.
    private nonisolated func syncs(_ name: String) -> Bool {
        !name.hasPrefix(SyncNames.prefix) && (keys.contains(name) || namespaces.contains { name.hasPrefix($0) })
    }

    /// Stamps and queues every synced key (those of `only`, when given) whose stored value is not the one its record
    /// describes; forgets removals past their retention.
    private nonisolated func capture(_ t: inout Prefs.Transaction, events: inout [SyncEvent], only: Set<String>? = nil) throws(PrefsError) {
        var names: Set<String>
        if let only {
            names = only
        } else {
            names = keys.filter { !$0.hasPrefix(SyncNames.prefix) }
            for name in try t.storedKeys() {
                if name.hasPrefix(SyncNames.recordPrefix) {
                    let key = String(name.dropFirst(SyncNames.recordPrefix.count))
                    if syncs(key) { names.insert(key) }
                } else if syncs(name) {
                    names.insert(name)
                }
            }
        }
        let horizon = clock.physicalNow - Self.milliseconds(tombstoneRetention)
        for name in names.sorted() {
            let current = try t.storedValue(forKey: name)
            let record = try record(name, in: t)
            let known = try record?.change(key: name)
            if let known, known.value == current {
                if record?.pending == false, known.isTombstone, known.timestamp.milliseconds < horizon {
                    try t.setStoredValue(nil, forKey: SyncNames.record(name))
                    events.append(.tombstoneExpired(known))
                }
                continue
            }
            // Nothing stored and nothing recorded: the key reads its initial value, which is not a value to sync.
            if known == nil && current == nil { continue }
            let change = SyncChange(key: name, value: current, timestamp: clock.tick(), id: UUID().uuidString)
            try t.setStoredValue(try Self.stored(SyncRecord(change, pending: true)), forKey: SyncNames.record(name))
        }
        try persistClock(&t)
    }

    /// Merges pulled changes: per key, the greater timestamp wins.
    private nonisolated func apply(_ changes: [SyncChange], compacted: Bool, to t: inout Prefs.Transaction, events: inout [SyncEvent]) throws(PrefsError) {
        var conflicts = 0
        var seen = Set<String>()
        for remote in changes where syncs(remote.key) {
            seen.insert(remote.key)
            if let ahead = clock.excessSkew(of: remote.timestamp) {
                events.append(.refused(remote, aheadBy: ahead))
                continue
            }
            clock.receive(remote.timestamp)
            let record = try record(remote.key, in: t)
            let local = try record?.change(key: remote.key)
            if let local, local.timestamp == remote.timestamp { continue }  // this version already
            let pending = record?.pending ?? false
            if let local, local.timestamp > remote.timestamp {
                events.append(.merged(key: remote.key, winner: local, loser: remote, conflict: pending))
                if pending { conflicts += 1 }
                continue
            }
            try t.setStoredValue(remote.value, forKey: remote.key)
            try t.setStoredValue(try Self.stored(SyncRecord(remote, pending: false)), forKey: SyncNames.record(remote.key))
            events.append(.merged(key: remote.key, winner: remote, loser: local, conflict: pending))
            if pending { conflicts += 1 }
        }
        if compacted {
            // Everything the transport holds came: a key it no longer has was removed and its tombstone forgotten
            // (unless this device changed it since, then its change is pushed).
            for name in try t.storedKeys() where name.hasPrefix(SyncNames.recordPrefix) {
                let key = String(name.dropFirst(SyncNames.recordPrefix.count))
                guard syncs(key), !seen.contains(key), let record = try record(key, in: t), !record.pending else { continue }
                let known = try record.change(key: key)
                try t.setStoredValue(nil, forKey: key)
                try t.setStoredValue(nil, forKey: name)
                events.append(.tombstoneExpired(SyncChange(key: key, value: nil, timestamp: known.timestamp, id: known.id)))
            }
        }
        if conflicts > 0 {
            let total = (try Self.read(Int.self, SyncNames.conflicts, in: t) ?? 0) + conflicts
            try t.setStoredValue(try Self.stored(total), forKey: SyncNames.conflicts)
        }
        try persistClock(&t)
        if !events.isEmpty {
            var log = try Self.read([String].self, SyncNames.log, in: t) ?? []
            log.append(contentsOf: events.map(\.description))
            try t.setStoredValue(try Self.stored(Array(log.suffix(SyncNames.logLength))), forKey: SyncNames.log)
        }
    }

    // MARK: - Store access

    /// Keeps the clock's last reading in the store (so that it never goes back across launches); writes nothing when
    /// the store has it already, so that a capture that finds nothing writes nothing.
    private nonisolated func persistClock(_ t: inout Prefs.Transaction) throws(PrefsError) {
        let reading = try Self.stored(clock.current.description)
        if try t.storedValue(forKey: SyncNames.clock) != reading { try t.setStoredValue(reading, forKey: SyncNames.clock) }
    }

    private nonisolated func record(_ key: String, in t: borrowing Prefs.Transaction) throws(PrefsError) -> SyncRecord? {
        try Self.read(SyncRecord.self, SyncNames.record(key), in: t)
    }

    /// Runs `body` in one store transaction, returning the events it collected (a body that runs again starts afresh).
    private nonisolated func inTransaction(
        _ body: (inout Prefs.Transaction, inout [SyncEvent]) throws(PrefsError) -> Void
    ) throws(PrefsError) -> [SyncEvent] {
        do {
            return try prefs.transaction { t in
                var events: [SyncEvent] = []
                try body(&t, &events)
                return events
            }
        } catch let error as PrefsError {
            throw error
        } catch {
            throw .backend("sync", reason: "\(error)")
        }
    }

    private nonisolated func deliver(_ events: [SyncEvent]) {
        for event in events { onEvent(event) }
    }

    private static func read<Value: PrefsStorable>(_: Value.Type, _ name: String, in prefs: Prefs) throws(PrefsError) -> Value? {
        guard let stored = try prefs.storedValue(forKey: name) else { return nil }
        do { return try stored.decode(Value.self) } catch { throw .typeMismatch(key: name, error) }
    }

    private static func read<Value: PrefsStorable>(_: Value.Type, _ name: String, in t: borrowing Prefs.Transaction) throws(PrefsError) -> Value? {
        guard let stored = try t.storedValue(forKey: name) else { return nil }
        do { return try stored.decode(Value.self) } catch { throw .typeMismatch(key: name, error) }
    }

    private static func stored<Value: PrefsStorable>(_ value: Value) throws(PrefsError) -> StoredValue {
        do { return try StoredValue(value) } catch { throw .encodingFailed(key: "\(Value.self)", reason: "\(error)") }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
