import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsSupport

/// One SQLite database connection (https://www.sqlite.org/c3ref/sqlite3.html).
///
/// Not thread-safe and not `Sendable`: it is opened with `SQLITE_OPEN_NOMUTEX`, so the owner (the
/// store) must serialize every use, statements included, behind its own lock.
///
/// Requires SQLite 3.37 or later (`sqlite3_changes64`, `SQLITE_OPEN_EXRESCODE`).
///
/// ## File permissions
/// SQLite creates a missing database file with mode 0644 minus the umask
/// (`SQLITE_DEFAULT_FILE_PERMISSIONS`). Preferences may hold private data, so before opening a path
/// that does not exist yet the connection creates it itself with `open(O_CREAT | O_EXCL, 0600)`:
/// a 0-byte file is a valid empty database (https://www.sqlite.org/fileformat2.html). SQLite's unix
/// VFS then gives the `-wal`, `-shm` and `-journal` files it creates the permissions of the database
/// file ("SQLite attempts to set the permissions of journal files to match the database",
/// https://www.sqlite.org/tempfiles.html), so they are 0600 too. Existing files keep their mode.
package final class SQLiteConnection {
    /// How to open the database (https://www.sqlite.org/c3ref/open.html).
    package struct OpenOptions {
        /// `SQLITE_OPEN_READONLY` instead of `SQLITE_OPEN_READWRITE`.
        package var readOnly = false
        /// Create the file (mode 0600) when missing. Ignored when `readOnly`.
        package var create = true
        /// How long a statement waits for another connection's lock before failing with
        /// `SQLITE_BUSY` (https://www.sqlite.org/c3ref/busy_timeout.html).
        package var busyTimeout: Duration = .seconds(5)
        /// Read-only, telling SQLite nothing changes the file while it is open (the `immutable=1` URI parameter,
        /// https://www.sqlite.org/uri.html#uriimmutable): no locks, no `-shm`, so a WAL database in a directory this
        /// user cannot write opens. Only for a file whose WAL is empty or absent, as a one-off read.
        package var immutable = false
        /// `SQLITE_OPEN_NOFOLLOW`: fail with `SQLITE_CANTOPEN_SYMLINK` rather than follow a symbolic link anywhere in the
        /// path, for a caller that resolved the path itself and checked what it names.
        package var noFollow = false

        package init(readOnly: Bool = false, create: Bool = true, busyTimeout: Duration = .seconds(5), immutable: Bool = false, noFollow: Bool = false) {
            self.readOnly = readOnly || immutable
            self.create = create
            self.busyTimeout = busyTimeout
            self.immutable = immutable
            self.noFollow = noFollow
        }
    }

    /// Transaction modes (https://www.sqlite.org/lang_transaction.html).
    package enum TransactionKind: Sendable {
        /// Takes the write lock at the first write.
        case deferred
        /// Takes the write lock at `BEGIN` (waiting up to the busy timeout): no `SQLITE_BUSY` later.
        case immediate
        /// Like `immediate`; in rollback-journal mode also keeps readers out.
        case exclusive

        package var beginSQL: String {
            switch self {
            case .deferred: "BEGIN DEFERRED"
            case .immediate: "BEGIN IMMEDIATE"
            case .exclusive: "BEGIN EXCLUSIVE"
            }
        }
    }

    /// The path given at open, as reported in errors.
    package let path: String
    /// Whether the connection was opened read-only.
    package let isReadOnly: Bool
    /// `nil` once closed.
    private var db: OpaquePointer?
    /// Cached statements, found by their SQL text (see ``statement(_:)``): a list, as a connection has a dozen at most,
    /// rather than a dictionary, whose type a new process instantiates at its first statement through a lookup among
    /// every protocol conformance loaded (an eighth of a store's open and first reads at launch).
    private var cache: [SQLiteStatement] = []
    /// The database file's device and inode when it was opened (nil for in-memory and temporary databases).
    private var identity: FileIdentity?

    /// Opens (and, unless told otherwise, creates with mode 0600) the database at `path`.
    ///
    /// Uses `sqlite3_open_v2` (https://www.sqlite.org/c3ref/open.html) with `SQLITE_OPEN_NOMUTEX` and
    /// `SQLITE_OPEN_EXRESCODE`, then sets the busy timeout. `path` is a plain file name (URIs are not
    /// enabled); `":memory:"` and `""` open private in-memory and temporary databases.
    ///
    /// Opening succeeds on a file that is not a database; the first read fails with
    /// `SQLITE_NOTADB` (see ``checkIsDatabase()``).
    package init(path: String, options: OpenOptions = OpenOptions()) throws(SQLiteError) {
        self.path = path
        isReadOnly = options.readOnly
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if options.noFollow { flags |= SQLITE_OPEN_NOFOLLOW }
        var createdFile = false
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.create {
                flags |= SQLITE_OPEN_CREATE
                createdFile = createPrivateFileIfMissing(path)
            }
        }
        var target = path
        if options.immutable {
            // A URI names the file: "?", "#" and "%" in the path are escaped (https://www.sqlite.org/uri.html).
            var uri = Array("file:".utf8)
            for byte in path.utf8 {
                if [UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "%")].contains(byte) {
                    uri += Array(String(format: "%%%02X", byte).utf8)
                } else {
                    uri.append(byte)
                }
            }
            target = String(decoding: uri + Array("?immutable=1".utf8), as: UTF8.self)
            flags |= SQLITE_OPEN_URI
        }
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(target, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            // "A database connection handle is usually returned … even if an error occurs" and must
            // be closed (https://www.sqlite.org/c3ref/open.html).
            let error = SQLiteError(resultCode: rc == SQLITE_OK ? SQLITE_CANTOPEN : rc, db: handle, sql: nil, path: path)
            sqlite3_close_v2(handle)
            if createdFile {
                _ = unlink(path)  // do not leave behind the empty file created above
            }
            throw error
        }
        db = handle
        identity = path == ":memory:" ? nil : FileIdentity(path: path)
        if let identity { openFiles.withLock { $0.add(identity) } }
        // Also enables extended codes where SQLITE_OPEN_EXRESCODE is not honoured.
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Self.milliseconds(options.busyTimeout))
    }

    deinit {
        close()
    }

    /// Finalizes every cached statement, then closes with `sqlite3_close_v2`
    /// (https://www.sqlite.org/c3ref/close.html), which defers the actual close until statements still
    /// referenced elsewhere are finalized. Idempotent; later calls throw `SQLITE_MISUSE`.
    package func close() {
        guard let db else { return }
        for statement in cache {
            statement.finalize()
        }
        cache.removeAll()
        sqlite3_close_v2(db)
        self.db = nil
        if let identity {
            openFiles.withLock { $0.remove(identity) }
        }
    }

    /// Whether a connection of this process has the file at `path` open. Reading such a file through a descriptor
    /// of one's own and closing it would drop the connection's POSIX locks, so callers that only want to know
    /// what the file is ask this first.
    package static func isOpenInProcess(_ path: String) -> Bool {
        guard let identity = FileIdentity(path: path) else { return false }
        return openFiles.withLock { $0.contains(identity) }
    }

    package var isClosed: Bool { db == nil }

    /// Whether the database file this connection has open is no longer at its path: deleted, or replaced by a
    /// rename (`SQLITE_FCNTL_HAS_MOVED`, https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html).
    /// Writes through such a connection reach no other process.
    package func fileHasMoved() -> Bool {
        guard let db else { return false }
        var moved: Int32 = 0
        return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Keeps the `-wal` and `-shm` files when the last connection closes (`SQLITE_FCNTL_PERSIST_WAL`,
    /// https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html#sqlitefcntlpersistwal), rather than deleting them:
    /// in a folder other users can write, whoever creates them next would otherwise choose what they are.
    package func keepWALFilesOnClose() throws(SQLiteError) {
        let db = try handle()
        var keep: Int32 = 1
        let rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &keep)
        guard rc == SQLITE_OK else { throw SQLiteError(resultCode: rc, db: db, sql: nil, path: path) }
    }

    /// The raw handle, or an error once closed.
    private func handle(for sql: String? = nil) throws(SQLiteError) -> OpaquePointer {
        guard let db else {
            throw SQLiteError(misuse: "connection is closed", sql: sql, path: path)
        }
        return db
    }

    // MARK: - Statements

    /// Runs one or more `;`-separated statements without parameters (`sqlite3_exec`,
    /// https://www.sqlite.org/c3ref/exec.html): meant for schema scripts.
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try handle(for: sql)
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            var error = SQLiteError.raised(rc, db: db, sql: sql, path: path)
            if let message {
                error.message = String(cString: message)
            }
            sqlite3_free(message)
            throw error
        }
    }

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    ///
    /// Statements are prepared once per SQL text with `SQLITE_PREPARE_PERSISTENT`
    /// (https://www.sqlite.org/c3ref/prepare.html) and kept until ``close()``; a statement whose
    /// `step` fails is evicted and finalized. Use it only for a fixed set of SQL texts, never for SQL
    /// built from data, and never re-entrantly (the same SQL inside its own row loop).
    package func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache.first(where: { $0.sql == sql }) {
            cached.reset()
            cached.clearBindings()
            return cached
        }
        let statement = try prepare(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        statement.cache = self
        cache.append(statement)
        return statement
    }

    /// A new statement for one-off SQL, finalized when released.
    package func prepareUncached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try prepare(sql, flags: 0)
    }

    /// Removes `statement` from the cache (if it is the cached one for its SQL) and finalizes it.
    package func evict(_ statement: SQLiteStatement) {
        cache.removeAll { $0 === statement }
        statement.cache = nil
        statement.finalize()
    }

    /// `sqlite3_prepare_v3` (https://www.sqlite.org/c3ref/prepare.html); exactly one statement.
    private func prepare(_ sql: String, flags: UInt32) throws(SQLiteError) -> SQLiteStatement {
        let db = try handle(for: sql)
        var handle: OpaquePointer?
        var rc: Int32 = SQLITE_OK
        var trailing: String?
        sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            rc = sqlite3_prepare_v3(db, start, -1, flags, &handle, &tail)
            if rc == SQLITE_OK, let tail, tail.pointee != 0 {
                trailing = String(cString: tail)
            }
        }
        guard rc == SQLITE_OK else {
            throw SQLiteError.raised(rc, db: db, sql: sql, path: path)
        }
        guard let handle else {
            throw SQLiteError(misuse: "no SQL statement to prepare", sql: sql, path: path)
        }
        let statement = SQLiteStatement(handle: handle, sql: sql, path: path)
        if let trailing, containsStatement(trailing, db: db) {
            throw SQLiteError(
                misuse: "multiple statements found; use execute(_:) for scripts", sql: sql, path: path
            )
        }
        return statement
    }

    /// Whether `sql` (the tail after a prepared statement) holds more than whitespace, `;` and comments.
    private func containsStatement(_ sql: String, db: OpaquePointer) -> Bool {
        if sql.allSatisfy({ $0.isWhitespace || $0 == ";" }) { return false }
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, 0, &handle, nil)
        sqlite3_finalize(handle)
        return rc != SQLITE_OK || handle != nil
    }

    // MARK: - Running

    /// Runs `sql` (a cached statement) to completion, ignoring any rows.
    package func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Every row of `sql` (a cached statement).
    package func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        return try Self.collectRows(statement)
    }

    /// The first row of `sql` (a cached statement), or `nil` when there is none.
    package func firstRow(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteValue]? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return (0..<statement.columnCount).map { statement.column($0) }
    }

    /// The first column of the first row of `sql` (a cached statement), or `nil` when there is no row.
    package func firstValue(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return statement.column(0)
    }

    /// Calls `body` with the cached statement for `sql` (reset, bindings cleared) and resets it
    /// afterwards, even when `body` throws: the allocation-free path for hot reads and writes.
    package func withStatement<R>(_ sql: String, _ body: (SQLiteStatement) throws -> R) throws -> R {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try body(statement)
    }

    private static func collectRows(_ statement: SQLiteStatement) throws(SQLiteError) -> [[SQLiteValue]] {
        let count = statement.columnCount
        var rows: [[SQLiteValue]] = []
        while try statement.step() {
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(count))
            for index in 0..<count {
                row.append(statement.column(index))
            }
            rows.append(row)
        }
        return rows
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction (https://www.sqlite.org/lang_transaction.html) and commits.
    ///
    /// If `body` or `COMMIT` throws, the transaction is rolled back and the original error rethrown.
    /// When SQLite already ended the transaction (it rolls back by itself after some errors, see
    /// https://www.sqlite.org/lang_transaction.html#response_to_errors_within_a_transaction, or
    /// `body` ran `ROLLBACK`), `sqlite3_get_autocommit` says so and no `ROLLBACK` is issued. If
    /// `ROLLBACK` itself fails while the transaction is still open, that error is thrown instead,
    /// because the connection is then in a state the caller must know about.
    ///
    /// Transactions do not nest: calling this inside one fails at `BEGIN` with `SQLITE_ERROR`.
    package func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try run(kind.beginSQL)
        let result: T
        do {
            result = try body()
            try run("COMMIT")
        } catch {
            try rollbackIfActive()
            throw error
        }
        return result
    }

    private func rollbackIfActive() throws(SQLiteError) {
        guard isInTransaction else { return }
        do {
            try run("ROLLBACK")
        } catch {
            if isInTransaction { throw error }
        }
    }

    /// Whether a transaction is open (https://www.sqlite.org/c3ref/get_autocommit.html).
    package var isInTransaction: Bool {
        guard let db else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    /// Rows changed by the last `INSERT`, `UPDATE` or `DELETE` (https://www.sqlite.org/c3ref/changes.html).
    package var changes: Int {
        guard let db else { return 0 }
        return Int(sqlite3_changes64(db))
    }

    // MARK: - Database state

    /// `PRAGMA data_version` (https://www.sqlite.org/pragma.html#pragma_data_version): a value that
    /// changes when another connection (in this process or another) commits to the database, and
    /// stays the same across this connection's own commits. Compare successive values to know when
    /// cached data may be stale.
    package func dataVersion() throws(SQLiteError) -> Int64 {
        let statement = try statement("PRAGMA data_version")
        defer { statement.reset() }
        guard try statement.step() else {
            throw SQLiteError(
                misuse: "PRAGMA data_version returned no row", code: SQLITE_ERROR,
                sql: statement.sql, path: path)
        }
        return statement.columnInt64(0)
    }

    /// Reads the database header with `PRAGMA schema_version`
    /// (https://www.sqlite.org/pragma.html#pragma_schema_version) and writes nothing: throws
    /// `SQLITE_NOTADB` (26) with the path for a file that is not a database, leaving it untouched.
    /// Call it right after opening, before any statement that could write.
    package func checkIsDatabase() throws(SQLiteError) {
        let statement = try prepareUncached("PRAGMA schema_version")
        _ = try statement.step()
        statement.reset()
    }

    /// The problems `PRAGMA integrity_check` reports (https://www.sqlite.org/pragma.html#pragma_integrity_check);
    /// empty when the database is fine (SQLite's single `ok` row).
    package func integrityCheck() throws(SQLiteError) -> [String] {
        try check("PRAGMA integrity_check")
    }

    /// The problems `PRAGMA quick_check` reports (https://www.sqlite.org/pragma.html#pragma_quick_check):
    /// the structure of every b-tree page, as `integrity_check`, without checking that indexes match their
    /// tables; linear in the database's size. Empty when the database is fine.
    package func quickCheck() throws(SQLiteError) -> [String] {
        try check("PRAGMA quick_check")
    }

    private func check(_ pragma: String) throws(SQLiteError) -> [String] {
        let statement = try prepareUncached(pragma)
        var problems: [String] = []
        while try statement.step() {
            // A row may hold several lines, headed "*** in database main ***": one problem per line, without the heading.
            let text = statement.columnText(0) ?? ""
            problems += text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("*** in database") }
        }
        statement.reset()
        if problems == ["ok"] { return [] }
        if let db { prefs_sqlite_keep_wal_on_close(db) }  // damaged: see SQLiteError.raised
        return problems
    }

    /// `duration` in whole milliseconds, clamped to `0...Int32.max`.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return Int32.max }
        let total = product + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}

// MARK: - Files

/// How many connections of this process have each database file open.
private let openFiles = Locked(OpenFiles())

/// The database files open in this process, each with its count of connections: a list, searched in order (a process
/// has a few stores open), rather than a dictionary, whose type a new process instantiates at its first open by
/// looking up `FileIdentity`'s `Hashable` conformance among every conformance loaded, Foundation's included.
private struct OpenFiles {
    private var files: [(identity: FileIdentity, connections: Int)] = []

    mutating func add(_ identity: FileIdentity) {
        if let index = files.firstIndex(where: { $0.identity == identity }) {
            files[index].connections += 1
        } else {
            files.append((identity, 1))
        }
    }

    mutating func remove(_ identity: FileIdentity) {
        guard let index = files.firstIndex(where: { $0.identity == identity }) else { return }
        files[index].connections -= 1
        if files[index].connections == 0 { files.remove(at: index) }
    }

    func contains(_ identity: FileIdentity) -> Bool { files.contains { $0.identity == identity } }
}

/// Creates `path` empty with mode 0600 when it does not exist (`O_CREAT | O_EXCL`), so SQLite
/// opens a private file instead of creating one with 0644 minus the umask. Special names
/// (`""`, `":memory:"`) are skipped. Failures are ignored: `sqlite3_open_v2` then reports them.
/// Returns whether the file was created.
private func createPrivateFileIfMissing(_ path: String) -> Bool {
    guard !path.isEmpty, path != ":memory:" else { return false }
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
    guard fd >= 0 else { return false }
    // The umask can only remove bits from 0600; make the mode exact anyway.
    _ = fchmod(fd, mode_t(0o600))
    _ = close(fd)
    return true
}
