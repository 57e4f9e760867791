import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// What is particular to the PostgreSQL store, on a real server. The promises every store keeps run here too, through
/// `Backend.postgres` in PrefsTests' conformance suites.
@Suite("PostgreSQL store")
struct PostgreSQLStoreTests {
    @Test("the test server starts, and says how long it took")
    func serverStarts() throws {
        let server = try server()
        #expect(try server.psql("SELECT 1") == "1")
        print("PostgreSQL test server: initdb + start took \(server.startDuration)")
    }

    @Test("a test process killed with SIGKILL leaves no server running and no directory behind (its reaper stops both)")
    func killedTestProcessLeavesNoServer() async throws {
        let (process, out, err) = try ChildProcess.start("prefs-test-child", ["pg-server"])
        defer { process.signal(SIGKILL) }
        let printed = try await ChildProcess.read(out.fileHandleForReading, untilLine: { $0.hasPrefix("server ") }, timeout: .seconds(120))
        let fields = try #require(printed.split(separator: "\n").first { $0.hasPrefix("server ") }).split(separator: " ")
        let postmaster = try #require(fields.count == 3 ? pid_t(fields[1]) : nil)
        let directory = String(fields[2])
        #expect(postmaster > 0 && kill(postmaster, 0) == 0, "the server runs")
        #expect(FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid"))
        process.signal(SIGKILL)  // no atexit, no deinit: only the reaper is left to clean up
        _ = try await ChildProcess.finish(process, out, err)
        let gone = await eventually(timeout: .seconds(120)) {
            TestPostgreSQLServer.hasEnded(postmaster) && !FileManager.default.fileExists(atPath: directory)
        }
        #expect(gone, "postmaster \(postmaster) still running or \(directory) still there")
    }

    @Test("stop() ends a server left frozen (SIGSTOP, never thawed): every process of it, and its directory")
    func stopEndsAFrozenServer() async throws {
        let server = try TestPostgreSQLServer()
        let directory = server.directory
        let frozen = server.freeze()
        try #require(frozen.count > 1, "the postmaster and its children")
        server.stop()
        let gone = await eventually(timeout: .seconds(30)) {
            frozen.allSatisfy(TestPostgreSQLServer.hasEnded) && !FileManager.default.fileExists(atPath: directory)
        }
        #expect(gone, "still there: \(frozen.filter { !TestPostgreSQLServer.hasEnded($0) }) of \(frozen)")
    }

    @Test("values are kept as the other stores keep them (type name and JSON text), readable in psql")
    func readableInPsql() throws {
        let fixture = try PostgreSQLFixture()
        try fixture.prefs.set(42, for: .launchCount)
        try fixture.prefs.set(["a"], for: .tags)
        let rows = try server().psql(
            "SELECT key, type, value, revision > 0 FROM prefs_values WHERE namespace = '\(fixture.namespace)' ORDER BY key")
        #expect(rows == "launchCount|int|42|t\ntags|[string]|[\"a\"]|t", "\(rows)")
        #expect(try server().psql("SELECT value FROM prefs_meta WHERE name = 'format_version'") == "2")
        // The first write registered the namespace.
        #expect(try server().psql("SELECT count(*) FROM prefs_namespaces WHERE namespace = '\(fixture.namespace)'") == "1")
        // A snapshot of a file store migrates in and out unchanged.
        let directory = try TemporaryDirectory()
        let sqlite = try Prefs(.sqlite(directory.file("p.sqlite")))
        try sqlite.setStoredValues(try fixture.prefs.snapshot().mapValues { Optional($0) })
        #expect(try sqlite.snapshot() == fixture.prefs.snapshot())
    }

    @Test(
        "strings of every size and script reach the server whole, one key or several at once (parameters as C strings)",
        arguments: ["", "ça 🍕 e\u{301}", String(repeating: "0123456789abcdef", count: 16_384)])
    func parametersWhole(_ text: String) throws {
        let fixture = try PostgreSQLFixture()
        let other = try fixture.reopen()
        try fixture.prefs.set(text, for: .name)
        try fixture.prefs.update(.nickname) { $0 = text }
        #expect(try other.storedValue(forKey: "name")?.json == .string(text))
        #expect(try other.storedValue(forKey: "nickname")?.json == .string(text))
        try fixture.prefs.batch { transaction in
            try transaction.set(text + "!", for: .name)
            try transaction.set(nil, for: .nickname)
        }
        try other.refresh()  // what the server holds now, whatever the other store cached
        #expect(try other.storedValue(forKey: "name")?.json == .string(text + "!"))
        #expect(try other.storedValue(forKey: "nickname") == nil)
    }

    @Test("namespaces are isolated: same keys, different values; a reset of one leaves the other")
    func namespaces() throws {
        let url = try server().url
        let a = try Prefs(.postgreSQL(url, namespace: freshNamespace("a")))
        let b = try Prefs(.postgreSQL(url, namespace: freshNamespace("b")))
        try a.set(1, for: .launchCount)
        try b.set(2, for: .launchCount)
        try b.set("b", for: .name)
        #expect(a[.launchCount] == 1 && b[.launchCount] == 2)
        try a.resetAll()
        #expect(try a.snapshot().isEmpty)
        #expect(try b.snapshot().count == 2)
    }

    /// With `throughALivePool`, the first store stays open, so that the second borrows the pool's idle connection
    /// (whose format was checked before the change) instead of making one.
    @Test("a database marked with a newer format is refused with a clear error, and left untouched, through a live pool too", arguments: [false, true])
    func newerFormatRefused(throughALivePool: Bool) throws {
        let server = try server()
        let database = "newer_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let url = server.url(database: database)
        var first: Prefs? = try Prefs(.postgreSQL(url, namespace: "n"))  // creates the schema
        if !throughALivePool { first = nil }
        try server.psql("UPDATE prefs_meta SET value = '3' WHERE name = 'format_version'", database: database)
        do {
            _ = try Prefs(.postgreSQL(url, namespace: "m"))
            Issue.record("a newer format was opened")
        } catch {
            guard case .unsupportedFormatVersion(_, let found, let supported) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(found == 3 && supported == 2)
        }
        #expect(try server.psql("SELECT value FROM prefs_meta", database: database) == "3")
        withExtendedLifetime(first) {}
    }

    @Test("the store's description names the database and namespace, without the password; integrity checks pass")
    func descriptionAndIntegrity() throws {
        let url = try server().tcpURL(password: "hunter2-secret")
        let storage = Prefs.Storage.postgreSQL(url, namespace: "desc")
        #expect(!storage.description.contains("hunter2"))
        #expect(storage.description.contains("prefs:***@127.0.0.1"), "\(storage.description)")
        let prefs = try Prefs(storage)
        try prefs.set(1, for: .launchCount)
        #expect(try prefs.integrityProblems().isEmpty)
        #expect(try prefs.quickCheckProblems().isEmpty)
    }

    @Test("schema creation is safe when many instances open a new database at once; opening registers nothing")
    func concurrentSchemaCreation() async throws {
        let server = try server()
        let database = "fresh_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let url = server.url(database: database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                // An application name each: six pools, as six processes would have, so six connections prepare at once.
                // Deadlines of a minute, not 5 s: the openers wait for each other's schema work by design, and on a
                // loaded machine (a full `swift test` on two cores) six of them in turn once took longer than 5 s.
                let options = PostgreSQLOptions(timeout: .seconds(60), statementTimeout: .seconds(60), applicationName: "opener-\(index)")
                group.addTask {
                    let prefs = try Prefs(.postgreSQL(url, namespace: "n\(index)", options: options))
                    _ = prefs[.launchCount]
                }
            }
            try await group.waitForAll()
        }
        #expect(try server.psql("SELECT count(*) FROM prefs_meta", database: database) == "1")
        #expect(try server.psql("SELECT count(*) FROM prefs_namespaces", database: database) == "0")
        let prefs = try Prefs(.postgreSQL(url, namespace: "n0"))
        try prefs.set(1, for: .launchCount)
        #expect(try server.psql("SELECT count(*) FROM prefs_namespaces", database: database) == "1")
    }
}

@Suite("PostgreSQL redaction")
struct PostgreSQLRedactionTests {
    @Test(
        "passwords are hidden in URLs, query parameters and key=value strings",
        arguments: [
            ("postgresql://app:s3cret@db.internal/prefs?sslmode=verify-full", "postgresql://app:***@db.internal/prefs?sslmode=verify-full"),
            ("postgres://app:p%40ss@db:5432/prefs", "postgres://app:***@db:5432/prefs"),
            ("postgresql://app@db/prefs?password=s3cret&sslmode=require", "postgresql://app@db/prefs?password=***&sslmode=require"),
            ("postgresql:///prefs?host=/tmp", "postgresql:///prefs?host=/tmp"),
            ("host=db user=app password=s3cret sslmode=require", "host=db user=app password=*** sslmode=require"),
            ("host=db password = 'a b\\' c' dbname=x", "host=db password=*** dbname=x"),
        ])
    func redaction(input: String, expected: String) {
        #expect(PostgreSQLRedaction.redact(input) == expected)
    }
}
