import Foundation
@_spi(Tooling) import Prefs
import PrefsJSON

/// A store in a PostgreSQL database, one namespace of it, through libpq.
///
/// Many stores share one database, each in its own namespace (one per user, or per app and environment). The schema is
/// created on first use and reads plainly in `psql`:
/// ```sql
/// CREATE TABLE prefs_meta (name text PRIMARY KEY, value text NOT NULL);          -- ('format_version', '1')
/// CREATE TABLE prefs_namespaces (namespace text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0,
///                                updated_at timestamptz NOT NULL DEFAULT now());
/// CREATE TABLE prefs (namespace text, key text, type text NOT NULL, value text NOT NULL, PRIMARY KEY (namespace, key));
/// CREATE TABLE prefs_declared (namespace text, key text, type text NOT NULL, initial text, PRIMARY KEY (namespace, key));
/// CREATE TABLE prefs_renamed (namespace text, key text, position integer, former text NOT NULL,
///                             PRIMARY KEY (namespace, key, position));
/// ```
/// A value is its type's name (as `prefs-tool` lists it) and its JSON text, as the other stores keep them, so a
/// migration in either direction round-trips.
///
/// Writes: every change is a transaction that first locks the namespace's row in `prefs_namespaces`
/// (`SELECT … FOR UPDATE`), so `update` and `transaction` are atomic across every instance, without lost updates; the
/// commit bumps the namespace's `generation` and notifies the namespace's channel (``PostgreSQLStore/notificationChannel(for:)``). ``refresh()`` reads the
/// notifications that arrived and compares the generation (one round trip), so no change goes unseen when a
/// notification is lost.
///
/// Faults: a broken connection is dropped and the next call connects again; a read, or the start of a transaction,
/// retries once on a fresh connection. A transaction in progress is never replayed: a failed commit throws.
package final class PostgreSQLBackend: PrefsBackend {
    let conninfo: String
    let namespace: String
    let options: PostgreSQLOptions
    /// The database with the password hidden.
    package let target: String
    private var connection: PostgreSQLConnection?
    /// The namespace's generation as this backend last saw it (its own commits included).
    private var seenGeneration: Int64?
    /// Set when the connection was replaced: notifications may have been missed.
    private var reconnected = false
    /// The generation read by `beginTransaction` under the row lock.
    private var lockedGeneration: Int64?
    /// A notification from another session for this namespace, read before the next `refresh()`.
    private var notifiedSinceRefresh = false
    /// This namespace's notification channel.
    private let channel: String
    /// What starts a transaction: `BEGIN`, and the statement timeout for it (`SET LOCAL`, which poolers in
    /// transaction mode pass through, unlike a startup parameter).
    private let begin: String

    package var description: String {
        PostgreSQLOptions.storageDescription(target: target, namespace: namespace)
    }

    /// Connects, creates the schema when the database has none (refusing a newer format), and registers the namespace.
    package init(conninfo: String, namespace: String, options: PostgreSQLOptions = .init()) throws {
        self.conninfo = conninfo
        self.namespace = namespace
        self.options = options
        target = PostgreSQLRedaction.redact(conninfo)
        channel = PostgreSQLStore.notificationChannel(for: namespace)
        if let timeout = options.statementTimeout {
            let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            begin = "BEGIN; SET LOCAL statement_timeout = \(max(1, milliseconds))"
        } else {
            begin = "BEGIN"
        }
        guard !namespace.isEmpty, namespace.utf8.count <= PostgreSQLStore.maximumNamespaceBytes, !namespace.utf8.contains(0) else {
            throw PostgreSQLError(
                kind: .statementFailed, message: "a namespace is 1 to \(PostgreSQLStore.maximumNamespaceBytes) bytes, without NUL",
                operation: "opening namespace \(Self.quoted(namespace))", target: target)
        }
        let connection = try connect()
        try PostgreSQLSchema.prepare(connection, namespace: namespace)
        self.connection = connection
        seenGeneration = try readGeneration(connection)
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    // MARK: - Connection

    private func connect() throws(PostgreSQLError) -> PostgreSQLConnection {
        let parameters: [(String, String)] = [
            ("connect_timeout", String(max(1, Int(options.connectTimeout.components.seconds)))),
            ("application_name", options.applicationName),
        ]
        let connection = try PostgreSQLConnection(conninfo: conninfo, parameters: parameters, target: target)
        if options.listens {
            try connection.execute("LISTEN \(connection.quotedIdentifier(channel))", operation: "listening for changes")
        }
        return connection
    }

    /// The open connection, connecting again when the last one broke.
    private func liveConnection() throws(PostgreSQLError) -> PostgreSQLConnection {
        if let connection, connection.isHealthy { return connection }
        connection?.close()
        connection = nil
        let fresh = try connect()
        connection = fresh
        reconnected = true
        return fresh
    }

    /// Runs `body` on the connection; when the connection turns out broken and `body` is safe to repeat (a read, or
    /// `BEGIN`: the server applied nothing), repeats it once on a new connection.
    private func withConnection<T>(retrying: Bool, _ body: (PostgreSQLConnection) throws(PostgreSQLError) -> T) throws(PostgreSQLError) -> T {
        let connection = try liveConnection()
        do {
            return try body(connection)
        } catch  where error.kind == .connectionLost && retrying {
            connection.close()
            self.connection = nil
            return try body(try liveConnection())
        } catch  where error.kind == .connectionLost {
            connection.close()
            self.connection = nil
            throw error
        }
    }

    private func readGeneration(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> Int64 {
        let result = try connection.execute(
            "SELECT generation FROM prefs_namespaces WHERE namespace = $1", [namespace],
            operation: "reading the generation of namespace \(Self.quoted(namespace))")
        return result.firstInteger ?? 0
    }

    // MARK: - Reading

    package func value(forKey key: String) throws -> StoredValue? {
        let name = Self.canonicalName(key)
        return try withConnection(retrying: true) { connection throws(PostgreSQLError) in
            let result = try connection.execute(
                "SELECT type, value FROM prefs WHERE namespace = $1 AND key = $2", [namespace, name],
                operation: "reading key \(Self.quoted(name)) of namespace \(Self.quoted(namespace))")
            guard let row = result.rows.first else { return nil }
            return Self.storedValue(type: row[0] ?? "", text: row[1] ?? "null")
        }
    }

    package func allValues() throws -> [String: StoredValue] {
        try withConnection(retrying: true) { connection throws(PostgreSQLError) in
            let result = try connection.execute(
                "SELECT key, type, value FROM prefs WHERE namespace = $1", [namespace],
                operation: "reading namespace \(Self.quoted(namespace))")
            var values: [String: StoredValue] = [:]
            values.reserveCapacity(result.rows.count)
            for row in result.rows {
                guard let key = row[0] else { continue }
                values[Self.canonicalName(key)] = Self.storedValue(type: row[1] ?? "", text: row[2] ?? "null")
            }
            return values
        }
    }

    package func declarations() throws -> [String: KeyDeclaration] {
        try withConnection(retrying: true) { connection throws(PostgreSQLError) in
            let declared = try connection.execute(
                "SELECT key, type, initial FROM prefs_declared WHERE namespace = $1", [namespace],
                operation: "reading the declarations of namespace \(Self.quoted(namespace))")
            var result: [String: KeyDeclaration] = [:]
            for row in declared.rows {
                guard let key = row[0], let declaration = Self.declaration(type: row[1], initial: row[2]) else { continue }
                result[key] = declaration
            }
            let renamed = try connection.execute(
                "SELECT key, former FROM prefs_renamed WHERE namespace = $1 ORDER BY key, position", [namespace],
                operation: "reading the renames of namespace \(Self.quoted(namespace))")
            for row in renamed.rows {
                guard let key = row[0], let former = row[1] else { continue }
                result[key]?.formerNames.append(former)
            }
            return result
        }
    }

    package func declaration(forKey key: String) throws -> KeyDeclaration? {
        let name = Self.canonicalName(key)
        return try withConnection(retrying: true) { connection throws(PostgreSQLError) -> KeyDeclaration? in
            let declared = try connection.execute(
                "SELECT type, initial FROM prefs_declared WHERE namespace = $1 AND key = $2", [namespace, name],
                operation: "reading the declaration of key \(Self.quoted(name))")
            guard let row = declared.rows.first, var declaration = Self.declaration(type: row[0], initial: row[1]) else { return nil }
            let renamed = try connection.execute(
                "SELECT former FROM prefs_renamed WHERE namespace = $1 AND key = $2 ORDER BY position", [namespace, name],
                operation: "reading the renames of key \(Self.quoted(name))")
            declaration.formerNames = renamed.rows.compactMap { $0.first ?? nil }
            return declaration
        }
    }

    // MARK: - Writing

    /// `BEGIN`, then the namespace's row locked (`SELECT … FOR UPDATE`; created when missing): every writer of the
    /// namespace, in any process on any machine, waits here for the one before it to commit.
    package func beginTransaction() throws {
        lockedGeneration = try withConnection(retrying: true) { connection throws(PostgreSQLError) -> Int64 in
            try connection.executeScript(begin, operation: "beginning a transaction in namespace \(Self.quoted(namespace))")
            do throws(PostgreSQLError) {
                return try lockNamespace(connection)
            } catch {
                if error.kind != .connectionLost { _ = try? connection.execute("ROLLBACK", operation: "rolling back") }
                throw error
            }
        }
    }

    private func lockNamespace(_ connection: PostgreSQLConnection) throws(PostgreSQLError) -> Int64 {
        let operation = "locking namespace \(Self.quoted(namespace))"
        let select = "SELECT generation FROM prefs_namespaces WHERE namespace = $1 FOR UPDATE"
        if let generation = try connection.execute(select, [namespace], operation: operation).firstInteger {
            return generation
        }
        // Removed since opening (retention of old namespaces): register it again, then lock it.
        try connection.execute(
            "INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT (namespace) DO NOTHING", [namespace], operation: operation)
        return try connection.execute(select, [namespace], operation: operation).firstInteger ?? 0
    }

    package func commitTransaction(_ changes: Changeset) throws {
        guard let connection, connection.isInTransaction else {
            throw PostgreSQLError(
                kind: .connectionLost, message: "the transaction's connection is gone; nothing was committed",
                operation: "committing in namespace \(Self.quoted(namespace))", target: target)
        }
        let operation = "committing in namespace \(Self.quoted(namespace))"
        do throws(PostgreSQLError) {
            try write(changes, on: connection, operation: operation)
            var newGeneration: Int64?
            if !changes.isEmpty {
                let bumped = try connection.execute(
                    """
                    WITH bumped AS (UPDATE prefs_namespaces SET generation = generation + 1, updated_at = now()
                                    WHERE namespace = $1 RETURNING generation)
                    SELECT generation, pg_notify($2, $1) FROM bumped
                    """, [namespace, channel], operation: operation)
                newGeneration = bumped.firstInteger
            }
            let commit: PostgreSQLConnection.Result
            do {
                commit = try connection.execute("COMMIT", operation: operation)
            } catch  where error.kind == .connectionLost {
                var unknown = error
                unknown.kind = .commitOutcomeUnknown
                throw unknown
            }
            // A transaction that failed earlier ends with ROLLBACK as its tag, not an error.
            guard commit.commandTag == "COMMIT" else {
                throw PostgreSQLError(
                    kind: .statementFailed, message: "the server rolled the transaction back (\(commit.commandTag))",
                    operation: operation, target: target)
            }
            // Nothing external happened between the last refresh and the lock: the new generation is this commit's own.
            if let newGeneration, lockedGeneration == seenGeneration { seenGeneration = newGeneration }
            lockedGeneration = nil
            // This session's own notification arrives with the COMMIT: take it now, so that a store that only
            // writes (and never refreshes) does not pile them up in libpq's queue.
            if options.listens { _ = try? takeNotifications(connection) }
        } catch {
            if error.kind == .connectionLost || error.kind == .commitOutcomeUnknown {
                connection.close()
                self.connection = nil
            }
            throw error
        }
    }

    private func write(_ changes: Changeset, on connection: PostgreSQLConnection, operation: String) throws(PostgreSQLError) {
        var setKeys: [String] = [], setTypes: [String] = [], setValues: [String] = [], removed: [String] = []
        for (key, change) in changes.values {
            switch change {
            case .set(let value):
                setKeys.append(Self.canonicalName(key))
                setTypes.append(value.type.description)
                setValues.append(value.json.serialized())
            case .remove:
                removed.append(Self.canonicalName(key))
            }
        }
        if !removed.isEmpty {
            try connection.execute(
                "DELETE FROM prefs WHERE namespace = $1 AND key = ANY($2::text[])", [namespace, Self.arrayLiteral(removed)],
                operation: operation)
        }
        if !setKeys.isEmpty {
            try connection.execute(
                """
                INSERT INTO prefs (namespace, key, type, value)
                SELECT $1, k, t, v FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, t, v)
                ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value
                """,
                [namespace, Self.arrayLiteral(setKeys), Self.arrayLiteral(setTypes), Self.arrayLiteral(setValues)],
                operation: operation)
        }
        let undeclared = Array(changes.removedDeclarations.map(Self.canonicalName)) + changes.declarations.keys.map(Self.canonicalName)
        if !undeclared.isEmpty {
            let names = Self.arrayLiteral(undeclared)
            try connection.execute(
                "DELETE FROM prefs_declared WHERE namespace = $1 AND key = ANY($2::text[])", [namespace, names], operation: operation)
            try connection.execute(
                "DELETE FROM prefs_renamed WHERE namespace = $1 AND key = ANY($2::text[])", [namespace, names], operation: operation)
        }
        for (key, declaration) in changes.declarations {
            let name = Self.canonicalName(key)
            try connection.execute(
                "INSERT INTO prefs_declared (namespace, key, type, initial) VALUES ($1, $2, $3, $4)",
                [namespace, name, declaration.type.description, declaration.initial.map { $0.serialized() }], operation: operation)
            for (position, former) in declaration.formerNames.enumerated() {
                try connection.execute(
                    "INSERT INTO prefs_renamed (namespace, key, position, former) VALUES ($1, $2, $3, $4)",
                    [namespace, name, String(position), former], operation: operation)
            }
        }
    }

    package func rollbackTransaction() {
        lockedGeneration = nil
        guard let connection else { return }
        if connection.isInTransaction {
            // Nothing to lose: the transaction is abandoned (a broken connection rolls back on the server by itself).
            _ = try? connection.execute("ROLLBACK", operation: "rolling back")
        }
        if !connection.isHealthy {
            connection.close()
            self.connection = nil
        }
    }

    /// True when another instance changed the namespace since the last call: a notification for it arrived, or its
    /// generation moved (the fallback when a notification was missed, or when the connection was replaced).
    package func refresh() throws -> Bool {
        try withConnection(retrying: true) { connection throws(PostgreSQLError) -> Bool in
            if options.listens { try takeNotifications(connection) }
            let generation = try readGeneration(connection)
            defer {
                seenGeneration = generation
                reconnected = false
                notifiedSinceRefresh = false
            }
            return notifiedSinceRefresh || reconnected || generation != seenGeneration
        }
    }

    /// Reads the notifications that arrived, noting one from another session for this namespace.
    private func takeNotifications(_ connection: PostgreSQLConnection) throws(PostgreSQLError) {
        let own = connection.backendPID
        for notification in try connection.notifications(operation: "reading notifications")
        where notification.channel == channel && notification.payload == namespace && notification.pid != own {
            notifiedSinceRefresh = true
        }
    }

    // MARK: - Checking and closing

    package func integrityProblems() throws -> [String] {
        var problems = try quickCheckProblems()
        guard problems.isEmpty else { return problems }  // the values cannot be read through a damaged schema
        for (key, value) in try allValues().sorted(by: { $0.key < $1.key }) {
            if case .other(let name) = value.type {
                problems.append("key \(Self.quoted(key)): type \(Self.quoted(name)) is not a type this release reads")
            } else if let problem = value.shapeProblem() {
                problems.append("key \(Self.quoted(key)): \(problem)")
            }
        }
        return problems
    }

    package func quickCheckProblems() throws -> [String] {
        try withConnection(retrying: true) { connection throws(PostgreSQLError) in try PostgreSQLSchema.problems(connection) }
    }

    package func close() {
        if let connection, connection.isInTransaction { _ = try? connection.execute("ROLLBACK", operation: "closing") }
        connection?.close()
        connection = nil
    }

    // MARK: - Values

    /// The spelling a key is stored under: Unicode NFC, as the SQLite store writes it.
    static func canonicalName(_ key: String) -> String {
        key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
    }

    static func storedValue(type typeName: String, text: String) -> StoredValue {
        let type = ValueType(typeName) ?? .other(typeName)
        // Unparseable text is kept as a string, and reading it reports a mismatch (as the SQLite store does).
        let json = (try? JSON.parse(text)) ?? .string(text)
        return StoredValue(type: type, json: json)
    }

    static func declaration(type typeName: String?, initial: String?) -> KeyDeclaration? {
        guard let typeName, let type = ValueType(typeName) else { return nil }
        return KeyDeclaration(type: type, initial: initial.flatMap { try? JSON.parse($0) })
    }

    /// A PostgreSQL array literal of text elements: `{"a","b\"c"}`.
    static func arrayLiteral(_ elements: [String]) -> String {
        var result = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { result += "," }
            result += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { result += "\\" }
                result.unicodeScalars.append(character)
            }
            result += "\""
        }
        return result + "}"
    }
}

// MARK: - Change listener

extension PostgreSQLBackend {
    /// A connection of its own that `LISTEN`s on the namespace's channel, so an observed store sees another instance's
    /// write as soon as its notification arrives (nil when `listens` is off, as behind a pooler in transaction mode).
    package func makeChangeListener() -> (any BackendChangeListener)? {
        guard options.listens else { return nil }
        return PostgreSQLChangeListener(backend: self)
    }
}

/// Waits in `poll(2)` on its connection's socket for a notification on the namespace's channel. A broken connection
/// is replaced at the next wait; until then the wait just times out and the store polls as usual.
final class PostgreSQLChangeListener: BackendChangeListener {
    private let conninfo: String
    private let target: String
    private let channel: String
    private let namespace: String
    private let applicationName: String
    private var connection: PostgreSQLConnection?

    init(backend: PostgreSQLBackend) {
        conninfo = backend.conninfo
        target = backend.target
        channel = PostgreSQLStore.notificationChannel(for: backend.namespace)
        namespace = backend.namespace
        applicationName = backend.options.applicationName
    }

    func wait(upTo timeout: Duration) -> Bool {
        guard let connection = liveConnection(), let socket = connection.socket else {
            Thread.sleep(forTimeInterval: timeout.timeInterval)
            return false
        }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&descriptor, 1, max(1, milliseconds)) > 0 else { return false }
        guard let notifications = try? connection.notifications(operation: "listening for changes") else {
            self.connection = nil  // replaced at the next wait
            return false
        }
        return notifications.contains { $0.channel == channel && $0.payload == namespace }
    }

    func close() {
        connection?.close()
        connection = nil
    }

    private func liveConnection() -> PostgreSQLConnection? {
        if let connection, connection.isHealthy { return connection }
        connection?.close()
        connection = nil
        guard let fresh = try? PostgreSQLConnection(conninfo: conninfo, parameters: [("application_name", applicationName)], target: target),
            (try? fresh.execute("LISTEN \(fresh.quotedIdentifier(channel))", operation: "listening for changes")) != nil
        else { return nil }
        connection = fresh
        return fresh
    }
}
