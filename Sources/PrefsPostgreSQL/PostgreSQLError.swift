import Foundation

/// A failure of the PostgreSQL store: what was being done, where (with the password redacted), and what the server or
/// libpq said.
///
/// ```swift
/// do {
///     try prefs.update(.launchCount) { $0 += 1 }
/// } catch let error as PostgreSQLError where error.sqlState == "57014" {
///     // statement_timeout: the namespace's row lock was held too long by another instance
/// }
/// ```
public struct PostgreSQLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Sendable, Hashable {
        /// No connection could be made (refused, unknown host, authentication failed, too many connections).
        case connectionFailed
        /// The connection broke during a call (the server stopped or restarted, the network dropped). The next call
        /// connects again. A transaction that was open is rolled back by the server; nothing of it was applied.
        case connectionLost
        /// The connection broke while `COMMIT` was on its way: the transaction may or may not have committed. The
        /// store does not replay it; read the value again to know.
        case commitOutcomeUnknown
        /// The server refused a statement (`sqlState` says why: `57014` statement timeout, `55P03` lock timeout, …).
        case statementFailed
        /// The database holds something the store cannot use (a damaged schema).
        case unexpectedSchema
    }

    public var kind: Kind
    /// The five-character SQLSTATE code the server gave (`57014`, `08006`, …), when it gave one.
    public var sqlState: String?
    /// The server's or libpq's message (one line).
    public var message: String
    /// What the store was doing: "reading key \"theme\"", "committing a transaction", "connecting", …
    public var operation: String
    /// The database, with any password replaced by `***`.
    public var target: String

    public init(kind: Kind, sqlState: String? = nil, message: String, operation: String, target: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.operation = operation
        self.target = target
    }

    public var description: String {
        let what: String =
            switch kind {
            case .connectionFailed: "cannot connect"
            case .connectionLost: "connection lost"
            case .commitOutcomeUnknown: "connection lost during COMMIT (the outcome is unknown; nothing was retried)"
            case .statementFailed: "statement failed"
            case .unexpectedSchema: "unexpected schema"
            }
        let code = sqlState.map { " [SQLSTATE \($0)]" } ?? ""
        return "PostgreSQL: \(what)\(code) while \(operation) at \(target): \(message)"
    }

    /// Whether the connection itself failed (refused, lost), rather than a statement on a working connection.
    public var isConnectionFailure: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown: true
        case .statementFailed, .unexpectedSchema: sqlState?.hasPrefix("08") ?? false
        }
    }
}
