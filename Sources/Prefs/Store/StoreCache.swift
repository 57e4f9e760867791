import Foundation
internal import PrefsJSON
import PrefsSupport

/// The store's cache, its fast path: what each key read last (``Slot``, and for some values an ``Entry``), found in
/// one probe of ``CacheTable`` by the key's kept hash, and the generation that tells a read that raced with a write not
/// to fill it.
///
/// It also keeps what the store knows of each name whether or not its value is loaded (the key declared or observed
/// under it, and whether its declaration is recorded): a slot with nothing loaded (``Slot/Content/unloaded``) is a miss.
///
/// A part of ``Prefs/State``: it lives under the store's one lock and takes no lock of its own. Its one job is to
/// answer a read it can (``hit(_:)``) and to take what commits, refreshes and loads give it; the store decides when.
///
/// Over a backend whose reads are one cheap lookup (SQLite), it keeps the loaded values within ``Limits``, dropping
/// cold ones (StoreCache+Limits.swift); what is known of a name is never dropped.
struct StoreCache: ~Copyable {
    /// A decoded value the slot does not keep inline (an array, a `Codable`, a trivial value whose stored form is not
    /// its type's own), or a launch argument's value (read above the stored one, ``Prefs/Lookup/argument(_:)``), with the
    /// stored value it was read beside. A class, so a cache hit copies one reference out of the lock. The value is kept
    /// by its type's identity, so that a read needs neither a dynamic cast nor any generic type's metadata beyond its
    /// value type's (a generic box's, or an `Optional`'s, is a lookup in the runtime's metadata cache on every read of a
    /// caller the compiler did not specialize), nor another object to reach.
    ///
    /// Only such values have one: a stored value, and a value kept inline, live in the slot itself (an object for
    /// every value took 80 bytes a key with malloc's overhead: 8 MB at 100,000 keys).
    final class Entry: @unchecked Sendable {
        // @unchecked Sendable: immutable; `decoded` holds one value of a Sendable type, written once by `init`.
        /// Whether the value is a launch argument's, read above the slot's stored value.
        let isArgument: Bool
        /// The stored value the entry was made beside (nil: nothing stored, and a launch argument names the key): the
        /// slot's stored value while it holds the entry.
        let stored: StoredValue?
        /// The value's type, and the value in memory of its own.
        private let decodedType: Any.Type
        private let decoded: UnsafeMutableRawPointer

        /// An entry for `value`, decoded from `stored`.
        init<Value: Sendable>(decoded value: Value, stored: StoredValue?) {
            decodedType = Value.self
            decoded = Self.allocate(value)
            isArgument = false
            self.stored = stored
        }

        /// An entry whose reads return `value`, a launch argument's, whatever the store holds (`stored`).
        init<Value: Sendable>(argument value: Value, stored: StoredValue?) {
            decodedType = Value.self
            decoded = Self.allocate(value)
            isArgument = true
            self.stored = stored
        }

        private static func allocate<Value>(_ value: Value) -> UnsafeMutableRawPointer {
            let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
            typed.initialize(to: value)
            return UnsafeMutableRawPointer(typed)
        }

        deinit {
            func destroy<Value>(_: Value.Type) {
                let typed = decoded.assumingMemoryBound(to: Value.self)
                typed.deinitialize(count: 1)
                typed.deallocate()
            }
            destroy(decodedType)
        }

        /// Whether the value is a `Value`: one comparison of type identities.
        @inline(__always)
        func holdsDecoded<Value>(_: Value.Type) -> Bool {
            ObjectIdentifier(decodedType) == ObjectIdentifier(Value.self)
        }

        /// The value; ``holdsDecoded(_:)`` must have said it is a `Value`.
        @inline(__always)
        func decodedValue<Value>(as _: Value.Type) -> Value {
            decoded.assumingMemoryBound(to: Value.self).pointee
        }
    }

    /// A key's place in the cache: its stored value (nil: nothing stored) or what a read decoded from it, or nothing
    /// loaded (``Content/unloaded``); and what the store knows of the name whether or not its value is loaded: the key
    /// this process declared or observed under it (``key``), and whether its declaration is known to be recorded
    /// (``declared``). One table for both, so that a name is held once (a table of what is known beside the cache took
    /// 40 bytes a bucket more: 5.2 MB at 100,000 keys), and a set looks its name up once.
    ///
    /// The slot holds one of the two, never both (``Content``): a decoded `String`, `Int`, `Bool`, `Double` or `Date`
    /// whose stored form is its type's own (what `StoredValue(value)` makes: any value such a key's `set` wrote) is
    /// kept in the slot itself, and its stored value is made again from it when asked (``stored``); any other decoded
    /// value is an ``Entry``, which keeps the stored value beside it. A slot is 40 bytes, a bucket 64 (a stored value
    /// beside a decoded one took 80 a bucket, and what is known of the name 40 more in a table of its own).
    struct Slot {
        private(set) var content: Content
        /// This process has checked or recorded the name's declaration.
        var declared = false
        /// Nothing is stored, and a launch argument names the key: a read looks past the absent value to it.
        var argumentNamed = false
        /// Read since the cache's eviction hand last passed it (``StoreCache/Limits``): it stays one more round. A value
        /// loaded or written and not read since is the first to go.
        var referenced = false
        /// The key this process declared or observed under the name: its initial value is what code that reads by
        /// name (UserDefaults' API) sees while nothing is stored. The last key told of a name wins.
        var key: Prefs.Keys?

        /// What a slot holds.
        enum Content {
            /// Nothing loaded: the slot only says what is known of the name, and a read asks the backend.
            case unloaded
            /// The stored value, not decoded yet (nil: nothing stored).
            case stored(StoredValue?)
            /// A decoded trivial value's bits and its type's identity; the stored value is its type's own form of it
            /// (``canonicalStored(_:_:)``).
            case bits(UInt64, ObjectIdentifier)
            /// A decoded `String`; the stored value is its `.string` form.
            case string(String)
            /// Any other decoded value, or a launch argument's, with the stored value.
            case entry(Entry)
        }

        /// What a read decoded, kept for the next read: the slot's content less the stored value.
        enum Decoded {
            case none
            /// A trivial value's bits and its type's identity.
            case bits(UInt64, ObjectIdentifier)
            case string(String)
            case entry(Entry)
        }

        init(stored: StoredValue?, argumentNamed: Bool = false, declared: Bool = false) {
            content = .stored(stored)
            self.argumentNamed = argumentNamed
            self.declared = declared
        }

        /// A slot with nothing loaded, for what is known of a name.
        init(key: Prefs.Keys?, declared: Bool) {
            content = .unloaded
            self.key = key
            self.declared = declared
        }

        /// Whether a value (or its absence) is loaded: a read may be answered from the slot.
        var isLoaded: Bool {
            if case .unloaded = content { return false }
            return true
        }

        /// Whether the slot says something of its name beside its value: removing it would forget that.
        var isKnown: Bool { declared || key != nil }

        /// Forgets the loaded value, keeping what is known of the name.
        mutating func unload() {
            content = .unloaded
            argumentNamed = false
            referenced = false
        }

        /// What a read decoded from the stored value (or a launch argument's value), if anything.
        var decoded: Decoded {
            switch content {
            case .unloaded, .stored: .none
            case .bits(let bits, let type): .bits(bits, type)
            case .string(let string): .string(string)
            case .entry(let entry): .entry(entry)
            }
        }

        /// The stored value (nil: nothing stored), as the store holds it: made again from a value kept inline.
        var stored: StoredValue? {
            switch content {
            case .unloaded: nil
            case .stored(let stored): stored
            case .bits(let bits, let type): Self.canonicalStored(bits, type)
            case .string(let string): StoredValue(type: .string, json: .string(string))
            case .entry(let entry): entry.stored
            }
        }

        /// Whether a value is stored (without making a kept value's stored form again).
        var holdsStored: Bool {
            switch content {
            case .unloaded: false
            case .stored(let stored): stored != nil
            case .bits, .string: true
            case .entry(let entry): entry.stored != nil
            }
        }

        /// Puts `stored` in the slot, forgetting what was decoded from the value before.
        mutating func replaceStored(_ stored: StoredValue?, argumentNamed: Bool) {
            content = .stored(stored)
            self.argumentNamed = argumentNamed
        }

        /// Keeps `entry`, made beside the slot's stored value (``Entry/stored``).
        mutating func keep(_ entry: Entry) {
            content = .entry(entry)
        }

        /// Whether a `Value` may be kept inline: `String`, or a trivial type of at most 8 bytes.
        @inline(__always)
        static func holdsInline<Value>(_: Value.Type) -> Bool {
            if ObjectIdentifier(Value.self) == ObjectIdentifier(String.self) { return true }
            return _isPOD(Value.self) && MemoryLayout<Value>.size <= 8 && MemoryLayout<Value>.alignment <= 8
        }

        /// Keeps `value`, which ``holdsInline(_:)`` accepts and which was decoded from the slot's stored value: inline
        /// when that stored value is the value's own form (``canonicalStored(_:_:)``), else in an ``Entry`` beside it.
        mutating func keepInline<Value: Sendable>(_ value: Value) {
            let stored = self.stored
            if let string = value as? String {
                if stored == StoredValue(type: .string, json: .string(string)) {
                    content = .string(string)
                } else {
                    content = .entry(Entry(decoded: string, stored: stored))
                }
                return
            }
            let bits = Self.bits(of: value)
            let type = ObjectIdentifier(Value.self)
            if let stored, let own = Self.canonicalStored(bits, type), own == stored {
                content = .bits(bits, type)
            } else {
                content = .entry(Entry(decoded: value, stored: stored))
            }
        }

        /// The stored form `StoredValue(value)` gives the value of type `type` in `bits`, for the types whose values
        /// are kept inline without their stored value (`Int`, `Bool`, `Double`, `Date`); nil for any other type.
        static func canonicalStored(_ bits: UInt64, _ type: ObjectIdentifier) -> StoredValue? {
            switch type {
            case ObjectIdentifier(Int.self): Int(bitPattern: UInt(bits)).storedValue()
            case ObjectIdentifier(Bool.self): (bits != 0).storedValue()
            case ObjectIdentifier(Double.self): Double(bitPattern: bits).storedValue()
            case ObjectIdentifier(Date.self):
                // A date outside ISO 8601's range has no stored form: such a value was read from an entry, not inline.
                try? Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)).storedValue()
            default: nil
            }
        }

        /// The bits of a trivial value of at most 8 bytes, as ``inlineValue(_:as:)`` reads them back.
        static func bits<Value>(of value: Value) -> UInt64 {
            var bits: UInt64 = 0
            withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: value, as: Value.self) }
            return bits
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

        /// `string` as a `Value`, which must be `String` (the caller compared their identities): the reference the
        /// hit took out of the lock moves into the result, and `string` is left empty. `unsafeBitCast` would copy it
        /// (a retain through `Value`'s value witness, in a caller the compiler did not specialize) and then release
        /// the hit's: two more atomic operations on the string's object every read.
        @inline(__always)
        static func stringValue<Value>(_ string: inout String, as _: Value.Type) -> Value {
            withUnsafeMutablePointer(to: &string) { pointer in
                let raw = UnsafeMutableRawPointer(pointer)
                let value = raw.assumingMemoryBound(to: Value.self).move()
                raw.initializeMemory(as: String.self, to: "")  // no reference: releasing it is no atomic operation
                return value
            }
        }
    }

    /// What a cached read takes out of the lock: an inline value (a string retained), or the entry (one reference).
    /// A read compares the type it wants with what the hit holds itself, without an `Optional` of its generic
    /// value type (whose metadata would be looked up on every read of a caller the compiler did not specialize).
    enum Hit {
        case bits(UInt64, ObjectIdentifier)
        case string(String)
        /// Nothing is stored (and no launch argument names the key): the key reads its initial value.
        case absent
        case entry(Entry)
        /// A stored value not decoded yet, or an absent one that a launch argument names: the read looks further.
        case undecoded
    }

    /// The cache's answer for `name`, nil when it has none. The slot is read in place: only what the hit takes is copied,
    /// and the slot is marked used (``Slot/referenced``: one store the first time after the eviction hand passed).
    @inline(__always)
    mutating func hit(_ name: CacheName) -> Hit? {
        let hit = table.access(name) { slot -> Hit? in
            if !slot.referenced { slot.referenced = true }
            return switch slot.content {
            case .bits(let bits, let type): .bits(bits, type)
            case .string(let string): .string(string)
            case .entry(let entry): .entry(entry)
            case .stored(let stored): stored == nil && !slot.argumentNamed ? .absent : .undecoded
            case .unloaded: nil
            }
        }
        return hit ?? nil
    }

    /// The slots by name.
    var table = CacheTable()
    /// Bumped by every change to the cache; a read that raced with a write does not fill the cache.
    private(set) var generation: UInt64 = 0
    /// How much the cache keeps loaded, nil: everything it is given (``Limits``).
    let limits: Limits?
    /// What the loaded slots hold, counted while ``limits`` is set (``Weight``).
    var held = Weight()
    /// The eviction hand: the bucket where the next look for a cold slot starts.
    var hand = 0

    /// A cache that keeps what it is given within `limits` (nil: everything).
    init(limits: Limits? = nil) {
        self.limits = limits
    }

    /// The slot for `name` if it has a value loaded, or nil.
    subscript(name: CacheName) -> Slot? {
        @inline(__always) get {
            guard let slot = table[name], slot.isLoaded else { return nil }
            return slot
        }
    }

    /// The slot for `name`, loaded or not (what is known of the name), or nil.
    func known(_ name: CacheName) -> Slot? {
        table[name]
    }

    /// Makes room for `count` slots in all without another allocation.
    mutating func reserveCapacity(_ count: Int) {
        table.reserveCapacity(count)
    }

    /// Notes `key`, declared (`declared`) or observed.
    mutating func noteKnown(_ key: Prefs.Keys, declared: Bool) {
        modify(CacheName(key), default: Slot(key: key, declared: declared)) { slot in
            slot.key = key
            if declared { slot.declared = true }
        }
    }

    /// Notes that the declaration of `name` is checked or recorded.
    mutating func noteDeclared(_ name: CacheName) {
        modify(name, default: Slot(key: nil, declared: true)) { $0.declared = true }
    }

    /// Forgets that the declaration of `name` is recorded (its key and value, if any, are kept).
    mutating func forgetDeclared(_ name: CacheName) {
        var keep = true
        modify(name) { slot in
            slot.declared = false
            keep = slot.isKnown || slot.isLoaded
        }
        if !keep { table.remove(name) }
    }

    /// Every key known, by name.
    func knownKeys() -> [(name: String, key: Prefs.Keys)] {
        var keys: [(name: String, key: Prefs.Keys)] = []
        table.forEach { name, slot in if let key = slot.key { keys.append((name, key)) } }
        return keys
    }

    /// Runs `body` on the slot of `name` if there is one (a read filling its decoded value, a declaration removed).
    /// The generation stays: what a slot learns of its own value changes no value.
    mutating func update(_ name: CacheName, _ body: (inout Slot) -> Void) {
        modify(name, body)
        evictIfNeeded()
    }

    /// Drops every loaded value (a refresh found another process's change, a transaction conflicted, the store
    /// closed), keeping what is known of the names; `keepingCapacity` false frees the table when nothing is known.
    mutating func invalidateAll(keepingCapacity: Bool = true) {
        generation &+= 1
        table.updateAll { slot in
            slot.unload()
            return slot.isKnown
        }
        held = Weight()
        if !keepingCapacity, table.count == 0 { table.removeAll(keepingCapacity: false) }
    }

    /// Drops the loaded values of `names`, so that their next read asks the backend.
    mutating func invalidate(_ names: some Sequence<String>) {
        generation &+= 1
        for name in names { unload(CacheName(name)) }
    }

    /// Drops the loaded value of `name`, and its slot when it says nothing else.
    private mutating func unload(_ name: CacheName) {
        var keep = true
        modify(name) { slot in
            slot.unload()
            keep = slot.isKnown
        }
        if !keep { table.remove(name) }
    }

    /// Whether a read of `name` looks past an absent value to a launch argument (`arguments`): one branch when the
    /// store reads none.
    @inline(__always)
    static func argumentNames(_ name: String, stored: StoredValue?, arguments: [String: StoredValue]) -> Bool {
        stored == nil && !arguments.isEmpty && arguments[name] != nil
    }

    /// Takes what a commit wrote (a new generation, so no read that raced with it caches older data). `declared`: a
    /// key whose declaration is now known to be recorded, whose slot says so. `arguments`: the launch arguments, for
    /// the slots of removed keys (``argumentNames(_:stored:arguments:)``). `copiesValues` false: the backend serves its
    /// reads from memory of its own (``StoreBackend/servesReadsFromMemory``), so the cache keeps no copy of what was
    /// written: the written keys' values are unloaded, and each key's next read loads it and keeps what it decoded.
    /// So are those of a commit larger than ``Limits/largestCopiedCommit`` while the cache keeps within limits: a
    /// batch of 100,000 sets no longer leaves the cache holding every value written (8.4 MB of slots, taken while the
    /// batch's change set was still alive).
    mutating func takeCommitted(
        _ changes: Changeset, declared declaredName: CacheName?, arguments: [String: StoredValue], copiesValues: Bool = true
    ) {
        generation &+= 1
        defer { evictIfNeeded() }
        guard copiesValues, changes.values.count <= limits?.largestCopiedCommit ?? .max else {
            changes.values.forEachName { name, _ in unload(name) }
            return
        }
        if changes.values.count > 1 { table.reserveCapacity(table.count + changes.values.count) }  // one table, not a doubling per key
        changes.values.forEachName { name, change in  // the names' hashes as the change set keeps them: no hashing
            let stored: StoredValue?
            switch change {
            case .set(let value): stored = value
            case .remove: stored = nil
            }
            let argumentNamed = Self.argumentNames(name.name, stored: stored, arguments: arguments)
            if let declaredName, declaredName.name == name.name {
                modify(name, default: Slot(stored: stored, argumentNamed: argumentNamed, declared: true)) { slot in
                    slot.replaceStored(stored, argumentNamed: argumentNamed)
                    slot.declared = true
                }
            } else {
                put(stored, argumentNamed: argumentNamed, for: name)
            }
        }
    }

    /// Caches `stored` (nil: nothing stored) for `name`, keeping what the slot knew of its declaration (and nothing of
    /// what was decoded). Returns what a read of the slot finds: its stored value, and whether a launch argument names it.
    @discardableResult
    mutating func cache(_ stored: StoredValue?, for name: String, arguments: [String: StoredValue]) -> Slot {
        let argumentNamed = Self.argumentNames(name, stored: stored, arguments: arguments)
        put(stored, argumentNamed: argumentNamed, for: CacheName(name))
        evictIfNeeded()
        return Slot(stored: stored, argumentNamed: argumentNamed)
    }

    /// Puts `stored` in the slot of `name`, or in a new one: nothing copied out (a batch's commit puts every key).
    private mutating func put(_ stored: StoredValue?, argumentNamed: Bool, for name: CacheName) {
        modify(name, default: Slot(stored: stored, argumentNamed: argumentNamed)) { slot in
            slot.replaceStored(stored, argumentNamed: argumentNamed)
        }
    }
}
