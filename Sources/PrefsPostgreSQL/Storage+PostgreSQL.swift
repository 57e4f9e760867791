import Foundation
import Prefs

/// How the PostgreSQL store connects and waits.
public struct PostgreSQLOptions: Sendable, Hashable {
    /// How long connecting may take (libpq's `connect_timeout`; a `connect_timeout` in the URL wins).
    public var connectTimeout: Duration
    /// The longest one statement of a write may run, waiting for the namespace's lock included (`SET LOCAL
    /// statement_timeout` in each transaction, so it works behind a pooler in transaction mode); nil: the server's
    /// setting. A statement that runs longer fails with SQLSTATE `57014`, and the write with it.
    public var statementTimeout: Duration?
    /// Shown in `pg_stat_activity`.
    public var applicationName: String
    /// Whether the connection listens on its namespace's channel (``PostgreSQLStore/notificationChannel(for:)``).
    /// Turn it off behind a pooler in transaction mode (PgBouncer), where a session's `LISTEN` does not survive:
    /// changes are then seen by the generation comparison alone.
    public var listens: Bool

    public init(
        connectTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = .seconds(30),
        applicationName: String = "prefs",
        listens: Bool = true
    ) {
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.applicationName = applicationName
        self.listens = listens
    }

    static func storageDescription(target: String, namespace: String) -> String {
        ".postgreSQL(\(PostgreSQLBackend.quoted(target)), namespace: \(PostgreSQLBackend.quoted(namespace)))"
    }
}

extension Prefs.Storage {
    /// One namespace of a PostgreSQL database, shared by every instance of a fleet.
    ///
    /// `conninfo` is a libpq connection string: a URL (`postgresql://app:secret@db.internal:5432/prefs?sslmode=verify-full`)
    /// or `key=value` pairs. The password never appears in the store's `description`, errors or diagnostics.
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
