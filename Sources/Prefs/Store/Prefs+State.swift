import Foundation
internal import PrefsJSON
import PrefsSupport

extension Prefs {
    /// What the store keeps behind its lock (``Prefs/state``): the cache of keys, the declarations this process has
    /// checked, the observers, the polling and the diagnostics.
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
        /// The argument domain (``LaunchArguments``): the launch arguments' values by name, read above the stored
        /// values and never written. Empty for most stores, and then no read looks at it.
        var arguments: [String: StoredValue] = [:]
        /// The launch arguments reported as ignored, by key name and the type read, so each is reported once.
        var reportedArguments: Set<String> = []

        /// The entry that says nothing is stored under `name`: ``Entry/absent``, which a read answers with the initial
        /// value without looking further, unless a launch argument names the key; then an entry of its own, which a
        /// read looks past to the argument.
        @inline(__always)
        func absentEntry(for name: String) -> Entry {
            if arguments.isEmpty || arguments[name] == nil { return .absent }
            return Entry(nil)
        }

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
                case .remove: entry = absentEntry(for: name)
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
        /// Returns the entry cached: `entry`, or for ``Entry/absent`` what ``absentEntry(for:)`` gives.
        @discardableResult
        mutating func cache(_ entry: Entry, for name: String) -> Entry {
            let entry = entry === Entry.absent ? absentEntry(for: name) : entry
            cache.update(CacheName(name), default: Slot(entry: entry)) { $0.replaceEntry(entry) }
            return entry
        }
    }
}
