import CSQLite
import Foundation

/// A prepared statement (https://www.sqlite.org/c3ref/stmt.html), owned by one ``SQLiteConnection``
/// and, like it, not thread-safe.
///
/// Life cycle: bind parameters (`bind(_:)` and its fixed-arity overloads), ``step()`` until it returns `false`, read
/// columns while it returns `true`, then ``reset()``. A statement that has returned a row and was not
/// reset keeps its read transaction open (https://www.sqlite.org/c3ref/reset.html), which holds back
/// WAL checkpoints and ``SQLiteConnection/dataVersion()``, so the connection helpers always reset.
///
/// Statements from ``SQLiteConnection/statement(_:)`` are cached by the connection: do not keep one
/// across calls that may use the same SQL (it would be reset under you), and do not use any statement
/// after ``SQLiteConnection/close()``.
package final class SQLiteStatement {
    /// `nil` once finalized (https://www.sqlite.org/c3ref/finalize.html).
    private var handle: OpaquePointer?
    /// The SQL text, for error messages.
    package let sql: String
    /// The connection's path, for error messages.
    package let path: String
    /// The connection caching this statement; set only for cached statements. Weak so that an
    /// uncached statement or a caller's reference never keeps a connection alive.
    weak var cache: SQLiteConnection?

    package init(handle: OpaquePointer, sql: String, path: String) {
        self.handle = handle
        self.sql = sql
        self.path = path
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Finalizes now; later calls throw `SQLITE_MISUSE` or read `NULL`. Idempotent.
    package func finalize() {
        guard let handle else { return }
        sqlite3_finalize(handle)
        self.handle = nil
    }

    package var isFinalized: Bool { handle == nil }

    // MARK: - Binding (https://www.sqlite.org/c3ref/bind_blob.html)

    /// The number of `?` parameters (https://www.sqlite.org/c3ref/bind_parameter_count.html).
    package var parameterCount: Int32 {
        guard let handle else { return 0 }
        return sqlite3_bind_parameter_count(handle)
    }

    /// Binds `values` to parameters 1…n. The count must equal ``parameterCount``.
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try checkParameterCount(values.count)
        var index: Int32 = 1
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Binds one parameter without building an array.
    package func bind(_ a: SQLiteValue) throws(SQLiteError) {
        try checkParameterCount(1)
        try bind(a, at: 1)
    }

    /// Binds two parameters without building an array.
    package func bind(_ a: SQLiteValue, _ b: SQLiteValue) throws(SQLiteError) {
        try checkParameterCount(2)
        try bind(a, at: 1)
        try bind(b, at: 2)
    }

    /// Binds three parameters without building an array.
    package func bind(_ a: SQLiteValue, _ b: SQLiteValue, _ c: SQLiteValue) throws(SQLiteError) {
        try checkParameterCount(3)
        try bind(a, at: 1)
        try bind(b, at: 2)
        try bind(c, at: 3)
    }

    /// Binds `value` to the 1-based parameter `index`. Text and blobs are copied by SQLite
    /// (`SQLITE_TRANSIENT`); text is bound as UTF-8 with its byte count, so NUL characters are kept;
    /// an empty `Data` binds a zero-length blob (`sqlite3_bind_zeroblob(…, 0)`), never NULL.
    package func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        guard let handle else { throw finalizedError() }
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let int):
            rc = sqlite3_bind_int64(handle, index, int)
        case .real(let double):
            rc = sqlite3_bind_double(handle, index, double)
        case .text(var text):
            rc = text.withUTF8 { utf8 -> Int32 in
                guard let base = utf8.baseAddress, utf8.count > 0 else {
                    // A nil pointer would bind NULL; bind an empty string instead.
                    return sqlite3_bind_text(handle, index, "", 0, prefs_sqlite_transient())
                }
                return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars, sqlite3_uint64(utf8.count),
                        prefs_sqlite_transient(), UInt8(SQLITE_UTF8)
                    )
                }
            }
        case .blob(let data):
            if data.isEmpty {
                rc = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                rc = data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob64(
                        handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count), prefs_sqlite_transient()
                    )
                }
            }
        }
        if rc != SQLITE_OK {
            throw SQLiteError.raised(rc, db: sqlite3_db_handle(handle), sql: sql, path: path)
        }
    }

    /// Binds `text` to the 1-based parameter `index`, as ``bind(_:at:)`` binds `.text(text)`, without making the
    /// ``SQLiteValue`` (a row writer's key, bound for every row).
    package func bind(text: String, at index: Int32) throws(SQLiteError) {
        guard let handle else { throw finalizedError() }
        var text = text
        let rc = text.withUTF8 { utf8 -> Int32 in
            guard let base = utf8.baseAddress, utf8.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, prefs_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                sqlite3_bind_text64(handle, index, chars, sqlite3_uint64(utf8.count), prefs_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
        if rc != SQLITE_OK {
            throw SQLiteError.raised(rc, db: sqlite3_db_handle(handle), sql: sql, path: path)
        }
    }

    /// Runs `body` with `text` bound to the 1-based parameter `index` without a copy (`SQLITE_STATIC`: SQLite reads
    /// the bytes where the string holds them), then binds NULL in its place, so that the statement never keeps a
    /// pointer to bytes that are gone. `body` steps the statement and resets it before it returns (a parameter can
    /// be bound again only then). For a row writer's key and text value, bound for every row: a copy costs SQLite an
    /// allocation and a free each time.
    ///
    /// Not generic: across the module boundary a generic body cost more (metadata, witness tables) than the copy saved.
    package func withText(_ text: String, at index: Int32, _ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        guard let handle else { throw finalizedError() }
        var text = text
        var failure: SQLiteError?
        text.withUTF8 { utf8 in
            let rc: Int32
            if let base = utf8.baseAddress, utf8.count > 0 {
                rc = base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                    sqlite3_bind_text64(handle, index, chars, sqlite3_uint64(utf8.count), nil, UInt8(SQLITE_UTF8))  // nil: SQLITE_STATIC
                }
            } else {
                rc = sqlite3_bind_text(handle, index, "", 0, prefs_sqlite_transient())  // a nil pointer would bind NULL
            }
            guard rc == SQLITE_OK else {
                failure = SQLiteError.raised(rc, db: sqlite3_db_handle(handle), sql: sql, path: path)
                return
            }
            do throws(SQLiteError) {
                try body()
            } catch {
                failure = error
            }
        }
        // The statement as it is now: a failed step finalizes a cached one, and then there is nothing to unbind.
        if let current = self.handle { sqlite3_bind_null(current, index) }
        if let failure { throw failure }
    }

    /// Binds the text of a static string to the 1-based parameter `index` without copying it (`SQLITE_STATIC`: its
    /// bytes live as long as the program), such as a type name bound for every row.
    package func bind(static text: StaticString, at index: Int32) throws(SQLiteError) {
        guard let handle else { throw finalizedError() }
        // A one-character literal is held as its scalar, not as bytes that outlive this call: bind a copy of it.
        guard text.hasPointerRepresentation, text.utf8CodeUnitCount > 0 else { return try bind(text: text.description, at: index) }
        let rc = text.utf8Start.withMemoryRebound(to: CChar.self, capacity: text.utf8CodeUnitCount) { chars in
            sqlite3_bind_text(handle, index, chars, Int32(text.utf8CodeUnitCount), nil)  // nil: SQLITE_STATIC
        }
        if rc != SQLITE_OK {
            throw SQLiteError.raised(rc, db: sqlite3_db_handle(handle), sql: sql, path: path)
        }
    }

    /// Sets every parameter back to NULL (https://www.sqlite.org/c3ref/clear_bindings.html).
    package func clearBindings() {
        guard let handle else { return }
        sqlite3_clear_bindings(handle)
    }

    @inline(__always)
    private func checkParameterCount(_ count: Int) throws(SQLiteError) {
        let expected = parameterCount
        if Int(expected) != count {
            throw SQLiteError(
                misuse: "wrong number of arguments: the statement has \(expected) parameters, \(count) given",
                code: SQLITE_RANGE, sql: sql, path: path
            )
        }
    }

    // MARK: - Stepping (https://www.sqlite.org/c3ref/step.html)

    /// Evaluates the statement: `true` when a row is available, `false` when done.
    ///
    /// On error a cached statement is evicted from its connection's cache and finalized, so the next
    /// ``SQLiteConnection/statement(_:)`` for the same SQL prepares a fresh one.
    package func step() throws(SQLiteError) -> Bool {
        guard let handle else { throw finalizedError() }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = SQLiteError.raised(rc, db: sqlite3_db_handle(handle), sql: sql, path: path)
        if let cache {
            cache.evict(self)
        }
        throw error
    }

    /// Rewinds the statement so it can run again; bindings are kept
    /// (https://www.sqlite.org/c3ref/reset.html). The result code of `sqlite3_reset` repeats the last
    /// `step` error, which was already thrown, so it is ignored.
    package func reset() {
        guard let handle else { return }
        sqlite3_reset(handle)
    }

    // MARK: - Columns (https://www.sqlite.org/c3ref/column_blob.html)

    /// The number of result columns (https://www.sqlite.org/c3ref/column_count.html).
    package var columnCount: Int32 {
        guard let handle else { return 0 }
        return sqlite3_column_count(handle)
    }

    /// The name of result column `index` (https://www.sqlite.org/c3ref/column_name.html).
    package func columnName(_ index: Int32) -> String {
        guard let handle, let name = sqlite3_column_name(handle, index) else { return "" }
        return String(cString: name)
    }

    /// Column `index` (0-based) of the current row, by its storage class (`sqlite3_column_type`).
    package func column(_ index: Int32) -> SQLiteValue {
        guard let handle else { return .null }
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            return .text(text(handle, index))
        case SQLITE_BLOB:
            return .blob(blob(handle, index))
        default:
            return .null
        }
    }

    /// Whether column `index` of the current row is NULL.
    package func columnIsNull(_ index: Int32) -> Bool {
        guard let handle else { return true }
        return sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` converted to an integer by SQLite (NULL gives 0).
    package func columnInt64(_ index: Int32) -> Int64 {
        guard let handle else { return 0 }
        return sqlite3_column_int64(handle, index)
    }

    /// Column `index` converted to a double by SQLite (NULL gives 0.0).
    package func columnDouble(_ index: Int32) -> Double {
        guard let handle else { return 0 }
        return sqlite3_column_double(handle, index)
    }

    /// Column `index` as text (numbers and blobs converted by SQLite), or `nil` for NULL.
    package func columnText(_ index: Int32) -> String? {
        guard let handle, sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return text(handle, index)
    }

    /// Column `index` as bytes (text as its UTF-8, numbers converted by SQLite), or `nil` for NULL.
    /// A zero-length blob gives an empty `Data`.
    package func columnBlob(_ index: Int32) -> Data? {
        guard let handle, sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return blob(handle, index)
    }

    /// Text from the pointer and `sqlite3_column_bytes` (not `strlen`, so NUL characters are kept).
    /// `sqlite3_column_text` must come before `sqlite3_column_bytes`, which then reports the UTF-8 size.
    @inline(__always)
    private func text(_ handle: OpaquePointer, _ index: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Bytes from `sqlite3_column_blob`, which returns a null pointer for a zero-length blob.
    @inline(__always)
    private func blob(_ handle: OpaquePointer, _ index: Int32) -> Data {
        guard let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Data(bytes: pointer, count: count)
    }

    private func finalizedError() -> SQLiteError {
        SQLiteError(misuse: "statement used after it was finalized", sql: sql, path: path)
    }
}
