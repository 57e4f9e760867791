import BenchLibPQ
import Foundation
@_spi(Tooling) import Prefs
import PrefsPostgreSQL
@_spi(Harness) import PrefsTestSupport

// Workload 9: the PostgreSQL store against raw libpq running the same statements on the same private server
// (set, get, batch, update), plus a plain autocommit upsert and the store's cache hit for the record.

extension Bench {
    func postgreSQL(n requested: Int) throws {
        let server: TestPostgreSQLServer
        do {
            server = try TestPostgreSQLServer()
        } catch let missing as TestPostgreSQLServer.Missing {
            recorder.note("workload 9 skipped: \(missing.description)")
            progress("9. skipped: no PostgreSQL server programs")
            return
        }
        defer { server.stop() }
        progress("9. private PostgreSQL server started in \(Format.time(server.startDuration.nanoseconds))")
        let n = min(requested, 1_000)  // every operation is a round trip: a thousand keys are plenty
        let data = try data(n, Int.self)
        let url = server.url
        let store = try Prefs(.postgreSQL(url, namespace: "bench-prefs"))
        defer { try? store.close() }
        try store.batch { transaction in for (i, key) in data.keys.enumerated() { try transaction.set(data.values(round: 0)[i], for: key) } }
        try store.declare(data.keys)  // steady state: a key's first write in a process also records its declaration
        let raw = try RawLibPQ(url)
        defer { raw.close() }
        let namespace = "bench-raw"
        try raw.exec("INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT DO NOTHING", [namespace])
        let statements = RawLibPQ.Statements(namespace: namespace, channel: PostgreSQLStore.notificationChannel(for: namespace))
        try raw.exec("BEGIN")
        try statements.upsert(raw, data.names, data.values(round: 0).map(String.init))
        try raw.exec("COMMIT")

        let subject = "Prefs postgresql"
        let same = "raw libpq, same statements"
        let info = (n: n, label: "\(Format.count(n)) keys, PostgreSQL \(raw.serverVersion), Unix socket", type: "Int")

        // Set: BEGIN, lock the namespace row, upsert, bump the generation and notify, COMMIT.
        try measure(
            workload: 9, title: "PostgreSQL set, one write per call", data: info,
            contenders: [
                Contender(name: same, role: .baseline, maxOps: n, adaptive: true) {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) {
                            for i in 0..<ops {
                                try statements.begin(raw)
                                try statements.lock(raw)
                                try statements.upsert(raw, [data.names[i]], [String(values[i])])
                                try statements.bump(raw)
                                try raw.exec("COMMIT")
                            }
                        }
                    }
                },
                Contender(name: "raw libpq, one autocommit upsert", role: .baseline, maxOps: n, adaptive: true) {
                    .init { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try statements.upsert(raw, [data.names[i]], [String(values[i])]) } }
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
            rules: [Rule(subject: subject, baseline: same, target: .within(1.3)), Rule(subject: subject, baseline: "raw libpq, one autocommit upsert")],
            notes: [
                subject: "a set is one transaction that locks the namespace's row, so it is atomic with every instance's updates; the autocommit upsert is not"
            ])

        // Get: one SELECT on the server; the typed get is a cache hit.
        let cached = "Prefs postgresql, typed get (cache hit)"
        for key in data.keys { blackHole(store[key]) }
        try measure(
            workload: 9, title: "PostgreSQL get", data: info,
            contenders: [
                Contender(name: same, role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { blackHole(try statements.get(raw, data.names[i])) } } }
                },
                Contender(name: subject, role: .subject, maxOps: n, adaptive: true, metric: "get from the server") {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { blackHole(try store.storedValue(forKey: data.names[i])) } } }
                },
                Contender(name: cached, role: .subject, maxOps: n) {
                    .init { _, ops in timed(ops: ops) { for i in 0..<ops { blackHole(store[data.keys[i]]) } } }
                },
            ],
            metric: "get",
            rules: [Rule(subject: subject, baseline: same, target: .within(1.3)), Rule(subject: cached, baseline: same)],
            notes: [subject: "storedValue(forKey:), read fresh from the server"])

        // Batch of 100 keys: refresh (generation), BEGIN, lock, one upsert of 100 rows, bump and notify, COMMIT.
        let batchSize = min(100, n)
        try measure(
            workload: 9, title: "PostgreSQL batch of \(batchSize) keys", data: info,
            contenders: [
                Contender(name: same, role: .baseline, maxOps: 1_000, adaptive: true, metric: "batch") {
                    .init { round, ops in
                        let values = data.values(round: round).map(String.init)
                        return try timed(ops: ops) {
                            for op in 0..<ops {
                                let start = (op * batchSize) % (n - batchSize + 1)
                                try statements.generation(raw)
                                try statements.begin(raw)
                                try statements.lock(raw)
                                try statements.upsert(raw, Array(data.names[start..<start + batchSize]), Array(values[start..<start + batchSize]))
                                try statements.bump(raw)
                                try raw.exec("COMMIT")
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
            rules: [Rule(subject: subject, baseline: same, target: .within(1.5))])

        // Update: refresh (generation), BEGIN, lock, read the key, upsert, bump and notify, COMMIT.
        try measure(
            workload: 9, title: "PostgreSQL update (read-modify-write)", data: info,
            contenders: [
                Contender(name: same, role: .baseline, maxOps: n, adaptive: true) {
                    .init { _, ops in
                        try timed(ops: ops) {
                            for i in 0..<ops {
                                try statements.generation(raw)
                                try statements.begin(raw)
                                try statements.lock(raw)
                                let value = (try statements.get(raw, data.names[i])).flatMap { Int($0) } ?? 0
                                try statements.upsert(raw, [data.names[i]], [String(value + 1)])
                                try statements.bump(raw)
                                try raw.exec("COMMIT")
                            }
                        }
                    }
                },
                Contender(name: subject, role: .subject, maxOps: n, adaptive: true) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { try store.update(data.keys[i]) { $0 += 1 } } } }
                },
            ],
            metric: "update",
            rules: [Rule(subject: subject, baseline: same, target: .within(1.3))])

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

    /// The store's statements for one namespace.
    struct Statements {
        var namespace: String
        var channel: String

        /// BEGIN with the store's default statement timeout, in one round trip (the simple protocol).
        func begin(_ raw: RawLibPQ) throws {
            try raw.script("BEGIN; SET LOCAL statement_timeout = 30000")
        }

        func generation(_ raw: RawLibPQ) throws {
            try raw.exec("SELECT generation FROM prefs_namespaces WHERE namespace = $1", [namespace])
        }
        func lock(_ raw: RawLibPQ) throws {
            try raw.exec("SELECT generation FROM prefs_namespaces WHERE namespace = $1 FOR UPDATE", [namespace])
        }
        func upsert(_ raw: RawLibPQ, _ keys: [String], _ jsonValues: [String]) throws {
            try raw.exec(
                """
                INSERT INTO prefs (namespace, key, type, value)
                SELECT $1, k, t, v FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, t, v)
                ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value
                """,
                [namespace, Self.array(keys), Self.array(Array(repeating: "int", count: keys.count)), Self.array(jsonValues)])
        }
        func bump(_ raw: RawLibPQ) throws {
            try raw.exec(
                """
                WITH bumped AS (UPDATE prefs_namespaces SET generation = generation + 1, updated_at = now()
                                WHERE namespace = $1 RETURNING generation)
                SELECT generation, pg_notify($2, $1) FROM bumped
                """, [namespace, channel])
        }
        func get(_ raw: RawLibPQ, _ key: String) throws -> String? {
            try raw.exec("SELECT value, type FROM prefs WHERE namespace = $1 AND key = $2", [namespace, key])
        }

        static func array(_ elements: [String]) -> String {
            "{"
                + elements.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(
                    separator: ",") + "}"
        }
    }
}
