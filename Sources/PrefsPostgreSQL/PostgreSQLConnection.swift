import CLibPQ
import Foundation

/// One libpq connection, used by one thread at a time. Statements are parameterized (`PQexecParams`, text format).
final class PostgreSQLConnection {
    private var handle: OpaquePointer?
    /// The connection string as given (it may hold a password: never shown).
    private let conninfo: String
    /// The connection string with the password hidden, for messages.
    let target: String
    private let secrets: [String]

    /// Connects. `parameters` are added to those of `conninfo` (libpq's keywords: `connect_timeout`, `application_name`).
    init(conninfo: String, parameters: [(String, String)], target: String) throws(PostgreSQLError) {
        self.conninfo = conninfo
        self.target = target
        secrets = PostgreSQLRedaction.passwords(in: conninfo)
        // expand_dbname = 1: the first "dbname" is a full connection string (URL or key=value), whose settings win over
        // the later defaults only when it sets them; libpq applies later keywords over it, so defaults come first.
        var keywords = parameters.map(\.0)
        var values = parameters.map(\.1)
        keywords.append("dbname")
        values.append(conninfo)
        let connection = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw PostgreSQLError(kind: .connectionFailed, message: "libpq could not allocate a connection", operation: "connecting", target: target)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.clean(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgreSQLError(
                kind: .connectionFailed, sqlState: nil, message: PostgreSQLRedaction.scrub(message, secrets: secrets),
                operation: "connecting", target: target)
        }
        handle = connection
        // Messages from the server (NOTICE) would go to stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { close() }

    var isOpen: Bool { handle != nil }

    /// The connection's socket, to wait on for notifications; nil when closed.
    var socket: Int32? {
        guard let handle else { return nil }
        let socket = PQsocket(handle)
        return socket >= 0 ? socket : nil
    }

    /// Whether libpq considers the connection usable (it notices a broken one when a call fails).
    var isHealthy: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether a transaction block is open (or failed and awaiting ROLLBACK).
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// The server process serving this connection (to tell this connection's notifications from others').
    var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// The rows a statement returns (text values, nil for NULL), and its command tag (`COMMIT`, `INSERT 0 1`, …).
    struct Result {
        var rows: [[String?]]
        var commandTag: String

        /// The first column of the first row as an integer, if there is one.
        var firstInteger: Int64? {
            guard let row = rows.first, let text = row.first ?? nil else { return nil }
            return Int64(text)
        }
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …; nil is NULL).
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = [], operation: @autoclosure () -> String) throws(PostgreSQLError) -> Result {
        guard let handle else {
            throw PostgreSQLError(kind: .connectionLost, message: "the connection is closed", operation: operation(), target: target)
        }
        let result: OpaquePointer? = withOptionalCStrings(parameters) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        defer { if let result { PQclear(result) } }
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw error(from: result, operation: operation())
        }
        guard let result else { return Result(rows: [], commandTag: "") }
        var rows: [[String?]] = []
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, row, column)))
                }
            }
            rows.append(values)
        }
        return Result(rows: rows, commandTag: String(cString: PQcmdStatus(result)))
    }

    /// Runs statements without parameters, several separated by `;` in one round trip (`PQexec`, the simple protocol).
    func executeScript(_ sql: String, operation: @autoclosure () -> String) throws(PostgreSQLError) {
        guard let handle else {
            throw PostgreSQLError(kind: .connectionLost, message: "the connection is closed", operation: operation(), target: target)
        }
        let result = PQexec(handle, sql)
        defer { if let result { PQclear(result) } }
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw error(from: result, operation: operation())
        }
    }

    /// Reads what the server sent without waiting, and returns the notifications received since the last call:
    /// (channel, payload, sending server process).
    func notifications(operation: @autoclosure () -> String) throws(PostgreSQLError) -> [(channel: String, payload: String, pid: Int32)] {
        guard let handle else {
            throw PostgreSQLError(kind: .connectionLost, message: "the connection is closed", operation: operation(), target: target)
        }
        if PQconsumeInput(handle) == 0 {
            throw error(from: nil, operation: operation())
        }
        var found: [(String, String, Int32)] = []
        while let notify = PQnotifies(handle) {
            found.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra), notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return found
    }

    /// The typed error for a failed call: the server's SQLSTATE and message, or libpq's, and whether the connection broke.
    private func error(from result: OpaquePointer?, operation: String) -> PostgreSQLError {
        var sqlState: String?
        var message = ""
        if let result {
            if let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { sqlState = String(cString: code) }
            if let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))) { message = String(cString: primary) }
        }
        if message.isEmpty, let handle { message = Self.clean(PQerrorMessage(handle)) }
        if message.isEmpty { message = "no message" }
        message = PostgreSQLRedaction.scrub(message, secrets: secrets)
        let broken = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        // 57P01..57P03: the server is shutting down or restarting (admin_shutdown, crash_shutdown, cannot_connect_now).
        let lost = broken || (sqlState?.hasPrefix("08") ?? false) || ["57P01", "57P02", "57P03"].contains(sqlState ?? "")
        return PostgreSQLError(kind: lost ? .connectionLost : .statementFailed, sqlState: sqlState, message: message, operation: operation, target: target)
    }

    /// libpq's message on one line, without its trailing newline.
    private static func clean(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        return String(cString: message)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }

    /// `text` as a quoted SQL identifier (for `LISTEN`, which takes no parameter).
    func quotedIdentifier(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Calls `body` with a NULL-terminated-free array of C strings (valid during the call only).
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

private func withOptionalCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) })
}
