internal import PrefsJSON

// MARK: - Limits: a bounded cache over a backend whose reads are one lookup

extension StoreCache {
    /// How much a cache over a backend whose reads are one cheap lookup (``StoreBackend/readsCostOneLookup``: SQLite)
    /// keeps loaded. Beyond either limit it drops cold values (a CLOCK: the hand passes each loaded slot, and drops it
    /// unless it was read since the hand last passed), and their next read asks the backend again.
    ///
    /// What the limits count is what a loaded value adds to memory: a slot that exists only for its value
    /// (``Weight/valueSlots``), and what a value holds outside its slot (``Weight/bytes``: a long string's storage, an
    /// ``Entry``, a stored array's elements). A declared or observed key's slot is kept whatever is dropped, since it
    /// says what is known of its name, and a value kept inline in it (an `Int`, a short string) adds nothing: so the
    /// values of an app's declared keys of simple types stay loaded, and cache hits stay hits, at any size.
    struct Limits {
        /// The most slots kept only for their values.
        var valueSlots: Int
        /// The most bytes the loaded values hold outside their slots (an estimate, ``StoreCache/bytes(of:)``).
        var bytes: Int
        /// The largest commit whose values the cache takes as written; a larger one's keys are read afresh when read.
        var largestCopiedCommit: Int

        /// For SQLite: far above any app's usual few hundred keys, so that such an app's whole table stays in memory;
        /// 16,384 slots take 1.3 MB of buckets, 8 MiB of values would hold 100,000 strings of 30 characters.
        static let readsCostOneLookup = Limits(valueSlots: 16_384, bytes: 8 << 20, largestCopiedCommit: 1024)
    }

    /// What loaded slots add to memory, as ``Limits`` counts it.
    struct Weight: Equatable {
        /// Slots loaded that say nothing else of their names (no key, no declaration).
        var valueSlots = 0
        /// What their values hold outside the slots, estimated.
        var bytes = 0

        var isZero: Bool { valueSlots == 0 && bytes == 0 }

        static func += (lhs: inout Weight, rhs: Weight) {
            lhs.valueSlots += rhs.valueSlots
            lhs.bytes += rhs.bytes
        }

        static func -= (lhs: inout Weight, rhs: Weight) {
            lhs.valueSlots -= rhs.valueSlots
            lhs.bytes -= rhs.bytes
        }
    }

    /// What `slot` adds to memory for its value.
    static func weight(of slot: borrowing Slot) -> Weight {
        guard slot.isLoaded else { return Weight() }
        return Weight(valueSlots: slot.isKnown ? 0 : 1, bytes: bytes(of: slot.content))
    }

    /// Runs `body` on the slot of `name` (inserting `makeDefault()` first when there is none and it is given), keeping
    /// ``held`` in step. Every change to a slot goes through here.
    mutating func modify(_ name: CacheName, default makeDefault: @autoclosure () -> Slot? = nil, _ body: (inout Slot) -> Void) {
        guard limits != nil else {
            table.update(name, orInsert: makeDefault) { slot, _ in body(&slot) }
            return
        }
        var change = Weight()
        table.update(name, orInsert: makeDefault) { slot, isNew in
            let before = isNew ? Weight() : Self.weight(of: slot)
            body(&slot)
            change = Self.weight(of: slot)
            change -= before
        }
        held += change
    }

    /// Whether what is loaded exceeds the limits.
    var isOverLimits: Bool {
        guard let limits else { return false }
        return held.valueSlots > limits.valueSlots || held.bytes > limits.bytes
    }

    /// Drops cold values until what is loaded is within the limits: the hand moves over the buckets, clearing the mark
    /// of a slot read since it last passed and dropping the value of one that was not. Each slot's mark is set by a
    /// read, and cleared once per pass, so the hand moves a bounded number of buckets per value dropped on average.
    /// The generation stays: dropping a value changes no value, and a read that loaded it may still keep it.
    mutating func evictIfNeeded() {
        guard isOverLimits else { return }
        var steps = 3 * table.bucketCount  // two passes clear every mark; the third finds every value
        while isOverLimits, steps > 0 {
            steps -= 1
            hand &= table.bucketCount &- 1
            var dropped = Weight()
            let kept = table.update(at: hand) { slot -> Bool in
                let weight = Self.weight(of: slot)
                if weight.isZero { return true }  // nothing to gain: a known name's inline value, or nothing loaded
                if slot.referenced {
                    slot.referenced = false
                    return true
                }
                dropped = weight
                slot.unload()
                return slot.isKnown
            }
            held -= dropped
            if kept != false { hand &+= 1 }  // removed: a later slot may have moved into the bucket
        }
    }

    // MARK: - Bytes

    /// What `content` holds outside its slot, estimated (the allocations malloc makes, rounded to 16 bytes).
    static func bytes(of content: Slot.Content) -> Int {
        switch content {
        case .unloaded, .bits: 0
        case .stored(let stored?): bytes(of: stored)
        case .stored(nil): 0
        case .string(let string): bytes(of: string)
        case .entry(let entry): 64 + (entry.stored.map { bytes(of: $0) } ?? 0) * 2  // the object, the value and its decoded form
        }
    }

    /// A stored value's text or tree, and its type when that is boxed (an array's, a dictionary's).
    static func bytes(of stored: StoredValue) -> Int {
        let type: Int
        switch stored.type {
        case .array, .dictionary, .other: type = 32
        default: type = 0
        }
        switch stored.form {
        case .text(let text): return type + bytes(of: text)
        case .tree(let json): return type + bytes(of: json)
        }
    }

    /// A string's storage: none for a small string (15 UTF-8 bytes or fewer, held in the string itself).
    static func bytes(of string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : (32 + count + 1 + 15) & ~15
    }

    /// A JSON tree's allocations: its strings, its arrays' and objects' storage, and their elements'.
    static func bytes(of json: JSON) -> Int {
        switch json {
        case .null, .bool, .int, .double: 0
        case .string(let string): bytes(of: string)
        case .array(let elements): 32 + elements.count * 24 + elements.reduce(0) { $0 + bytes(of: $1) }
        case .object(let members): 64 + members.count * 64 + members.reduce(0) { $0 + bytes(of: $1.key) + bytes(of: $1.value) }
        }
    }
}
