import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 31, finding 6: namespaces as things to manage (list, delete, retention by age), through the API and prefs-tool;
/// and the stores of one server in one process sharing a small pool with one listening connection.
@Suite("PostgreSQL namespaces and pools")
struct PostgreSQLNamespaceTests {
    /// A database of its own, so that listings hold only this test's namespaces.
    private func database() throws -> (url: String, name: String) {
        let name = "ns_\(UUID().uuidString.prefix(8).lowercased())"
        try server().psql("CREATE DATABASE \(name)")
        return (try server().url(database: name), name)
    }

    @Test("list, delete and delete by inactivity, with the API: a deleted namespace leaves no row, and stores open on it read it empty")
    func manageWithTheAPI() throws {
        let (url, name) = try database()
        let a = try Prefs(.postgreSQL(url, namespace: "user-a"))
        try a.set(1, for: .launchCount)
        try a.set("x", for: .name)
        try a.declare(.launchCount)
        let b = try Prefs(.postgreSQL(url, namespace: "user-b"))
        try b.set(2, for: .launchCount)
        let database = PostgreSQLDatabase(url)
        let listed = try database.namespaces()
        #expect(listed.map(\.name) == ["user-a", "user-b"])
        #expect(listed.map(\.values) == [2, 1])
        #expect(listed.allSatisfy { $0.lastWrite.map { abs($0.timeIntervalSinceNow) < 3600 } ?? false })
        #expect(listed.allSatisfy { $0.historyRetention == nil })

        // Delete one: every row of it goes, the other stays; a store open on it reads it empty at its next check.
        let observer = try Prefs(.postgreSQL(url, namespace: "user-a", options: PostgreSQLOptions(stalenessBound: .seconds(600))))
        #expect(observer[.launchCount] == 1)
        #expect(try database.deleteNamespace("user-a"))
        #expect(try !database.deleteNamespace("user-a"))
        for table in ["prefs_values", "prefs_declared", "prefs_namespaces", "prefs_history"] {
            #expect(try server().psql("SELECT count(*) FROM \(table) WHERE namespace = 'user-a'", database: name) == "0", "\(table)")
        }
        #expect(try database.namespaces().map(\.name) == ["user-b"])
        try observer.refresh()
        #expect(observer[.launchCount] == 0 && !observer.isStored(.name))
        // A store still open on it registers it again with its next write.
        try a.set(5, for: .launchCount)
        #expect(try database.namespaces().map(\.name) == ["user-a", "user-b"])

        // Retention by age: user-b last written "two days ago" goes, user-a stays.
        try server().psql("UPDATE prefs_values SET changed_at = now() - interval '2 days' WHERE namespace = 'user-b'", database: name)
        #expect(try database.deleteNamespaces(inactiveFor: .seconds(86_400)) == ["user-b"])
        #expect(try database.namespaces().map(\.name) == ["user-a"])
    }

    @Test("prefs-tool namespaces: list, history, delete and prune, without --namespace, and never the password")
    func manageWithTheTool() async throws {
        let (url, name) = try database()
        let tcp = "postgresql://\(TestPostgreSQLServer.user):hunter2-secret@127.0.0.1:\(try server().port)/\(name)"
        let a = try Prefs(.postgreSQL(url, namespace: "user-a"))
        try a.set(1, for: .launchCount)
        let b = try Prefs(.postgreSQL(url, namespace: "user-b"))
        try b.set(2, for: .launchCount)
        var all = ""
        func tool(_ arguments: [String]) async throws -> ChildProcess.Result {
            let result = try await prefsTool(["--store", tcp] + arguments)
            all += result.stdout + result.stderr
            return result
        }
        let list = try await tool(["namespaces"])
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.map { $0[0] } == ["user-a", "user-b"], "\(list.stdout)")
        #expect(lines.map { $0[1] } == ["1", "1"] && lines.map { $0[3] } == ["-", "-"], "\(list.stdout)")

        let history = try await tool(["namespaces", "history", "user-a", "--keep", "7d"])
        #expect(history.status == 0, "\(history.stderr)")
        let json = try await tool(["namespaces", "list", "--json"])
        #expect(json.status == 0 && json.stdout.contains("\"historyRetentionSeconds\": 604800"), "\(json.stdout)")
        #expect(try PostgreSQLDatabase(url).namespaces().first?.historyRetention == .seconds(7 * 86_400))

        let delete = try await tool(["namespaces", "delete", "user-b", "user-zzz"])
        #expect(delete.status == 0 && delete.stderr.contains("\"user-zzz\" holds nothing"), "\(delete.stderr)")
        #expect(try PostgreSQLDatabase(url).namespaces().map(\.name) == ["user-a"])

        try server().psql("UPDATE prefs_values SET changed_at = now() - interval '100 days' WHERE namespace = 'user-a'", database: name)
        let prune = try await tool(["namespaces", "prune", "--inactive-for", "90d"])
        #expect(prune.status == 0 && prune.stderr.contains("deleted namespace \"user-a\""), "\(prune.stderr)")
        #expect(try PostgreSQLDatabase(url).namespaces().isEmpty)

        let usage = try await tool(["namespaces", "prune", "--inactive-for", "soon"])
        #expect(usage.status == 64, "\(usage.stderr)")
        let fileStore = try await prefsTool(["--store", "/tmp/not-a-server.json", "namespaces"])
        #expect(fileStore.status == 64 && fileStore.stderr.contains("PostgreSQL"), "\(fileStore.stderr)")
        #expect(!all.contains("hunter2"), "\(all)")
    }

    @Test("fifty stores on one server in one process share the pool's connections and one listening connection")
    func sharedPool() async throws {
        let application = "pool-\(UUID().uuidString.prefix(6))"
        let url = try server().url
        let options = PostgreSQLOptions(applicationName: application, maximumConnections: 3)
        let stores = try (0..<50).map { index in try Prefs(.postgreSQL(url, namespace: "pool-\(application)-\(index)", options: options)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    try store.set(index, for: .launchCount)
                    try store.update(.launchCount) { $0 += 1 }
                }
            }
            try await group.waitForAll()
        }
        for (index, store) in stores.enumerated() { #expect(store[.launchCount] == index + 1) }
        let connections = Int(try server().psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)'")) ?? -1
        #expect(connections >= 1 && connections <= 3, "\(connections) connections for 50 stores")
        let signals = try server().psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application) signals'")
        #expect(signals == "1", "one signalling connection (LISTEN for every namespace, NOTIFY for every write), not \(signals)")
        // The listening connection hears every namespace: a write from another process reaches a store whose bound is long.
        let listening = try Prefs(
            .postgreSQL(
                url, namespace: "pool-\(application)-7",
                options: PostgreSQLOptions(stalenessBound: .seconds(600), applicationName: application, maximumConnections: 3)))
        try #require(await eventually(timeout: .seconds(60)) { listening.isListeningForChanges }, "the new store listens")
        #expect(listening[.launchCount] == 8)
        let set = try await prefsTool(["--store", url, "--namespace", "pool-\(application)-7", "set", "launchCount", "70", "--type", "int"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(await eventually(timeout: .seconds(60)) { listening[.launchCount] == 70 })
    }

    @Test("prune removes records of removed values older than the age given; a store that cached the key reads it removed all the same")
    func pruneTombstones() throws {
        let (url, name) = try database()
        let writer = try Prefs(.postgreSQL(url, namespace: "user-a"))
        try writer.set(1, for: .launchCount)
        try writer.set("x", for: .name)
        let reader = try Prefs(.postgreSQL(url, namespace: "user-a", options: PostgreSQLOptions(stalenessBound: .seconds(600), listens: false)))
        #expect(reader[.launchCount] == 1)
        try writer.reset(.launchCount)
        #expect(try server().psql("SELECT count(*) FROM prefs_values WHERE value IS NULL", database: name) == "1", "a tombstone")
        try server().psql("UPDATE prefs_values SET changed_at = now() - interval '40 days' WHERE value IS NULL", database: name)
        let report = try PostgreSQLDatabase(url).prune()
        #expect(report.tombstones == 1 && report.historyEntries == 0)
        #expect(try server().psql("SELECT count(*) FROM prefs_values", database: name) == "1")
        // The reader never saw the removal's record; the pruning's mark makes it read the namespace again.
        try reader.refresh()
        #expect(!reader.isStored(.launchCount) && reader[.name] == "x")
    }

    @Test("behind a pooler in transaction mode (transactionPooling): no LISTEN and no session settings; writes notify in their own statement")
    func transactionPooling() async throws {
        let application = "pooled-\(UUID().uuidString.prefix(6))"
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(applicationName: application, transactionPooling: true))
        let listener = try Prefs(.postgreSQL(fixture.url, namespace: fixture.namespace, options: PostgreSQLOptions(stalenessBound: .seconds(600))))
        // Listening, then a read that renews the bound: only a notification brings the writes below in time.
        try #require(await eventually(timeout: .seconds(60)) { listener.isListeningForChanges }, "the listening store listens")
        #expect(listener[.launchCount] == 0)
        try fixture.prefs.set(1, for: .launchCount)
        try fixture.prefs.update(.launchCount) { $0 += 1 }
        try fixture.prefs.transaction { transaction in
            transaction[.launchCount] += 1
            transaction[.name] = "pooled"
        }
        #expect(fixture.prefs[.launchCount] == 3)
        #expect(
            await eventually(timeout: .seconds(60)) { listener[.launchCount] == 3 && listener[.name] == "pooled" }, "notified by the writes' own statements")
        let signals = try server().psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application) signals'")
        #expect(signals == "0", "no signalling connection behind a transaction pooler")
        let settings = try server().psql(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)' AND query ILIKE 'SET statement_timeout%'")
        #expect(settings == "0")
    }
}
