import Foundation
import PrefsSupport
internal import PrefsJSON

extension Prefs {
    /// Looks for other processes' writes now. A store that something observes does this by itself every `pollInterval`.
    /// A store waiting for its storage (``waitingReason``) tries to open it now.
    public func refresh() throws(PrefsError) {
        deferred?.retrySoon()
        let changed = try PrefsError.converting {
            try io.withBackend { backend throws -> Bool in
                let changed = try backend.refresh()
                if changed {
                    invalidateCache()
                    deliverInOrder(nil)
                }
                return changed
            }
        }
        if changed { notifyObservers(of: nil) }
    }

    /// Writes pending coalesced changes now. A no-op for stores whose writes are durable on return.
    public func flush() throws(PrefsError) {
        try PrefsError.converting { try io.withBackend { backend in try backend.flush() } }
    }

    /// Flushes and releases the backend. Later calls throw ``PrefsError/closed(store:)``; reads return initial values.
    public func close() throws(PrefsError) {
        if !io.isSuspended { try flush() }  // a suspended store has nothing pending: not reopened only to be closed
        state.withLock { state in
            state.closed = true
            state.refresher.stop()
            state.cache.invalidateAll(keepingCapacity: false)
        }
        finishObservers()
        try PrefsError.converting { try io.close { backend in try backend.flush() } }
    }

    /// Problems an integrity check of the store finds (SQLite `integrity_check`, the JSON document's shape,
    /// every value against its type); empty when the store is sound.
    public func integrityProblems() throws(PrefsError) -> [String] {
        try PrefsError.converting { try io.withBackend { backend in try backend.integrityProblems() } }
    }

    /// Problems a quick check of the store's structure finds (SQLite `quick_check`, which finds a damaged page
    /// anywhere in the file; a JSON store's document), without checking values against their types. Tools run it
    /// before writing, so that a damaged store is refused rather than written to. Empty when the store is sound.
    public func quickCheckProblems() throws(PrefsError) -> [String] {
        try PrefsError.converting { try io.withBackend { backend in try backend.quickCheckProblems() } }
    }

}

// MARK: - Untyped access, for tools

extension Prefs {
    /// Every stored value, read fresh from the backend.
    public func snapshot() throws(PrefsError) -> [String: StoredValue] {
        try PrefsError.converting { try io.withBackend { backend in try backend.allValues() } }
    }

    /// The stored value under `name`, read fresh from the backend (a store that other machines write, PostgreSQL, answers
    /// as fresh as its staleness bound: call ``refresh()`` first for a strict read). While `name` holds none, the value
    /// under the first of its declared former names that holds one (its declaration's `formerNames`): what the app
    /// reads for the key.
    public func storedValue(forKey name: String) throws(PrefsError) -> StoredValue? {
        try PrefsError.converting {
            try io.withBackendAllowingReentry { backend in
                if let value = try backend.value(forKey: name) { return value }
                return try Self.formerValue(backend.declaration(forKey: name)?.formerNames ?? [], in: backend)
            }
        }
    }

    /// Writes a raw value under `name` (`nil` removes it). The name is validated.
    public func setStoredValue(_ value: StoredValue?, forKey name: String) throws(PrefsError) {
        try setStoredValues([name: value])
    }

    /// Writes raw values in one transaction (`nil` removes). Names are validated first; nothing is written if one is invalid.
    /// A write or removal of a key declared with former names removes their values too, as the app's own writes do.
    public func setStoredValues(_ values: [String: StoredValue?]) throws(PrefsError) {
        var changes = Changeset()
        for (name, value) in values {
            try changes.stageRaw(value, forKey: name)
        }
        let declarations = try PrefsError.converting { try declaredKeys() }
        for name in values.keys {
            for former in declarations[name]?.formerNames ?? [] where values[former] == nil {
                changes.values[former] = .remove
            }
        }
        try commit(changes)
    }
}

// MARK: - API a backend's own module adds

extension Prefs {
    /// Whether ``close()`` was called (work a backend's module runs apart from the store ends then).
    package var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// Runs `body` with this store's backend under the store's lock, for API that a backend's own module adds to
    /// `Prefs` (PrefsPostgreSQL's revisions). The changes `body` sets as `committed` are cached and told to observers
    /// as a commit's are; `body`'s error drops the keys it names from the cache (`invalidating`), since a write that
    /// failed may still have been applied. From inside a transaction body it throws
    /// ``PrefsError/reentrantCall(store:operation:)``; after ``close()``, ``PrefsError/closed(store:)``.
    package func withBackend<Result>(
        _ operation: String = #function, invalidating keys: [String] = [],
        _ body: (any StoreBackend, _ committed: inout Changeset?) throws -> Result
    ) throws -> Result {
        // `committed` is not returned beside the result: a tuple with a generic element made the runtime look up its
        // metadata at every call.
        var committed: Changeset?
        let result = try io.withBackend(operation) { backend throws -> Result in
            let result: Result
            do {
                result = try body(backend, &committed)
            } catch {
                invalidateCachedValues(forKeys: keys)
                throw error
            }
            if let committed { state.withLock { $0.cacheCommitted(committed, by: backend) } }
            return result
        }
        if let committed { notifyObservers(of: committed) }
        return result
    }
}
