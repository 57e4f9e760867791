import Foundation
internal import PrefsJSON
import PrefsSupport

/// A typed, thread-safe preferences store on memory, a JSON file or SQLite.
///
/// ```swift
/// extension Prefs.Keys {
///     static let launchCount = Key<Int>("launchCount", initial: 0)
/// }
/// let prefs = try Prefs(.sqlite(url))
/// prefs[.launchCount]                         // 0, the initial value
/// try prefs.update(.launchCount) { $0 += 1 }  // atomic, even across processes
/// prefs.isStored(.launchCount)                // true
/// ```
///
/// Reads are served from an in-memory cache; writes go through the backend before they return
/// (except in a JSON store's coalesced mode). Other processes' writes are seen on ``refresh()``, and by
/// themselves every `pollInterval` while anything observes the store.
public final class Prefs: Sendable {
    /// The largest JSON form a single value may have, in bytes (1 MiB). Preferences are small; larger data belongs in files.
    public static let maximumValueBytes = 1 << 20

    /// How deeply a single value's JSON form may nest arrays and objects (128 levels; a scalar is 0, `[1]` is 1).
    /// The stores' own files wrap each value in a few levels more, and their loaders read at most 256, so every value
    /// the store accepts can be read back.
    public static let maximumValueDepth = 128

    /// Where this store keeps its values.
    public let storage: Storage
    let pollInterval: Duration
    let onDiagnostic: (@Sendable (Diagnostic) -> Void)?
    /// The backend's bound on how old a cached value may be (PostgreSQL), checked before each cached read; nil for
    /// the stores that only this machine writes.
    let freshness: BackendFreshness?

    /// The backend, used by one thread at a time. Lock order: `io` before `state`, never the reverse.
    let io: BackendLock
    let state: Locked<State>
    /// The serial queue of ``write(_:for:)``: writes that must not block their caller, in call order.
    let writer = DispatchQueue(label: "Prefs.writer")
    /// Where the ``ObservableValue``s not made on the main actor notify: one queue for the store, so that one
    /// `withObservationTracking` reading several of them gets its one `onChange` without two racing.
    let observationQueue = DispatchQueue(label: "Prefs.ObservableValue")

    struct State: ~Copyable {
        /// A cached key: its stored value (nil: nothing stored) and, once read through a typed key, the value decoded
        /// as that key's type, unless its slot keeps that value inline (``Slot/Inline``: strings and small trivial
        /// values). A class, so a cache hit copies one reference out of the lock. The decoded value is kept
        /// beside the stored one by its type's identity, so that a read needs neither a dynamic cast nor any generic type's
        /// metadata beyond its value type's (a generic box's, or an `Optional`'s, is a lookup in the runtime's metadata
        /// cache on every read of a caller the compiler did not specialize), nor another object to reach.
        final class Entry: @unchecked Sendable {
            // @unchecked Sendable: immutable; `decoded` holds one value of a Sendable type, written once by `init`.
            let stored: StoredValue?
            /// The decoded value's type, and the value in memory of its own (nil: not decoded).
            private let decodedType: Any.Type?
            private let decoded: UnsafeMutableRawPointer?

            init(_ stored: StoredValue?) {
                self.stored = stored
                decodedType = nil
                decoded = nil
            }

            init<Value: Sendable>(_ stored: StoredValue, decoded value: Value) {
                self.stored = stored
                decodedType = Value.self
                let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
                typed.initialize(to: value)
                decoded = UnsafeMutableRawPointer(typed)
            }

            deinit {
                guard let decoded, let decodedType else { return }
                func destroy<Value>(_: Value.Type) {
                    let typed = decoded.assumingMemoryBound(to: Value.self)
                    typed.deinitialize(count: 1)
                    typed.deallocate()
                }
                destroy(decodedType)
            }

            static let absent = Entry(nil)
            static func stored(_ value: StoredValue) -> Entry {
                Entry(value)
            }

            /// Whether the value was decoded as a `Value`: one comparison of type identities.
            @inline(__always)
            func holdsDecoded<Value>(_: Value.Type) -> Bool {
                guard let decodedType else { return false }
                return ObjectIdentifier(decodedType) == ObjectIdentifier(Value.self)
            }

            /// The decoded value; ``holdsDecoded(_:)`` must have said it is a `Value`.
            @inline(__always)
            func decodedValue<Value>(as _: Value.Type) -> Value {
                decoded.unsafelyUnwrapped.assumingMemoryBound(to: Value.self).pointee
            }
        }
        /// A key's place in the cache: its entry, and whether its declaration is known to be recorded (as
        /// ``declared`` says, kept beside the entry so that a set of a cached key looks its name up once, not twice;
        /// false says nothing, and `declared` is then asked).
        ///
        /// A decoded `String`, or a decoded value of a trivial type of at most 8 bytes (`Bool`, `Int`, `Double`, `Date`,
        /// a plain enum), is kept in the slot itself (``Inline``): a read copies it out of the lock without touching the
        /// entry. Other decoded values live in the entry.
        struct Slot {
            var entry: Entry
            var inline = Inline.none
            var declared = false

            /// A decoded value kept in the slot, decoded from ``entry``'s stored value.
            enum Inline {
                case none
                /// A trivial value's bits and its type's identity.
                case bits(UInt64, ObjectIdentifier)
                case string(String)
            }

            init(entry: Entry, declared: Bool = false) {
                self.entry = entry
                self.declared = declared
            }

            /// Puts `entry` in the slot, forgetting the inline value decoded from the one before.
            mutating func replaceEntry(_ entry: Entry) {
                self.entry = entry
                inline = .none
            }

            /// Whether a `Value` is kept inline: `String`, or a trivial type of at most 8 bytes.
            @inline(__always)
            static func holdsInline<Value>(_: Value.Type) -> Bool {
                if ObjectIdentifier(Value.self) == ObjectIdentifier(String.self) { return true }
                return _isPOD(Value.self) && MemoryLayout<Value>.size <= 8 && MemoryLayout<Value>.alignment <= 8
            }

            /// Keeps `value`, which ``holdsInline(_:)`` accepts, in the slot.
            mutating func keepInline<Value>(_ value: Value) {
                if let string = value as? String {
                    inline = .string(string)
                    return
                }
                var bits: UInt64 = 0
                withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: value, as: Value.self) }
                inline = .bits(bits, ObjectIdentifier(Value.self))
            }

            /// The value in `bits`, kept by ``keepInline(_:)`` for a `Value`: a bit cast of as many bytes as `Value`
            /// has (a closure over the bytes costs some 80 instructions in a caller the compiler did not specialize).
            @inline(__always)
            static func inlineValue<Value>(_ bits: UInt64, as _: Value.Type) -> Value {
                switch MemoryLayout<Value>.size {
                case 8: unsafeBitCast(bits, to: Value.self)
                case 4: unsafeBitCast(UInt32(truncatingIfNeeded: bits), to: Value.self)
                case 2: unsafeBitCast(UInt16(truncatingIfNeeded: bits), to: Value.self)
                case 1: unsafeBitCast(UInt8(truncatingIfNeeded: bits), to: Value.self)
                default: withUnsafeBytes(of: bits) { $0.load(as: Value.self) }
                }
            }
        }

        /// What a cached read takes out of the lock: an inline value (a string retained), or the entry (one reference).
        /// A read compares the type it wants with what the hit holds itself, without an `Optional` of its generic
        /// value type (whose metadata would be looked up on every read of a caller the compiler did not specialize).
        enum Hit {
            case bits(UInt64, ObjectIdentifier)
            case string(String)
            /// Nothing is stored: the key reads its initial value (told by the entry's identity, without reaching it).
            case absent
            case entry(Entry)
        }

        /// The cache's answer for `name`, nil when it has none.
        @inline(__always)
        func hit(_ name: CacheName) -> Hit? {
            guard let slot = cache[name] else { return nil }
            switch slot.inline {
            case .none: return slot.entry === Entry.absent ? .absent : .entry(slot.entry)
            case .bits(let bits, let type): return .bits(bits, type)
            case .string(let string): return .string(string)
            }
        }
        var cache = CacheTable()
        /// Bumped by every change to the cache; a read that raced with a write does not fill the cache.
        var generation: UInt64 = 0
        /// Keys whose declaration this process has checked or recorded. A cache slot may say so too.
        var declared: Set<String> = []
        /// Bumped when declarations are removed, so that a set that checked its key's declaration before the removal
        /// does not mark its cache entry declared after it.
        var declarationEpoch: UInt64 = 0
        /// Keys this process declared or observed in this store, by name: their initial values are what code that
        /// reads by name (UserDefaults' API) sees while nothing is stored. The last key told of a name wins.
        var knownKeys: [String: Keys] = [:]
        var observers: [ObjectIdentifier: Observer] = [:]
        /// While something observes the store, the generation of the running poll (a new one on each start).
        var polling: UInt64?
        var pollGeneration: UInt64 = 0
        var flushScheduled = false
        /// Whether the store joined ``ExitFlush`` (its first scheduled flush), so that its release leaves it.
        var joinedExitFlush = false
        var closed = false
        var diagnostics: [Diagnostic] = []
        /// The last poll's failure, reported once until a poll succeeds or fails differently.
        var lastPollFailure: String?
        /// Poll ticks run so far (for tests that need several polls to have happened).
        var pollTicks = 0
        var reportedMismatches: Set<ValueMismatch> = []

        /// Puts what a commit wrote into the cache (a new generation, so no read that raced with it caches older data).
        /// `declaring`: a key whose declaration is now known to be recorded (the one a ``Prefs/set(_:for:)`` wrote),
        /// with the ``declarationEpoch`` at which that was checked.
        mutating func cacheCommitted(_ changes: Changeset, declaring: (name: CacheName, epoch: UInt64)? = nil) {
            generation &+= 1
            let declaredName = declaring?.epoch == declarationEpoch ? declaring?.name : nil
            if changes.values.count > 1 { cache.reserveCapacity(cache.count + changes.values.count) }  // one table, not a doubling per key
            for (name, change) in changes.values {
                let entry: Entry
                switch change {
                case .set(let value): entry = .stored(value)
                case .remove: entry = .absent
                }
                if let declaredName, declaredName.name == name {
                    cache[declaredName] = Slot(entry: entry, declared: true)  // the key's own hash, kept: no hashing
                } else {
                    cache(entry, for: name)
                }
            }
        }

        /// Whether `name`'s declaration is known to be recorded: one lookup when its cache slot says so.
        func isDeclared(_ name: CacheName) -> Bool {
            cache[name]?.declared == true || declared.contains(name.name)
        }

        /// Caches `entry` for `name`, keeping what the slot knew of its declaration (and nothing of its inline value).
        mutating func cache(_ entry: Entry, for name: String) {
            cache.update(CacheName(name), default: Slot(entry: entry)) { $0.replaceEntry(entry) }
        }
    }

    /// Opens a store.
    ///
    /// - Parameters:
    ///   - storage: where values live, e.g. `.sqlite(url)`, `.jsonFile(url)`, `.memory`.
    ///   - pollInterval: how often the store looks for other processes' writes while something observes it.
    ///   - onDiagnostic: called for each ``Diagnostic``, on the thread that noticed it.
    public init(
        _ storage: Storage,
        pollInterval: Duration = .milliseconds(250),
        onDiagnostic: (@Sendable (Diagnostic) -> Void)? = nil
    ) throws {
        self.storage = storage
        self.pollInterval = pollInterval
        self.onDiagnostic = onDiagnostic
        let backend = try storage.makeBackend()
        freshness = backend.freshness
        io = BackendLock(backend, storage: storage)
        state = Locked(State())
        for kind in backend.openingReport + backend.takeReports() {
            report(Diagnostic(key: nil, kind: kind, store: storage.description))
        }
        let description = storage.description
        io.reportDiagnostics { [weak self] kinds in
            for kind in kinds { self?.report(Diagnostic(key: nil, kind: kind, store: description)) }
        }
    }

    deinit {
        finishObservers()
        if state.withLock({ $0.joinedExitFlush }) { ExitFlush.forget(ObjectIdentifier(self)) }
        do {
            try io.close { backend in try backend.flush() }
        } catch {
            report(Diagnostic(key: nil, kind: .writeFailed(error, during: "flush on release"), store: storage.description))
        }
    }

    // MARK: - Reading

    /// The value for `key`: the stored value, or the initial value when nothing readable is stored.
    /// Setting writes through the backend; a failure is reported as a ``Diagnostic`` (use ``set(_:for:)-(_,Prefs.Key<Value>)`` to catch it).
    public subscript<Value>(key: Key<Value>) -> Value {
        get {
            if let freshness, freshness.isExpired { refreshIfStale() }
            switch state.withLock({ $0.hit(CacheName(key)) }) {  // the hot path: one lock, no hashing
            case .bits(let bits, let type)?:
                if type == ObjectIdentifier(Value.self) { return State.Slot.inlineValue(bits, as: Value.self) }
            case .string(let string)?:
                if ObjectIdentifier(Value.self) == ObjectIdentifier(String.self) { return unsafeBitCast(string, to: Value.self) }
            case .absent?:
                return key.initial
            case .entry(let entry)?:
                if entry.holdsDecoded(Value.self) { return entry.decodedValue(as: Value.self) }
                if entry.stored == nil { return key.initial }
            case nil: break
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
    private func uncachedValue<Value>(for key: Key<Value>) -> Value {
        lookup(key).value
    }

    /// Reads `key`, telling a stored value apart from the initial value.
    public func lookup<Value>(_ key: Key<Value>) -> Lookup<Value> {
        // The hot path: one lock, no hashing (the key's name's hash is kept), one reference copied out.
        if let freshness, freshness.isExpired { refreshIfStale() }
        switch state.withLock({ $0.hit(CacheName(key)) }) {
        case .bits(let bits, let type)? where type == ObjectIdentifier(Value.self):
            return .stored(State.Slot.inlineValue(bits, as: Value.self))
        case .string(let string)? where ObjectIdentifier(Value.self) == ObjectIdentifier(String.self):
            return .stored(unsafeBitCast(string, to: Value.self))
        case .entry(let entry)? where entry.holdsDecoded(Value.self):
            return .stored(entry.decodedValue(as: Value.self))
        case .absent?:
            return .initial(key.initial)
        default: break
        }
        let entry = cachedEntry(for: key)
        guard let stored = entry.stored else { return .initial(key.initial) }
        if entry.holdsDecoded(Value.self) { return .stored(entry.decodedValue(as: Value.self)) }
        do {
            let value = try stored.decode(Value.self)
            let inline = State.Slot.holdsInline(Value.self)
            let decodedEntry = inline ? entry : State.Entry(stored, decoded: value)
            state.withLock { state in
                let name = CacheName(key)
                guard state.cache[name]?.entry === entry else { return }  // a write or a refresh came first
                state.cache.update(name) { slot in
                    if inline { slot.keepInline(value) } else { slot.entry = decodedEntry }
                }
            }
            return .stored(value)
        } catch {
            reportMismatch(error, key: key.name)
            return .unreadable(initial: key.initial, error)
        }
    }

    /// Whether a value is stored under `key`'s name (readable or not).
    public func isStored(_ key: Keys) -> Bool {
        cachedEntry(for: key).stored != nil
    }

    /// The entry for a key from the cache, or loaded (moving a value found under a former name).
    func cachedEntry(for key: Keys) -> State.Entry {
        if let freshness, freshness.isExpired { refreshIfStale() }
        if let hit = state.withLock({ $0.cache[CacheName(key)]?.entry }) { return hit }
        return loadEntry(for: key)
    }

    /// Loads a key from the backend (under a former name while its own name holds none) and caches it unless a write
    /// raced with the load. A read never writes: a value under a former name moves to the key's name with the key's
    /// next write. Called from inside a transaction body of this store, it reads with the backend the transaction holds
    /// (the committed state, without the transaction's staged writes).
    private func loadEntry(for key: Keys) -> State.Entry {
        let generation = state.withLock { $0.generation }
        var entry: State.Entry = .absent
        do {
            entry = try io.withBackendAllowingReentry { backend throws -> State.Entry in
                if let stored = try backend.value(forKey: key.name) { return .stored(stored) }
                return try Self.formerValue(key.formerNames, in: backend).map { .stored($0) } ?? .absent
            }
        } catch PrefsError.closed {
            return .absent  // a closed store reads initial values
        } catch {
            report(Diagnostic(key: key.name, kind: .refreshFailed(error, during: nil), store: storage.description))
            return .absent
        }
        state.withLock { state in
            if state.generation == generation, !state.closed { state.cache(entry, for: key.name) }
        }
        return entry
    }

    /// The value stored under the first of `formerNames` that holds one (the list is read in order, so list the most
    /// recent name first).
    static func formerValue(_ formerNames: [String], in backend: any PrefsBackend) throws -> StoredValue? {
        for former in formerNames {
            if let value = try backend.value(forKey: former) { return value }
        }
        return nil
    }

    // MARK: - Writing

    /// Writes `value` for `key`; `nil` for an optional key removes the stored value.
    /// When this returns, the value is as durable as the storage promises.
    ///
    /// The write removes any value still stored under the key's former names in the same step, so an old value
    /// never comes back after the key is removed or reset.
    ///
    /// Setting `nil` for an optional key removes the value, so the key reads its initial value again (as Defaults does);
    /// ``storeNil(for:)`` stores `nil` itself (as `@AppStorage` does), for a key whose initial value is not `nil`.
    public func set<Value>(_ value: Value, for key: Key<Value>) throws {
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
    public func storeNil<Wrapped>(for key: Key<Wrapped?>) throws {
        try commitWrite(.set(.explicitNil), for: key, operation: "storeNil(for:)")
    }

    /// Writes `change` under `key`'s name, removing its former names' values and recording its declaration in the
    /// same step when this process has not yet. `operation` names the public call.
    private func commitWrite(_ change: Changeset.Change, for key: Keys, operation: String) throws {
        var changes = Changeset()
        changes.values[key.name] = change
        for former in key.formerNames { changes.values[former] = .remove }
        let cacheName = CacheName(key)
        let (isDeclared, epoch) = state.withLock { ($0.isDeclared(cacheName), $0.declarationEpoch) }
        if !isDeclared {
            // The first write of a key in this process records its declaration in the same step.
            // When the recorded declaration cannot be read, recording it again is harmless.
            let recorded: KeyDeclaration?? = try? recordedDeclaration(for: key.name)
            if recorded != .some(key.declaration) { changes.declarations[key.name] = key.declaration }
            state.withLock { _ = $0.declared.insert(key.name) }
        }
        // The written value is not cached as given: the next read decodes what was stored, so it reads exactly what
        // another process or the next launch reads (a URL relative to a base comes back in its absolute form).
        try commit(changes, declaring: (cacheName, epoch), operation: operation)
    }

    /// Removes the stored values of `keys` (and of their former names), so they read their initial values.
    public func reset(_ keys: Keys...) throws {
        try reset(keys)
    }

    /// Removes the stored values of `keys` (and of their former names).
    public func reset(_ keys: [Keys]) throws {
        var changes = Changeset()
        for key in keys {
            changes.values[key.name] = .remove
            for former in key.formerNames { changes.values[former] = .remove }
        }
        try commit(changes)
    }

    /// Removes every stored value except those of `kept`: every key reads its initial value again.
    /// A kept key whose value is still stored under a former name keeps it, moved to the key's name.
    public func resetAll(keeping kept: [Keys] = []) throws {
        let keep = Set(kept.map(\.name))
        try transaction { transaction in
            for key in kept where try transaction.storedValue(forKey: key.name) == nil {
                if let former = try transaction.formerValue(of: key) { transaction.changes.values[key.name] = .set(former) }
            }
            for name in try transaction.storedKeys() where !keep.contains(name) {
                transaction.changes.values[name] = .remove
            }
        }
    }

    /// The change that writes `value`: a set, or a removal for `nil`. Checks the size limit.
    package static func change<Value: PrefsStorable>(for value: Value, key: String) throws -> Changeset.Change {
        var stored: StoredValue
        do {
            stored = try value.storedValue()
        } catch {
            throw PrefsError.encodingFailed(key: key, reason: encodingFailureReason(error))
        }
        if stored.isNil { return .remove }
        let type = Value.valueType
        if type != .json { stored.type = type }  // a `json` value (a Codable, a StoredValue) keeps the type its form names
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
    func commit(_ changes: Changeset, declaring: (name: CacheName, epoch: UInt64)? = nil, operation: String = #function) throws {
        guard !changes.isEmpty else { return }
        let (flushInterval, silenced) = try io.withBackend(operation) { backend throws -> (Duration?, Changeset?) in
            do {
                try backend.apply(changes)
            } catch {
                // The write may have been applied (a server's commit whose answer was lost): the next read of
                // these keys asks the backend instead of serving what the cache held before.
                invalidateCachedValues(forKeys: changes.values.keys)
                throw error
            }
            let observed = state.withLock { state in
                state.cacheCommitted(changes, declaring: declaring)
                return !state.observers.isEmpty
            }
            let silenced = observed && !notifiesObservers ? changes : nil
            if observed { deliverInOrder(changes, silencing: silenced) }
            return (backend.flushInterval, silenced)
        }
        if let flushInterval { scheduleFlush(after: flushInterval) }
        notifyObservers(of: changes, silencing: silenced)
    }

    // MARK: - Diagnostics

    /// The diagnostics reported so far (the most recent 256).
    public var diagnostics: [Diagnostic] {
        state.withLock { $0.diagnostics }
    }

    /// Records a diagnostic and calls `onDiagnostic` with it: at once, or, when this thread holds one of the store's
    /// locks (inside a transaction, or delivering to an observer), as soon as it releases it, so a handler may call the store.
    package func report(_ diagnostic: Diagnostic) {
        state.withLock { state in
            state.diagnostics.append(diagnostic)
            if state.diagnostics.count > 256 { state.diagnostics.removeFirst(state.diagnostics.count - 256) }
        }
        guard let onDiagnostic else { return }
        UserCallbacks.run { onDiagnostic(diagnostic) }
    }

    /// Reports a write that could not throw to its caller, for code built on the store (DialogGate).
    package func reportWriteFailure(_ error: any Error, key: String?) {
        report(Diagnostic(key: key, kind: .writeFailed(error, during: nil), store: storage.description))
    }

    package func reportMismatch(_ mismatch: ValueMismatch, key: String) {
        let isNew = state.withLock { $0.reportedMismatches.insert(mismatch).inserted }
        if isNew { report(Diagnostic(key: key, kind: .typeMismatch(mismatch), store: storage.description)) }
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

/// A name in the store's cache (``CacheTable``), with its hash computed once: a typed key's when it is declared
/// (``Prefs/Keys``), so that a cache hit hashes nothing; any other name's when it is made. The hash is the name's own
/// `hashValue` (SipHash, seeded per process), so a file full of names chosen to collide gains nothing it would not gain
/// against `[String: …]`.
struct CacheName {
    let name: String
    let hash: Int

    init(_ name: String) {
        self.name = name
        hash = name.hashValue
    }

    init(_ key: Prefs.Keys) {
        name = key.name
        hash = key.nameHash
    }

    /// A name with a hash of the caller's choosing (tests that make names collide).
    init(_ name: String, hash: Int) {
        self.name = name
        self.hash = hash
    }
}
