import Foundation
import PrefsSQLite

/// A large commit's rows in key order (the table's B-tree order), sorted without copies.
extension SQLiteBackend {
    /// The rows of a large commit in the order of the table's B-tree (a key's `<` is its NFC form's byte order, as
    /// SQLite's `BINARY` compares the canonical names written), so that each insert lands beside the last one rather
    /// than on a page anywhere in the table: a hash table's order made a 100k-row batch spill and re-read pages of the
    /// cache, 1.9–2.7× raw sqlite3 writing the same rows in its own order. Small commits keep the table's order.
    ///
    /// The rows are read from the dictionary once, in its order, into an array that ``KeyOrder/sortByKey(_:)`` puts in
    /// order: visiting the dictionary's rows in key order instead (by their positions, sorted) missed the processor's
    /// cache two or three times a row at 100k rows, a quarter of the store's own time in a batch.
    static func forEachInKeyOrder<Rows: Sequence, Value>(
        _ rows: Rows, _ body: (String, Value) throws(SQLiteError) -> Void
    ) throws(SQLiteError) where Rows.Element == (key: String, value: Value) {
        guard rows.underestimatedCount > 64 else {
            for (key, value) in rows { try body(key, value) }
            return
        }
        var entries: [KeyOrder.KeyOrdered<Value>] = []
        entries.reserveCapacity(rows.underestimatedCount)
        for (key, value) in rows { entries.append(KeyOrder.KeyOrdered(prefix: KeyOrder.leadingBytes(key), key: key, value: value)) }
        KeyOrder.sortByKey(&entries)
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
            if let key = rows.key(atBucket: bucket) { entries.append(BucketOrdered(prefix: KeyOrder.leadingBytes(key), bucket: bucket)) }
        }
        KeyOrder.sortByKey(&entries) { rows.key(atBucket: $0.bucket).unsafelyUnwrapped }
        for entry in entries {
            let (key, value) = rows.entry(atBucket: entry.bucket).unsafelyUnwrapped
            try body(key, value)
        }
    }

    /// A change set's row by its bucket in the table (``ChangeTable/entry(atBucket:)``), with its key's first eight bytes.
    struct BucketOrdered: KeyOrder.PrefixOrdered {
        var prefix: UInt64
        var bucket: Int
    }
}
