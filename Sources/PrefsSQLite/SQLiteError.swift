import CSQLite

/// An error from SQLite: the extended result code, SQLite's message, and the SQL that failed
/// (bound values are never included, so secrets stored as preference values cannot leak into logs).
///
/// Result codes are described at https://www.sqlite.org/rescode.html. Connections open with
/// extended result codes enabled (https://www.sqlite.org/c3ref/extended_result_codes.html), so
/// ``extendedCode`` may be more specific than ``code`` (for example `SQLITE_CONSTRAINT_UNIQUE`, 2067,
/// whose primary code is `SQLITE_CONSTRAINT`, 19).
///
/// Match errors with the ``Code`` constants:
///
/// ```swift
/// do { try store.set(...) }
/// catch SQLiteError.busy { /* retry later */ }
///
/// switch error.code {
/// case SQLiteError.busy, SQLiteError.locked: ...
/// case SQLiteError.notADatabase: ...
/// default: ...
/// }
/// ```
package struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (https://www.sqlite.org/rescode.html#extrc). Equal to ``code`` when
    /// SQLite reported no extended code.
    package var extendedCode: Int32
    /// SQLite's English message (`sqlite3_errmsg`, https://www.sqlite.org/c3ref/errcode.html) at the
    /// time of the failure, or `sqlite3_errstr` of the code when no connection message applies.
    package var message: String
    /// The SQL that failed, without bound values.
    package var sql: String?
    /// The database file the connection was opened on.
    package var path: String?

    /// Creates an error from an extended (or primary) result code.
    package init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code: the low 8 bits of ``extendedCode``
    /// (https://www.sqlite.org/rescode.html#primary_result_codes_versus_extended_result_codes).
    package var code: Int32 { extendedCode & 0xff }

    /// ``code`` as a matchable ``Code``.
    package var primaryCode: Code { Code(rawValue: code) }

    /// `SQLite error 5 (SQLITE_BUSY: database is locked) in "/tmp/x.sqlite" while executing "BEGIN IMMEDIATE"`.
    ///
    /// When the extended code differs from the primary one it follows the symbolic name:
    /// `SQLite error 19 (SQLITE_CONSTRAINT, extended 2067: UNIQUE constraint failed: t.k)`.
    package var description: String {
        var text = "SQLite error \(code) (\(Code.name(of: code))"
        if extendedCode != code {
            text += ", extended \(extendedCode)"
        }
        text += ": \(message))"
        if let path {
            text += " in \"\(path)\""
        }
        if let sql {
            text += " while executing \"\(sql)\""
        }
        return text
    }
}

extension SQLiteError {
    /// A result code to match errors against: `catch SQLiteError.busy`, `case SQLiteError.busy = error.code`.
    ///
    /// A primary code (≤ 0xff) matches every extended code that shares it; an extended code
    /// (for example `Code(rawValue: SQLITE_CONSTRAINT_UNIQUE)`) matches only itself.
    package struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package var rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let error = Code(rawValue: SQLITE_ERROR)
        package static let `internal` = Code(rawValue: SQLITE_INTERNAL)
        package static let permission = Code(rawValue: SQLITE_PERM)
        package static let abort = Code(rawValue: SQLITE_ABORT)
        package static let busy = Code(rawValue: SQLITE_BUSY)
        package static let locked = Code(rawValue: SQLITE_LOCKED)
        package static let noMemory = Code(rawValue: SQLITE_NOMEM)
        package static let readOnly = Code(rawValue: SQLITE_READONLY)
        package static let interrupt = Code(rawValue: SQLITE_INTERRUPT)
        package static let ioError = Code(rawValue: SQLITE_IOERR)
        package static let corrupt = Code(rawValue: SQLITE_CORRUPT)
        package static let notFound = Code(rawValue: SQLITE_NOTFOUND)
        package static let full = Code(rawValue: SQLITE_FULL)
        package static let cantOpen = Code(rawValue: SQLITE_CANTOPEN)
        package static let `protocol` = Code(rawValue: SQLITE_PROTOCOL)
        package static let schema = Code(rawValue: SQLITE_SCHEMA)
        package static let tooBig = Code(rawValue: SQLITE_TOOBIG)
        package static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
        package static let mismatch = Code(rawValue: SQLITE_MISMATCH)
        package static let misuse = Code(rawValue: SQLITE_MISUSE)
        package static let range = Code(rawValue: SQLITE_RANGE)
        package static let notADatabase = Code(rawValue: SQLITE_NOTADB)

        /// The symbolic name of the primary code, e.g. `SQLITE_BUSY`.
        package var description: String { Code.name(of: rawValue & 0xff) }

        /// Whether `resultCode` (primary or extended) is matched by this code.
        package func matches(_ resultCode: Int32) -> Bool {
            rawValue <= 0xff ? (resultCode & 0xff) == rawValue : resultCode == rawValue
        }

        /// `switch error.code { case SQLiteError.busy: … }` and `case SQLiteError.busy = error.extendedCode`.
        package static func ~= (pattern: Code, resultCode: Int32) -> Bool {
            pattern.matches(resultCode)
        }

        /// `switch sqliteError { case SQLiteError.busy: … }`.
        package static func ~= (pattern: Code, error: SQLiteError) -> Bool {
            pattern.matches(error.extendedCode)
        }

        /// `catch SQLiteError.busy { … }`: true only for an ``SQLiteError`` with a matching code.
        package static func ~= (pattern: Code, error: any Error) -> Bool {
            guard let error = error as? SQLiteError else { return false }
            return pattern.matches(error.extendedCode)
        }

        /// Symbolic names of the primary result codes (https://www.sqlite.org/rescode.html).
        package static func name(of primaryCode: Int32) -> String {
            switch primaryCode {
            case SQLITE_OK: "SQLITE_OK"
            case SQLITE_ERROR: "SQLITE_ERROR"
            case SQLITE_INTERNAL: "SQLITE_INTERNAL"
            case SQLITE_PERM: "SQLITE_PERM"
            case SQLITE_ABORT: "SQLITE_ABORT"
            case SQLITE_BUSY: "SQLITE_BUSY"
            case SQLITE_LOCKED: "SQLITE_LOCKED"
            case SQLITE_NOMEM: "SQLITE_NOMEM"
            case SQLITE_READONLY: "SQLITE_READONLY"
            case SQLITE_INTERRUPT: "SQLITE_INTERRUPT"
            case SQLITE_IOERR: "SQLITE_IOERR"
            case SQLITE_CORRUPT: "SQLITE_CORRUPT"
            case SQLITE_NOTFOUND: "SQLITE_NOTFOUND"
            case SQLITE_FULL: "SQLITE_FULL"
            case SQLITE_CANTOPEN: "SQLITE_CANTOPEN"
            case SQLITE_PROTOCOL: "SQLITE_PROTOCOL"
            case SQLITE_EMPTY: "SQLITE_EMPTY"
            case SQLITE_SCHEMA: "SQLITE_SCHEMA"
            case SQLITE_TOOBIG: "SQLITE_TOOBIG"
            case SQLITE_CONSTRAINT: "SQLITE_CONSTRAINT"
            case SQLITE_MISMATCH: "SQLITE_MISMATCH"
            case SQLITE_MISUSE: "SQLITE_MISUSE"
            case SQLITE_NOLFS: "SQLITE_NOLFS"
            case SQLITE_AUTH: "SQLITE_AUTH"
            case SQLITE_FORMAT: "SQLITE_FORMAT"
            case SQLITE_RANGE: "SQLITE_RANGE"
            case SQLITE_NOTADB: "SQLITE_NOTADB"
            case SQLITE_NOTICE: "SQLITE_NOTICE"
            case SQLITE_WARNING: "SQLITE_WARNING"
            case SQLITE_ROW: "SQLITE_ROW"
            case SQLITE_DONE: "SQLITE_DONE"
            default: "SQLITE_UNKNOWN"
            }
        }
    }

    package static let busy = Code.busy
    package static let locked = Code.locked
    package static let notADatabase = Code.notADatabase
    package static let corrupt = Code.corrupt
    package static let full = Code.full
    package static let cantOpen = Code.cantOpen
    package static let readOnly = Code.readOnly
    package static let ioError = Code.ioError
    package static let constraint = Code.constraint
    package static let misuse = Code.misuse
    package static let interrupt = Code.interrupt
    package static let permission = Code.permission
}

extension SQLiteError {
    /// The error for a failed call on `db`: the extended code from `sqlite3_extended_errcode` when it
    /// refines `resultCode`, and `sqlite3_errmsg` (https://www.sqlite.org/c3ref/errcode.html).
    package init(resultCode: Int32, db: OpaquePointer?, sql: String?, path: String?) {
        var extended = resultCode
        var message: String?
        if let db {
            let reported = sqlite3_extended_errcode(db)
            if reported & 0xff == resultCode & 0xff {
                extended = reported
                message = String(cString: sqlite3_errmsg(db))
            }
        }
        self.init(
            extendedCode: extended,
            message: message ?? String(cString: sqlite3_errstr(resultCode)),
            sql: sql,
            path: path
        )
    }

    /// The error for a failed call on `db`, as ``init(resultCode:db:sql:path:)``. A connection that meets a damaged
    /// database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) also stops the checkpoint SQLite runs when it closes: copying the
    /// write-ahead log into a damaged file would change the very bytes a recovery needs, and Prefs never writes to a
    /// store it cannot read.
    package static func raised(_ resultCode: Int32, db: OpaquePointer?, sql: String?, path: String?) -> SQLiteError {
        let primary = resultCode & 0xff
        if let db, primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB { prefs_sqlite_keep_wal_on_close(db) }
        return SQLiteError(resultCode: resultCode, db: db, sql: sql, path: path)
    }

    /// An error raised by this layer rather than by SQLite (misuse, wrong argument count…).
    package init(misuse message: String, code: Int32 = SQLITE_MISUSE, sql: String?, path: String?) {
        self.init(extendedCode: code, message: message, sql: sql, path: path)
    }
}
