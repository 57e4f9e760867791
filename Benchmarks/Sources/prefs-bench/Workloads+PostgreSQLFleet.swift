import BenchLibPQ
import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsTesting
import Synchronization

// Workload 9, continued: a fleet's view. Eight clients (each with its own connection, as eight instances) setting at
// once different keys of one namespace (one user: before format 2 every write took the namespace's row lock in turn,
// about 350 writes/s across the fleet), and of eight namespaces; and the time from a write in one store to the change
// seen by another store listening on its own connection.

extension Bench {
    func postgreSQLFleet(url: String, names: [String], keys: [Prefs.Key<Int>], info: (n: Int, label: String, type: String)) throws {
        let clients = 8
        let duration = settings.concurrentDuration
        let plain = "raw libpq, one autocommit upsert"
        let same = "raw libpq, the store's statement"
        for shared in [true, false] {
            let scope = shared ? "one namespace, different keys" : "a namespace each"
            let subject = "Prefs postgresql"
            let namespace: @Sendable (String, Int) -> String = { who, client in shared ? "bench-\(who)-fleet" : "bench-\(who)-fleet-\(client)" }
            let n = names.count
            try measure(
                workload: 9, title: "PostgreSQL, \(clients) clients setting at once, \(scope): time per set (1 ÷ throughput)", data: info,
                contenders: [
                    Contender(name: plain, role: .baseline, maxOps: 1) {
                        .init { _, _ in
                            try runClients(clients, for: duration) { client in
                                let connection = try RawLibPQ(url)
                                let space = namespace("raw", client)
                                let statements = RawLibPQ.Statements(namespace: space, channel: PostgreSQLStore.notificationChannel(for: space))
                                return Client(
                                    operation: { op in
                                        // Each client its own keys: client c writes keys c, c + 8, c + 16, …
                                        try statements.plainUpsert(connection, [names[(client + clients * op) % n]], [String(op)])
                                    }, close: { connection.close() })
                            }
                        }
                    },
                    Contender(name: same, role: .baseline, maxOps: 1) {
                        .init { _, _ in
                            try runClients(clients, for: duration) { client in
                                let connection = try RawLibPQ(url)
                                let space = namespace("same", client)
                                let statements = RawLibPQ.Statements(namespace: space, channel: PostgreSQLStore.notificationChannel(for: space))
                                try connection.exec("INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT DO NOTHING", [space])
                                return Client(
                                    operation: { op in try statements.storeWrite(connection, [names[(client + clients * op) % n]], [String(op)]) },
                                    close: { connection.close() })
                            }
                        }
                    },
                    Contender(name: subject, role: .subject, maxOps: 1) {
                        .init { _, _ in
                            try runClients(clients, for: duration) { client in
                                // Eight instances: a pool each (an application name each), as eight processes have.
                                let options = PostgreSQLOptions(applicationName: "bench-fleet-\(client)")
                                let store = try Prefs(.postgreSQL(url, namespace: namespace("prefs", client), options: options))
                                // Steady state, as in the single-client rows: the keys' declarations are recorded.
                                try store.declare(keys)
                                return Client(
                                    operation: { op in try store.set(op, for: keys[(client + clients * op) % n]) },
                                    close: { try? store.close() })
                            }
                        }
                    },
                ],
                metric: "set (\(clients) clients)",
                rules: [Rule(subject: subject, baseline: plain, target: .within(1.3)), Rule(subject: subject, baseline: same)],
                notes: [
                    same: "the store's statement sent by raw libpq: the store adds its notifications (a namespace's per round) and itself",
                    subject: shared
                        ? "writers of different keys of one namespace do not wait for each other (no namespace lock): the throughput of eight"
                        : "one namespace per client, as instances writing different users' state",
                ],
                budget: Budget(rounds: settings.quick ? 2 : 5, minRounds: 2, sample: .zero, perContender: .seconds(3600)))
        }
        try postgreSQLNotificationLatency(url: url, keys: keys, info: info)
    }

    /// The time from a write in one store to the change seen by another (its own connections, listening), against a raw
    /// NOTIFY from one connection heard by another that LISTENs.
    private func postgreSQLNotificationLatency(url: String, keys: [Prefs.Key<Int>], info: (n: Int, label: String, type: String)) throws {
        let subject = "Prefs postgresql, set → values(for:) in another store"
        let raw = "raw libpq, the store's statement and NOTIFY → LISTEN on another connection"
        let writes = settings.quick ? 5 : 25
        try measure(
            workload: 9, title: "PostgreSQL: a write seen by another store (write → seen)", data: info,
            contenders: [
                Contender(name: raw, role: .baseline, maxOps: writes) {
                    let sender = try RawLibPQ(url), listener = try RawLibPQ(url)
                    let namespace = "bench-raw-latency"
                    let channel = PostgreSQLStore.notificationChannel(for: namespace)
                    let statements = RawLibPQ.Statements(namespace: namespace, channel: channel)
                    try listener.exec("LISTEN \"\(channel)\"")
                    return .init(
                        run: { _, ops in
                            try timed(ops: ops) {
                                for op in 0..<ops {
                                    // The store's statement, then its notification (which the store's signalling
                                    // connection sends once the write committed).
                                    try statements.storeWrite(sender, [keys[0].name], [String(op)])
                                    try sender.exec("SELECT pg_notify($1, $2)", [channel, namespace])
                                    try listener.awaitNotification(payload: namespace)
                                }
                            }
                        },
                        finish: {
                            sender.close()
                            listener.close()
                        })
                },
                Contender(name: subject, role: .subject, maxOps: writes) {
                    let writer = try Prefs(.postgreSQL(url, namespace: "bench-latency", options: PostgreSQLOptions(applicationName: "bench-writer")))
                    // A ten-minute poll and bound: only the notification can bring a change in time. Another pool (another
                    // application name), as another process has.
                    let reader = try Prefs(
                        .postgreSQL(
                            url, namespace: "bench-latency", options: PostgreSQLOptions(stalenessBound: .seconds(600), applicationName: "bench-reader")),
                        pollInterval: .seconds(600))
                    let key = keys[0]
                    try writer.set(0, for: key)
                    let seen = Seen()
                    let stream = reader.values(for: key)
                    let task = Task.detached { for await value in stream { seen.record(value) } }
                    var next = 1
                    return .init(
                        run: { _, ops in
                            try timed(ops: ops) {
                                for _ in 0..<ops {
                                    try writer.set(next, for: key)
                                    guard seen.wait(for: next, timeout: .seconds(60)) else { throw BenchError("value \(next) not seen within 60 s") }
                                    next += 1
                                }
                            }
                        },
                        finish: {
                            task.cancel()
                            try? reader.close()
                            try? writer.close()
                        })
                },
            ],
            metric: "write → seen",
            rules: [Rule(subject: subject, baseline: raw)],
            notes: [subject: "mean over the round's writes, the write's own round trip included (target: under 50 ms)"],
            budget: Budget(rounds: settings.quick ? 2 : 7, minRounds: 2, sample: .zero, perContender: .seconds(3600)))
    }
}

/// One client of ``runClients(_:for:_:)``: an operation (given its sequence number) and how to release its connection.
// @unchecked Sendable: made on its client's thread and used by that thread alone.
struct Client: @unchecked Sendable {
    var operation: (Int) throws -> Void
    var close: () -> Void
}

/// Starts `count` clients, each on a thread of its own, made there (connecting is not timed); once all are ready they
/// run their operation back to back for `duration`. Returns the operations of all clients over the elapsed time.
func runClients(_ count: Int, for duration: Duration, _ make: @escaping @Sendable (_ client: Int) throws -> Client) throws -> Trial {
    let ready = DispatchGroup(), done = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    let total = Mutex(0)
    let failure = Mutex<String?>(nil)
    let deadline = Mutex<ContinuousClock.Instant?>(nil)
    for client in 0..<count {
        ready.enter()
        done.enter()
        Thread {
            defer { done.leave() }
            var made: Client?
            do { made = try make(client) } catch { failure.withLock { $0 = $0 ?? "\(error)" } }
            ready.leave()
            go.wait()
            guard let made else { return }
            defer { made.close() }
            guard let end = deadline.withLock({ $0 }) else { return }
            var ops = 0
            while clock.now < end {
                do { try made.operation(ops) } catch {
                    failure.withLock { $0 = $0 ?? "\(error)" }
                    break
                }
                ops += 1
            }
            total.withLock { $0 += ops }
        }.start()
    }
    ready.wait()
    let began = clock.now
    deadline.withLock { $0 = began + duration }
    for _ in 0..<count { go.signal() }
    done.wait()
    let elapsed = clock.now - began
    if let message = failure.withLock({ $0 }) { throw BenchError("a client failed: \(message)") }
    return Trial(ops: max(total.withLock { $0 }, 1), elapsed: elapsed)
}

/// The values an observer has seen, and a wait for one of them.
final class Seen: Sendable {
    private let values = Mutex<Set<Int>>([])
    private let signal = DispatchSemaphore(value: 0)

    func record(_ value: Int) {
        values.withLock { _ = $0.insert(value) }
        signal.signal()
    }

    /// Waits until `value` has been seen; false after `timeout`.
    func wait(for value: Int, timeout: Duration) -> Bool {
        let deadline = clock.now + timeout
        while !values.withLock({ $0.contains(value) }) {
            guard clock.now < deadline, signal.wait(timeout: .now() + 0.05) == .success || clock.now < deadline else { return false }
        }
        return true
    }
}

extension RawLibPQ {
    /// Waits in `poll(2)` on the connection's socket until a notification with `payload` arrives.
    func awaitNotification(payload: String) throws {
        while true {
            if try takeNotifications().contains(payload) { return }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 60_000)
        }
    }
}
