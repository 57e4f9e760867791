import Foundation
internal import PrefsJSON
import PrefsSupport

extension Prefs {
    /// The value for `key`: the stored value (read through the key's migration when it is in an older shape), or the
    /// initial value when nothing readable is stored. A launch argument that names the key (`-launchCount 5`) is read
    /// above both, for this process only (see <doc:LaunchArguments>).
    /// Setting writes through the backend; a failure is reported as a ``Diagnostic`` (use ``set(_:for:)-(_,Prefs.Key<Value>)`` to catch it).
    public subscript<Value: PrefsStorable>(key: Key<Value>) -> Value {
        get {
            if io.isSuspended { resumeForRead() }
            if let freshness, freshness.isExpired { refreshIfStale() }
            switch state.withLock({ $0.cache.hit(CacheName(key)) }) {  // the hot path: one lock, no hashing
            case .bits(let bits, let type)?:
                if type == ObjectIdentifier(Value.self) { return StoreCache.Slot.inlineValue(bits, as: Value.self) }
            case .string(var string)?:
                if ObjectIdentifier(Value.self) == ObjectIdentifier(String.self) { return StoreCache.Slot.stringValue(&string, as: Value.self) }
            case .absent?:
                return key.initial
            case .entry(let entry)?:
                if entry.holdsDecoded(Value.self) { return entry.decodedValue(as: Value.self) }
            case .undecoded?, nil: break
            }
            return uncachedValue(for: key)
        }
        set {
            do { try set(newValue, for: key) } catch {
                report(Diagnostic(key: key.name, kind: .writeFailed(error, during: nil), store: storage.description))
            }
        }
    }

    /// A read the cache could not answer, out of line: the metadata its `Lookup<Value>` needs would otherwise be
    /// looked up on every read, cache hits included.
    @inline(never)
    private func uncachedValue<Value: PrefsStorable>(for key: Key<Value>) -> Value {
        lookup(key).value
    }

    /// Reads `key`, telling a stored value apart from the initial value, and from a launch argument's value
    /// (``Lookup/argument(_:)``).
    ///
    /// ```swift
    /// if case .argument(let count) = prefs.lookup(.launchCount) { print("-launchCount \(count) from the scheme") }
    /// ```
    public func lookup<Value: PrefsStorable>(_ key: Key<Value>) -> Lookup<Value> {
        // The hot path: one lock, no hashing (the key's name's hash is kept), one reference copied out.
        if io.isSuspended { resumeForRead() }
        if let freshness, freshness.isExpired { refreshIfStale() }
        switch state.withLock({ $0.cache.hit(CacheName(key)) }) {
        case .bits(let bits, let type)? where type == ObjectIdentifier(Value.self):
            return .stored(StoreCache.Slot.inlineValue(bits, as: Value.self))
        case .string(var string)? where ObjectIdentifier(Value.self) == ObjectIdentifier(String.self):
            return .stored(StoreCache.Slot.stringValue(&string, as: Value.self))
        case .entry(let entry)? where entry.holdsDecoded(Value.self):
            let value = entry.decodedValue(as: Value.self)
            return entry.isArgument ? .argument(value) : .stored(value)
        case .absent?:
            return .initial(key.initial)
        default: break
        }
        let slot = cachedSlot(for: key)
        if case .entry(let entry) = slot.decoded, entry.holdsDecoded(Value.self) {
            let value = entry.decodedValue(as: Value.self)
            return entry.isArgument ? .argument(value) : .stored(value)
        }
        if let argument = argumentValue(for: key, slot: slot) { return .argument(argument) }
        guard let stored = slot.stored else { return .initial(key.initial) }
        do {
            let value = try key.decode(stored)
            let inline = StoreCache.Slot.holdsInline(Value.self)
            let decodedEntry = inline ? nil : StoreCache.Entry(decoded: value, stored: stored)
            state.withLock { state in
                let name = CacheName(key)
                guard let current = state.cache[name], Self.holdsSame(current, as: slot) else { return }  // a write or a refresh came first
                state.cache.update(name) { slot in
                    if let decodedEntry { slot.keep(decodedEntry) } else { slot.keepInline(value) }
                }
            }
            return .stored(value)
        } catch {
            reportMismatch(error, key: key.name)
            return .unreadable(initial: key.initial, error)
        }
    }

    /// Whether the cache's `current` slot still holds what a read found in `read` (so that what the read decoded may
    /// be kept in it): the same stored value (an equal one decodes alike), and no launch argument's value put there
    /// since (which reads above it).
    private static func holdsSame(_ current: borrowing StoreCache.Slot, as read: borrowing StoreCache.Slot) -> Bool {
        if case .entry(let entry) = current.decoded, entry.isArgument {
            guard case .entry(let readEntry) = read.decoded, readEntry === entry else { return false }
        }
        return current.argumentNamed == read.argumentNamed && current.stored == read.stored
    }

    /// The value of the launch argument that names `key` (see <doc:LaunchArguments>), when one does and it reads as a
    /// `Value`, cached in `slot`'s place so that the next read is a cache hit. Nil when none names it (one branch
    /// when the store reads no arguments), and when the argument does not read as a `Value`: that is reported once as
    /// ``Diagnostic/Kind/argumentIgnored(_:)``, and the key reads as without it.
    private func argumentValue<Value: PrefsStorable>(for key: Key<Value>, slot: StoreCache.Slot) -> Value? {
        guard let argument = state.withLock({ $0.arguments.isEmpty || $0.closed ? nil : $0.arguments[key.name] }) else { return nil }
        let value: Value
        do {
            value = try LaunchArguments.read(argument, as: Value.self).value
        } catch {
            reportIgnoredArgument(error, key: key.name)
            return nil
        }
        let argumentEntry = StoreCache.Entry(argument: value, stored: slot.stored)
        state.withLock { state in
            let name = CacheName(key)
            guard let current = state.cache[name], Self.holdsSame(current, as: slot) else { return }  // a write or a refresh came first
            state.cache.update(name) { $0.keep(argumentEntry) }
        }
        return value
    }

    /// Reports a launch argument that a key cannot read, once per key and type.
    func reportIgnoredArgument(_ mismatch: ValueMismatch, key: String) {
        let isNew = state.withLock { $0.reportedArguments.insert("\(key)\u{0}\(mismatch.expected)\u{0}\(mismatch.swiftType ?? "")").inserted }
        if isNew { report(Diagnostic(key: key, kind: .argumentIgnored(mismatch), store: storage.description)) }
    }

    /// Whether a value is stored under `key`'s name (readable or not). A launch argument does not count: ``lookup(_:)``
    /// tells a key that reads one (``Lookup/argument(_:)``).
    public func isStored(_ key: Keys) -> Bool {
        cachedSlot(for: key).holdsStored
    }

    /// The slot for a key from the cache, or loaded (moving a value found under a former name).
    func cachedSlot(for key: Keys) -> StoreCache.Slot {
        if io.isSuspended { resumeForRead() }
        if let freshness, freshness.isExpired { refreshIfStale() }
        if let hit = state.withLock({ $0.cache[CacheName(key)] }) { return hit }
        return loadSlot(for: key)
    }

    /// Loads a key from the backend (under a former name while its own name holds none) and caches it unless a write
    /// raced with the load. A read never writes: a value under a former name moves to the key's name with the key's
    /// next write. Called from inside a transaction body of this store, it reads with the backend the transaction holds
    /// (the committed state, without the transaction's staged writes).
    private func loadSlot(for key: Keys) -> StoreCache.Slot {
        let generation = state.withLock { $0.cache.generation }
        var stored: StoredValue?
        do {
            stored = try io.withBackendAllowingReentry { backend throws -> StoredValue? in
                if let stored = try backend.value(forKey: key.name) { return stored }
                return try Self.formerValue(key.formerNames, in: backend)
            }
        } catch PrefsError.closed {
            return StoreCache.Slot(stored: nil)  // a closed store reads initial values
        } catch {
            report(Diagnostic(key: key.name, kind: .refreshFailed(error, during: nil), store: storage.description))
            return StoreCache.Slot(stored: nil)
        }
        return state.withLock { state in
            guard state.cache.generation == generation, !state.closed else {
                let argumentNamed = StoreCache.argumentNames(key.name, stored: stored, arguments: state.closed ? [:] : state.arguments)
                return StoreCache.Slot(stored: stored, argumentNamed: argumentNamed)
            }
            return state.cache(stored, for: key.name)
        }
    }

    /// The value stored under the first of `formerNames` that holds one (the list is read in order, so list the most
    /// recent name first).
    static func formerValue(_ formerNames: [String], in backend: any StoreBackend) throws -> StoredValue? {
        for former in formerNames {
            if let value = try backend.value(forKey: former) { return value }
        }
        return nil
    }
}
