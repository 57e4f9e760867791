import Foundation
import PrefsSQLite

/// A large commit's rows in key order (the table's B-tree order), sorted without copies.
extension SQLiteBackend {
    /// The rows of a large commit in the order of the table's B-tree (a key's `<` is its NFC form's byte order, as
    /// SQLite's `BINARY` compares the canonical names written), so that each insert lands beside the last one rather
    /// than on a page anywhere in the table: a hash table's order made a 100k-row batch spill and re-read pages of the
    /// cache, 1.9–2.7× raw sqlite3 writing the same rows in its own order. Small commits keep the table's order.
    ///
    /// The rows are read from the dictionary once, in its order, into an array that ``sortByKey(_:)`` puts in order:
    /// visiting the dictionary's rows in key order instead (by their positions, sorted) missed the processor's cache
    /// two or three times a row at 100k rows, a quarter of the store's own time in a batch.
    static func forEachInKeyOrder<Rows: Sequence, Value>(
        _ rows: Rows, _ body: (String, Value) throws(SQLiteError) -> Void
    ) throws(SQLiteError) where Rows.Element == (key: String, value: Value) {
        guard rows.underestimatedCount > 64 else {
            for (key, value) in rows { try body(key, value) }
            return
        }
        var entries: [KeyOrdered<Value>] = []
        entries.reserveCapacity(rows.underestimatedCount)
        for (key, value) in rows { entries.append(KeyOrdered(prefix: leadingBytes(key), key: key, value: value)) }
        sortByKey(&entries)
        for entry in entries { try body(entry.key, entry.value) }
    }

    /// A row of a commit, with its key's first eight bytes (``leadingBytes(_:)``), as ``sortByKey(_:)`` sorts them.
    struct KeyOrdered<Value> {
        var prefix: UInt64
        var key: String
        var value: Value
    }

    /// Sorts `entries` by the UTF-8 bytes of their keys (for the NFC names written, their `String` order too).
    ///
    /// A radix sort by the keys' first eight bytes, least significant first, each pass moving the entries (no copies,
    /// no reference counting) from one buffer to the other, reading one in order and writing 256 places in order; a
    /// byte that is the same in every key, such as a common first letter, costs no pass. Then a comparison sort of
    /// each run of keys alike in those eight bytes, compared whole. A comparison sort of all the rows, through a
    /// closure, cost several times as many instructions.
    static func sortByKey<Value>(_ entries: inout [KeyOrdered<Value>]) {
        let count = entries.count
        guard count > 1 else { return }
        // Through pointers, the entries and the counts alike: no entry copied to read its prefix, no uniqueness check
        // of the counts for each entry.
        var counts = [Int](repeating: 0, count: 8 * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            entries.withUnsafeMutableBufferPointer { buffer in
                sortByKey(buffer, counts: counts)
            }
        }
    }

    private static func sortByKey<Value>(_ buffer: UnsafeMutableBufferPointer<KeyOrdered<Value>>, counts: UnsafeMutableBufferPointer<Int>) {
        guard let array = buffer.baseAddress else { return }
        let count = buffer.count
        // How many keys have each value of each of the eight bytes, counted in one pass.
        for index in 0..<count {
            let prefix = array[index].prefix
            for byte in 0..<8 { counts[byte &* 256 &+ Int(truncatingIfNeeded: prefix &>> UInt64(56 &- 8 &* byte) & 0xff)] &+= 1 }
        }
        let scratch = UnsafeMutablePointer<KeyOrdered<Value>>.allocate(capacity: count)
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
        // Keys alike in their first eight bytes: in order of the whole key.
        var runStart = 0
        for index in 1...count {
            guard index == count || array[index].prefix != array[runStart].prefix else { continue }
            if index - runStart > 1 { buffer[runStart..<index].sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } }
            runStart = index
        }
    }

    /// The first eight UTF-8 bytes of `key` as a big-endian integer, zero-padded: integers ordered as the keys' bytes,
    /// which for the NFC names written is their `String` order.
    static func leadingBytes(_ key: String) -> UInt64 {
        func pack(_ bytes: some Collection<UInt8>) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 56
            for byte in bytes.prefix(8) {
                value |= UInt64(byte) &<< shift
                shift &-= 8
            }
            return value
        }
        return key.utf8.withContiguousStorageIfAvailable { pack($0) } ?? pack(key.utf8)
    }
}
