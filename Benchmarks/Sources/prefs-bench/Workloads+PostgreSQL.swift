import BenchLibPQ
import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsTesting

// Workload 9: the PostgreSQL store against raw libpq on the same private server, in the same run: a set against a
// plain autocommit upsert and against the store's own statement run raw; an update against a raw UPDATE … RETURNING; a
// batch against a raw upsert of the same rows; strict reads (of the namespace, of one key) and the cache hit against a raw
// SELECT.

extension Bench {
    func postgreSQL(n requested: Int) throws {
        let server: TestPostgreSQLServer
        let starting = clock.now
        do {
            server = try TestPostgreSQLServer()
        } catch let missing as TestPostgreSQLServer.Missing {
            recorder.note("workload 9 skipped: \(missing.description)")
            progress("9. skipped: no PostgreSQL server programs")
            return
        }
        defer { server.stop() }
        progress("9. private PostgreSQL server started in \(Format.time((clock.now - starting).nanoseconds))")
        let n = min(requested, 1_000)  // every operation is a round trip: a thousand keys are plenty
        let data = try data(n, Int.self)
        let url = server.url
        // Listening on (the default): the store's own notifications are filtered, as in production.
        let store = try Prefs(.postgreSQL(url, namespace: "bench-prefs"))
        defer { try? store.close() }
        try store.batch { transaction in for (i, key) in data.keys.enumerated() { try transaction.set(data.values(round: 0)[i], for: key) } }
        try store.declare(data.keys)  // steady state: a key's first write in a process also records its declaration
        for key in data.keys { blackHole(store[key]) }  // and its revision cached, as after the first read
        let raw = try RawLibPQ(url)
        defer { raw.close() }
        try raw.script(RawLibPQ.plainTable)
        let namespace = "bench-raw"
        let statements = RawLibPQ.Statements(namespace: namespace, channel: PostgreSQLStore.notificationChannel(for: namespace))
        try statements.plainUpsert(raw, data.names, data.values(round: 0).map(String.init))
        try raw.exec("INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT DO NOTHING", [namespace])
        try statements.storeWrite(raw, data.names, data.values(round: 0).map(String.init))

        // The one-client rows with the server on one CPU (see OneCPU: on two, this VM's round trips are bimodal); the
        // fleet's rows, eight clients at once, on every CPU.
        let oneCPU = try raw.exec("SELECT pg_backend_pid()").flatMap { pid_t($0) }.flatMap(OneCPU.parent(of:)).flatMap(OneCPU.init(postmaster:))
        defer { oneCPU?.release() }
        if let oneCPU {
            recorder.note("workload 9: the one-client rows ran with the benchmark and its PostgreSQL server on CPU \(oneCPU.cpu) alone")
        } else {
            recorder.note("workload 9: the one-client rows ran on every CPU (affinity could not be set)")
        }

        let subject = "Prefs postgresql"
        let plain = "raw libpq, one autocommit upsert"
        let same = "raw libpq, the store's statement"
        let info = (n: n, label: "\(Format.count(n)) keys, PostgreSQL \(raw.serverVersion), Unix socket", type: "Int")

        // Set: one statement (upsert with a revision, namespace registered, history if kept, NOTIFY).
        try measure(
            workload: 9, title: "PostgreSQL set, one write per call", data: info,
            contenders: [
                Contender(name: plain, role: .baseline, maxOps: n, adaptive: true) {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try statements.plainUpsert(raw, [data.names[i]], [String(values[i])]) } }
                    }
                },
                Contender(name: same, role: .baseline, maxOps: n, adaptive: true) {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try statements.storeWrite(raw, [data.names[i]], [String(values[i])]) } }
                    }
                },
                Contender(name: subject, role: .subject, maxOps: n, adaptive: true) {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try store.set(values[i], for: data.keys[i]) } }
                    }
                },
            ],
            metric: "set",
            rules: [Rule(subject: subject, baseline: plain, target: .within(1.3)), Rule(subject: subject, baseline: same, target: .within(1.1))],
            notes: [
                subject: "one statement: the value with a new revision, the namespace registered, NOTIFY; writers of other keys never wait",
                same: "the statement the store sends, sent by raw libpq: what the store adds is the difference",
            ])

        // Get: a strict read (refresh(): the check for changes, one round trip that brings the changed rows) and the
        // cache hit, against one raw SELECT. The check reads the rows of the namespace written since the last one, and
        // finds them among all its rows: a namespace of a thousand keys, as here, and one of twenty, as a user's.
        let cached = "Prefs postgresql, typed get (cache hit)"
        let strict = "Prefs postgresql, refresh() and get"
        let strictSmall = "Prefs postgresql, refresh() and get, 20 keys in the namespace"
        let keyed = "Prefs postgresql, revisioned(_:) (the key read from the server)"
        let sameCheck = "raw libpq, the store's check statement"
        var lastSnapshot = "0:0:"  // as the store passes the xmin of its last check's snapshot
        let small = try Prefs(.postgreSQL(url, namespace: "bench-small"))
        defer { try? small.close() }
        let smallKeys = Array(data.keys.prefix(20))
        try small.batch { transaction in for key in smallKeys { try transaction.set(1, for: key) } }
        try measure(
            workload: 9, title: "PostgreSQL get", data: info,
            contenders: [
                Contender(name: "raw libpq, SELECT", role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { blackHole(try statements.get(raw, data.names[i])) } } }
                },
                Contender(name: sameCheck, role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in
                        try timed(ops: ops) {
                            for _ in 0..<ops { lastSnapshot = try statements.check(raw, namespace: "bench-small", since: lastSnapshot) }
                        }
                    }
                },
                Contender(name: strict, role: .subject, maxOps: n, adaptive: true) {
                    .init { _, ops in
                        try timed(ops: ops) {
                            for i in 0..<ops {
                                try store.refresh()
                                blackHole(store[data.keys[i]])
                            }
                        }
                    }
                },
                Contender(name: strictSmall, role: .subject, maxOps: n, adaptive: true) {
                    .init { _, ops in
                        try timed(ops: ops) {
                            for i in 0..<ops {
                                try small.refresh()
                                blackHole(small[smallKeys[i % smallKeys.count]])
                            }
                        }
                    }
                },
                Contender(name: keyed, role: .subject, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { blackHole(try store.revisioned(data.keys[i]).value) } } }
                },
                Contender(name: cached, role: .subject, maxOps: n) {
                    .init { _, ops in timed(ops: ops) { for i in 0..<ops { blackHole(store[data.keys[i]]) } } }
                },
            ],
            metric: "get",
            rules: [
                Rule(subject: strictSmall, baseline: "raw libpq, SELECT", target: .within(1.3)), Rule(subject: strictSmall, baseline: sameCheck),
                Rule(subject: strict, baseline: "raw libpq, SELECT"),
                Rule(subject: keyed, baseline: "raw libpq, SELECT", target: .within(1.3)), Rule(subject: cached, baseline: "raw libpq, SELECT"),
            ],
            notes: [
                strict: "the staleness check (rows written since the last check, found among the namespace's 1k rows), then the cache",
                strictSmall: "what a read costs once the staleness bound has passed, for a namespace of a user's size",
                keyed: "a strict read of one key: its row and revision in one keyed statement, as the raw SELECT reads it",
                cached: "within the staleness bound (1 s by default): no round trip",
                sameCheck: "the store's check for changes of the 20-key namespace, sent by raw libpq: what the store adds to it is the difference",
            ])

        // Batch of 100 keys: one statement.
        let batchSize = min(100, n)
        try measure(
            workload: 9, title: "PostgreSQL batch of \(batchSize) keys", data: info,
            contenders: [
                Contender(name: plain, role: .baseline, maxOps: 1_000, adaptive: true, metric: "batch") {
                    .init { round, ops in
                        let values = data.values(round: round).map(String.init)
                        return try timed(ops: ops) {
                            for op in 0..<ops {
                                let start = (op * batchSize) % (n - batchSize + 1)
                                try statements.plainUpsert(raw, Array(data.names[start..<start + batchSize]), Array(values[start..<start + batchSize]))
                            }
                        }
                    }
                },
                Contender(name: subject, role: .subject, maxOps: 1_000, adaptive: true, metric: "batch") {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) {
                            for op in 0..<ops {
                                let start = (op * batchSize) % (n - batchSize + 1)
                                try store.batch { transaction in
                                    for i in start..<start + batchSize { try transaction.set(values[i], for: data.keys[i]) }
                                }
                            }
                        }
                    }
                },
            ],
            metric: "batch",
            rules: [Rule(subject: subject, baseline: plain, target: .within(1.3))])

        // Update: the value and revision from the cache, then one compare-and-set statement.
        let rawUpdate = "raw libpq, UPDATE … RETURNING"
        let sameUpdate = "raw libpq, the store's statement"
        // The store's work without the store: each key's value and revision held in a dictionary (as the store's cache
        // holds them), the new value computed here, and the store's guarded statement, whose new revision is kept.
        var guarded = try statements.revisions(raw)
        try measure(
            workload: 9, title: "PostgreSQL update (read-modify-write)", data: info,
            contenders: [
                Contender(name: rawUpdate, role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { try statements.increment(raw, data.names[i]) } } }
                },
                Contender(name: sameUpdate, role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in
                        try timed(ops: ops) {
                            for i in 0..<ops {
                                let name = data.names[i]
                                guard let (value, revision) = guarded[name] else { throw BenchError("no row for \(name)") }
                                guarded[name] = (value + 1, try statements.guardedUpdate(raw, name, String(value + 1), revision: revision))
                            }
                        }
                    }
                },
                Contender(name: subject, role: .subject, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { try store.update(data.keys[i]) { $0 += 1 } } } }
                },
            ],
            metric: "update",
            rules: [Rule(subject: subject, baseline: rawUpdate, target: .within(1.3)), Rule(subject: subject, baseline: sameUpdate)],
            notes: [
                subject: "atomic across instances: the write compares the revision it read (from the cache), and runs again if it moved",
                sameUpdate: "the store's compare-and-set statement, sent by raw libpq with the value and revision it last wrote",
            ])

        oneCPU?.release()
        try postgreSQLFleet(url: url, names: data.names, keys: data.keys, info: info)
    }
}

/// libpq without Prefs: one connection, parameterized statements in text format, as the store runs them.
final class RawLibPQ {
    struct Failure: Error, CustomStringConvertible { var description: String }

    private let connection: OpaquePointer

    init(_ url: String) throws {
        guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
            throw Failure(description: "raw libpq cannot connect")
        }
        self.connection = connection
    }

    var serverVersion: String {
        let version = PQserverVersion(connection)
        return "\(version / 10_000).\(version % 10_000)"
    }

    /// The plain table the raw baselines write: the shape of the store's values, without revisions.
    static let plainTable = """
        CREATE TABLE IF NOT EXISTS bench_plain (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, value text NOT NULL, \
        PRIMARY KEY (namespace, key))
        """

    /// Runs one statement; returns the first column of the first row, if any.
    @discardableResult
    func exec(_ sql: String, _ parameters: [String] = []) throws -> String? {
        let copies = parameters.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        let result = PQexecParams(connection, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw Failure(description: "\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
        guard PQntuples(result) > 0, PQnfields(result) > 0, PQgetisnull(result, 0, 0) == 0 else { return nil }
        return String(cString: PQgetvalue(result, 0, 0))
    }

    private var prepared: Set<String> = []

    /// Runs one statement prepared on this connection on first use (`PQprepare`, then `PQexecPrepared`), as the store
    /// runs the statements it repeats: planned once. Returns the first column of the first row, if any.
    @discardableResult
    func execPrepared(_ sql: String, _ parameters: [String]) throws -> String? {
        try withPreparedResult(sql, parameters) { result in
            guard PQntuples(result) > 0, PQnfields(result) > 0, PQgetisnull(result, 0, 0) == 0 else { return nil }
            return String(cString: PQgetvalue(result, 0, 0))
        }
    }

    /// As ``execPrepared(_:_:)``, returning the first row (empty when there is none).
    func execPreparedRow(_ sql: String, _ parameters: [String]) throws -> [String?] {
        try withPreparedResult(sql, parameters) { result in
            guard PQntuples(result) > 0 else { return [] }
            return (0..<PQnfields(result)).map { PQgetisnull(result, 0, $0) == 0 ? String(cString: PQgetvalue(result, 0, $0)) : nil }
        }
    }

    /// Prepares `sql` on first use, runs it with `parameters`, and gives `read` its successful result.
    private func withPreparedResult<T>(_ sql: String, _ parameters: [String], _ read: (OpaquePointer?) -> T) throws -> T {
        let name = "bench_\(abs(sql.hashValue))"
        if !prepared.contains(name) {
            let result = PQprepare(connection, name, sql, Int32(parameters.count), nil)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw Failure(description: "\(sql): \(String(cString: PQerrorMessage(connection)))") }
            prepared.insert(name)
        }
        let copies = parameters.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        let result = PQexecPrepared(connection, name, Int32(parameters.count), pointers, nil, nil, 0)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw Failure(description: "\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
        return read(result)
    }

    /// Every row of a statement (text values, nil for NULL).
    func rows(_ sql: String, _ parameters: [String]) throws -> [[String?]] {
        let copies = parameters.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        let result = PQexecParams(connection, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw Failure(description: "\(sql): \(String(cString: PQerrorMessage(connection)))") }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { PQgetisnull(result, row, $0) == 0 ? String(cString: PQgetvalue(result, row, $0)) : nil }
        }
    }

    /// Runs statements without parameters in one round trip (`PQexec`).
    func script(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw Failure(description: "\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
    }

    func close() { PQfinish(connection) }

    /// The connection's socket, to wait on for notifications.
    var socket: Int32 { PQsocket(connection) }

    /// The payloads of the notifications received so far (reading what the server sent, without waiting).
    func takeNotifications() throws -> [String] {
        guard PQconsumeInput(connection) != 0 else { throw Failure(description: "reading notifications: \(String(cString: PQerrorMessage(connection)))") }
        var payloads: [String] = []
        while let notify = PQnotifies(connection) {
            payloads.append(String(cString: notify.pointee.extra))
            PQfreemem(notify)
        }
        return payloads
    }

    /// The statements of one namespace.
    struct Statements {
        var namespace: String
        var channel: String

        /// An autocommit upsert of the rows into the plain table: the least a write can be.
        func plainUpsert(_ raw: RawLibPQ, _ keys: [String], _ jsonValues: [String]) throws {
            try raw.execPrepared(
                """
                INSERT INTO bench_plain (namespace, key, type, value)
                SELECT $1, k, t, v FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, t, v)
                ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value
                """,
                [namespace, Self.array(keys), Self.array(Array(repeating: "int", count: keys.count)), Self.array(jsonValues)])
        }

        /// The store's own statement for a set (PrefsPostgreSQL's WriteStatement for a namespace already registered
        /// and keeping no history; keep them in step): one key as itself, several as arrays. The store's signalling
        /// connection sends the notification.
        func storeWrite(_ raw: RawLibPQ, _ keys: [String], _ jsonValues: [String]) throws {
            let one = keys.count == 1
            let source =
                one
                ? "SELECT $1, $2::text, $3::text, $4::text, nextval('prefs_revision'), pg_current_xact_id(), now()"
                : "SELECT $1, k, t, v, nextval('prefs_revision'), pg_current_xact_id(), now() FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, t, v)"
            let types = Array(repeating: "int", count: keys.count)
            try raw.execPrepared(
                """
                INSERT INTO prefs_values AS p (namespace, key, type, value, revision, xid, changed_at) \
                \(source) WHERE true ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value, \
                revision = nextval('prefs_revision'), previous_revision = p.revision, xid = excluded.xid, changed_at = excluded.changed_at \
                RETURNING \(one ? "revision" : "key, revision")
                """,
                one ? [namespace, keys[0], types[0], jsonValues[0]] : [namespace, Self.array(keys), Self.array(types), Self.array(jsonValues)])
        }

        /// An atomic increment in one statement: what an update is, written by hand for one value type.
        func increment(_ raw: RawLibPQ, _ key: String) throws {
            try raw.execPrepared(
                "UPDATE bench_plain SET value = (value::bigint + 1)::text WHERE namespace = $1 AND key = $2 RETURNING value", [namespace, key])
        }

        /// The store's statement for an update of one key (PrefsPostgreSQL's WriteStatement guarded by a revision, for a
        /// namespace registered and keeping no history; keep them in step: one key's row is its new revision). Returns the new revision.
        func guardedUpdate(_ raw: RawLibPQ, _ key: String, _ jsonValue: String, revision: Int64) throws -> Int64 {
            let row = try raw.execPreparedRow(
                """
                UPDATE prefs_values SET type = $3, value = $4, revision = nextval('prefs_revision'), previous_revision = revision, \
                xid = pg_current_xact_id(), changed_at = now() WHERE namespace = $1 AND key = $2 AND revision = $5::bigint RETURNING revision
                """, [namespace, key, "int", jsonValue, String(revision)])
            guard row.count == 1, let text = row[0], let revision = Int64(text) else { throw BenchError("the guarded update of \(key) lost") }
            return revision
        }

        /// Every key of the namespace in the store's table, with its value (an Int) and revision.
        func revisions(_ raw: RawLibPQ) throws -> [String: (value: Int, revision: Int64)] {
            var result: [String: (value: Int, revision: Int64)] = [:]
            for row in try raw.rows("SELECT key, value, revision FROM prefs_values WHERE namespace = $1", [namespace]) {
                guard let key = row[0], let value = row[1].flatMap({ Int($0) }), let revision = row[2].flatMap({ Int64($0) }) else { continue }
                result[key] = (value, revision)
            }
            return result
        }

        /// The store's check for changes (PrefsPostgreSQL's `checkStatement`; keep them in step): the snapshot now, the
        /// namespace's marker, and the rows written by transactions at or above the xmin of `since`, the last check's
        /// snapshot. Returns the new snapshot.
        func check(_ raw: RawLibPQ, namespace: String, since: String) throws -> String {
            let xmin = String(since.prefix { $0 != ":" })
            let row = try raw.execPreparedRow(
                """
                SELECT pg_current_snapshot()::text, n.created_xid::text || '/' || coalesce(n.pruned_xid::text, ''), \
                n.history_retention IS NOT NULL, v.key, v.type, v.value, v.revision
                FROM (SELECT 1) AS one
                LEFT JOIN prefs_namespaces n ON n.namespace = $1
                LEFT JOIN prefs_values v ON v.namespace = $1 AND v.xid >= $2::xid8
                """, [namespace, xmin])
            guard let snapshot = row.first ?? nil else { throw BenchError("the check returned no snapshot") }
            return snapshot
        }

        func get(_ raw: RawLibPQ, _ key: String) throws -> String? {
            try raw.execPrepared("SELECT value, type FROM bench_plain WHERE namespace = $1 AND key = $2", [namespace, key])
        }

        static func array(_ elements: [String]) -> String {
            "{"
                + elements.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(
                    separator: ",") + "}"
        }
    }
}
