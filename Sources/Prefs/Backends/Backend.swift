#if !compiler(>=6.2)
/// Swift 6.2's marker for types whose conformances may be used on any thread (SE-0470), which ``Prefs/Backend``
/// refines; an empty stand-in for older compilers, which have no isolated conformances.
///
/// ```swift
/// final class DictionaryBackend: Prefs.Backend { /* … */ }   // conforms to SendableMetatype through Backend
/// ```
public protocol SendableMetatype {}
#endif

extension Prefs {
    /// Where a store keeps its values, for storage of your own: a Keychain item, a key-value service, a file in a
    /// format you choose. Open a store on one with ``Prefs/Storage/custom(_:)``.
    ///
    /// ```swift
    /// final class DictionaryBackend: Prefs.Backend {
    ///     private var values: [String: StoredValue] = [:]
    ///
    ///     var description: String { ".dictionary" }
    ///     func allValues() -> [String: StoredValue] { values }
    ///     func commit(_ changes: Prefs.Changes) { changes.apply(to: &values) }
    /// }
    /// let prefs = try Prefs(.custom { DictionaryBackend() })
    /// ```
    ///
    /// The store keeps one instance for as long as it is open, and calls it under its own lock, one call at a time,
    /// from whichever thread uses the store: a backend needs no lock of its own for its properties, and need not be
    /// `Sendable`. Reads the store can answer from its cache never reach the backend. Since the store calls it from its
    /// own threads, a conformance cannot be isolated to an actor (the protocol refines `SendableMetatype`): in an app
    /// target whose code is main-actor isolated by default, a backend class is nonisolated by itself.
    ///
    /// Three requirements have defaults: ``value(forKey:)`` looks in ``allValues()``, ``refresh()`` reports no
    /// outside change, ``close()`` does nothing. A backend shared between processes or machines adopts
    /// ``TransactionalBackend`` too, so that a transaction's read-modify-write holds a writer lock they share.
    /// Errors a backend throws reach the app as ``PrefsError/backend(_:reason:)``, saying which backend failed and
    /// during which call, unless they are ``PrefsError`` values already. See <doc:WritingABackend>.
    public protocol Backend: AnyObject, SendableMetatype {
        /// The backend in call-site form, e.g. `.keychain(service: "com.example.app")`: error messages, diagnostics
        /// and ``Prefs/storage`` name the store by it. The same text for every instance on the same storage.
        var description: String { get }

        /// The value stored under `key`, or nil. Defaults to looking in ``allValues()``; implement it when one value
        /// costs less to read than all of them.
        ///
        /// ```swift
        /// func value(forKey key: String) throws -> StoredValue? { try row(key).map(StoredValue.init) }
        /// ```
        func value(forKey key: String) throws -> StoredValue?

        /// Every stored value, by key: ``Prefs/snapshot()``, ``Prefs/resetAll(keeping:)`` and tools read them all.
        ///
        /// ```swift
        /// func allValues() -> [String: StoredValue] { values }
        /// ```
        func allValues() throws -> [String: StoredValue]

        /// Stores `changes` atomically: every change or, when it throws, none. When it returns, the changes are as
        /// durable as the backend promises (write a file to a temporary name and rename it over the old one; run one
        /// database transaction). The store never calls it with empty changes.
        ///
        /// ```swift
        /// func commit(_ changes: Prefs.Changes) { changes.apply(to: &values) }
        /// ```
        func commit(_ changes: Changes) throws

        /// Looks for changes made outside this instance (another process, another device, another store on the same
        /// storage) since the last call, and returns true when values may have changed: the store then drops its
        /// cache. Changes a ``TransactionalBackend`` read in ``TransactionalBackend/beginTransaction()`` since then
        /// count too: the store serves values from its cache until a refresh says they changed. Called by
        /// ``Prefs/refresh()``, before each transaction, and every `pollInterval` while the store is observed.
        /// Defaults to false, for a backend nothing else writes.
        ///
        /// ```swift
        /// func refresh() throws -> Bool { try reloadIfFileChanged() }
        /// ```
        func refresh() throws -> Bool

        /// Releases files, handles and connections; the store makes no call after it. Defaults to doing nothing.
        ///
        /// ```swift
        /// func close() { try? handle.close() }
        /// ```
        func close()
    }

    /// A ``Backend`` whose storage other processes or machines write too, with a writer lock they share (a file lock,
    /// a database transaction): the store discovers it, and runs each ``Prefs/transaction(_:)`` and
    /// ``Prefs/update(_:_:)`` between ``beginTransaction()`` and ``commitTransaction(_:)``, so that a read-modify-write
    /// is atomic across all of them.
    ///
    /// ```swift
    /// final class SharedFileBackend: Prefs.TransactionalBackend {
    ///     // description, allValues() and refresh() as for any backend, and:
    ///     func beginTransaction() throws { try lock.lock(); try reloadIfFileChanged() }
    ///     func commitTransaction(_ changes: Prefs.Changes) throws { try write(changes); lock.unlock() }
    ///     func rollbackTransaction() { lock.unlock() }
    /// }
    /// ```
    ///
    /// Without it, the store's own lock serializes writers within the store, and each write is one ``Backend/commit(_:)``:
    /// enough for storage that only this store writes. ``Backend/commit(_:)`` defaults to a transaction of its own.
    public protocol TransactionalBackend: Backend {
        /// Takes the writer lock shared with the other writers (waiting for it, or throwing when that takes too long),
        /// and brings the backend up to date, so that reads return the freshest committed values until the
        /// transaction ends. Outside changes it finds are still reported by the next ``Backend/refresh()``.
        ///
        /// ```swift
        /// func beginTransaction() throws { try lock.lock(); try reloadIfFileChanged() }
        /// ```
        func beginTransaction() throws

        /// Stores `changes` atomically, as ``Backend/commit(_:)`` does, then releases the writer lock. When it throws,
        /// nothing was stored, and the store calls ``rollbackTransaction()`` next, which releases the lock. `changes`
        /// may be empty (a transaction that wrote nothing): then it only releases the lock.
        ///
        /// ```swift
        /// func commitTransaction(_ changes: Prefs.Changes) throws { try write(changes); lock.unlock() }
        /// ```
        func commitTransaction(_ changes: Changes) throws

        /// Releases the writer lock without storing anything: the transaction's body threw, or
        /// ``commitTransaction(_:)`` did.
        ///
        /// ```swift
        /// func rollbackTransaction() { lock.unlock() }
        /// ```
        func rollbackTransaction()
    }
}

extension Prefs.Backend {
    /// Looks `key` up in ``allValues()``.
    public func value(forKey key: String) throws -> StoredValue? {
        try allValues()[key]
    }

    /// No outside changes: nothing but this instance writes the storage.
    public func refresh() throws -> Bool {
        false
    }

    /// Nothing to release.
    public func close() {}
}

extension Prefs.TransactionalBackend {
    /// A transaction of its own: ``beginTransaction()``, then ``commitTransaction(_:)``, or
    /// ``rollbackTransaction()`` when that throws.
    public func commit(_ changes: Prefs.Changes) throws {
        try committingInTransaction(begin: beginTransaction, commit: { try commitTransaction(changes) }, rollback: rollbackTransaction)
    }
}
