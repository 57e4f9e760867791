internal import PrefsJSON

/// Keys in the order of their UTF-8 bytes (``JSON/keyPrecedes(_:_:)``): the order an SQLite table's B-tree keeps the
/// NFC names the store writes, and the order a JSON document's members are written in. One radix sort for both: the
/// SQLite store's commits (`SQLiteBackend+KeyOrder.swift`) and the JSON store's compactions (``sorted(_:key:)``).
enum KeyOrder {
    /// `elements` sorted by the UTF-8 bytes of `key(element)`, as `JSON.keyPrecedes` orders them: a document's members
    /// in the order a compaction writes them. The elements' positions are sorted with their keys' leading bytes
    /// (``sortByKey(_:key:)``), and each element is copied once, into the result. A comparison sort of the positions
    /// by their first eight bytes took 19% of the instructions of a flush of 100,000 keys.
    static func sorted<Element>(_ elements: [Element], key: (Element) -> String) -> [Element] {
        guard elements.count > 1 else { return elements }
        var positions: [Positioned] = []
        positions.reserveCapacity(elements.count)
        for index in elements.indices { positions.append(Positioned(prefix: leadingBytes(key(elements[index])), index: index)) }
        sortByKey(&positions) { key(elements[$0.index]) }
        return positions.map { elements[$0.index] }
    }

    /// An element's position in an array, with its key's first eight bytes (``leadingBytes(_:)``).
    struct Positioned: PrefixOrdered {
        var prefix: UInt64
        var index: Int
    }

    /// What ``sortByKey(_:)`` orders: an entry with its key's first eight bytes (``leadingBytes(_:)``).
    protocol PrefixOrdered {
        var prefix: UInt64 { get set }
    }

    /// A row of a commit, with its key's first eight bytes (``leadingBytes(_:)``), as ``sortByKey(_:)`` sorts them.
    struct KeyOrdered<Value>: PrefixOrdered {
        var prefix: UInt64
        var key: String
        var value: Value
    }

    /// Sorts `entries` by the UTF-8 bytes of their keys (for the NFC names written, their `String` order too).
    ///
    /// A radix sort by the keys' first eight bytes, least significant first, each pass moving the entries (no copies,
    /// no reference counting) from one buffer to the other, reading one in order and writing 256 places in order; a
    /// byte that is the same in every key, such as a common first letter, costs no pass. Keys alike in those eight
    /// bytes are sorted again the same way by their next eight, and so on, so that keys named under one prefix
    /// (`settings.display.…`) cost a pass or two more rather than a comparison sort of all of them: compared whole
    /// through `UTF8View`s, 10,000 such keys took two thirds of a batch's time. Short runs, and keys alike to their
    /// last byte, are compared whole (``JSON/keyPrecedes(_:_:)``).
    static func sortByKey<Value>(_ entries: inout [KeyOrdered<Value>]) {
        sortByKey(&entries) { $0.key }
    }

    /// Sorts `entries` by the UTF-8 bytes of `key(entry)`; each entry's `prefix` holds its key's first eight bytes
    /// (``leadingBytes(_:from:)``) on entry, and whatever the last pass left on return.
    static func sortByKey<Entry: PrefixOrdered>(_ entries: inout [Entry], key: (Entry) -> String) {
        guard entries.count > 1 else { return }
        // Through pointers, the entries and the counts alike: no entry copied to read its prefix, no uniqueness check
        // of the counts for each entry.
        var counts = [Int](repeating: 0, count: 8 * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            entries.withUnsafeMutableBufferPointer { buffer in
                // Keys named under one prefix (`com.example.app.settings.…`) are sorted from the first byte they do not
                // all share: no pass, and no fetch of every key, for each eight bytes of the prefix.
                let shared = sharedPrefixLength(buffer, key: key)
                if shared >= 8 {
                    for index in buffer.indices { buffer[index].prefix = leadingBytes(key(buffer[index]), from: shared) }
                }
                sortByKey(buffer, counts: counts, offset: shared >= 8 ? shared : 0, key: key)
            }
        }
    }

    /// How many bytes every key of `buffer` starts with, when that is eight or more; else a number below eight (the
    /// scan stops as soon as the keys differ in their first eight bytes, which the first radix pass sorts anyway).
    private static func sharedPrefixLength<Entry>(_ buffer: UnsafeMutableBufferPointer<Entry>, key: (Entry) -> String) -> Int {
        guard let first = buffer.first else { return 0 }
        var firstKey = key(first)
        return firstKey.withUTF8 { firstBytes in
            var shared = firstBytes.count
            for entry in buffer.dropFirst() {
                var name = key(entry)
                shared = name.withUTF8 { bytes in
                    let limit = min(shared, bytes.count)
                    var common = 0
                    while common < limit, bytes[common] == firstBytes[common] { common += 1 }
                    return common
                }
                if shared < 8 { return shared }
            }
            return shared
        }
    }

    /// How many keys alike in eight bytes are compared whole rather than sorted by their next eight.
    private static let compareRunsUpTo = 16

    /// Sorts `buffer`, whose keys are alike in their first `offset` bytes, by their bytes from `offset` on; each
    /// entry's `prefix` holds its key's eight bytes at `offset`.
    private static func sortByKey<Entry: PrefixOrdered>(
        _ buffer: UnsafeMutableBufferPointer<Entry>, counts: UnsafeMutableBufferPointer<Int>, offset: Int, key: (Entry) -> String
    ) {
        guard let array = buffer.baseAddress else { return }
        let count = buffer.count
        sortByPrefix(buffer, counts: counts)
        // Runs alike in these eight bytes: in order of their next eight, or of the whole key.
        var runStart = 0
        for index in 1...count {
            guard index == count || array[index].prefix != array[runStart].prefix else { continue }
            var run = UnsafeMutableBufferPointer(rebasing: buffer[runStart..<index])
            runStart = index
            guard run.count > 1 else { continue }
            if run.count > compareRunsUpTo {
                var longest = 0
                for position in run.indices {
                    let name = key(run[position])
                    longest = max(longest, name.utf8.count)
                    run[position].prefix = leadingBytes(name, from: offset + 8)
                }
                // Keys with bytes after these eight: sorted by the next eight. Keys that end within them are alike to
                // their last byte but for trailing NULs, which only a comparison tells apart.
                if longest > offset + 8 {
                    sortByKey(run, counts: counts, offset: offset + 8, key: key)
                    continue
                }
            }
            run.sort { JSON.keyPrecedes(key($0), key($1)) }
        }
    }

    /// Sorts `buffer` by its entries' `prefix`, stably (see ``sortByKey(_:)``).
    private static func sortByPrefix<Entry: PrefixOrdered>(_ buffer: UnsafeMutableBufferPointer<Entry>, counts: UnsafeMutableBufferPointer<Int>) {
        guard let array = buffer.baseAddress else { return }
        let count = buffer.count
        // How many keys have each value of each of the eight bytes, counted in one pass.
        counts.update(repeating: 0)
        for index in 0..<count {
            let prefix = array[index].prefix
            for byte in 0..<8 { counts[byte &* 256 &+ Int(truncatingIfNeeded: prefix &>> UInt64(56 &- 8 &* byte) & 0xff)] &+= 1 }
        }
        let scratch = UnsafeMutablePointer<Entry>.allocate(capacity: count)
        defer { scratch.deallocate() }
        var (from, to) = (array, scratch)
        for byte in (0..<8).reversed() {
            let base = byte &* 256
            let shift = UInt64(56 &- 8 &* byte)
            if counts[base &+ Int(truncatingIfNeeded: from[0].prefix &>> shift & 0xff)] == count { continue }  // one value: no pass
            var start = 0
            for value in 0..<256 {
                let keys = counts[base &+ value]
                counts[base &+ value] = start
                start &+= keys
            }
            // Stable: entries alike in this byte keep the order of the bytes after it, sorted by the passes before.
            for index in 0..<count {
                let slot = base &+ Int(truncatingIfNeeded: from[index].prefix &>> shift & 0xff)
                (to + counts[slot]).moveInitialize(from: from + index, count: 1)
                counts[slot] &+= 1
            }
            swap(&from, &to)
        }
        // The entries are initialized in `from` and nowhere else: back into the array when that is the scratch.
        if from != array { array.moveInitialize(from: from, count: count) }
    }

    /// The first eight UTF-8 bytes of `key` as a big-endian integer, zero-padded: integers ordered as the keys' bytes,
    /// which for the NFC names written is their `String` order.
    static func leadingBytes(_ key: String) -> UInt64 {
        leadingBytes(key, from: 0)
    }

    /// The eight UTF-8 bytes of `key` from `offset` on (as ``leadingBytes(_:)``), zero-padded past its end.
    static func leadingBytes(_ key: String, from offset: Int) -> UInt64 {
        func pack(_ bytes: some Collection<UInt8>) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 56
            for byte in bytes.dropFirst(offset).prefix(8) {
                value |= UInt64(byte) &<< shift
                shift &-= 8
            }
            return value
        }
        return key.utf8.withContiguousStorageIfAvailable { pack($0) } ?? pack(key.utf8)
    }
}
