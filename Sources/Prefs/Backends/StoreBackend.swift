import Foundation
import Synchronization
internal import PrefsJSON
import PrefsSupport
/// The whole interface the store drives: where a ``Prefs`` store keeps its values (memory, a JSON file, SQLite,
/// PostgreSQL) with every ability the built-in storages have (transactions, declarations, coalescing, integrity
/// checks, reports, idle work, change listeners, freshness). An app's own storage implements the small public
/// ``Prefs/Backend`` instead, which `CustomBackend` adapts to this.
///
/// A backend is not thread-safe by itself: the store calls it under its own lock, from one thread at a time.
/// Coordination with other processes (file locks, SQLite transactions) is the backend's job.
package protocol StoreBackend: AnyObject {
    /// The backend in call-site form, e.g. `.sqlite("/path/prefs.sqlite")`.
    var description: String { get }

    /// The committed value for `key`, or nil.
    func value(forKey key: String) throws -> StoredValue?
    /// Every stored value.
    func allValues() throws -> [String: StoredValue]
    /// Every declaration recorded in the store.
    func declarations() throws -> [String: KeyDeclaration]
    /// The declaration recorded for one key (a backend with many keys answers without reading them all).
    func declaration(forKey key: String) throws -> KeyDeclaration?
    /// The declarations recorded for `keys`, by key (a key with none recorded is absent): what `declare` compares
    /// against, in one read for them all (a server's backend answers in one round trip).
    func declarations(forKeys keys: [String]) throws -> [String: KeyDeclaration]

    /// Applies `changes` atomically. When it returns, the changes are as durable as the backend promises.
    func apply(_ changes: Changeset) throws

    /// Takes the exclusive writer lock (shared with other processes) and brings the backend up to date,
    /// so that `value(forKey:)` returns the freshest committed state until the transaction ends.
    func beginTransaction() throws
    /// ``beginTransaction()`` for a body that reads one key (an `update`, which reads its key's former names only while
    /// the key holds no value): a backend that serves a body's reads from one snapshot (PostgreSQL) may serve a key
    /// that holds a value as it last saw it instead, since one read cannot be torn. By default, ``beginTransaction()``.
    func beginSingleKeyTransaction() throws
    /// Applies `changes` atomically and releases the writer lock.
    func commitTransaction(_ changes: Changeset) throws
    /// Releases the writer lock without changes.
    func rollbackTransaction()

    /// Looks for changes made by other processes; returns true when state may have changed since the last call.
    func refresh() throws -> Bool
    /// Writes what is pending (coalesced mode). A no-op for backends whose writes are durable on return.
    func flush() throws
    /// The longest a write may wait in memory before ``flush()`` must be called; nil when writes reach disk on return.
    var flushInterval: Duration? { get }
    /// Problems an integrity check finds; empty when the store is sound.
    func integrityProblems() throws -> [String]
    /// Problems a quick check of the store's structure finds, without checking values against their types;
    /// empty when the store can be written safely. By default, ``integrityProblems()``.
    func quickCheckProblems() throws -> [String]
    /// Releases files and handles. Pending writes are flushed first by the store.
    func close()
    /// Releases every lock the backend holds on its files between calls (an SQLite connection's read locks), for
    /// ``Prefs/suspend()``; the backend's next call takes again what it needs, and its next ``refresh()`` returns true
    /// when it reopened anything. Called between calls, with pending writes flushed. Nothing by default (a backend that
    /// holds no lock while idle: memory, a JSON file, a server).
    func suspend()

    /// What opening found and dealt with (a file moved aside by ``Prefs/Recovery/moveAsideAndStartEmpty``, a torn
    /// journal record left unapplied); the store reports each once as a ``Prefs/Diagnostic``. Empty by default.
    var openingReport: [Prefs.Diagnostic.Kind] { get }
    /// What the backend noticed and dealt with since the store last asked (a JSON store's hand edit merged with its
    /// journal, a journal that does not belong to its file): the store asks after every call and reports each as a
    /// ``Prefs/Diagnostic``. Empty by default.
    func takeReports() -> [Prefs.Diagnostic.Kind]
    /// How long until the backend has work to do once its writer is idle (a JSON store folding its journal into its
    /// file), asked after every call; nil when it has none (the default).
    var idleWorkDelay: Duration? { get }
    /// Does that work when it is due, and returns how long to wait before asking again, or nil when there is no more.
    func doIdleWork() -> Duration?
    /// A listener for other processes' changes, for backends that can be told (PostgreSQL's `LISTEN`): while the store
    /// is observed, it waits on it between polls and refreshes as soon as it returns true. Nil (the default): the
    /// store polls every `pollInterval`.
    func makeChangeListener() -> (any BackendChangeListener)?
    /// The files the backend keeps (the store file and the sidecars that exist now), for tools that copy, remove or
    /// inspect a store. Empty by default (memory, a server).
    var files: [String] { get }

    /// For a backend that other machines write (PostgreSQL): how old a cached value may be. Before serving a cached
    /// value once it says so, the store asks the backend to ``refresh()``, which renews it. Nil (the default): the
    /// cache is served until ``refresh()`` or a poll finds a change.
    var freshness: BackendFreshness? { get }
    /// Whether the backend checks, when a transaction commits, that what it read is still current (optimistic
    /// concurrency) and throws ``BackendTransactionConflict`` when it is not. The store then runs the transaction's
    /// body again, and does not ``refresh()`` before a transaction. False (the default): ``beginTransaction()`` takes a
    /// writer lock, so a body runs once.
    var validatesTransactionsAtCommit: Bool { get }
    /// Whether ``value(forKey:)`` answers from memory the backend keeps anyway, as cheaply as the store's cache would
    /// (the memory backend). The store's cache then keeps no copy of what a commit wrote: a written key's next read
    /// loads it from the backend, and the cache keeps what that read decoded, so that each value is held once. False
    /// (the default): the cache takes what each commit wrote, so the next read asks the backend nothing.
    var servesReadsFromMemory: Bool { get }
    /// Whether a read ``value(forKey:)`` answers costs one lookup the backend answers cheaply and locally (SQLite: one
    /// prepared statement). The store's cache then keeps a bounded part of the values (``StoreCache/Limits``), so that
    /// a large table is not mirrored in memory; what it drops is read again with one lookup. False (the default): the
    /// cache keeps every value it loads or a commit writes (a backend that holds its values in memory anyway, or whose
    /// reads cross a network).
    var readsCostOneLookup: Bool { get }
    /// Whether a declaration committed with a write is recorded only where it differs from the recorded one, by the
    /// write itself (PostgreSQL: in its one statement; the JSON store: against its document, under its file lock when
    /// the write is durable). The store then gives a key's first write its declaration without reading the recorded one
    /// first (a round trip, or a pass through the lock). False (the default): the store reads it, and gives the write
    /// the declaration only when it differs.
    var recordsOnlyChangedDeclarations: Bool { get }
}

extension StoreBackend {
    package func apply(_ changes: Changeset) throws {
        try applyInTransaction(changes)
    }

    /// Applies `changes` between ``beginTransaction()`` and ``commitTransaction(_:)``, rolling back on failure.
    package func applyInTransaction(_ changes: Changeset) throws {
        try committingInTransaction(begin: beginTransaction, commit: { try commitTransaction(changes) }, rollback: rollbackTransaction)
    }
    package func declaration(forKey key: String) throws -> KeyDeclaration? {
        try declarations()[key]
    }
    /// One ``declaration(forKey:)`` a key: a local backend's lookups cost no round trip.
    package func declarations(forKeys keys: [String]) throws -> [String: KeyDeclaration] {
        var found: [String: KeyDeclaration] = [:]
        for key in keys {
            if let declaration = try declaration(forKey: key) { found[key] = declaration }
        }
        return found
    }
    package func beginSingleKeyTransaction() throws {
        try beginTransaction()
    }
    package var flushInterval: Duration? { nil }
    package func quickCheckProblems() throws -> [String] {
        try integrityProblems()
    }
    package func flush() throws {}
    package func suspend() {}
    package var openingReport: [Prefs.Diagnostic.Kind] { [] }
    package func takeReports() -> [Prefs.Diagnostic.Kind] { [] }
    package var idleWorkDelay: Duration? { nil }
    package func doIdleWork() -> Duration? { nil }
    package var files: [String] { [] }
    package func makeChangeListener() -> (any BackendChangeListener)? { nil }
    package var freshness: BackendFreshness? { nil }
    package var validatesTransactionsAtCommit: Bool { false }
    package var servesReadsFromMemory: Bool { false }
    package var readsCostOneLookup: Bool { false }
    package var recordsOnlyChangedDeclarations: Bool { false }
}

/// One write in a transaction of its own: `begin`, then `commit`, or `rollback` when `commit` throws. The shape of both
/// backend protocols' one-shot commit (``StoreBackend/applyInTransaction(_:)``, `Prefs.TransactionalBackend.commit`).
package func committingInTransaction(begin: () throws -> Void, commit: () throws -> Void, rollback: () -> Void) throws {
    try begin()
    do {
        try commit()
    } catch {
        rollback()
        throw error
    }
}

/// Thrown by ``StoreBackend/commitTransaction(_:)`` of a backend that ``StoreBackend/validatesTransactionsAtCommit``
/// when something the transaction read changed before it committed: nothing was written, and the store runs the
/// transaction again with fresh reads. The backend bounds how often (it throws its own error once it gives up).
package struct BackendTransactionConflict: Error, Sendable {
    /// The keys whose values moved.
    package var keys: [String]

    package init(keys: [String]) {
        self.keys = keys
    }
}

/// How long a backend's cached reads stay fresh (see ``StoreBackend/freshness``): a deadline the backend renews after
/// each check for other machines' changes and clears when it learns of one. Read lock-free on every cached read.
package final class BackendFreshness: Sendable {
    /// The longest a cached value is served without checking for changes.
    package let bound: Duration
    /// The clock the bound is measured by.
    package let clock: StoreClock
    /// Until when cached reads are fresh, in `clock`'s uptime nanoseconds; 0: check at the next read.
    private let validUntil = Atomic<UInt64>(0)

    package init(bound: Duration, clock: StoreClock = .system) {
        self.bound = bound
        self.clock = clock
    }

    /// Whether a check is due before the next cached read.
    @inline(__always)
    package var isExpired: Bool {
        let until = validUntil.load(ordering: .acquiring)
        return until != .max && clock.uptimeNanoseconds >= until
    }

    /// Cached reads are fresh until `bound` after `start` (when the check that found the state began, in `clock`'s
    /// uptime: take it before the check starts).
    package func renew(checkedAt start: UInt64) {
        let nanoseconds = UInt64(bound.components.seconds) * 1_000_000_000 + UInt64(bound.components.attoseconds / 1_000_000_000)
        validUntil.store(start &+ nanoseconds, ordering: .releasing)
    }

    /// Cached reads are fresh for ever (no read checks again, and the clock is not read), until ``expire()``.
    package func renewForever() {
        validUntil.store(.max, ordering: .releasing)
    }

    /// The next cached read checks first (a change was signalled, or a write's outcome is unknown).
    package func expire() {
        validUntil.store(0, ordering: .releasing)
    }
}

/// Waits for a sign that another process changed a store (see ``StoreBackend/makeChangeListener()``). Used by one
/// thread at a time, apart from the store's lock, so it keeps a connection of its own.
package protocol BackendChangeListener: AnyObject {
    /// Blocks up to `timeout`; true as soon as a change was signalled, false when the time passed without one (or the
    /// listener could not listen: the store's polling still runs).
    func wait(upTo timeout: Duration) -> Bool
    /// Releases the listener's connection.
    func close()
}

extension BackendChangeListener {
    /// Starts listening, so that a change made after this returns is signalled: a first, short wait, which connects.
    package func startListening() {
        _ = wait(upTo: .milliseconds(1))
    }
}

/// A set of changes a backend applies in one atomic step.
package struct Changeset: Sendable, Hashable {
    package enum Change: Sendable, Hashable {
        case set(StoredValue)
        case remove
    }

    /// Value changes by key (a ``ChangeTable``: half the memory of a `Dictionary`, for a batch of 100,000 sets).
    package var values = ChangeTable()
    /// Declarations to record (they replace earlier ones under the same key).
    package var declarations: [String: KeyDeclaration] = [:]
    /// Declarations to forget (a tool restoring a snapshot exactly, or removing what it recorded by mistake).
    /// Applied before ``declarations``: a key in both ends up declared.
    package var removedDeclarations: Set<String> = []

    package init(values: ChangeTable = [:], declarations: [String: KeyDeclaration] = [:], removedDeclarations: Set<String> = []) {
        self.values = values
        self.declarations = declarations
        self.removedDeclarations = removedDeclarations
    }

    package var isEmpty: Bool { values.isEmpty && declarations.isEmpty && removedDeclarations.isEmpty }

    /// Whether the changes record or forget `key`'s declaration.
    func declares(_ key: String) -> Bool {
        declarations[key] != nil || removedDeclarations.contains(key)
    }

    /// Adds `later` on top of these changes, in place.
    mutating func merge(_ later: Changeset) {
        values.merge(later.values)
        for name in later.removedDeclarations { declarations.removeValue(forKey: name) }
        if !later.removedDeclarations.isEmpty { removedDeclarations.formUnion(later.removedDeclarations) }
        // A loop, not `merge(_:uniquingKeysWith:)`: a key's first set brings one declaration, which `merge` took
        // through a lazy map of the other table and its closure.
        for (name, declaration) in later.declarations { declarations[name] = declaration }
    }
}
