import BenchSQLite
import Foundation
import Synchronization

// What a user would otherwise choose: the floors each backend is compared with, and the peer.

/// A Dictionary behind a `Mutex`: the floor for cache-hit reads and memory writes.
final class MutexDictionary<V: Sendable>: Sendable {
    private let storage: Mutex<[String: V]>

    init(_ values: [String: V] = [:]) { storage = Mutex(values) }

    func get(_ key: String) -> V? { storage.withLock { $0[key] } }
    func set(_ value: V, for key: String) { storage.withLock { $0[key] = value } }
    func set(_ values: [V], for keys: [String], count: Int) {
        storage.withLock { dictionary in
            for index in 0..<count { dictionary[keys[index]] = values[index] }
        }
    }
}

/// Raw sqlite3 calls on the Prefs schema, in WAL mode with `synchronous=NORMAL`, with cached prepared statements.
final class RawSQLite {
    static let schema = "CREATE TABLE IF NOT EXISTS prefs (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID"
    static let upsertSQL =
        "INSERT INTO prefs (key, type, value) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET type = excluded.type, value = excluded.value"
    static let selectSQL = "SELECT type, value FROM prefs WHERE key = ?1"

    private var db: OpaquePointer?
    private var upsert: OpaquePointer?
    private var select: OpaquePointer?

    /// Opens (creating when missing) and configures the connection the way an app using sqlite3 directly would.
    init(path: String, createSchema: Bool = true) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchError("sqlite3_open_v2 \(path): \(message)")
        }
        sqlite3_busy_timeout(db, 5000)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
        if createSchema { try execute(Self.schema) }
    }

    deinit { close() }

    var message: String { db.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(message)") }
    }

    private func prepared(_ cached: inout OpaquePointer?, _ sql: String) throws -> OpaquePointer {
        if let cached { return cached }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare \(sql): \(message)")
        }
        cached = statement
        return statement
    }

    /// One upsert; in autocommit mode it is its own transaction.
    func set<V: BenchValue>(_ value: V, for key: String) throws {
        let statement = try prepared(&upsert, Self.upsertSQL)
        defer { sqlite3_reset(statement) }
        sqlite3_bind_text(statement, 1, key, -1, prefs_bench_sqlite_transient())
        sqlite3_bind_text(statement, 2, V.typeName, -1, prefs_bench_sqlite_transient())
        value.bind(to: statement, at: 3)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("upsert: \(message)") }
    }

    func get<V: BenchValue>(_ key: String, as _: V.Type = V.self) throws -> V? {
        let statement = try prepared(&select, Self.selectSQL)
        defer { sqlite3_reset(statement) }
        sqlite3_bind_text(statement, 1, key, -1, prefs_bench_sqlite_transient())
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return V.column(of: statement, at: 1)
        case SQLITE_DONE: return nil
        default: throw BenchError("select: \(message)")
        }
    }

    /// `count` upserts in one transaction.
    func setAll<V: BenchValue>(_ values: [V], for keys: [String], count: Int) throws {
        try execute("BEGIN IMMEDIATE")
        for index in 0..<count { try set(values[index], for: keys[index]) }
        try execute("COMMIT")
    }

    func close() {
        sqlite3_finalize(upsert)
        sqlite3_finalize(select)
        upsert = nil
        select = nil
        if let db { sqlite3_close_v2(db) }
        db = nil
    }
}

/// JSONEncoder plus an atomic file replace, and JSONDecoder loading it: the floor for the JSON backend.
/// The document has the shape of a Prefs JSON store, encoded with the same formatting (pretty, sorted keys).
enum JSONBaseline {
    struct Entry<V: BenchValue>: Codable {
        var type: String
        var value: V
    }

    struct Declaration<V: BenchValue>: Codable {
        var type: String
        var initial: V?
    }

    struct Document<V: BenchValue>: Codable {
        var format = "prefs"
        var formatVersion = 1
        var values: [String: Entry<V>] = [:]
        var declared: [String: Declaration<V>]? = [:]
    }

    static func document<V: BenchValue>(_ values: [String: V]) -> Document<V> {
        Document(values: values.mapValues { Entry(type: V.typeName, value: $0) })
    }

    /// Encodes `document` and replaces the file at `path` atomically (write a temporary file, rename).
    static func save<V: BenchValue>(_ document: Document<V>, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(document)
        data.append(0x0A)
        try replace(path, with: data)
    }

    static func load<V: BenchValue>(_ path: String, as _: V.Type = V.self) throws -> Document<V> {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(Document<V>.self, from: data)
    }

    /// Writes `data` to a temporary file beside `path` and renames it over `path`.
    static func replace(_ path: String, with data: Data) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchError("create \(temporary): errno \(errno)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == data.count else { throw BenchError("write \(temporary): short write") }
        guard rename(temporary, path) == 0 else { throw BenchError("rename \(temporary): errno \(errno)") }
    }
}

/// Foundation's UserDefaults: the peer most apps use today. On Linux it writes `~/.config/<suite>.plist`
/// (`$XDG_CONFIG_HOME/<suite>.plist`); every suite has a unique name and its file is removed afterwards.
final class DefaultsBaseline {
    let suite: String
    let defaults: UserDefaults
    private static let counter = Mutex(0)

    /// A fresh, uniquely named suite.
    init() throws {
        let serial = Self.counter.withLock { value in
            value += 1; return value
        }
        suite = "prefs-bench-\(getpid())-\(serial)"
        guard let defaults = UserDefaults(suiteName: suite) else { throw BenchError("UserDefaults(suiteName: \(suite))") }
        self.defaults = defaults
    }

    /// Opens an existing suite (in a child process).
    init(existing suite: String) throws {
        self.suite = suite
        guard let defaults = UserDefaults(suiteName: suite) else { throw BenchError("UserDefaults(suiteName: \(suite))") }
        self.defaults = defaults
    }

    var plistPath: String { Scratch.configHome + "/" + suite + ".plist" }

    /// Fills the suite in one step (setting N keys one by one costs O(N²) on this platform) and persists it.
    func fill<V: BenchValue>(_ names: [String], _ values: [V]) {
        var domain: [String: Any] = [:]
        for (name, value) in zip(names, values) { domain[name] = value.propertyListValue }
        defaults.setPersistentDomain(domain, forName: suite)
        defaults.synchronize()
    }

    /// Removes the suite's values and its file.
    func remove() {
        defaults.removePersistentDomain(forName: suite)
        unlink(plistPath)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
