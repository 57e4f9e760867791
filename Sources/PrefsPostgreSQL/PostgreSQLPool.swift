import Foundation
import PrefsSupport
import Synchronization

/// The connections to one server in this process, shared by every store opened with the same connection string and
/// options: at most ``PostgreSQLOptions/maximumConnections`` at once, each used by one call at a time, plus one
/// connection that listens for all their namespaces (``PostgreSQLListener``).
///
/// A connection is set up once (the server-side timeouts, whether the server is a hot standby) and the schema is
/// prepared on the pool's first connection (created, migrated, or refused when newer); each later connection checks the
/// format version.
// @unchecked Sendable: every mutable field is read and written under `condition`.
final class PostgreSQLPool: @unchecked Sendable {
    let connectionString: PostgreSQLConnectionString
    let options: PostgreSQLOptions
    /// The database with the password hidden.
    let target: String
    /// Guards the state below. Unchecked exclusivity: the state is read and written only while `condition` is held, so
    /// no two accesses overlap; checked, a borrow and a return paid ten runtime calls (2k instructions of an update).
    private let condition = NSCondition()
    @exclusivity(unchecked) private var idle: [PostgreSQLConnection] = []
    @exclusivity(unchecked) private var open = 0
    private var schemaPrepared = false
    @exclusivity(unchecked) private var standby: Bool?
    private var listenerInstance: PostgreSQLListener?
    /// How soon after its return a connection is taken again without first checking that the server kept it open
    /// (one `poll(2)`: a write's fourth system call, where raw libpq makes three): a connection that sat idle may have been
    /// closed by a restart, an idle timeout or an administrator, and a write sent on it would have an unknown outcome;
    /// one that completed a statement moments ago is as open as a check would find it. Connection pools do the same
    /// (HikariCP skips the check for 500 ms, pgx for one second). After a connection is found broken, every idle
    /// connection returned before then is checked, whatever its age (the server may have gone away for all of them).
    package var livenessWindow: Duration {
        get { condition.withLock { window } }
        set { condition.withLock { window = newValue } }
    }
    @exclusivity(unchecked) private var window: Duration = .milliseconds(100)
    /// When a connection was last found broken (or a new one failed): idle connections returned before are suspect.
    @exclusivity(unchecked) private var lastBreak: ContinuousClock.Instant?
    /// How many idle connections were checked before use (for tests).
    package var livenessChecks: Int {
        condition.withLock { checks }
    }
    @exclusivity(unchecked) private var checks = 0
    /// The namespaces this process has registered (a row in `prefs_namespaces`), so that a write registers its
    /// namespace once, not each time; a check that finds the row gone removes it.
    let registeredNamespaces = Locked<Set<String>>([])
    /// How many namespaces were removed from ``registeredNamespaces``: a store that found its own registered keeps
    /// knowing it while this count stays the same, without the lock and the set's lookup at every write.
    let registrationsRemoved = Atomic<UInt64>(0)

    private init(connectionString: PostgreSQLConnectionString, options: PostgreSQLOptions) {
        self.connectionString = connectionString
        self.options = options
        target = connectionString.redacted
    }

    deinit {
        condition.lock()
        let connections = idle
        idle = []
        let listener = listenerInstance
        condition.unlock()
        for connection in connections { connection.close() }
        listener?.stop()
    }

    // MARK: - One pool per server

    private struct Key: Hashable {
        var conninfo: String
        var options: PostgreSQLOptions
    }

    private final class WeakPool {
        weak var pool: PostgreSQLPool?
        init(_ pool: PostgreSQLPool) { self.pool = pool }
    }

    private static let registry = Locked<[Key: WeakPool]>([:])

    /// The pool for `conninfo` and the options that shape a session (a store's staleness bound, its clock, its
    /// read-only flag and its history bounds do not).
    static func shared(conninfo: String, options: PostgreSQLOptions) throws(PostgreSQLError) -> PostgreSQLPool {
        let parsed: PostgreSQLConnectionString
        do {
            parsed = try PostgreSQLConnectionString.parse(conninfo)
        } catch {
            throw PostgreSQLError(
                kind: .connectionFailed, sqlState: PostgreSQLError.ClientCode.cannotConnect, message: error.message, operation: "reading the connection string",
                target: PostgreSQLRedaction.redact(conninfo))
        }
        var sessionOptions = options
        sessionOptions.stalenessBound = .zero
        sessionOptions.readOnly = false
        sessionOptions.clock = .system
        sessionOptions.historyRevisions = nil
        sessionOptions.historyAge = nil
        let key = Key(conninfo: conninfo, options: sessionOptions)
        return registry.withLock { pools in
            if let pool = pools[key]?.pool { return pool }
            pools = pools.filter { $0.value.pool != nil }
            let pool = PostgreSQLPool(connectionString: parsed, options: sessionOptions)
            pools[key] = WeakPool(pool)
            return pool
        }
    }

    // MARK: - Connections

    /// Runs `body` with a connection of the pool, waiting for one (or connecting) by `deadline`. A connection that
    /// `body` leaves broken, or inside a transaction, is closed rather than returned.
    ///
    /// With `checkingFormat`, a connection the pool already had checks the format version again first (a new one checks
    /// it as it is set up): a store opening in a process whose pool outlived a newer release's upgrade refuses it.
    func withConnection<Result>(
        deadline: ContinuousClock.Instant, readOnly: Bool, checkingFormat: Bool = false, operation: @autoclosure () -> String,
        _ body: (PostgreSQLConnection) throws -> Result
    ) throws -> Result {
        let (connection, isNew) = try borrow(deadline: deadline, readOnly: readOnly, operation: operation)
        defer { giveBack(connection) }
        if checkingFormat, !isNew { try PostgreSQLSchema.checkVersion(connection, deadline: deadline, probing: false) }
        return try body(connection)
    }

    /// Whether the server is a hot standby (known once a connection was made).
    var isStandby: Bool {
        condition.withLock { standby ?? false }
    }

    /// How many connections the pool holds now, in use or idle (for tests).
    var openConnections: Int {
        condition.withLock { open }
    }

    /// A connection of the pool, and whether it is new (set up and its format checked just now).
    private func borrow(deadline: ContinuousClock.Instant, readOnly: Bool, operation: () -> String) throws -> (PostgreSQLConnection, isNew: Bool) {
        condition.lock()
        while true {
            while let connection = idle.popLast() {
                // A connection that sat idle may have been closed by the server (a restart): drop it now, rather
                // than learn it from a write whose outcome would then be unknown. One returned moments ago, since
                // the last connection found broken, is taken as it is (see livenessWindow).
                if let returned = connection.returnedAt, lastBreak.map({ returned > $0 }) ?? true, ContinuousClock.now - returned < window {
                    condition.unlock()
                    return (connection, false)
                }
                checks += 1
                if connection.isAlive { condition.unlock(); return (connection, false) }
                connection.close()
                open -= 1
                lastBreak = .now
            }
            if open < options.maximumConnections {
                open += 1
                condition.unlock()
                do {
                    return (try connect(deadline: deadline, readOnly: readOnly), true)
                } catch {
                    condition.withLock {
                        open -= 1
                        lastBreak = .now
                        condition.signal()
                    }
                    throw error
                }
            }
            guard condition.wait(until: Date(timeIntervalSinceNow: (deadline - ContinuousClock.now).timeInterval)) || ContinuousClock.now < deadline else {
                condition.unlock()
                throw PostgreSQLError(
                    kind: .timedOut, sqlState: PostgreSQLError.ClientCode.queryCanceled,
                    message: "all \(options.maximumConnections) connections of the pool were in use until the deadline", operation: operation(),
                    target: target)
            }
        }
    }

    private func giveBack(_ connection: PostgreSQLConnection) {
        condition.withLock {
            if connection.isOpen, connection.isHealthy, !connection.isInTransaction {
                connection.returnedAt = .now
                idle.append(connection)
            } else {
                if !connection.isOpen || !connection.isHealthy { lastBreak = .now }
                connection.close()
                open -= 1
            }
            condition.signal()
        }
    }

    /// A new connection, set up: the session's timeouts, whether the server is a standby, and the schema (prepared on
    /// the pool's first connection, its version checked on later ones).
    private func connect(deadline: ContinuousClock.Instant, readOnly: Bool) throws -> PostgreSQLConnection {
        let connection = try makeConnection(deadline: deadline)
        connection.preparesStatements = !options.transactionPooling
        do {
            let result = try connection.executeScript(
                options.sessionSetup + "SELECT pg_is_in_recovery()", deadline: deadline, operation: "setting up the session")
            let isStandby = result.rows.first?.first == "t"
            let prepared = condition.withLock {
                standby = isStandby
                return schemaPrepared
            }
            if prepared {
                try PostgreSQLSchema.checkVersion(connection, deadline: deadline, probing: false)
            } else {
                try PostgreSQLSchema.prepare(connection, readOnly: readOnly || isStandby, deadline: deadline)
                try PostgreSQLSchema.checkVersion(connection, deadline: deadline, probing: true)
                condition.withLock { schemaPrepared = true }
            }
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// A connection of its own, not counted in the pool (the signalling connection's, whose `application_name` ends in
    /// "signals", as `pg_stat_activity` shows it).
    func makeConnection(deadline: ContinuousClock.Instant, signals: Bool = false) throws(PostgreSQLError) -> PostgreSQLConnection {
        let connectBy = min(deadline, ContinuousClock.now + options.connectTimeout)
        let defaults: [(keyword: String, value: String)] = [
            ("connect_timeout", String(max(1, Int(options.connectTimeout.components.seconds)))),
            ("application_name", signals ? options.applicationName + " signals" : options.applicationName),
        ]
        return try PostgreSQLConnection(
            settings: defaults + connectionString.settings, target: target, secrets: connectionString.secrets, deadline: connectBy)
    }

    // MARK: - Listening

    /// Whether the pool has a signalling connection: no pooler in transaction mode stands between (it would not keep a
    /// `LISTEN`), and the server is not a standby (which cannot `LISTEN`, and takes no writes to notify of).
    var hasSignals: Bool {
        !options.transactionPooling && !isStandby
    }

    /// The pool's signalling connection (``PostgreSQLListener``), started on first use; nil where there is none.
    var listener: PostgreSQLListener? {
        guard hasSignals else { return nil }
        return condition.withLock {
            if let listenerInstance { return listenerInstance }
            let made = PostgreSQLListener(pool: self)
            listenerInstance = made
            return made
        }
    }
}

extension PostgreSQLConnection {
    /// Whether the connection is idle as it was left: nothing has arrived on it. A server that shuts down or ends the
    /// session (a restart, an administrator's `pg_terminate_backend`) sends its goodbye and closes the socket, and
    /// libpq takes a goodbye read on an idle connection for a notice, its status still good until it reads the end of
    /// the stream, which may come later: so anything readable counts as a connection to drop (a notice or a changed
    /// parameter on an idle pooled connection costs a new connection, a rare case).
    var isAlive: Bool {
        guard isHealthy, let socket else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }
}

extension PostgreSQLOptions {
    /// The session settings a new connection gets: plans made once and on the primary keys, and the server-side
    /// timeouts (none of it behind a pooler in transaction mode, where a session's setting would stay with whoever gets
    /// the server connection next).
    ///
    /// Every statement the store prepares finds its rows through a primary key's prefix: a namespace, a key. For
    /// `namespace = $1` the planner's generic plan guesses a namespace's share of the table from its statistics, so
    /// with few namespaces it planned the check for changes as a scan of every namespace's rows; PostgreSQL then planned
    /// each execution anew (2.3 times the server's work for a check of 20 keys), or, where a namespace is a large share
    /// of the table, scanned the whole table at each check. So a plan is made once, and a sequential scan is not one.
    var sessionSetup: String {
        guard !transactionPooling else { return "" }
        let plans = "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; "
        guard let timeout = statementTimeout else { return plans }
        let milliseconds = max(1, timeout.milliseconds)
        return plans
            + "SET statement_timeout = \(milliseconds); SET lock_timeout = \(milliseconds); SET idle_in_transaction_session_timeout = \(milliseconds); "
    }

    /// What starts a transaction block: `BEGIN`, and behind a pooler in transaction mode the server-side timeouts for
    /// this transaction (`SET LOCAL`, which stays in the transaction).
    var beginTransaction: String {
        guard transactionPooling, let timeout = statementTimeout else { return "BEGIN" }
        let milliseconds = max(1, timeout.milliseconds)
        return "BEGIN; SET LOCAL statement_timeout = \(milliseconds); SET LOCAL lock_timeout = \(milliseconds)"
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
