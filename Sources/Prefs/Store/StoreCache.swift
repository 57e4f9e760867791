import Foundation
internal import PrefsJSON
import PrefsSupport

/// The store's cache, its fast path: what each key read last (``Entry``, ``Slot``), found in one probe of
/// ``CacheTable`` by the key's kept hash, and the generation that tells a read that raced with a write not to fill it.
///
/// A part of ``Prefs/State``: it lives under the store's one lock and takes no lock of its own. Its one job is to
/// answer a read it can (``hit(_:)``) and to take what commits, refreshes and loads give it; the store decides when.
struct StoreCache: ~Copyable {
    /// A cached key: its stored value (nil: nothing stored) and, once read through a typed key, the value decoded
    /// as that key's type, unless its slot keeps that value inline (``Slot/Inline``: strings and small trivial
    /// values). A class, so a cache hit copies one reference out of the lock. The decoded value is kept
    /// beside the stored one by its type's identity, so that a read needs neither a dynamic cast nor any generic type's
    /// metadata beyond its value type's (a generic box's, or an `Optional`'s, is a lookup in the runtime's metadata
    /// cache on every read of a caller the compiler did not specialize), nor another object to reach.
    final class Entry: @unchecked Sendable {
        // @unchecked Sendable: immutable; `decoded` holds one value of a Sendable type, written once by `init`.
        let stored: StoredValue?
        /// Whether the decoded value is a launch argument's, read above `stored` (``Prefs/Lookup/argument(_:)``);
        /// `stored` is still what the store holds. Declared right after `stored`, in its padding (an optional
        /// `StoredValue` is 25 bytes): the object stays 64 bytes.
        let isArgument: Bool
        /// The decoded value's type, and the value in memory of its own (nil: not decoded).
        private let decodedType: Any.Type?
        private let decoded: UnsafeMutableRawPointer?

        init(_ stored: StoredValue?) {
            self.stored = stored
            decodedType = nil
            decoded = nil
            isArgument = false
        }

        init<Value: Sendable>(_ stored: StoredValue, decoded value: Value) {
            self.stored = stored
            decodedType = Value.self
            decoded = Self.allocate(value)
            isArgument = false
        }

        /// An entry whose reads return `value`, a launch argument's, while the store holds `stored`.
        init<Value: Sendable>(_ stored: StoredValue?, argument value: Value) {
            self.stored = stored
            decodedType = Value.self
            decoded = Self.allocate(value)
            isArgument = true
        }

        private static func allocate<Value>(_ value: Value) -> UnsafeMutableRawPointer {
            let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
            typed.initialize(to: value)
            return UnsafeMutableRawPointer(typed)
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
        /// Nothing is stored: the key reads its initial value (told by the entry's identity, without reaching it).
        case absent
        case entry(Entry)
    }

    /// The cache's answer for `name`, nil when it has none.
    @inline(__always)
    func hit(_ name: CacheName) -> Hit? {
        guard let slot = table[name] else { return nil }
        switch slot.inline {
        case .none: return slot.entry === Entry.absent ? .absent : .entry(slot.entry)
        case .bits(let bits, let type): return .bits(bits, type)
        case .string(let string): return .string(string)
        }
    }

    /// The slots by name.
    private(set) var table = CacheTable()
    /// Bumped by every change to the cache; a read that raced with a write does not fill the cache.
    private(set) var generation: UInt64 = 0

    /// The slot for `name`, or nil.
    subscript(name: CacheName) -> Slot? {
        @inline(__always) get { table[name] }
    }

    /// Runs `body` on the slot of `name` if there is one (a read filling its decoded value, a declaration removed).
    /// The generation stays: what a slot learns of its own entry changes no value.
    mutating func update(_ name: CacheName, _ body: (inout Slot) -> Void) {
        table.update(name, body)
    }

    /// Drops every slot (a refresh found another process's change, a transaction conflicted, the store closed).
    mutating func invalidateAll(keepingCapacity: Bool = true) {
        generation &+= 1
        table.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Drops the slots of `names`, so that their next read asks the backend.
    mutating func invalidate(_ names: some Sequence<String>) {
        generation &+= 1
        for name in names { table.remove(CacheName(name)) }
    }

    /// The entry that says nothing is stored under `name`: ``Entry/absent``, which a read answers with the initial
    /// value without looking further, unless a launch argument (`arguments`) names the key; then an entry of its own,
    /// which a read looks past to the argument.
    @inline(__always)
    static func absentEntry(for name: String, arguments: [String: StoredValue]) -> Entry {
        if arguments.isEmpty || arguments[name] == nil { return .absent }
        return Entry(nil)
    }

    /// Takes what a commit wrote (a new generation, so no read that raced with it caches older data). `declared`: a
    /// key whose declaration is now known to be recorded, whose slot says so. `arguments`: the launch arguments, for
    /// the entries of removed keys (``absentEntry(for:arguments:)``).
    mutating func takeCommitted(_ changes: Changeset, declared declaredName: CacheName?, arguments: [String: StoredValue]) {
        generation &+= 1
        if changes.values.count > 1 { table.reserveCapacity(table.count + changes.values.count) }  // one table, not a doubling per key
        for (name, change) in changes.values {
            let entry: Entry
            switch change {
            case .set(let value): entry = .stored(value)
            case .remove: entry = Self.absentEntry(for: name, arguments: arguments)
            }
            if let declaredName, declaredName.name == name {
                table[declaredName] = Slot(entry: entry, declared: true)  // the key's own hash, kept: no hashing
            } else {
                cache(entry, for: name, arguments: arguments)
            }
        }
    }

    /// Caches `entry` for `name`, keeping what the slot knew of its declaration (and nothing of its inline value).
    /// Returns the entry cached: `entry`, or for ``Entry/absent`` what ``absentEntry(for:arguments:)`` gives.
    @discardableResult
    mutating func cache(_ entry: Entry, for name: String, arguments: [String: StoredValue]) -> Entry {
        let entry = entry === Entry.absent ? Self.absentEntry(for: name, arguments: arguments) : entry
        table.update(CacheName(name), default: Slot(entry: entry)) { $0.replaceEntry(entry) }
        return entry
    }
}
