internal import PrefsJSON
extension Prefs {
    /// Reads and writes inside one atomic step: under the store's writer lock (shared with other processes
    /// for file stores), reads see the freshest committed state, and the writes commit together or not at all.
    ///
    /// ```swift
    /// try prefs.transaction { t in
    ///     t[.launchCount] += 1
    ///     t[.lastLaunch] = Date()
    /// }
    /// ```
    /// Read and write through the transaction (`t[key]`) inside `body`. Reading the store itself there
    /// (`prefs[key]`) works, and sees the committed state without the transaction's staged writes; writing the store
    /// itself there (`prefs[key] = …`, `update`, a nested `transaction`, `reset`) would wait for the transaction's own
    /// lock, so it throws ``PrefsError/reentrantCall(store:operation:)`` at once (a subscript setter reports it as a
    /// diagnostic). In a JSON store's coalesced mode, a transaction writes the file at once, with everything pending.
    ///
    /// A key with `formerNames` reads the value stored under a former name while its own name holds none, and a
    /// write or reset of the key removes the former names' values in the same commit.
    ///
    /// What a body sees: the store as of one moment, plus its own staged writes, never a mix of two states. A file or
    /// memory store holds its writer lock while the body runs, so the body runs once, on the latest committed state. A
    /// store that other machines write (PostgreSQL) locks nothing: the body reads one snapshot (at most the staleness
    /// bound old at its first read), and the commit checks that nothing the body read has changed since; when something
    /// has, nothing is written and the body runs again on a newer snapshot. So a body may run more than once: keep side
    /// effects out of it.
    public struct Transaction: ~Copyable {
        let backend: any StoreBackend
        /// The store, which reports mismatches (held rather than a closure over it: no allocation per transaction).
        let store: Prefs
        var changes = Changeset()
        /// The first error met by a subscript; the transaction throws it instead of committing.
        var failure: PrefsError?

        /// The value of `key` as this transaction sees it; setting stages a write. A stored value of
        /// another type reads as the initial value (and is reported); a read or encoding error makes the
        /// whole transaction throw instead of committing.
        public subscript<Value: PrefsStorable>(key: Key<Value>) -> Value {
            mutating get {
                do {
                    return try value(for: key)
                } catch {
                    failure = failure ?? error
                    return key.initial
                }
            }
            set {
                do { try set(newValue, for: key) } catch { failure = failure ?? error }
            }
        }

        /// The value of `key` as this transaction sees it (under a former name when its own name holds none),
        /// or the initial value (a mismatch is reported).
        public func value<Value: PrefsStorable>(for key: Key<Value>) throws(PrefsError) -> Value {
            // Not `??`, whose autoclosure would throw untyped.
            var found = try storedValue(forKey: key.name)
            if found == nil { found = try formerValue(of: key) }
            guard let stored = found else { return key.initial }
            do {
                return try key.decode(stored)
            } catch {
                store.reportMismatch(error, key: key.name)
                return key.initial
            }
        }

        /// The value stored under the first of `key`'s former names that holds one, staged writes included.
        func formerValue(of key: Keys) throws(PrefsError) -> StoredValue? {
            for former in key.formerNames {
                if let value = try storedValue(forKey: former) { return value }
            }
            return nil
        }

        /// Stages a write of `value` for `key` (`nil` removes), and the removal of its former names' values.
        public mutating func set<Value: PrefsStorable>(_ value: Value, for key: Key<Value>) throws(PrefsError) {
            stage(try Prefs.change(for: value, key: key.name), forKey: key.name)
            for former in key.formerNames { changes.values[former] = .remove }
        }

        /// Stages `change` under `name` (``ChangeTable`` grows as a batch's keys come, doubling its buckets).
        @inline(__always)
        mutating func stage(_ change: Changeset.Change, forKey name: String) {
            changes.values[name] = change
        }

        /// Stages an explicit `nil` for an optional key (and the removal of its former names' values); see
        /// ``Prefs/storeNil(for:)``.
        public mutating func storeNil<Wrapped: PrefsStorable>(for key: Key<Wrapped?>) {
            changes.values[key.name] = .set(.explicitNil)
            for former in key.formerNames { changes.values[former] = .remove }
        }

        /// Stages the removal of `key`'s stored value (and its former names').
        public mutating func reset(_ key: Keys) {
            changes.values[key.name] = .remove
            for former in key.formerNames { changes.values[former] = .remove }
        }

        /// The raw stored value under `name`, including this transaction's staged writes.
        public func storedValue(forKey name: String) throws(PrefsError) -> StoredValue? {
            switch changes.values[name] {
            case .set(let value)?: return value
            case .remove?: return nil
            case nil: return try PrefsError.converting { try backend.value(forKey: name) }
            }
        }

        /// Stages a raw write (`nil` removes).
        public mutating func setStoredValue(_ value: StoredValue?, forKey name: String) throws(PrefsError) {
            try changes.stageRaw(value, forKey: name)
        }

        /// The names of every stored value, including this transaction's staged writes.
        public func storedKeys() throws(PrefsError) -> [String] {
            var names = Set(try PrefsError.converting { try backend.allValues() }.keys)
            for (name, change) in changes.values {
                switch change {
                case .set: names.insert(name)
                case .remove: names.remove(name)
                }
            }
            return names.sorted()
        }
    }

    /// Runs `body` as one atomic transaction; see ``Transaction``.
    ///
    /// Throws ``PrefsError`` for the store's own failures (a server's among them), and what `body` throws, unchanged.
    /// Untyped for that reason: a typed `throws` would have to wrap one of the two in an enum every caller unwraps, and
    /// a body that throws only through the transaction (`t.set`, `t.value`) throws ``PrefsError`` anyway.
    @discardableResult
    public func transaction<Result>(_ body: (inout Transaction) throws -> Result) throws -> Result {
        try runTransaction(operation: "transaction(_:)", body)
    }

    /// `operation` names the public call, for the error when it is made from inside a transaction body.
    ///
    /// A backend that validates at commit (PostgreSQL) may find that what the body read has changed: the body then runs
    /// again, with fresh reads, until it commits or the backend gives up with its own error.
    /// `readsOneKey`: `body` reads one key only (see ``StoreBackend/beginSingleKeyTransaction()``).
    private func runTransaction<Result>(
        operation: String, readsOneKey: Bool = false, _ body: (inout Transaction) throws -> Result
    ) throws -> Result {
        // What to tell observers once the lock is released. Kept here rather than returned with the result: a tuple
        // of the generic `Result` has its metadata made at run time, at every call.
        var changed: Changeset?, silenced: Changeset?, tellsObservers = true
        let result = try io.withBackend(operation) { backend throws -> Result in
            let validates = backend.validatesTransactionsAtCommit
            while true {
                let external = validates ? false : try PrefsError.converting { try backend.refresh() }
                try PrefsError.converting { try readsOneKey ? backend.beginSingleKeyTransaction() : backend.beginTransaction() }
                var transaction = Transaction(backend: backend, store: self)
                let result: Result
                do {
                    result = try body(&transaction)
                    if let failure = transaction.failure { throw failure }
                    try Self.commitTransaction(transaction.changes, through: backend)
                } catch is BackendTransactionConflict {
                    backend.rollbackTransaction()
                    invalidateCache()
                    continue
                } catch {
                    backend.rollbackTransaction()
                    if external { invalidateCache() }
                    // A commit whose outcome is unknown may have been applied: read these keys afresh.
                    invalidateCachedValues(forKeys: transaction.changes.values.keys)
                    throw error
                }
                let changes = transaction.changes
                let (observed, quiet) = state.withLock { state in
                    if external { state.cache.invalidateAll() }
                    state.cacheCommitted(changes, by: backend)
                    return (!state.observers.isEmpty, state.observers.hasNoOneToTell)
                }
                // No one to tell: the lock is not taken again to find so (one added since is told of later changes).
                tellsObservers = !quiet
                silenced = observed && !notifiesObservers ? changes : nil
                // nil: anything may have changed (another process wrote); tell every observer.
                if observed { deliverInOrder(external ? nil : changes, silencing: silenced) }
                changed = external ? nil : changes
                return result
            }
        }
        if tellsObservers { notifyObservers(of: changed, silencing: silenced) }
        return result
    }

    /// Commits a transaction's changes, throwing the backend's failures as ``PrefsError`` and its conflict (the body
    /// runs again) as it is.
    private static func commitTransaction(_ changes: Changeset, through backend: any StoreBackend) throws {
        do {
            try backend.commitTransaction(changes)
        } catch let conflict as BackendTransactionConflict {
            throw conflict
        } catch {
            throw PrefsError(error)
        }
    }

    /// Reads, changes and writes one key atomically: `try prefs.update(.launchCount) { $0 += 1 }`.
    /// Across threads, and across processes for file stores (except a JSON store's coalesced mode, where it is atomic within the process).
    ///
    /// Throws ``PrefsError`` for the store's own failures, and what `body` throws, unchanged (so untyped, as
    /// ``transaction(_:)``).
    @discardableResult
    public func update<Value: PrefsStorable, Result>(_ key: Key<Value>, _ body: (inout Value) throws -> Result) throws -> Result {
        try runTransaction(operation: "update(_:_:)", readsOneKey: true) { transaction in
            var value = try transaction.value(for: key)
            let result = try body(&value)
            try transaction.set(value, for: key)
            return result
        }
    }

    /// Writes many values in one transaction (SQLite) or one file replace (JSON). Same as ``transaction(_:)``, and
    /// throws as it does.
    public func batch(_ body: (inout Transaction) throws -> Void) throws {
        try runTransaction(operation: "batch(_:)", body)
    }

    func invalidateCache() {
        state.withLock { state in
            state.cache.invalidateAll()
        }
    }

    /// Drops `keys` from the cache, so that their next read asks the backend.
    func invalidateCachedValues(forKeys keys: some Sequence<String>) {
        state.withLock { state in
            state.cache.invalidate(keys)
        }
    }
}
