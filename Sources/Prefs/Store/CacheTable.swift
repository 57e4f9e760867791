/// The store's cache of keys (``StoreCache/Slot`` by name).
typealias CacheTable = NameTable<StoreCache.Slot>

/// A table of slots by name: an open-addressing hash table, probed linearly and at most 13/16 full, whose buckets hold
/// a name's hash, the name and its slot side by side. The store's cache (``CacheTable``), the memory backend's
/// records, and a change set's values (``ChangeTable``).
///
/// Why not `Dictionary`: a `Dictionary` keeps its keys and its values in two arrays, so a lookup reads a line of each,
/// and it doubles its table whenever it is 3/4 full (at 100,000 keys it holds 262,144 buckets, 2.6 per key). Here a
/// lookup reads one bucket (and its neighbours when names collide), and the same 100,000 keys take 131,072 buckets. The hash is the name's own (``CacheName``:
/// SipHash, seeded per process, computed once per key), so names chosen to collide gain nothing they would not gain
/// against `Dictionary`.
///
/// Memory: one block of `capacity` buckets (``TableMemory``), grown in place: the block grows (a large one without a
/// copy), then the slots move to their buckets in the larger table within it, so growing never holds an old and a new
/// table at once. A bucket's first word is its tag: 0 when the bucket is empty (the rest of it uninitialized), else the
/// hash with its top bit set; a lookup compares tags before it compares names. Removal shifts the buckets after a hole
/// back into it (no tombstones), so a probe always ends at an empty bucket.
struct NameTable<Slot>: ~Copyable {
    private struct Bucket {
        var tag: Int
        var name: String
        var slot: Slot
    }

    private var buckets: UnsafeMutablePointer<Bucket>?
    /// The number of buckets, a power of two (0 before the first insertion).
    private var capacity = 0
    /// The block malloc gave, where the buckets lie (nil with them).
    private var block: UnsafeMutableRawPointer?
    private(set) var count = 0

    init() {
        assert(MemoryLayout<Bucket>.offset(of: \Bucket.tag) == 0, "a bucket's tag is read as its first word")
        // Growing moves the buckets' bytes as they are (TableMemory): every slot the store keeps may move so (strings,
        // references, enums of them); one that may not (an Objective-C weak reference) has no place in a table.
        precondition(_isBitwiseTakable(Bucket.self), "a table's slots must be bitwise-takable")
    }

    deinit {
        guard let buckets else { return }
        for index in 0..<capacity where tag(at: index) != 0 { (buckets + index).deinitialize(count: 1) }
        memory(of: buckets).release()
    }

    /// The slot for `name`, or nil; setting nil removes it.
    subscript(name: CacheName) -> Slot? {
        @inline(__always) get {
            guard let index = index(of: name) else { return nil }
            return buckets.unsafelyUnwrapped[index].slot
        }
        set {
            if let newValue { insert(newValue, for: name) } else { remove(name) }
        }
    }

    /// `body`'s answer for the slot of `name`, read in place (a field `body` reads is copied alone, not the whole
    /// slot), or nil when there is none.
    @inline(__always)
    func read<Result>(_ name: CacheName, _ body: (borrowing Slot) -> Result) -> Result? {
        guard let index = index(of: name) else { return nil }
        return body(buckets.unsafelyUnwrapped[index].slot)
    }

    /// `body`'s answer for the slot of `name`, which it may change in place (a cache hit marking its slot used), or
    /// nil when there is none.
    @inline(__always)
    mutating func access<Result>(_ name: CacheName, _ body: (inout Slot) -> Result) -> Result? {
        guard let index = index(of: name) else { return nil }
        return body(&buckets.unsafelyUnwrapped[index].slot)
    }

    /// Runs `body` on the slot in bucket `index` (below ``bucketCount``), removing it when `body` returns false: nil
    /// when the bucket is empty, else whether the slot was kept. A removal may move a later slot into the bucket.
    mutating func update(at index: Int, _ body: (inout Slot) -> Bool) -> Bool? {
        guard tag(at: index) != 0 else { return nil }
        if body(&buckets.unsafelyUnwrapped[index].slot) { return true }
        remove(at: index)
        return false
    }

    /// Runs `body` on the slot of `name` if there is one (`cache[name]?.field = …`).
    mutating func update(_ name: CacheName, _ body: (inout Slot) -> Void) {
        guard let index = index(of: name) else { return }
        body(&buckets.unsafelyUnwrapped[index].slot)
    }

    /// Runs `body` on the slot of `name`, inserting `makeDefault()` first when there is none.
    mutating func update(_ name: CacheName, default makeDefault: @autoclosure () -> Slot, _ body: (inout Slot) -> Void) {
        let index = index(of: name) ?? insertNew(makeDefault(), for: name)
        body(&buckets.unsafelyUnwrapped[index].slot)
    }

    /// Runs `body` on the slot of `name`, telling it whether the slot is new: inserted as `makeDefault()` gives it when
    /// there is none (nothing runs when it gives none).
    mutating func update(_ name: CacheName, orInsert makeDefault: () -> Slot?, _ body: (inout Slot, _ isNew: Bool) -> Void) {
        if let index = index(of: name) {
            body(&buckets.unsafelyUnwrapped[index].slot, false)
        } else if let slot = makeDefault() {
            let index = insertNew(slot, for: name)  // first: it may allocate the buckets
            body(&buckets.unsafelyUnwrapped[index].slot, true)
        }
    }

    /// Sets the slot for `name`.
    mutating func insert(_ slot: Slot, for name: CacheName) {
        if let index = index(of: name) {
            buckets.unsafelyUnwrapped[index].slot = slot
        } else {
            _ = insertNew(slot, for: name)
        }
    }

    /// Removes the slot for `name`, if any.
    mutating func remove(_ name: CacheName) {
        guard let index = index(of: name) else { return }
        remove(at: index)
    }

    /// Removes every slot.
    mutating func removeAll(keepingCapacity keep: Bool = false) {
        if let buckets {
            for index in 0..<capacity where tag(at: index) != 0 {
                (buckets + index).deinitialize(count: 1)
                setEmpty(index)
            }
            if !keep {
                memory(of: buckets).release()
                (self.buckets, block, capacity) = (nil, nil, 0)
            }
        }
        count = 0
    }

    /// Runs `body` on every slot, in no order, removing those for which it returns false.
    mutating func updateAll(_ body: (inout Slot) -> Bool) {
        guard let buckets else { return }
        var index = 0
        while index < capacity {
            if tag(at: index) != 0, !body(&buckets[index].slot) {
                // The buckets after it may move back into this one: look at it again (a slot seen twice is kept
                // twice, which `body` allows; none is skipped, since buckets only move back into the hole).
                remove(at: index)
                continue
            }
            index += 1
        }
    }

    /// Calls `body` with every name and its slot, in no order.
    func forEach(_ body: (String, Slot) throws -> Void) rethrows {
        guard let buckets else { return }
        for index in 0..<capacity where tag(at: index) != 0 { try body(buckets[index].name, buckets[index].slot) }
    }

    /// Calls `body` with every name, as a ``CacheName`` with the hash this table keeps for it (its tag: another table
    /// finds the name by it as by the name's own hash, without hashing the name again), and its slot, in no order.
    func forEachName(_ body: (CacheName, Slot) throws -> Void) rethrows {
        guard let buckets else { return }
        for index in 0..<capacity where tag(at: index) != 0 {
            try body(CacheName(buckets[index].name, hash: tag(at: index)), buckets[index].slot)
        }
    }

    /// Where the buckets start, nil before the first insertion (tests: always at a cache line's start).
    var bucketsAddress: UInt? { buckets.map { UInt(bitPattern: $0) } }

    /// The number of buckets: ``entry(at:)`` takes an index below it.
    var bucketCount: Int { capacity }

    /// The name and slot in bucket `index` (below ``bucketCount``), or nil when it is empty: a walk over the table that
    /// a caller drives (``ChangeTable``'s iterator).
    func entry(at index: Int) -> (name: String, slot: Slot)? {
        guard tag(at: index) != 0 else { return nil }
        return (buckets.unsafelyUnwrapped[index].name, buckets.unsafelyUnwrapped[index].slot)
    }

    /// The name in bucket `index` (below ``bucketCount``), or nil when it is empty.
    func name(at index: Int) -> String? {
        guard tag(at: index) != 0 else { return nil }
        return buckets.unsafelyUnwrapped[index].name
    }

    /// Makes room for `minimumCount` slots without another allocation.
    mutating func reserveCapacity(_ minimumCount: Int) {
        if minimumCount > Self.maximumCount(capacity) { resize(to: Self.capacity(for: minimumCount)) }
    }

    // MARK: - The table

    private static var tagBit: Int { Int.min }

    /// How many slots `capacity` buckets hold: 13/16 of them (a probe that finds nothing reads some 13 buckets when
    /// the table is that full, 5 when it is half as full); 3/4 of a table of 4 or 8, so that one bucket stays empty.
    private static func maximumCount(_ capacity: Int) -> Int {
        capacity < 16 ? capacity - capacity / 4 : capacity - capacity / 16 * 3
    }

    /// The smallest power of two (at least 4: a change set of one key, a store of a few) that holds `count`.
    private static func capacity(for count: Int) -> Int {
        var capacity = 4
        while maximumCount(capacity) < count { capacity *= 2 }
        return capacity
    }

    /// The tag of bucket `index`, read without touching the rest of it (which is uninitialized in an empty bucket).
    @inline(__always)
    private func tag(at index: Int) -> Int {
        UnsafeRawPointer(buckets.unsafelyUnwrapped + index).load(as: Int.self)
    }

    @inline(__always)
    private func setEmpty(_ index: Int) {
        UnsafeMutableRawPointer(buckets.unsafelyUnwrapped + index).storeBytes(of: 0, as: Int.self)
    }

    @inline(__always)
    private func index(of name: CacheName) -> Int? {
        guard let buckets else { return nil }
        let mask = capacity &- 1
        let tag = name.hash | Self.tagBit
        var index = name.hash & mask
        while true {
            let found = self.tag(at: index)
            if found == 0 { return nil }
            if found == tag, buckets[index].name == name.name { return index }
            index = (index &+ 1) & mask
        }
    }

    /// Inserts a slot for a name the table does not hold; returns its bucket.
    private mutating func insertNew(_ slot: Slot, for name: CacheName) -> Int {
        if count + 1 > Self.maximumCount(capacity) { resize(to: Self.capacity(for: count + 1)) }
        let index = emptyBucket(for: name.hash)
        (buckets.unsafelyUnwrapped + index).initialize(to: Bucket(tag: name.hash | Self.tagBit, name: name.name, slot: slot))
        count += 1
        return index
    }

    /// The first empty bucket from `hash`'s own.
    private func emptyBucket(for hash: Int) -> Int {
        let mask = capacity &- 1
        var index = hash & mask
        while tag(at: index) != 0 { index = (index &+ 1) & mask }
        return index
    }

    /// Empties bucket `index` and moves the buckets after it that may move back, so every probe still ends at an empty
    /// bucket: a bucket moves into the hole when the hole lies between its own bucket and where it is.
    private mutating func remove(at removed: Int) {
        let buckets = buckets.unsafelyUnwrapped
        let mask = capacity &- 1
        (buckets + removed).deinitialize(count: 1)
        setEmpty(removed)
        count -= 1
        var hole = removed
        var index = (removed &+ 1) & mask
        while true {
            let tag = self.tag(at: index)
            if tag == 0 { break }
            let home = tag & mask
            if (index &- home) & mask >= (index &- hole) & mask {
                (buckets + hole).moveInitialize(from: buckets + index, count: 1)
                setEmpty(index)
                hole = index
            }
            index = (index &+ 1) & mask
        }
    }

    /// The block that holds `buckets` (this table's).
    private func memory(of buckets: UnsafeMutablePointer<Bucket>) -> TableMemory {
        TableMemory(block: block.unsafelyUnwrapped, base: UnsafeMutableRawPointer(buckets), byteCount: capacity * MemoryLayout<Bucket>.stride)
    }

    /// Takes `memory`'s block for `capacity` buckets.
    private mutating func take(_ memory: TableMemory, capacity: Int) {
        buckets = memory.base.bindMemory(to: Bucket.self, capacity: capacity)
        block = memory.block
        self.capacity = capacity
    }

    /// Grows the table to `newCapacity` buckets (more than it has), each slot moved to its bucket in the larger table.
    private mutating func resize(to newCapacity: Int) {
        let byteCount = newCapacity * MemoryLayout<Bucket>.stride
        guard let old = buckets else {
            // The first buckets, empty (every tag zero).
            take(TableMemory.allocate(byteCount: byteCount), capacity: newCapacity)
            return
        }
        let oldCapacity = capacity
        take(memory(of: old).grown(to: byteCount), capacity: newCapacity)
        rehashInPlace(movingFirst: oldCapacity)
    }

    /// Moves the slots of the first `oldCapacity` buckets, placed for a table of that many, to their places in this
    /// one (whose buckets past them are empty), within the same block.
    ///
    /// Each slot to move is marked; a marked slot goes to the first bucket from its own that is empty or marked (a
    /// marked one is swapped with it, and the slot that comes back is placed in turn), or stays where it is when that is
    /// its bucket. A bucket a placed slot's probe passed over was then holding a placed slot, and a placed slot never
    /// moves again, so no probe passes an empty bucket on the way to its slot: the table is as if built anew. (The
    /// in-place rehash of Rust's hashbrown, for linear probing.)
    private mutating func rehashInPlace(movingFirst oldCapacity: Int) {
        let buckets = buckets.unsafelyUnwrapped
        let mask = capacity &- 1
        var marked = [UInt64](repeating: 0, count: (oldCapacity + 63) / 64)
        for index in 0..<oldCapacity where tag(at: index) != 0 { marked[index >> 6] |= 1 << UInt64(index & 63) }
        func isMarked(_ index: Int) -> Bool { index < oldCapacity && marked[index >> 6] & (1 << UInt64(index & 63)) != 0 }
        func unmark(_ index: Int) { marked[index >> 6] &= ~(1 << UInt64(index & 63)) }
        for index in 0..<oldCapacity where isMarked(index) {
            while true {
                var target = tag(at: index) & mask
                while tag(at: target) != 0, !isMarked(target) { target = (target &+ 1) & mask }
                if target == index {  // its place already
                    unmark(index)
                    break
                }
                if tag(at: target) == 0 {
                    (buckets + target).moveInitialize(from: buckets + index, count: 1)
                    setEmpty(index)
                    unmark(index)
                    break
                }
                // A marked slot is where this one goes: swap them; the one that comes back, still marked, is placed next.
                let displaced = (buckets + target).move()
                (buckets + target).moveInitialize(from: buckets + index, count: 1)
                (buckets + index).initialize(to: displaced)
                unmark(target)
            }
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

    /// A name with a hash of the caller's choosing: the hash a ``NameTable`` keeps for it (``NameTable/forEachName(_:)``,
    /// its tag: the name's hash with the top bit set, which finds the same bucket in any table), or one that tests
    /// choose to make names collide.
    init(_ name: String, hash: Int) {
        self.name = name
        self.hash = hash
    }
}
