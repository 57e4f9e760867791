import Foundation
internal import PrefsJSON
import PrefsSupport

extension Prefs {
    /// Writes `value` for `key`; `nil` for an optional key removes the stored value.
    /// When this returns, the value is as durable as the storage promises.
    ///
    /// The write removes any value still stored under the key's former names in the same step, so an old value
    /// never comes back after the key is removed or reset.
    ///
    /// Setting `nil` for an optional key removes the value, so the key reads its initial value again (as Defaults does);
    /// ``storeNil(for:)`` stores `nil` itself (as `@AppStorage` does), for a key whose initial value is not `nil`.
    public func set<Value: PrefsStorable>(_ value: Value, for key: Key<Value>) throws(PrefsError) {
        try commitWrite(Self.change(for: value, key: key.name), for: key, operation: "set(_:for:)")
    }

    /// Stores `nil` for an optional key: it reads `nil`, not its initial value, until it is set or reset.
    ///
    /// `set(nil, for:)` and `prefs[key] = nil` remove the stored value instead, so the key reads its initial value
    /// again (Defaults' meaning); this is the other meaning (`@AppStorage`'s and swift-sharing's), for a key whose
    /// initial value is not `nil`:
    ///
    /// ```swift
    /// extension Prefs.Keys { static let nickname = Key<String?>("nickname", initial: "Ada") }
    /// try prefs.set(nil, for: .nickname)    // removed: reads "Ada"
    /// try prefs.storeNil(for: .nickname)    // reads nil, and isStored(.nickname) is true
    /// ```
    ///
    /// The stored form is a JSON `null` of type `json`, which earlier releases read as `nil` too.
    public func storeNil<Wrapped: PrefsStorable>(for key: Key<Wrapped?>) throws(PrefsError) {
        try commitWrite(.set(.explicitNil), for: key, operation: "storeNil(for:)")
    }

    /// Writes `change` under `key`'s name, removing its former names' values and recording its declaration in the
    /// same step when this process has not yet. `operation` names the public call.
    private func commitWrite(_ change: Changeset.Change, for key: Keys, operation: String) throws(PrefsError) {
        let cacheName = CacheName(key)
        var changes = Changeset()
        changes.values.insert(change, for: cacheName)
        for former in key.formerNames { changes.values[former] = .remove }
        let (isDeclared, epoch) = state.withLock { ($0.isDeclared(cacheName), $0.declarationEpoch) }
        if !isDeclared {
            // The first write of a key in this process records its declaration in the same step: when it differs from
            // the recorded one, or always where the backend records only what differs. When the recorded declaration
            // cannot be read, recording it again is harmless.
            let recorded: KeyDeclaration??
            do {
                recorded = try io.withBackend { backend throws -> KeyDeclaration?? in
                    backend.recordsOnlyChangedDeclarations ? .none : .some(try backend.declaration(forKey: key.name))
                }
            } catch {
                recorded = .none
            }
            let declaration = key.declaration
            if recorded != .some(declaration) { changes.declarations[key.name] = declaration }
            state.withLock { $0.noteDeclared(cacheName) }
        }
        // The written value is not cached as given: the next read decodes what was stored, so it reads exactly what
        // another process or the next launch reads (a URL relative to a base comes back in its absolute form).
        try commit(changes, declaring: (cacheName, epoch), operation: operation)
    }

    /// Removes the stored values of `keys` (and of their former names), so they read their initial values.
    public func reset(_ keys: Keys...) throws(PrefsError) {
        try reset(keys)
    }

    /// Removes the stored values of `keys` (and of their former names).
    public func reset(_ keys: [Keys]) throws(PrefsError) {
        var changes = Changeset()
        for key in keys {
            changes.values[key.name] = .remove
            for former in key.formerNames { changes.values[former] = .remove }
        }
        try commit(changes)
    }

    /// Removes every stored value except those of `kept`: every key reads its initial value again.
    /// A kept key whose value is still stored under a former name keeps it, moved to the key's name.
    public func resetAll(keeping kept: [Keys] = []) throws(PrefsError) {
        let keep = Set(kept.map(\.name))
        // The body throws only the transaction's own errors: nothing of an app's passes through here.
        try PrefsError.converting {
            try transaction { transaction in
                for key in kept where try transaction.storedValue(forKey: key.name) == nil {
                    if let former = try transaction.formerValue(of: key) { transaction.changes.values[key.name] = .set(former) }
                }
                for name in try transaction.storedKeys() where !keep.contains(name) {
                    transaction.changes.values[name] = .remove
                }
            }
        }
    }

    /// The change that writes `value`: a set, or a removal for `nil`. Checks the size limit.
    package static func change<Value: PrefsStorable>(for value: Value, key: String) throws(PrefsError) -> Changeset.Change {
        var stored: StoredValue
        do {
            stored = try value.storedValue()
        } catch {
            throw PrefsError.encodingFailed(key: key, reason: encodingFailureReason(error))
        }
        if stored.isNil { return .remove }
        // A `json` value (a Codable, a StoredValue) keeps the type its form names. A match, not `!=`: no copies of
        // the types for every value written.
        switch Value.valueType {
        case .json: break
        case let type: stored.type = type
        }
        try Self.checkLimits(stored, key: key)
        return .set(stored)
    }

    /// Refuses a value over ``maximumValueBytes`` or ``maximumValueDepth``. Depth is checked first, so a value built in
    /// code with any nesting is refused before anything walks it recursively.
    package static func checkLimits(_ stored: StoredValue, key: String) throws(PrefsError) {
        // A type nested deeper than its value may be (an empty array) would be written, but not read back as that type.
        if stored.type.nests(deeperThan: maximumValueDepth) { throw .valueTooDeep(key: key, limit: maximumValueDepth) }
        let bytes: Int
        switch stored.form {
        case .text(let text):
            // Encoded text is measured as it is, and its depth counted on its bytes: no tree is built, unless a long
            // integer may be out of the range every store reads back (then the text is parsed, as before it was kept).
            let shape = JSON.shape(ofText: text)
            if shape.depth > maximumValueDepth { throw .valueTooDeep(key: key, limit: maximumValueDepth) }
            if shape.hasLongInteger {
                do { _ = try JSON.parse(text) } catch { throw .encodingFailed(key: key, reason: "\(error)") }
            }
            bytes = text.utf8.count
        case .tree(let json):
            switch json {
            case .null, .bool, .int, .double: return
            case .string(let text): bytes = text.utf8.count
            case .array, .object:
                if json.nests(deeperThan: maximumValueDepth) { throw .valueTooDeep(key: key, limit: maximumValueDepth) }
                bytes = json.serializedData().count
            }
        }
        if bytes > maximumValueBytes { throw .valueTooLarge(key: key, bytes: bytes, limit: maximumValueBytes) }
    }

    /// Applies `changes` through the backend, then updates the cache and tells observers.
    /// `operation` names the public call, for the error when it is made from inside a transaction body.
    /// `declaring`: a key whose declaration is recorded once this commits, and the declaration epoch it was checked at.
    func commit(_ changes: Changeset, declaring: (name: CacheName, epoch: UInt64)? = nil, operation: String = #function) throws(PrefsError) {
        guard !changes.isEmpty else { return }
        // A store waiting to open retries on writes too, as on reads (at most once a retry interval).
        if deferred != nil, let freshness, freshness.isExpired { refreshIfStale() }
        let (flushInterval, silenced, tellsObservers) = try PrefsError.converting {
            try io.withBackend(operation) { backend throws -> (Duration?, Changeset?, Bool) in
                do {
                    try backend.apply(changes)
                } catch {
                    // The write may have been applied (a server's commit whose answer was lost): the next read of
                    // these keys asks the backend instead of serving what the cache held before.
                    invalidateCachedValues(forKeys: changes.values.keys)
                    throw error
                }
                let (observed, quiet) = state.withLock { state in
                    state.cacheCommitted(changes, by: backend, declaring: declaring)
                    return (!state.observers.isEmpty, state.observers.hasNoOneToTell)
                }
                let silenced = observed && !notifiesObservers ? changes : nil
                if observed { deliverInOrder(changes, silencing: silenced) }
                return (backend.flushInterval, silenced, !quiet)
            }
        }
        if let flushInterval { scheduleFlush(after: flushInterval) }
        // No one to tell: the lock is not taken again to find so (one added since is told of later changes).
        if tellsObservers { notifyObservers(of: changes, silencing: silenced) }
    }
}

extension Changeset {
    /// Stages a raw write of `value` under `name` (`nil` removes), checking the name (any name other code may have
    /// written: ``KeyName/legacyProblem(with:)``) and the limits first.
    mutating func stageRaw(_ value: StoredValue?, forKey name: String) throws(PrefsError) {
        try KeyName.validateLegacy(name)
        if let value {
            try Prefs.checkLimits(value, key: name)
            values[name] = .set(value)
        } else {
            values[name] = .remove
        }
    }
}
