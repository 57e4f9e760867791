import Foundation
import PrefsSQLite
internal import PrefsJSON

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

    /// A commit's value changes in key order, as the generic one visits any rows, sorting 16 bytes a
    /// row (each row's key prefix and its bucket in the table) rather than the rows themselves: 56 bytes a row twice
    /// over (the array and the sort's scratch) was 11.2 MB beside the change set's own 7.3 MB while a batch of
    /// 100,000 sets committed, the peak of the SQLite store's memory. Reading the rows from the table in key order
    /// misses the processor's cache where the copies did not (see above): a 100k batch measured 1.06–2.00× raw sqlite3
    /// (median 1.22×) for `Int` values against 1.06–1.17× (1.13×), and 0.97–1.11× for `String` against 0.85–1.47×, in
    /// interleaved runs on a shared machine.
    static func forEachInKeyOrder(_ rows: ChangeTable, _ body: (String, Changeset.Change) throws(SQLiteError) -> Void) throws(SQLiteError) {
        guard rows.count > 64 else {
            for (key, value) in rows { try body(key, value) }
            return
        }
        var entries: [BucketOrdered] = []
        entries.reserveCapacity(rows.count)
        for bucket in 0..<rows.bucketCount {
            if let key = rows.key(atBucket: bucket) { entries.append(BucketOrdered(prefix: leadingBytes(key), bucket: bucket)) }
        }
        sortByKey(&entries) { rows.key(atBucket: $0.bucket).unsafelyUnwrapped }
        for entry in entries {
            let (key, value) = rows.entry(atBucket: entry.bucket).unsafelyUnwrapped
            try body(key, value)
        }
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

    /// A change set's row by its bucket in the table (``ChangeTable/entry(atBucket:)``), with its key's first eight bytes.
    struct BucketOrdered: PrefixOrdered {
        var prefix: UInt64
        var bucket: Int
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
                sortByKey(buffer, counts: counts, offset: 0, key: key)
            }
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
