import CLibPQ
import Foundation
import PrefsSupport

/// One libpq connection, used by one thread at a time, every call bounded by a deadline.
///
/// libpq's non-blocking API throughout: `PQconnectStartParams` and `PQconnectPoll` to connect, `PQsendQueryParams`,
/// `PQflush`, `PQconsumeInput` and `PQgetResult` to run a statement, with `poll(2)` on the socket between them. When
/// the deadline passes, the statement is cancelled (`PQcancel`, on a thread of its own: it waits for the server, which
/// may be the one that stopped answering) and the connection is closed, so nothing is left half-read.
/// Statements are parameterized (text format), each in an unnamed statement.
final class PostgreSQLConnection {
    // The state below is marked `@exclusivity(unchecked)`: a connection is used by one thread at a time (the one that
    // borrowed it from the pool, or made it), so no two accesses overlap; checked, each statement paid runtime calls
    // for them.
    @exclusivity(unchecked) private var handle: OpaquePointer?
    /// The connection string with the password hidden, for messages.
    let target: String
    /// The secrets of the connection string, scrubbed from every message libpq or the server gives.
    private let secrets: [String]
    /// The server process serving this connection (to tell this connection's notifications from others').
    private(set) var backendPID: Int32 = 0
    /// Whether a statement run with `prepared` is prepared once on this connection (`PQsendPrepare`) and then run by
    /// name, so that the server plans it once; off behind a pooler in transaction mode, whose server sessions change
    /// from one statement to the next.
    @exclusivity(unchecked) var preparesStatements = false
    /// The statements prepared on this connection, by ``PreparedSQL/hash``.
    @exclusivity(unchecked) private var preparedStatements: Set<UInt64> = []
    /// When a pool last took the connection back (under the pool's lock): see ``PostgreSQLPool/livenessWindow``.
    @exclusivity(unchecked) var returnedAt: ContinuousClock.Instant?

    /// Connects by `deadline` with libpq's keywords and values, in order (a later one wins over an earlier one with the
    /// same keyword). The store parses connection strings itself (``PostgreSQLConnectionString``), so libpq never
    /// splits a URL its own way.
    init(settings: [(keyword: String, value: String)], target: String, secrets: [String], deadline: ContinuousClock.Instant) throws(PostgreSQLError) {
        self.target = target
        self.secrets = secrets
        // expand_dbname = 0: a dbname is a name, never parsed again as a connection string.
        let started = withCStrings(settings.map(\.keyword)) { keywordPointers in
            withCStrings(settings.map(\.value)) { valuePointers in PQconnectStartParams(keywordPointers, valuePointers, 0) }
        }
        guard let connection = started else {
            throw PostgreSQLError(
                kind: .connectionFailed, sqlState: PostgreSQLError.ClientCode.cannotConnect, message: "libpq could not allocate a connection",
                operation: "connecting", target: target)
        }
        // Verbose: a server's refusal while connecting ("too many clients") then carries its SQLSTATE in the message,
        // the only place libpq gives it (a failed connection has no result to ask).
        PQsetErrorVerbosity(connection, PQERRORS_VERBOSE)
        do throws(PostgreSQLError) {
            try Self.finishConnecting(connection, deadline: deadline, target: target, secrets: secrets)
        } catch {
            PQfinish(connection)
            throw error
        }
        PQsetErrorVerbosity(connection, PQERRORS_DEFAULT)
        // Messages from the server (NOTICE) would go to stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        PQsetnonblocking(connection, 1)
        handle = connection
        backendPID = PQbackendPID(connection)
    }

    deinit { close() }

    /// Drives `PQconnectPoll` until the connection is made, fails, or `deadline` passes.
    private static func finishConnecting(
        _ connection: OpaquePointer, deadline: ContinuousClock.Instant, target: String, secrets: [String]
    ) throws(PostgreSQLError) {
        func failure() -> PostgreSQLError {
            let (sqlState, message) = PostgreSQLConnectionMessage.parse(PQerrorMessage(connection))
            return PostgreSQLError(
                kind: .connectionFailed, sqlState: sqlState ?? PostgreSQLError.ClientCode.cannotConnect,
                message: PostgreSQLRedaction.scrub(message.isEmpty ? "no message" : message, secrets: secrets), operation: "connecting",
                target: target)
        }
        guard PQstatus(connection) != CONNECTION_BAD else { throw failure() }
        var state = PGRES_POLLING_WRITING
        while true {
            switch state {
            case PGRES_POLLING_OK:
                return
            case PGRES_POLLING_FAILED:
                throw failure()
            default:
                // The socket can change between calls (libpq tries the next host or address).
                let socket = PQsocket(connection)
                let events = state == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
                guard socket >= 0, SocketWait.wait(socket, events: events, until: deadline) != .timedOut else {
                    throw PostgreSQLError(
                        kind: .timedOut, sqlState: PostgreSQLError.ClientCode.cannotConnect,
                        message: "no connection within the deadline (the server does not answer)", operation: "connecting", target: target)
                }
                state = PQconnectPoll(connection)
            }
        }
    }

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

    /// Whether a transaction block is open (or failed and awaiting ROLLBACK), or a statement is still running.
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Closes the connection (a `Terminate` message, without waiting for the server). Idempotent.
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

    // MARK: - Statements

    /// Runs one statement with text parameters (`$1`, `$2`, …; nil is NULL), by `deadline`.
    ///
    /// `commits`: the statement commits (an autocommit write, or `COMMIT`), so a connection lost or a deadline passed
    /// once it was sent leaves its outcome unknown (``PostgreSQLError/Kind/commitOutcomeUnknown``).
    ///
    /// A statement the store runs often is a ``PreparedSQL`` (the overload below): prepared once per connection.
    @discardableResult
    func execute(
        _ sql: String, _ parameters: [String?] = [], deadline: ContinuousClock.Instant, commits: Bool = false,
        operation: @autoclosure () -> String
    ) throws(PostgreSQLError) -> Result {
        try execute(nil, sql, parameters, deadline: deadline, commits: commits, operation: operation)
    }

    /// Runs `statement` as ``execute(_:_:deadline:commits:operation:)`` does, prepared once per connection where
    /// ``preparesStatements`` (so the server plans it once), its name made once.
    @discardableResult
    func execute(
        _ statement: PreparedSQL, _ parameters: [String?] = [], deadline: ContinuousClock.Instant, commits: Bool = false,
        operation: @autoclosure () -> String
    ) throws(PostgreSQLError) -> Result {
        try execute(statement, statement.text, parameters, deadline: deadline, commits: commits, operation: operation)
    }

    private func execute(
        _ statement: PreparedSQL?, _ sql: String, _ parameters: [String?], deadline: ContinuousClock.Instant, commits: Bool,
        operation: () -> String
    ) throws(PostgreSQLError) -> Result {
        try execute(statement, sql, parameters, deadline: deadline, commits: commits, operation: operation, read: Self.rows(of:))
            ?? Result(rows: [], commandTag: "")
    }

    /// Runs a statement whose rows are (key, revision) (a ``WriteStatement``, or the lock of a transaction's reads), and
    /// reads them as ``WrittenRows`` straight from libpq's result: a write returns a row per key written, and its rows
    /// as strings cost more than the rest of reading them.
    func executeWrite(
        _ statement: PreparedSQL, _ parameters: [String?], deadline: ContinuousClock.Instant, commits: Bool, readsHistory: Bool,
        soleKey: String? = nil, revisionOnly: Bool = false, operation: @autoclosure () -> String
    ) throws(PostgreSQLError) -> WrittenRows {
        try execute(
            statement, statement.text, parameters, deadline: deadline, commits: commits, operation: operation,
            read: { WrittenRows($0, readsHistory: readsHistory, soleKey: soleKey, revisionOnly: revisionOnly) }) ?? WrittenRows()
    }

    /// Runs a read-only `statement` and reads its last result with `read` straight from libpq's (nil: it returned
    /// none), for a read the store makes often: rows as arrays of strings cost more than the rest of the read.
    func executeReading<Output>(
        _ statement: PreparedSQL, _ parameters: [String?], deadline: ContinuousClock.Instant, operation: @autoclosure () -> String,
        read: (OpaquePointer) -> Output
    ) throws(PostgreSQLError) -> Output? {
        try execute(statement, statement.text, parameters, deadline: deadline, commits: false, operation: operation, read: read)
    }

    /// Sends the statement, then reads its last result with `read` (nil: it returned none).
    private func execute<Output>(
        _ statement: PreparedSQL?, _ sql: String, _ parameters: [String?], deadline: ContinuousClock.Instant, commits: Bool,
        operation: () -> String, read: (OpaquePointer) -> Output
    ) throws(PostgreSQLError) -> Output? {
        let handle = try openHandle(operation)
        let sent: Int32
        if let statement, preparesStatements {
            if !preparedStatements.contains(statement.hash) {
                guard PQsendPrepare(handle, statement.name, sql, Int32(parameters.count), nil) == 1 else {
                    throw error(from: nil, operation: operation())
                }
                _ = try finish(handle, deadline: deadline, commits: false, operation: operation, read: { _ in () })
                preparedStatements.insert(statement.hash)
            }
            sent = statement.cName.withUnsafeBufferPointer { name in
                withOptionalCStrings(parameters) { values in
                    PQsendQueryPrepared(handle, name.baseAddress, Int32(parameters.count), values, nil, nil, 0)
                }
            }
        } else {
            sent = withOptionalCStrings(parameters) { values in
                PQsendQueryParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
            }
        }
        guard sent == 1 else { throw error(from: nil, operation: operation()) }
        return try finish(handle, deadline: deadline, commits: commits, operation: operation, read: read)
    }

    /// Runs statements without parameters, several separated by `;` in one round trip (the simple protocol), by
    /// `deadline`; returns the last statement's rows.
    @discardableResult
    func executeScript(
        _ sql: String, deadline: ContinuousClock.Instant, commits: Bool = false, operation: @autoclosure () -> String
    ) throws(PostgreSQLError) -> Result {
        let handle = try openHandle(operation)
        guard PQsendQuery(handle, sql) == 1 else { throw error(from: nil, operation: operation()) }
        return try finish(handle, deadline: deadline, commits: commits, operation: operation, read: Self.rows(of:)) ?? Result(rows: [], commandTag: "")
    }

    private func openHandle(_ operation: () -> String) throws(PostgreSQLError) -> OpaquePointer {
        guard let handle else {
            throw PostgreSQLError(
                kind: .connectionLost, sqlState: PostgreSQLError.ClientCode.connectionDoesNotExist, message: "the connection is closed",
                operation: operation(), target: target)
        }
        return handle
    }

    /// Sends what libpq buffered, then reads every result of the statement sent, the last one with `read` (nil: there
    /// was none); the first error wins.
    private func finish<Output>(
        _ handle: OpaquePointer, deadline: ContinuousClock.Instant, commits: Bool, operation: () -> String, read: (OpaquePointer) -> Output
    ) throws(PostgreSQLError) -> Output? {
        var failure: PostgreSQLError?
        var last: Output?
        do throws(PostgreSQLError) {
            try flush(handle, deadline: deadline, operation: operation)
            while true {
                try awaitResult(handle, deadline: deadline, operation: operation)
                guard let result = PQgetResult(handle) else { break }
                defer { PQclear(result) }
                let status = PQresultStatus(result)
                if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                    last = read(result)
                } else if failure == nil {
                    failure = error(from: result, operation: operation())
                }
            }
        } catch {
            // The deadline passed, or the connection broke, before every result arrived: nothing more can be read
            // from this connection.
            var error = error
            if error.kind == .timedOut { abandon() } else { close() }
            if commits {
                // Sent, so the server may have committed it (or may still).
                if error.kind != .timedOut { error.sqlState = PostgreSQLError.ClientCode.transactionResolutionUnknown }
                error.kind = .commitOutcomeUnknown
                error.message += "; the write was sent, so the server may have applied it"
            }
            throw error
        }
        if var failure {
            if failure.kind == .connectionLost {
                close()
                if commits {
                    failure.kind = .commitOutcomeUnknown
                    failure.message += "; the write was sent, so the server may have applied it"
                }
            }
            throw failure
        }
        return last
    }

    /// `PQflush` until libpq's output buffer is empty, reading input meanwhile (the server may be waiting for us to read).
    private func flush(_ handle: OpaquePointer, deadline: ContinuousClock.Instant, operation: () -> String) throws(PostgreSQLError) {
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { return }
            if flushed < 0 { throw error(from: nil, operation: operation()) }
            guard let socket = socket else { throw error(from: nil, operation: operation()) }
            let ready = SocketWait.wait(socket, events: Int16(POLLIN | POLLOUT), until: deadline)
            if ready == .timedOut { throw deadlineError(operation()) }
            if ready == .readable, PQconsumeInput(handle) == 0 { throw error(from: nil, operation: operation()) }
        }
    }

    /// Waits until `PQgetResult` would not block.
    private func awaitResult(_ handle: OpaquePointer, deadline: ContinuousClock.Instant, operation: () -> String) throws(PostgreSQLError) {
        while PQisBusy(handle) == 1 {
            guard let socket = socket else { throw error(from: nil, operation: operation()) }
            if SocketWait.wait(socket, events: Int16(POLLIN), until: deadline) == .timedOut { throw deadlineError(operation()) }
            if PQconsumeInput(handle) == 0 { throw error(from: nil, operation: operation()) }
        }
    }

    private func deadlineError(_ operation: String) -> PostgreSQLError {
        PostgreSQLError(
            kind: .timedOut, sqlState: PostgreSQLError.ClientCode.queryCanceled,
            message: "no answer within the deadline; the statement was cancelled and the connection closed", operation: operation, target: target)
    }

    /// Gives up on the statement in progress: asks the server to cancel it (on a thread of its own, since `PQcancel`
    /// waits for the server's answer), and closes the connection.
    private func abandon() {
        guard let handle else { return }
        if let cancel = PQgetCancel(handle) {
            let request = CancelRequest(cancel)
            Thread.detachNewThread {
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(request.cancel, &buffer, Int32(buffer.count))
                PQfreeCancel(request.cancel)
            }
        }
        close()
    }

    private static func rows(of result: OpaquePointer) -> Result {
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

    // MARK: - Notifications

    /// Reads what the server sent without waiting, and returns the notifications received since the last call:
    /// (channel, payload, sending server process).
    func notifications(operation: @autoclosure () -> String) throws(PostgreSQLError) -> [(channel: String, payload: String, pid: Int32)] {
        let handle = try openHandle(operation)
        if PQconsumeInput(handle) == 0 {
            let failure = error(from: nil, operation: operation())
            close()
            throw failure
        }
        var found: [(String, String, Int32)] = []
        while let notify = PQnotifies(handle) {
            found.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra), notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return found
    }

    // MARK: - Errors

    /// The typed error for a failed call: the server's SQLSTATE and message, or libpq's, and whether the connection broke.
    private func error(from result: OpaquePointer?, operation: String) -> PostgreSQLError {
        var sqlState: String?
        var message = ""
        if let result {
            if let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { sqlState = String(cString: code) }
            if let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))) { message = String(cString: primary) }
        }
        if message.isEmpty, let handle { message = PostgreSQLConnectionMessage.parse(PQerrorMessage(handle)).message }
        if message.isEmpty { message = "no message" }
        message = PostgreSQLRedaction.scrub(message, secrets: secrets)
        let broken = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        // 57P01..57P03: the server is shutting down or restarting (admin_shutdown, crash_shutdown, cannot_connect_now).
        let lost = broken || (sqlState?.hasPrefix("08") ?? false) || ["57P01", "57P02", "57P03"].contains(sqlState ?? "")
        if lost && sqlState == nil { sqlState = PostgreSQLError.ClientCode.connectionFailure }
        let kind: PostgreSQLError.Kind =
            lost ? .connectionLost : PostgreSQLError.timeoutCodes.contains(sqlState ?? "") ? .timedOut : .statementFailed
        return PostgreSQLError(kind: kind, sqlState: sqlState, message: message, operation: operation, target: target)
    }

    /// `text` as a quoted SQL identifier (for `LISTEN`, which takes no parameter).
    static func quotedIdentifier(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A statement's text and the name it is prepared under on a connection: `prefs_` and a hash of the text, so that one
/// text has one name on every connection. A class: a write hands its statement down several calls, one reference
/// rather than three.
final class PreparedSQL: Sendable {
    let text: String
    /// The statement's hash, which names it (`prefs_` and its 16 hex digits): a connection's prepared statements are
    /// known by it, not by their names (no string hashed per call).
    let hash: UInt64
    let name: String
    /// `name` as a C string, made once (libpq takes it at every call).
    let cName: ContiguousArray<CChar>

    init(_ text: String) {
        self.text = text
        hash = StableHash.fnv1a64(text)
        name = "prefs_" + StableHash.hex(hash)
        cName = name.utf8CString
    }
}

/// A `PGcancel` handed to the thread that sends it.
// @unchecked Sendable: made before that thread starts, then used and freed by it alone.
private final class CancelRequest: @unchecked Sendable {
    let cancel: OpaquePointer
    init(_ cancel: OpaquePointer) { self.cancel = cancel }
}

/// libpq's messages for a failed connection: one line, and the SQLSTATE a server's refusal carries.
enum PostgreSQLConnectionMessage {
    /// The SQLSTATE in a verbose message (`FATAL:  53300: sorry, too many clients already`), and the message on one line
    /// without it and without the `LOCATION:` lines verbosity adds.
    static func parse(_ message: UnsafePointer<CChar>?) -> (sqlState: String?, message: String) {
        guard let message else { return (nil, "") }
        return parse(String(cString: message))
    }

    static func parse(_ text: String) -> (sqlState: String?, message: String) {
        var sqlState: String?
        var lines: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            var line = line.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("LOCATION:") { continue }
            // The verbose form is "SEVERITY:  CODE: text" (the severity may be translated; the code never is).
            if let range = line.range(of: #":  [0-9A-Z]{5}: "#, options: .regularExpression) {
                let code = line[line.index(range.lowerBound, offsetBy: 3)..<line.index(range.lowerBound, offsetBy: 8)]
                sqlState = sqlState ?? String(code)
                line.replaceSubrange(range, with: ":  ")
            }
            lines.append(line)
        }
        return (sqlState, lines.joined(separator: "; "))
    }
}

/// `poll(2)` on one socket until an instant.
enum SocketWait {
    enum Outcome { case readable, writable, timedOut }

    /// Waits for `events` on `socket` until `deadline`; an error or hang-up counts as readable (the next libpq call
    /// reports it).
    static func wait(_ socket: Int32, events: Int16, until deadline: ContinuousClock.Instant) -> Outcome {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .timedOut }
            let (seconds, attoseconds) = remaining.components  // worked out from 128 bits: once
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .readable
            }
            if ready == 0 { continue }  // the loop's clock decides, not poll's rounding
            if descriptor.revents & Int16(POLLOUT) != 0 && events & Int16(POLLOUT) != 0 && descriptor.revents & Int16(POLLIN) == 0 {
                return .writable
            }
            return .readable
        }
    }
}

/// Calls `body` with a NULL-terminated array of C strings (valid during the call only).
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

/// Calls `body` with `strings` as C strings (nil as a null pointer), laid out in one temporary buffer: no allocation
/// per parameter (on the stack when small), which a statement run on every write would pay each time.
private func withOptionalCStrings<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    var size = 0
    for string in strings { size += (string?.utf8.count ?? 0) + 1 }
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(size, 1)) { bytes in
        withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(strings.count, 1)) { pointers in
            var offset = 0
            for (index, string) in strings.enumerated() {
                guard var string else {
                    pointers[index] = nil
                    continue
                }
                let start = bytes.baseAddress! + offset
                let count = string.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { chars in
                        if let source = chars.baseAddress { start.update(from: source, count: chars.count) }
                    }
                    return utf8.count
                }
                start[count] = 0
                pointers[index] = UnsafePointer(start)
                offset += count + 1
            }
            return body(UnsafePointer(pointers.baseAddress))
        }
    }
}
