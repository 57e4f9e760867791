import Foundation
internal import PrefsJSON
import PrefsSQLite
import Synchronization

/// A store in an SQLite database, in WAL mode, through `CSQLite`.
///
/// The schema reads plainly in the `sqlite3` shell:
/// ```sql
/// CREATE TABLE prefs (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value) WITHOUT ROWID;
/// CREATE TABLE prefs_declared (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, initial TEXT) WITHOUT ROWID;
/// ```
/// Scalars are stored natively (`int` and `bool` as INTEGER, `double` as REAL, `string`, `date` and `url`
/// as TEXT, `data` as BLOB); arrays, dictionaries and `json` values as JSON text. The file carries
/// `PRAGMA application_id` 0x50726673 ("Prfs") and `PRAGMA user_version`, the schema's version (see
/// ``SQLiteMigrations``: 1 so far).
/// Reads go to the database one key at a time: opening a large store loads nothing.
final class SQLiteBackend: StoreBackend {
    /// The files SQLite keeps beside a database: its write-ahead log, its index, a rollback journal.
    static let sidecarSuffixes = ["-wal", "-shm", "-journal"]

    struct Options: Sendable {
        var durability: Prefs.Durability
        var busyTimeout: Duration
        var recovery: Prefs.Recovery
        /// The schema's versions (``SQLiteMigrations/standard``; tests add a later release's).
        var migrations = SQLiteMigrations.standard
    }

    static let applicationID: Int64 = 0x5072_6673
    static let header = Data("SQLite format 3\u{0}".utf8)
    /// The header's size, for the check at every open (the `Data` above costs a new process more to make than the check).
    static let headerSize = 16

    let path: String
    private let requestedPath: String
    /// The store's folder, resolved once (see ``StoreFolder``): the checks before SQLite opens go through it, and
    /// SQLite is given its resolved path, on which no other user can change a folder.
    private let folder: StoreFolder
    private let options: Options
    /// The open connection; `SQLiteBackend+Declarations.swift` reads declarations through it.
    private(set) var connection: SQLiteConnection {
        didSet {
            writeStatements = WriteStatements()
            #if os(Linux)
            movedWatch?.stop()  // it watched the file the old connection had open
            #endif
        }
    }
    /// The write statements, kept from one write to the next: no lookup of their SQL in the statement cache (a hash of
    /// some 110 bytes) for every row. Forgotten with the connection they belong to.
    private var writeStatements = WriteStatements()
    #if os(Linux)
    /// Vouches that the database was not removed, renamed or replaced since the last check (see ``reopenIfMoved()``).
    private var movedWatch: FileReplacementWatch?
    private var movedWatchUnavailable = false
    #endif
    /// Diagnostics found since the store last asked (``takeReports()``).
    var reports: [Prefs.Diagnostic.Kind] = []
    /// Set when a write found the file deleted or replaced and reopened it; the next `refresh()` reports it.
    private var changedSinceRefresh = false
    private var dataVersion: Int64 = 0
    let recovered: RecoveredFile?
    var openingReport: [Prefs.Diagnostic.Kind] { recovered.map { [$0.diagnosticKind] } ?? [] }

    func takeReports() -> [Prefs.Diagnostic.Kind] {
        defer { reports = [] }
        return reports
    }

    var files: [String] { FileSystem.existing([path] + Self.sidecarSuffixes.map { path + $0 }) }
    /// A read is one prepared statement's lookup in the table's B-tree: the store's cache keeps a bounded part.
    var readsCostOneLookup: Bool { true }
    /// Rows whose key is not in Unicode NFC, by the NFC name, as the last full read found them.
    ///
    /// Swift compares strings by canonical equivalence, so `"\u{E9}"` and `"e\u{301}"` are one key to Prefs, while
    /// SQLite compares bytes. Prefs writes only NFC names (``canonicalName(_:)``), so these rows come from other
    /// writers, such as the `sqlite3` shell. They read as their NFC name (a row spelled in NFC wins), and the next
    /// write or reset of that name removes them, so one key never has two values.
    private var foundSpellings: [String: [String]] = [:]

    init(path requestedPath: String, options: Options) throws(PrefsError) {
        self.requestedPath = requestedPath
        self.options = options
        let folder = try StoreFolder(file: requestedPath)
        self.folder = folder
        self.path = folder.filePath
        let opened: Opened
        (opened, recovered) = try StoreFileRecovery.open(folder, recovery: options.recovery, sidecarSuffixes: ["-wal", "-shm"]) { () throws(PrefsError) in
            try Self.open(folder, options: options)
        }
        connection = opened.connection
        dataVersion = try sqlite { () throws(SQLiteError) in try connection.dataVersion() }
        try noteSquatters(opened)
    }

    /// The files another user put beside the store in a shared folder, while the connection is a read-only one without
    /// them (see ``open(_:options:)``), and the database file's stamp when it was opened; nil otherwise.
    private var squatted: (squatters: [Squatter], stamp: FileSystem.Stamp?)?

    /// Takes note of what an open found beside the database, reporting each file another user put there once.
    private func noteSquatters(_ opened: Opened) throws(PrefsError) {
        guard !opened.squatters.isEmpty else {
            squatted = nil
            return
        }
        let before = squatted?.squatters ?? []
        squatted = (opened.squatters, try folder.existing()?.stamp(of: folder.name))
        for squatter in opened.squatters where !before.contains(squatter) {
            reports.append(.untrustedFileIgnored(path: squatter.path, owner: squatter.owner))
        }
    }

    /// For a store open read-only beside another user's files: opens it again when they are gone (then as usual), or
    /// when the database file changed since; returns whether it did. Nothing for any other store.
    private func reopenIfSquatted() throws(PrefsError) -> Bool {
        guard let squatted, !connection.isInTransaction else { return false }
        guard let directory = try folder.existing() else { return false }
        var unchanged = try directory.stamp(of: folder.name) == squatted.stamp && squatted.stamp != nil
        for squatter in squatted.squatters where unchanged {
            unchanged = try directory.foreignOwner(of: (squatter.path as NSString).lastPathComponent) == squatter.owner
        }
        guard !unchanged else { return false }
        connection.close()
        let opened = try Self.open(folder, options: options)
        connection = opened.connection
        dataVersion = try sqlite { () throws(SQLiteError) in try connection.dataVersion() }
        try noteSquatters(opened)
        return true
    }

    /// Runs SQLite calls, mapping a not-a-database error to ``PrefsError/corruptStore(path:reason:)``.
    static func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(PrefsError) -> T {
        do {
            return try body()
        } catch {
            if error.code == 26 {  // SQLITE_NOTADB
                throw .corruptStore(path: error.path ?? "?", reason: "the file is not an SQLite database (SQLITE_NOTADB); it was left untouched")
            }
            if error.code == 11 {  // SQLITE_CORRUPT
                var detail = error
                detail.path = nil  // corruptStore names it already
                throw .corruptStore(path: error.path ?? "?", reason: detail.description)
            }
            throw .database(DatabaseError(error))
        }
    }

    func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(PrefsError) -> T {
        try Self.sqlite(body)
    }

    var description: String { ".sqlite(\(JSON.string(requestedPath).serialized()))" }

    // MARK: - Reading

    func value(forKey key: String) throws -> StoredValue? {
        try openIfClosed()
        let name = Self.canonicalName(key)
        return try sqlite { () throws(SQLiteError) -> StoredValue? in
            let statement = try connection.statement("SELECT type, value FROM prefs WHERE key = ?1")
            defer { statement.reset() }
            try statement.bind(.text(name))
            if try statement.step() { return Self.storedValue(type: statement.column(0), value: statement.column(1)) }
            for spelling in otherSpellings(of: name) {
                statement.reset()
                try statement.bind(.text(spelling))
                if try statement.step() { return Self.storedValue(type: statement.column(0), value: statement.column(1)) }
            }
            return nil
        }
    }

    func allValues() throws -> [String: StoredValue] {
        try openIfClosed()
        return try sqlite { () throws(SQLiteError) in
            var result: [String: StoredValue] = [:]
            var others: [(name: String, spelling: String, value: StoredValue)] = []
            for row in try connection.rows("SELECT key, type, value FROM prefs") {
                guard case .text(let key) = row[0] else { continue }  // a non-text key is not a Prefs key; `check` reports it
                let name = Self.canonicalName(key)
                let value = Self.storedValue(type: row[1], value: row[2])
                if name.utf8.elementsEqual(key.utf8) {
                    result[name] = value
                } else {
                    others.append((name, key, value))
                }
            }
            // Deterministic whatever the row order: the NFC row, else the spelling first by its bytes.
            others.sort { $0.spelling.utf8.lexicographicallyPrecedes($1.spelling.utf8) }
            foundSpellings = [:]
            for other in others {
                foundSpellings[other.name, default: []].append(other.spelling)
                if result[other.name] == nil { result[other.name] = other.value }
            }
            return result
        }
    }

    /// The spelling a key name is stored under: its Unicode NFC form (ASCII names, the usual case, as they are).
    static func canonicalName(_ key: String) -> String {
        isASCII(key) ? key : key.precomposedStringWithCanonicalMapping
    }

    /// Whether every byte of `name` is ASCII, checked on its contiguous UTF-8 (the `UTF8View` iterator costs a few
    /// times more, and this runs for every row written).
    private static func isASCII(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } } ?? name.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The spellings other than itself that a row of the NFC name `name` may have: its NFD form (what programs on
    /// Apple platforms tend to write) and any other spelling the last full read found. None for ASCII names.
    private func otherSpellings(of name: String) -> [String] {
        guard !Self.isASCII(name) else { return [] }
        var result: [String] = []
        for spelling in [name.decomposedStringWithCanonicalMapping] + foundSpellings[name, default: []]
        where !spelling.utf8.elementsEqual(name.utf8) && !result.contains(where: { $0.utf8.elementsEqual(spelling.utf8) }) {
            result.append(spelling)
        }
        return result
    }

    // MARK: - Writing

    func apply(_ changes: Changeset) throws {
        try requireWritable()
        try reopenIfMoved()
        if changes.declarations.isEmpty, changes.removedDeclarations.isEmpty, changes.values.count == 1, let (key, change) = changes.values.first,
            Self.isASCII(key) || otherSpellings(of: Self.canonicalName(key)).isEmpty
        {
            // One change under one spelling: a single statement in autocommit mode is already atomic.
            try sqlite { () throws(SQLiteError) in try write(key, change) }
            return
        }
        try applyInTransaction(changes)
    }

    func beginTransaction() throws {
        try requireWritable()
        try reopenIfMoved()
        try sqlite { () throws(SQLiteError) in try connection.execute("BEGIN IMMEDIATE") }
    }

    /// Throws ``PrefsError/readOnlyStore(path:reason:)`` for a store opened read-only; for one opened read-only beside
    /// another user's file (that is still there), the refusal that names it.
    private func requireWritable() throws(PrefsError) {
        if try reopenIfSquatted() { changedSinceRefresh = true }
        if let squatter = squatted?.squatters.first { throw squatter.refusal }
        if connection.isReadOnly, let reason = PrefsError.readOnlyReason(path: path) { throw .readOnlyStore(path: path, reason: reason) }
    }

    /// Opens the database again when its connection is closed: by ``suspend()``, or by a reopen that failed (whose
    /// error was thrown then). One comparison while it is open.
    @inline(__always)
    func openIfClosed() throws(PrefsError) {
        if connection.isClosed { try reopenIfMoved() }
    }

    /// Another process deleted the file or renamed another over it: the open connection would write to an
    /// inode nobody else reads. Open the file now at the path (a deleted store starts empty, as after a reset).
    ///
    /// The check is SQLite's `SQLITE_FCNTL_HAS_MOVED`, a `stat` of the path; on Linux, once it has passed, an inotify
    /// watch on the file vouches for it until something happens to it (``FileReplacementWatch``), one `ioctl` instead.
    private func reopenIfMoved() throws(PrefsError) {
        #if os(Linux)
        if !connection.isClosed, !connection.isInTransaction, let watch = movedWatch, watch.isQuiet() { return }
        #endif
        // Closed: an earlier reopen failed (its error was thrown then); try again.
        if !connection.isClosed, !connection.isInTransaction { FileChecks.slow.add(1, ordering: .relaxed) }
        guard connection.isClosed || (!connection.isInTransaction && connection.fileHasMoved()) else {
            armMovedWatch()
            return
        }
        if !connection.isClosed {
            // The WAL beside the path still holds this file's frames, and SQLite neither checkpoints nor removes
            // it when closing a moved file: the next connection at the path would replay them into the new file.
            // Move them into the old file and empty the WAL first; failing that, the file is gone either way.
            _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        let opened = try Self.open(folder, options: options)
        connection = opened.connection
        dataVersion = try sqlite { () throws(SQLiteError) in try connection.dataVersion() }
        try noteSquatters(opened)
        changedSinceRefresh = true
    }

    /// Watches the database file for a replacement, and makes sure it is the file the connection has open: the watch
    /// is set first, so a replacement made after the check is an event on it.
    private func armMovedWatch() {
        #if os(Linux)
        guard !connection.isInTransaction, !connection.isReadOnly else { return }
        if movedWatch == nil, !movedWatchUnavailable {
            movedWatch = FileReplacementWatch()
            if movedWatch == nil {
                movedWatchUnavailable = true
                if let reason = FileWatcher.shared.takeInstanceLimitReport() { reports.append(.fileWatchUnavailable(reason: reason)) }
            }
        }
        guard let movedWatch, movedWatch.watched == nil else { return }
        do throws(FileWatcher.Unavailable) {
            try movedWatch.watch(fileAt: path)
        } catch {
            // The system's limit of watches: the long way from now on (the process says so once).
            self.movedWatch = nil
            movedWatchUnavailable = true
            if let reason = FileWatcher.shared.takeLimitReport(error) { reports.append(.fileWatchUnavailable(reason: reason)) }
            return
        }
        FileChecks.slow.add(1, ordering: .relaxed)
        if connection.fileHasMoved() { movedWatch.stop() }  // the next check reopens the file the long way
        #endif
    }

    func commitTransaction(_ changes: Changeset) throws {
        try sqlite { () throws(SQLiteError) in
            try Self.forEachInKeyOrder(changes.values) { (key, change) throws(SQLiteError) in try write(key, change) }
            for key in changes.removedDeclarations {
                let statement = try connection.statement("DELETE FROM prefs_declared WHERE key = ?1")
                defer { statement.reset() }
                try statement.bind(.text(Self.canonicalName(key)))
                _ = try statement.step()
            }
            // Whether the renames table exists, asked once per commit (it only ever appears, in a commit like this one).
            var hasRenames = changes.declarations.isEmpty ? false : try hasRenameTable()
            try Self.forEachInKeyOrder(changes.declarations) { (key, declaration) throws(SQLiteError) in
                let statement = try connection.statement(
                    "INSERT INTO prefs_declared (key, type, initial) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET type = excluded.type, initial = excluded.initial"
                )
                defer { statement.reset() }
                try statement.bind(
                    .text(Self.canonicalName(key)), .text(declaration.type.description), declaration.initial.map { .text($0.serialized()) } ?? .null)
                _ = try statement.step()
                try recordRenames(Self.canonicalName(key), declaration.formerNames, tableExists: &hasRenames)
            }
            try connection.execute("COMMIT")
        }
    }

    func rollbackTransaction() {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }  // nothing to lose: the transaction is abandoned
    }

    /// The statements that write rows (see ``writeStatements``); a finalized one (the connection closed it) is
    /// prepared again.
    private struct WriteStatements {
        var upsert: SQLiteStatement?
        var delete: SQLiteStatement?
    }

    private static let upsertSQL =
        "INSERT INTO prefs (key, type, value) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET type = excluded.type, value = excluded.value"
    private static let deleteSQL = "DELETE FROM prefs WHERE key = ?1"

    private func write(_ key: String, _ change: Changeset.Change) throws(SQLiteError) {
        if Self.isASCII(key) { return try writeRow(key, change) }  // its own NFC form, with no other spelling
        let key = Self.canonicalName(key)
        for spelling in otherSpellings(of: key) {
            try writeRow(spelling, .remove)
        }
        try writeRow(key, change)
    }

    /// Writes the row whose key is exactly `key`, byte for byte.
    private func writeRow(_ key: String, _ change: Changeset.Change) throws(SQLiteError) {
        switch change {
        case .set(let value):
            let statement: SQLiteStatement
            if let held = writeStatements.upsert, !held.isFinalized {
                statement = held
            } else {
                statement = try connection.statement(Self.upsertSQL)
                writeStatements.upsert = statement
            }
            // The statement's three parameters, bound one by one: the key where the string holds it and the type name
            // of a scalar as a static string, neither copied, and no `SQLiteValue` for the key.
            try statement.withText(key, at: 1) { () throws(SQLiteError) in
                defer { statement.reset() }
                if let name = value.type.staticName {
                    try statement.bind(static: name, at: 2)
                } else {
                    try statement.bind(text: value.type.description, at: 2)
                }
                let stored = Self.sqliteValue(value)
                if case .text(let text) = stored {
                    // A string's text, where the string holds it too (reset before it is unbound).
                    try statement.withText(text, at: 3) { () throws(SQLiteError) in
                        defer { statement.reset() }
                        _ = try statement.step()
                    }
                } else {
                    try statement.bind(stored, at: 3)
                    _ = try statement.step()
                }
            }
        case .remove:
            let statement: SQLiteStatement
            if let held = writeStatements.delete, !held.isFinalized {
                statement = held
            } else {
                statement = try connection.statement(Self.deleteSQL)
                writeStatements.delete = statement
            }
            try statement.withText(key, at: 1) { () throws(SQLiteError) in
                defer { statement.reset() }
                _ = try statement.step()
            }
        }
    }

    func refresh() throws -> Bool {
        if try reopenIfSquatted() { changedSinceRefresh = true }
        try reopenIfMoved()
        defer { changedSinceRefresh = false }
        let current = try sqlite { () throws(SQLiteError) in try connection.dataVersion() }
        defer { dataVersion = current }
        return current != dataVersion || changedSinceRefresh
    }

    // MARK: - Value mapping

    static func sqliteValue(_ value: StoredValue) -> SQLiteValue {
        if case .text(let text) = value.form, value.type == .json { return .text(text) }  // a Codable's text as it was encoded
        switch (value.type, value.json) {
        case (.bool, .bool(let flag)): return .integer(flag ? 1 : 0)
        case (.int, .int(let number)), (.uint, .int(let number)): return .integer(Int64(number))
        case (.double, .double(let number)): return .real(number)
        case (.double, .int(let number)): return .real(Double(number))
        case (.data, .string(let base64)):
            if let data = Data(base64Encoded: base64) { return .blob(data) }
            return .text(base64)
        case (.string, .string(let text)), (.date, .string(let text)), (.url, .string(let text)), (.double, .string(let text)),
            (.uint, .string(let text)):
            return .text(text)
        default:
            return .text(value.storageText)
        }
    }

    static func storedValue(type typeColumn: SQLiteValue, value: SQLiteValue) -> StoredValue {
        let typeName: String
        if case .text(let text) = typeColumn { typeName = text } else { typeName = "" }
        let type = ValueType(typeName) ?? .other(typeName)
        let json: JSON
        switch value {
        case .null: json = .null
        case .integer(let number): json = type == .bool ? .bool(number != 0) : .int(Int(number))
        case .real(let number): json = .double(number)
        case .blob(let data): json = .string(data.base64EncodedString())
        case .text(let text):
            switch type {
            case .string, .date, .url, .double, .data, .uint: json = .string(text)
            case .json: return StoredValue(type: type, uncheckedJSONText: text)  // a Codable's text, decoded once when read
            default: json = (try? JSON.parse(text)) ?? .string(text)  // unparseable: kept as text, and reading it reports a mismatch
            }
        }
        return StoredValue(type: type, json: json)
    }

    // MARK: - Checking and closing

    func integrityProblems() throws -> [String] {
        try openIfClosed()
        var problems = try sqlite { () throws(SQLiteError) in try connection.integrityCheck() }
        for (key, value) in try allValues().sorted(by: { $0.key < $1.key }) {
            if let problem = value.typeProblem ?? value.shapeProblem() { problems.append("key \(JSON.string(key).serialized()): \(problem)") }
        }
        for (name, spellings) in foundSpellings.sorted(by: { $0.key < $1.key }) {
            problems.append(
                "key \(JSON.string(name).serialized()) is also stored under \(spellings.count) spelling(s) not in Unicode NFC; "
                    + "the NFC row is read, and the next write or reset of the key removes the others")
        }
        let nonText = try sqlite { () throws(SQLiteError) in
            try connection.rows("SELECT count(*) FROM prefs WHERE typeof(key) != 'text'").first?.first
        }
        if case .integer(let count)? = nonText, count > 0 {
            problems.append("\(count) row(s) in prefs have a key that is not text; Prefs ignores them")
        }
        return problems
    }

    /// `PRAGMA quick_check`: a damaged page anywhere in the file, even one no read has touched yet.
    func quickCheckProblems() throws -> [String] {
        try openIfClosed()
        return try sqlite { () throws(SQLiteError) in try connection.quickCheck() }
    }

    /// Closes the connection, which releases SQLite's POSIX locks on the database and its `-shm` index (an open
    /// connection in WAL mode holds a read lock on each, even idle); the last connection to the file checkpoints the WAL
    /// as it closes. The next call opens the file again (``openIfClosed()``), and that refresh reports a change, so the
    /// store drops what it cached from before. Never in a transaction (the store calls it between calls).
    func suspend() {
        guard !connection.isClosed, !connection.isInTransaction else { return }
        connection.close()
        #if os(Linux)
        movedWatch?.stop()  // it vouched for the file the closed connection had open
        #endif
    }

    func close() {
        connection.close()
        #if os(Linux)
        movedWatch = nil
        #endif
    }
}
