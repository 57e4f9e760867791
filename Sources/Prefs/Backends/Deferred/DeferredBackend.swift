import Foundation
import PrefsSupport

/// The backend of a store that could not be opened yet: ``Prefs/standard``'s default store when its folder is missing
/// and cannot be made, cannot be read (an iOS app prewarmed before the first unlock, whose protected files are
/// unreadable), or is one the trust rule refuses. Instead of a memory store for the life of the process, it waits for
/// the real one.
///
/// While waiting, what this process writes is kept here, in memory, and read back (reads of anything else return
/// initial values: nothing is known of the store). It tries to open the real store again when the store refreshes and a
/// retry is due (the store's reads, writes, transactions and polls refresh it once ``freshness`` expires: at most once
/// a retry interval, measured by an injectable clock), and at once when the app asks (``Prefs/retryOpening()``). Once
/// it opens, the kept writes are merged into it in one transaction, by key, never over a value another process stored:
/// a kept write is committed only for a key the store holds no value for when it opens, since whatever the store holds
/// was stored by another process, or by an earlier launch, in a state this process never saw (its write was made
/// from an initial value). The kept writes the store overrides are reported (``Prefs/Diagnostic/Kind/pendingWritesDropped(keys:reason:)``);
/// so are those still kept when the process exits (``Prefs/flushAtExit()``) or the store is released.
///
/// Used under the store's lock, like every backend; ``waitingReason`` is readable without it.
final class DeferredBackend: StoreBackend {
    /// Opens the real store, or throws why it cannot be opened yet (naming the folder).
    typealias Opening = @Sendable () throws(PrefsError) -> any StoreBackend

    /// What the diagnostics say a waiting store does.
    static let waitingNote = "opening the store failed; until it opens, reads return initial values and writes are kept in memory"

    private let open: Opening
    private let label: String
    private let clock: StoreClock
    /// The real store, once open.
    private var opened: (any StoreBackend)?
    /// The writes (and declarations) made while waiting, merged in order.
    private var pending = Changeset()
    private var reports: [Prefs.Diagnostic.Kind] = []
    /// Why the store waits, and when it retries, for the store to read without its lock.
    let status: Status
    /// When the next retry is due (``Status/retries``): the store checks it before each read, so a read past it
    /// refreshes, and the refresh retries.
    let freshness: BackendFreshness?
    private var retries: BackendFreshness { status.retries }
    private var reason: Locked<PrefsError?> { status.reason }

    /// What the store reads of a waiting backend without holding its lock.
    final class Status: Sendable {
        /// Why the store is waiting; nil once it is open.
        let reason: Locked<PrefsError?>
        /// When the next retry is due: renewed after each failed attempt, never expiring once the store is open.
        let retries: BackendFreshness

        init(reason: PrefsError, retries: BackendFreshness) {
            self.reason = Locked(reason)
            self.retries = retries
        }

        /// Why the store is waiting, or nil once it is open.
        var waitingReason: PrefsError? {
            reason.withLock { $0 }
        }

        /// Makes the next refresh retry, however recent the last attempt (the app said the store may be available).
        func retrySoon() {
            if waitingReason != nil { retries.expire() }
        }
    }

    /// A backend waiting for the store that `open` opens, which just failed with `error`; `label` names the store
    /// (its storage's description) until it opens. Retries are at least `retryInterval` apart, by `clock`.
    init(label: String, waitingFor error: PrefsError, retryInterval: Duration, clock: StoreClock, open: @escaping Opening) {
        self.label = label
        self.open = open
        self.clock = clock
        let retries = BackendFreshness(bound: retryInterval, clock: clock)
        status = Status(reason: error, retries: retries)
        freshness = retries
        retries.renew(checkedAt: clock.uptimeNanoseconds)
        reports = [.refreshFailed(error, during: Self.waitingNote)]
    }

    var waitingReason: PrefsError? {
        status.waitingReason
    }

    /// Tries to open the real store and merge the kept writes into it; true when it opened now (the store must then drop
    /// its cache: the real store's values replace what was read while waiting). A failure keeps the store waiting, and a
    /// reason other than the last one is reported.
    func attempt() -> Bool {
        guard opened == nil else { return false }
        let start = clock.uptimeNanoseconds
        do {
            let backend = try open()
            do {
                try merge(into: backend)
            } catch {
                backend.close()
                throw error
            }
            opened = backend
            pending = Changeset()
            reason.withLock { $0 = nil }
            retries.renewForever()  // reads stop asking
            return true
        } catch {
            let error = PrefsError(error)
            let isNew = reason.withLock { reason in
                defer { reason = error }
                return reason != error
            }
            if isNew { reports.append(.refreshFailed(error, during: Self.waitingNote)) }
            retries.renew(checkedAt: start)
            return false
        }
    }

    /// Commits the kept writes to `backend` in one transaction: a set only where the store holds no value for the key,
    /// a removal never (there is nothing to remove where the store holds none); the declarations as they are. Reports
    /// the kept writes that the store's own values override.
    private func merge(into backend: any StoreBackend) throws {
        guard !pending.isEmpty else { return }
        try backend.beginTransaction()
        var overridden: [String] = []
        do {
            var changes = Changeset(declarations: pending.declarations, removedDeclarations: pending.removedDeclarations)
            for (key, change) in pending.values {
                let stored = try backend.value(forKey: key)
                switch (change, stored) {
                case (.set(let value), nil): changes.values[key] = .set(value)
                case (.remove, nil): break
                case (.set(let value), let stored?): if stored != value { overridden.append(key) }
                case (.remove, _?): overridden.append(key)
                }
            }
            try backend.commitTransaction(changes)
        } catch {
            backend.rollbackTransaction()
            throw error
        }
        if !overridden.isEmpty {
            reports.append(
                .pendingWritesDropped(
                    keys: overridden.sorted(),
                    reason:
                        "the store already held values for them when it opened, stored by another process or an earlier launch while this process could not read it; those values are kept"
                ))
        }
    }

    /// The keys of the values written while waiting and not yet in the store.
    var unwrittenKeys: [String] {
        pending.values.compactMap { key, change in
            if case .set = change { return key }
            return nil
        }.sorted()
    }

    /// Thrown by ``flush()`` while writes are kept in memory: they are not durable. Read as a ``PrefsError``, the
    /// reason the store waits.
    struct Unwritten: Error, PrefsErrorConvertible, CustomStringConvertible {
        var keys: [String]
        var reason: PrefsError
        var prefsError: PrefsError { reason }
        var description: String {
            "writes to \(JSONFileBackend.list(keys)) are kept in memory while the store waits to open: \(reason)"
        }
    }

    // MARK: - StoreBackend

    var description: String { opened?.description ?? label }

    func value(forKey key: String) throws -> StoredValue? {
        if let opened { return try opened.value(forKey: key) }
        if case .set(let value)? = pending.values[key] { return value }
        return nil
    }

    func allValues() throws -> [String: StoredValue] {
        if let opened { return try opened.allValues() }
        return pending.values.compactMapValues { change in
            if case .set(let value) = change { return value }
            return nil
        }
    }

    func declarations() throws -> [String: KeyDeclaration] {
        if let opened { return try opened.declarations() }
        return pending.declarations
    }

    func declaration(forKey key: String) throws -> KeyDeclaration? {
        if let opened { return try opened.declaration(forKey: key) }
        return pending.declarations[key]
    }

    func declarations(forKeys keys: [String]) throws -> [String: KeyDeclaration] {
        if let opened { return try opened.declarations(forKeys: keys) }
        var found: [String: KeyDeclaration] = [:]
        for key in keys { found[key] = pending.declarations[key] }
        return found
    }

    func apply(_ changes: Changeset) throws {
        if let opened { return try opened.apply(changes) }
        pending.merge(changes)
    }

    /// While waiting, the store's lock serializes this process's writers, and no other process sees what is kept.
    func beginTransaction() throws {
        try opened?.beginTransaction()
    }

    func commitTransaction(_ changes: Changeset) throws {
        if let opened { return try opened.commitTransaction(changes) }
        pending.merge(changes)
    }

    func rollbackTransaction() {
        opened?.rollbackTransaction()
    }

    /// The real store's refresh; while waiting, a retry when one is due (true when the store opened).
    func refresh() throws -> Bool {
        if let opened {
            if retries.isExpired { retries.renewForever() }  // a retry asked for as it opened: reads need not ask again
            return try opened.refresh()
        }
        guard retries.isExpired else { return false }
        return attempt()
    }

    /// The real store's flush; while writes are kept in memory, throws ``Unwritten``: they are not durable.
    func flush() throws {
        if let opened { return try opened.flush() }
        let keys = unwrittenKeys
        guard !keys.isEmpty, let reason = waitingReason else { return }
        throw Unwritten(keys: keys, reason: reason)
    }

    var flushInterval: Duration? { opened?.flushInterval }

    func integrityProblems() throws -> [String] {
        if let opened { return try opened.integrityProblems() }
        throw waitingReason ?? PrefsError.closed(store: label)
    }

    func quickCheckProblems() throws -> [String] {
        if let opened { return try opened.quickCheckProblems() }
        throw waitingReason ?? PrefsError.closed(store: label)
    }

    func close() {
        opened?.close()
    }

    func takeReports() -> [Prefs.Diagnostic.Kind] {
        defer { reports = [] }
        return reports + (opened?.takeReports() ?? [])
    }

    var idleWorkDelay: Duration? { opened?.idleWorkDelay }

    func doIdleWork() -> Duration? {
        opened?.doIdleWork()
    }

    func makeChangeListener() -> (any BackendChangeListener)? {
        opened?.makeChangeListener()
    }

    var files: [String] { opened?.files ?? [] }

    var validatesTransactionsAtCommit: Bool { opened?.validatesTransactionsAtCommit ?? false }

    var recordsOnlyChangedDeclarations: Bool { opened?.recordsOnlyChangedDeclarations ?? false }
}
