import CLMDB
import Foundation
import Prefs

// LMDB: the fast peer a user would pick for speed (a B-tree in a memory-mapped file, copy-on-write transactions).
// A baseline of prefs-bench only (the CLMDB system library); no Prefs library links it.

/// One LMDB environment in its own scratch directory with its unnamed database, removed by `close()`.
///
/// Opened with `MDB_NOSYNC`: a commit writes its pages to the file but does not fsync, so a committed transaction
/// survives a crash of the app (the kernel has the pages) but not a power loss, the durability Prefs' durable sets
/// give. Reads go through one long-lived read-only transaction, reset after each get and renewed before the next:
/// each get sees the latest commit, as a Prefs get does, without allocating a transaction per read (LMDB's
/// recommended pattern for frequent short reads).
final class LMDBBaseline {
    /// Virtual address space for the map: 256 MiB, far above 100k keys of short values (a few MiB with B-tree
    /// overhead and the free pages of copy-on-write); the file grows only as pages are used.
    static let mapSize = 256 << 20

    let directory: String
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0
    private var reader: OpaquePointer?

    init(label: String = "lmdb") throws {
        directory = Scratch.directory(label)
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, Self.mapSize), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory, UInt32(MDB_NOSYNC), 0o600), "mdb_env_open \(directory)")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        guard mdb_dbi_open(txn, nil, 0, &dbi) == MDB_SUCCESS else {
            mdb_txn_abort(txn)
            throw BenchError("mdb_dbi_open")
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    deinit { close() }

    private func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
        guard rc == MDB_SUCCESS else { throw BenchError("\(what()): \(String(cString: mdb_strerror(rc)))") }
    }

    /// One put in its own write transaction, committed.
    func set(_ value: MDB_val, for key: MDB_val) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        var key = key, value = value
        let rc = mdb_put(txn, dbi, &key, &value, 0)
        guard rc == MDB_SUCCESS else { mdb_txn_abort(txn); try check(rc, "mdb_put"); return }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// `count` puts in one write transaction, committed.
    func setAll(_ values: [MDB_val], for keys: [MDB_val], count: Int) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        for index in 0..<count {
            var key = keys[index], value = values[index]
            let rc = mdb_put(txn, dbi, &key, &value, 0)
            guard rc == MDB_SUCCESS else { mdb_txn_abort(txn); try check(rc, "mdb_put"); return }
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// The size of the value stored for `key`, or nil when none is: the bytes are looked up, not decoded (they are
    /// valid only until the read transaction is reset).
    func get(_ key: MDB_val) throws -> Int? {
        if let reader {
            try check(mdb_txn_renew(reader), "mdb_txn_renew")
        } else {
            try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &reader), "mdb_txn_begin (read-only)")
        }
        defer { mdb_txn_reset(reader) }
        var key = key, value = MDB_val()
        switch mdb_get(reader, dbi, &key, &value) {
        case MDB_SUCCESS: return value.mv_size
        case MDB_NOTFOUND: return nil
        case let rc: try check(rc, "mdb_get"); return nil
        }
    }

    func close() {
        if let reader { mdb_txn_abort(reader) }
        reader = nil
        if let env { mdb_env_close(env) }
        env = nil
        Scratch.remove(directory)
    }
}

/// Keys and values as LMDB takes them, made before any timing: a key is its name's UTF-8, a value the JSON text
/// Prefs stores for it (`42`, `"value-1-0-lorem-ipsum"`). All bytes live in one buffer this object owns.
final class LMDBBytes {
    let names: [MDB_val]
    /// The values of each variant of the data set (see `DataSet.values(round:)`).
    private let variants: [[MDB_val]]
    private let buffer: UnsafeMutableRawBufferPointer

    init<V: BenchValue>(names: [String], values: [[V]] = []) throws {
        let nameBytes = names.map { Array($0.utf8) }
        let valueBytes = try values.map { variant in try variant.map { Array(try StoredValue($0).jsonText.utf8) } }
        let total = nameBytes.reduce(0) { $0 + $1.count } + valueBytes.joined().reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 8)
        var offset = 0
        func place(_ bytes: [UInt8]) -> MDB_val {
            let start = buffer.baseAddress! + offset
            bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            offset += bytes.count
            return MDB_val(mv_size: bytes.count, mv_data: start)
        }
        self.names = nameBytes.map(place)
        variants = valueBytes.map { $0.map(place) }
        self.buffer = buffer
    }

    convenience init<V: BenchValue>(_ data: DataSet<V>) throws {
        try self.init(names: data.names, values: data.values)
    }

    deinit { buffer.deallocate() }

    func values(round: Int) -> [MDB_val] { variants[(round + 2) % 2] }
}
