import Foundation
import Prefs
import PrefsSupport

/// How the PostgreSQL store connects, how long it waits, and how fresh its reads are.
///
/// ```swift
/// let options = PostgreSQLOptions(timeout: .seconds(2), stalenessBound: .milliseconds(500))
/// let prefs = try Prefs(.postgreSQL(url, namespace: "user-42", options: options))
/// ```
public struct PostgreSQLOptions: Sendable, Hashable {
    /// How long connecting may take (at most: a call's own ``timeout`` still bounds the call that connects).
    public var connectTimeout: Duration
    /// The deadline of every call to the server (a read, a check for changes, a write, a transaction's commit), on
    /// the client: libpq's non-blocking API waits in `poll(2)` at most this long, then cancels the statement and
    /// closes its connection. The call throws ``PostgreSQLError/Kind/timedOut`` (nothing applied), or for a write that
    /// was sent, ``PostgreSQLError/Kind/commitOutcomeUnknown`` with ``PostgreSQLError/isTimeout``. 5 s by default.
    public var timeout: Duration
    /// The server's own limits for the store's sessions: `statement_timeout`, `lock_timeout` and
    /// `idle_in_transaction_session_timeout`, set when a connection is made (with ``transactionPooling``, `SET LOCAL` in
    /// each transaction block instead), so that the server stops work the client gave up on. A statement over it fails
    /// with SQLSTATE `57014` (`55P03` for a lock), as ``PostgreSQLError/Kind/timedOut``. Nil: the server's (or the
    /// role's) settings. 5 s by default (it was 30 s, for writes only).
    public var statementTimeout: Duration?
    /// The oldest a read may be: a cached value older than this is checked with the server first (one round trip for
    /// the whole namespace). A notification of another instance's write makes the next read check at once. 1 s by
    /// default; `.zero` checks before every read. `Prefs.refresh()` always checks.
    public var stalenessBound: Duration
    /// Shown in `pg_stat_activity`.
    public var applicationName: String
    /// Whether the pool's listening connection `LISTEN`s on the namespace's channel
    /// (``PostgreSQLStore/notificationChannel(for:)``), so another instance's write is seen within milliseconds. Without
    /// it (and on a hot standby, which cannot `LISTEN`), changes are seen by the staleness check alone.
    public var listens: Bool
    /// Behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`), where consecutive statements may
    /// run in different server sessions: the store neither `LISTEN`s (a session's `LISTEN` would not stay) nor sets
    /// session parameters (they would stay with whoever gets the server connection next); set the server-side
    /// timeouts on the role instead (`ALTER ROLE … SET statement_timeout = '5s'`). False by default.
    public var transactionPooling: Bool
    /// The most connections the stores of this server hold at once in this process (the listening connection aside);
    /// a call waits for one, within its ``timeout``. 8 by default.
    public var maximumConnections: Int
    /// Opens for reading only: opening neither creates nor upgrades the schema, and every write throws SQLSTATE
    /// `25006` without reaching the server. For a role that may only `SELECT`, a role with
    /// `default_transaction_read_only`, a hot standby, and tools that must change nothing. False by default.
    public var readOnly: Bool
    /// The most history entries a namespace keeps (one per write of a key, for watches from a revision), newest
    /// first: the store deletes older ones as it writes (one `DELETE` every ``historyRevisions`` / 10 writes, at
    /// most 1,000, and at a store's first write). Nil: no bound by count. 10,000 by default, about 1 MB a namespace.
    /// History is kept only in a namespace whose retention is set (``PostgreSQLDatabase/setHistoryRetention(_:for:)``).
    ///
    /// ```swift
    /// let options = PostgreSQLOptions(historyRevisions: 1_000, historyAge: .seconds(86_400))
    /// ```
    public var historyRevisions: Int?
    /// The oldest a history entry may be: the store deletes older ones as it writes (as for ``historyRevisions``, and
    /// at least every minute while it writes). A namespace's own retention
    /// (``PostgreSQLDatabase/setHistoryRetention(_:for:)``) bounds it too: the shorter of the two applies. Nil (the
    /// default): the namespace's retention alone.
    ///
    /// ```swift
    /// let options = PostgreSQLOptions(historyAge: .seconds(3_600))
    /// ```
    public var historyAge: Duration?
    /// The clock ``stalenessBound`` is measured by: the system's, or in tests one they advance by hand
    /// (`StoreClock.Manual`), so that the bound passes without a sleep. Deadlines (``timeout``) keep real time.
    package var clock: StoreClock = .system

    /// Options for a store; every argument has the default that its property documents.
    public init(
        connectTimeout: Duration = .seconds(5),
        timeout: Duration = .seconds(5),
        statementTimeout: Duration? = .seconds(5),
        stalenessBound: Duration = .seconds(1),
        applicationName: String = "prefs",
        listens: Bool = true,
        transactionPooling: Bool = false,
        maximumConnections: Int = 8,
        readOnly: Bool = false,
        historyRevisions: Int? = 10_000,
        historyAge: Duration? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.statementTimeout = statementTimeout
        self.stalenessBound = stalenessBound
        self.applicationName = applicationName
        self.listens = listens
        self.transactionPooling = transactionPooling
        self.maximumConnections = max(1, maximumConnections)
        self.readOnly = readOnly
        self.historyRevisions = historyRevisions.map { max(1, $0) }
        self.historyAge = historyAge
    }

    static func storageDescription(target: String, namespace: String) -> String {
        ".postgreSQL(\(PostgreSQLBackend.quoted(target)), namespace: \(PostgreSQLBackend.quoted(namespace)))"
    }
}

extension Prefs.Storage {
    /// One namespace of a PostgreSQL database, shared by every instance of a fleet.
    ///
    /// `conninfo` is a libpq connection string: a URL (`postgresql://app:secret@db.internal:5432/prefs?sslmode=verify-full`)
    /// or `key=value` pairs (`host=db.internal dbname=prefs user=app sslmode=verify-full`). The password never appears in
    /// the store's `description`, errors or diagnostics; better still, keep it out of the string (a password file, or
    /// `PGPASSWORD`).
    ///
    /// ```swift
    /// let prefs = try Prefs(.postgreSQL("postgresql://app@db.internal/prefs", namespace: "user-42"))
    /// ```
    public static func postgreSQL(_ conninfo: String, namespace: String, options: PostgreSQLOptions = .init()) -> Prefs.Storage {
        let description = PostgreSQLOptions.storageDescription(target: PostgreSQLRedaction.redact(conninfo), namespace: namespace)
        return .backend(description) {
            try PostgreSQLBackend(conninfo: conninfo, namespace: namespace, options: options)
        }
    }

    /// One namespace of a PostgreSQL database given by a `postgresql://` URL.
    public static func postgreSQL(_ url: URL, namespace: String, options: PostgreSQLOptions = .init()) -> Prefs.Storage {
        postgreSQL(url.absoluteString, namespace: namespace, options: options)
    }
}
