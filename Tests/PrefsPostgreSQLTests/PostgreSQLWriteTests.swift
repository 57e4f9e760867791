import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 31, finding 5: one statement per set, update and batch, and writers of different keys of one namespace never
/// waiting for each other.
@Suite("PostgreSQL writes")
struct PostgreSQLWriteTests {
    /// The statements the server logged for one application name so far (`log_statement = all`).
    private func statements(_ server: TestPostgreSQLServer, application: String) -> [String] {
        server.log.split(separator: "\n").filter { line in
            line.hasPrefix("\(application)|") && (line.contains("LOG:  statement: ") || line.contains("LOG:  execute "))
        }.map(String.init)
    }

    @Test("a set, an update of a key already read, a batch and a reset are one statement each, as the server logs them")
    func oneStatementPerWrite() throws {
        let server = try TestPostgreSQLServer(settings: ["log_statement": "all", "log_line_prefix": "'%a|'"])
        defer { server.stop() }
        let application = "counted"
        let options = PostgreSQLOptions(stalenessBound: .seconds(600), applicationName: application, listens: false)
        let prefs = try Prefs(.postgreSQL(server.url, namespace: "n", options: options))
        try prefs.declare(.launchCount, .name, .tags)  // steady state: a key's first write in a process records its declaration
        let keys = (0..<20).map { Prefs.Key<Int>("batch-\($0)", initial: 0) }
        try prefs.declare(keys)
        _ = prefs[.launchCount]  // the first check
        func count(_ operation: () throws -> Void) rethrows -> [String] {
            let before = statements(server, application: application).count
            try operation()
            // The server logs a statement as it starts it, before it answers.
            return Array(statements(server, application: application).dropFirst(before))
        }
        let set = try count { try prefs.set(1, for: .launchCount) }
        #expect(set.count == 1, "\(set)")
        let update = try count { try prefs.update(.launchCount) { $0 += 1 } }
        #expect(update.count == 1, "\(update)")
        let batch = try count {
            try prefs.batch { transaction in
                for (index, key) in keys.enumerated() { try transaction.set(index, for: key) }
            }
        }
        #expect(batch.count == 1, "\(batch)")
        let reset = try count { try prefs.reset(.launchCount) }
        #expect(reset.count == 1, "\(reset)")
        #expect(try Prefs(.postgreSQL(server.url, namespace: "n")).snapshot().count == keys.count)
    }

    @Test("every shape of write statement (guard, sets, removals, registration, history, declarations, notification) is valid SQL")
    func everyWriteStatementPrepares() throws {
        let server = try TestPostgreSQLServer()
        defer { server.stop() }
        try Prefs(.postgreSQL(server.url, namespace: "n")).close()  // the schema
        let texts = PostgreSQLBackend.writeStatementTexts
        #expect(texts.count == 648 && Set(texts).count > 500)
        // In scripts of 40 (an argument of psql has at most 128 KiB); the server parses and plans each as libpq's
        // PQprepare has it do, parameter types inferred.
        for start in stride(from: 0, to: texts.count, by: 40) {
            let script = texts[start..<min(start + 40, texts.count)].enumerated().map { "PREPARE w\(start + $0.offset) AS \($0.element);" }
            try server.psql(script.joined(separator: "\n"))
        }
    }

    @Test("declaring keys another process recorded reads their declarations, former names included, in one statement")
    func declarationsReadInOneStatement() throws {
        let server = try TestPostgreSQLServer(settings: ["log_statement": "all", "log_line_prefix": "'%a|'"])
        defer { server.stop() }
        func store(_ application: String) throws -> Prefs {
            let options = PostgreSQLOptions(stalenessBound: .seconds(600), applicationName: application, listens: false)
            return try Prefs(.postgreSQL(server.url, namespace: "n", options: options))
        }
        // Some keys renamed twice, one through a name that needs canonical composition ("é" as e + U+0301).
        let keys = (0..<300).map { index in
            Prefs.Key<Int>(
                index == 7 ? "cafe\u{301}-\(index)" : "key-\(index)", initial: index,
                formerNames: index % 3 == 0 ? ["old-\(index)", "older-\(index)"] : [])
        }
        let first = try store("first")
        try first.declare(keys)
        try first.close()

        let counted = try store("counted"), other = try store("other")
        func count(_ application: String, _ operation: () throws -> Void) rethrows -> [String] {
            let before = statements(server, application: application).count
            try operation()
            return Array(statements(server, application: application).dropFirst(before))
        }
        let declared = try count("counted") { try counted.declare(keys) }
        #expect(declared.count == 1, "one read, nothing to record again: \(declared)")
        // A key's first write in a process that has not declared it: one statement, which sends the declaration and
        // leaves the recorded one as it is when they are the same (it was a read of the recorded declaration, then
        // the write): the rows keep the version they had (their xmin).
        func versions(_ key: String) throws -> String {
            try server.psql(
                """
                SELECT (SELECT xmin::text FROM prefs_declared WHERE namespace = 'n' AND key = '\(key)') || '/' || \
                (SELECT string_agg(xmin::text, ',' ORDER BY position) FROM prefs_renamed WHERE namespace = 'n' AND key = '\(key)')
                """)
        }
        let before = try versions("key-3")
        let firstSet = try count("other") { try other.set(1, for: keys[3]) }
        #expect(firstSet.count == 1, "\(firstSet)")
        #expect(try versions("key-3") == before, "an unchanged declaration is not written again")
        // A key no one declared: recorded by its first set's own statement (it was a read, BEGIN, the write, the
        // declaration, COMMIT).
        let fresh = Prefs.Key<Int>("fresh", initial: 5, formerNames: ["stale", "staler"])
        let freshSet = try count("other") { try other.set(6, for: fresh) }
        #expect(freshSet.count == 1, "one write: \(freshSet)")
        #expect(freshSet.last?.contains("INSERT INTO prefs_values") == true)
        #expect(try counted.revisioned(fresh).value == 6)
        let changed = Prefs.Key<Int>("key-3", initial: 99, formerNames: ["old-3", "older-3"])
        let recordedAgain = try count("counted") { try counted.declare([changed]) }
        #expect(recordedAgain.count == 2, "read, then recorded in one statement: \(recordedAgain)")
        #expect(recordedAgain.first?.contains("FROM prefs_declared") == true && recordedAgain.last?.contains("INSERT INTO prefs_declared") == true)
        let listed = try other.declaredKeys()
        #expect(listed["key-3"]?.initial == .int(99) && listed["key-3"]?.formerNames == ["old-3", "older-3"])
        #expect(listed["key-6"]?.formerNames == ["old-6", "older-6"] && listed["caf\u{e9}-7"]?.initial == .int(7))
        #expect(listed["fresh"]?.initial == .int(5) && listed["fresh"]?.formerNames == ["stale", "staler"])
        #expect(listed.count == 301)
        try counted.close()
        try other.close()
    }

    @Test("one instance's transaction in progress does not hold up another instance's write of a different key")
    func transactionsDoNotBlockOtherKeys() async throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(30)))
        let first = fixture.prefs, second = try fixture.reopen()
        try first.set(0, for: .launchCount)
        let inBody = Locked(false), secondWrote = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        Thread.detachNewThread {
            do {
                try first.transaction { transaction in
                    transaction[.launchCount] += 1
                    inBody.withLock { $0 = true }
                    // The body waits for the other instance's write (at most a minute); before, that write waited
                    // for this transaction's lock on the namespace, and both waited. The signal is passed on, should
                    // the body run again.
                    if secondWrote.wait(timeout: .now() + 60) == .success { secondWrote.signal() }
                }
            } catch {
                failure.withLock { $0 = error }
            }
            done.signal()
        }
        #expect(await eventually(timeout: .seconds(60)) { inBody.withLock { $0 } })
        let started = ContinuousClock.now
        try second.set("other key", for: .name)
        let waited = ContinuousClock.now - started
        secondWrote.signal()
        await ChildProcess.offPool { done.wait() }
        #expect(failure.withLock { $0 } == nil)
        #expect(waited < .seconds(60), "the write waited for the other transaction")
        try first.refresh()
        #expect(first[.name] == "other key" && first[.launchCount] == 1)
    }

    @Test("a row locked by another session holds up writes of that key only")
    func rowLocksArePerKey() throws {
        // The server's statement limit (not the call's) ends the blocked write: on a loaded machine the other writes may
        // wait long for a connection or a core, and only a lock wait should time out.
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(120), statementTimeout: .seconds(2)))
        try fixture.prefs.set(1, for: .launchCount)
        try fixture.prefs.set("a", for: .name)
        let holder = try server().session()
        defer { holder.close() }
        try holder.run("BEGIN; SELECT 1 FROM prefs_values WHERE namespace = '\(fixture.namespace)' AND key = 'launchCount' FOR UPDATE")
        try fixture.prefs.set("b", for: .name)
        try fixture.prefs.batch { transaction in
            try transaction.set(["x"], for: .tags)
            try transaction.set("c", for: .name)
        }
        #expect { try fixture.prefs.set(2, for: .launchCount) } throws: { postgreSQLError($0) != nil }
        try holder.run("ROLLBACK")
        try fixture.prefs.update(.launchCount) { $0 += 10 }
        let other = try fixture.reopen()
        #expect(other[.name] == "c" && other[.tags] == ["x"])
        #expect(other[.launchCount] == 11 || other[.launchCount] == 12, "the timed-out write may have been applied, the update was")
    }

    @Test("optimistic transactions: a transaction whose read moved runs again and loses nothing, across keys and instances")
    func conflictsRetry() async throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(timeout: .seconds(60)))
        let stores = [fixture.prefs] + (try (0..<3).map { _ in try fixture.reopen() })
        let rounds = 25
        let runs = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask {
                    for _ in 0..<rounds {
                        // Two keys read and written together: they must move together.
                        try? store.transaction { transaction in
                            runs.withLock { $0 += 1 }
                            let count = transaction[.launchCount]
                            transaction[.launchCount] = count + 1
                            transaction[.name] = "\(count + 1)"
                        }
                    }
                }
            }
        }
        let other = try fixture.reopen()
        #expect(other[.launchCount] == stores.count * rounds)
        #expect(other[.name] == "\(stores.count * rounds)")
        #expect(runs.withLock { $0 } >= stores.count * rounds)
    }

    @Test("instances recording the same declarations at once (each one's first set of a key) all succeed; the declarations read whole")
    func concurrentDeclarations() async throws {
        let fixture = try PostgreSQLFixture()
        let stores = [fixture.prefs] + (try (0..<7).map { _ in try fixture.reopen() })
        let renamed = Prefs.Key<String>("theme", initial: "light", formerNames: ["colorScheme", "appearance"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    try store.declare(.launchCount, .name, renamed)
                    try store.set(index, for: .launchCount)
                    try store.set("t\(index)", for: renamed)
                }
            }
            try await group.waitForAll()
        }
        let declared = try fixture.reopen().declaredKeys()
        #expect(declared["theme"]?.formerNames == ["colorScheme", "appearance"])
        #expect(declared["launchCount"]?.type == .int && declared["name"]?.type == .string)
    }
}
