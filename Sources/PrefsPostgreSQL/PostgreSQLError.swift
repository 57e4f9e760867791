import Foundation
import Prefs

/// A failure of the PostgreSQL store: what was being done, where (with the password redacted), what the server or
/// libpq said, and its SQLSTATE.
///
/// ``PostgreSQLDatabase``'s calls throw it as it is. A `Prefs` store's calls throw every error as a `PrefsError`:
/// this one as `PrefsError.database(_:)`, whose `DatabaseError` has the SQLSTATE as `codeName`, the operation as
/// `statement`, the target as `path`, and this error as `underlying` (`PrefsError.postgreSQLError`).
///
/// ```swift
/// do {
///     try prefs.set(3, for: .launchCount)
/// } catch where error.postgreSQLError?.kind == .timedOut {
///     // the deadline (PostgreSQLOptions.timeout) passed: nothing was applied
/// } catch PrefsError.database(let error) where error.codeName == "53300" {
///     // too many connections, as opposed to a server that is down ("08001")
/// }
/// ```
///
/// Every error carries a SQLSTATE: the server's own, or, for a failure libpq or the store notices itself, the code
/// the SQL standard gives it (see ``sqlState``).
public struct PostgreSQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Sendable, Hashable {
        /// No connection could be made (refused, unknown host, authentication failed, too many connections: the
        /// ``PostgreSQLError/sqlState`` tells them apart).
        case connectionFailed
        /// The connection broke during a call (the server stopped or restarted, the network dropped). The next call
        /// connects again. A transaction that was open is rolled back by the server; nothing of it was applied.
        case connectionLost
        /// The connection broke, or the deadline passed, once a write was on its way: it may or may not have been
        /// applied. The store does not replay it, and reads the key from the server next time; read it to know.
        /// ``PostgreSQLError/isTimeout`` tells a deadline apart (SQLSTATE `57014`; a lost connection is `08007`).
        case commitOutcomeUnknown
        /// The deadline passed before anything was applied: the store's own (``PostgreSQLOptions/timeout``, SQLSTATE
        /// `57014`, the statement cancelled and its connection closed), or the server's `statement_timeout` (`57014`),
        /// `lock_timeout` (`55P03`) or `idle_in_transaction_session_timeout` (`25P03`).
        case timedOut
        /// The server refused a statement (``PostgreSQLError/sqlState`` says why: `42501` no privilege, `25006` a
        /// read-only transaction or store, …).
        case statementFailed
        /// The database holds something the store cannot use (a damaged schema, or none where a read-only store
        /// cannot create it).
        case unexpectedSchema
        /// A watch from a revision cannot deliver every change after it: the namespace keeps no history, or its
        /// retention (its window, ``PostgreSQLOptions/historyAge``, ``PostgreSQLOptions/historyRevisions``) has passed
        /// them (SQLSTATE `55000`). ``PostgreSQLError/oldestRevision`` is the oldest revision a watch can resume
        /// after; or read the value and its revision again (`Prefs.revisioned(_:)`), and watch from there, as after
        /// etcd's "required revision has been compacted".
        case revisionCompacted
    }

    /// The SQLSTATEs the store gives failures that no server reported (libpq's own, or the store's), as the SQL
    /// standard and PostgreSQL's JDBC driver name them.
    enum ClientCode {
        /// `08001` sqlclient_unable_to_establish_sqlconnection: refused, unknown host, no answer while connecting.
        static let cannotConnect = "08001"
        /// `08003` connection_does_not_exist.
        static let connectionDoesNotExist = "08003"
        /// `08006` connection_failure: the connection broke.
        static let connectionFailure = "08006"
        /// `08007` transaction_resolution_unknown: the connection broke while a write was on its way.
        static let transactionResolutionUnknown = "08007"
        /// `57014` query_canceled: the deadline passed and the statement was cancelled.
        static let queryCanceled = "57014"
        /// `25006` read_only_sql_transaction: a write to a store opened read-only.
        static let readOnly = "25006"
        /// `22023` invalid_parameter_value: a namespace the store cannot use.
        static let invalidParameter = "22023"
        /// `XX000` internal_error: what the server answered is not what the store expects.
        static let unexpectedAnswer = "XX000"
    }

    /// The server's timeouts: `statement_timeout` (57014), `lock_timeout` (55P03), `idle_in_transaction_session_timeout` (25P03).
    static let timeoutCodes: Set<String> = ["57014", "55P03", "25P03"]

    public var kind: Kind
    /// The five-character SQLSTATE: the server's (`53300` too many connections, `42501` no privilege, `57014` a
    /// statement timeout, …) or, when the server said nothing, the standard code of what libpq or the store saw:
    /// `08001` could not connect, `08006` connection lost, `08007` lost during a write, `57014` the store's deadline
    /// passed, `25006` a write to a read-only store. Nil only for an error made elsewhere with ``init(kind:sqlState:message:operation:target:)``.
    public var sqlState: String?
    /// The server's or libpq's message (one line).
    public var message: String
    /// What the store was doing: "reading key \"theme\"", "committing a transaction", "connecting", …
    public var operation: String
    /// The database, with any password replaced by `***`.
    public var target: String
    /// For ``Kind/revisionCompacted``: the oldest revision of the key the store still holds with every change after
    /// it (its oldest history entry of an unbroken chain to its current value, or its current revision), so that a
    /// watch after it delivers every later change, as etcd's `compact_revision`. Nil for the other kinds.
    ///
    /// ```swift
    /// catch where error.postgreSQLError?.kind == .revisionCompacted {
    ///     resumeFrom = error.postgreSQLError?.oldestRevision ?? 0   // the changes before it are gone
    /// }
    /// ```
    public var oldestRevision: Int64?

    /// Makes an error (the store makes its own; this is for code that reports in the same form).
    public init(kind: Kind, sqlState: String? = nil, message: String, operation: String, target: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.operation = operation
        self.target = target
    }

    /// The error in one line: what happened, its SQLSTATE, what the store was doing and where, and the message.
    public var description: String {
        let what: String =
            switch kind {
            case .connectionFailed: "cannot connect"
            case .connectionLost: "connection lost"
            case .commitOutcomeUnknown: "the outcome of a write is unknown (nothing was retried)"
            case .timedOut: "timed out"
            case .statementFailed: "statement failed"
            case .unexpectedSchema: "unexpected schema"
            case .revisionCompacted: "the changes after a revision are no longer kept"
            }
        let code = sqlState.map { " [SQLSTATE \($0)]" } ?? ""
        return "PostgreSQL: \(what)\(code) while \(operation) at \(target): \(message)"
    }

    /// Whether the connection itself failed (refused, lost), rather than a statement on a working connection.
    public var isConnectionFailure: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown: true
        case .statementFailed, .unexpectedSchema, .timedOut, .revisionCompacted: sqlState?.hasPrefix("08") ?? false
        }
    }

    /// Whether a deadline passed: ``Kind/timedOut`` (nothing applied), or a write whose outcome is unknown because the
    /// deadline passed while it was on its way.
    public var isTimeout: Bool {
        kind == .timedOut || (kind == .commitOutcomeUnknown && sqlState.map(Self.timeoutCodes.contains) == true)
    }
}

// MARK: - As a store call throws it

extension PostgreSQLError: PrefsErrorConvertible {
    /// `PrefsError.database(_:)`: engine `PostgreSQL`, the SQLSTATE as code name, the operation as statement, the
    /// target as path, the same description, and this error as `underlying`.
    package var prefsError: PrefsError {
        .database(
            DatabaseError(
                engine: "PostgreSQL", code: 0, codeName: sqlState ?? "", message: message, statement: operation, path: target,
                description: description, underlying: self))
    }
}

extension PrefsError {
    /// The PostgreSQL store's failure this error reports, with its ``PostgreSQLError/kind``; nil for any other error.
    ///
    /// ```swift
    /// catch where error.postgreSQLError?.kind == .commitOutcomeUnknown { /* read the key to know */ }
    /// ```
    public var postgreSQLError: PostgreSQLError? {
        guard case .database(let error) = self else { return nil }
        return error.underlying as? PostgreSQLError
    }
}
