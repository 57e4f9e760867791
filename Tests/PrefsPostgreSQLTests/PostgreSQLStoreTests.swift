import Foundation
@_spi(Tooling) import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestSupport
import Testing

/// The store's promises, as the behaviour suite checks them for the other backends, on a real server.
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

    @Test("a key never written reads its initial value and is not stored; writing the initial value stores it")
    func initialValues() throws {
        let prefs = try PostgreSQLFixture().prefs
        #expect(prefs[.launchCount] == 0)
        #expect(prefs[.nickname] == nil)
        #expect(!prefs.isStored(.launchCount))
        guard case .initial(0) = prefs.lookup(.launchCount) else {
            Issue.record("expected .initial(0), got \(prefs.lookup(.launchCount))")
            return
        }
        prefs[.launchCount] = 0
        #expect(prefs.isStored(.launchCount))
        #expect(prefs.lookup(.launchCount).isStored)
    }

    @Test("every value type round-trips exactly, also through another connection")
    func roundTrips() throws {
        let fixture = try PostgreSQLFixture()
        let prefs = fixture.prefs
        let now = Date()
        let data = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = URL(string: "https://user@example.com:8443/a/b%20c?q=1&r=%C3%A9#frag")!
        try prefs.set(Int.min, for: .launchCount)
        try prefs.set(true, for: .flag)
        try prefs.set(0.1, for: .ratio)
        try prefs.set("héllo\u{0}wörld\n\u{1F600}'\\\"", for: .name)
        try prefs.set(now, for: .lastLaunch)
        try prefs.set(data, for: .blob)
        try prefs.set(url, for: .homepage)
        try prefs.set(["a", "", "ç", "{\"x\",}"], for: .tags)
        try prefs.set(["x": 1, "y": Int.max], for: .scores)
        try prefs.set(["d": [now, Date(timeIntervalSinceReferenceDate: -1e9 + 0.25)]], for: .visits)
        try prefs.set("nick", for: .nickname)
        try prefs.set(.dark, for: .theme)
        try prefs.set(WindowFrame(width: 1, height: 2, title: "T\"itle"), for: .frame)
        for store in [prefs, try fixture.reopen()] {
            #expect(store[.launchCount] == Int.min)
            #expect(store[.flag] == true)
            #expect(store[.ratio] == 0.1)
            #expect(store[.name] == "héllo\u{0}wörld\n\u{1F600}'\\\"")
            #expect(store[.lastLaunch] == now)
            #expect(store[.blob] == data)
            #expect(store[.homepage] == url)
            #expect(store[.tags] == ["a", "", "ç", "{\"x\",}"])
            #expect(store[.scores] == ["x": 1, "y": Int.max])
            #expect(store[.visits] == ["d": [now, Date(timeIntervalSinceReferenceDate: -1e9 + 0.25)]])
            #expect(store[.nickname] == "nick")
            #expect(store[.theme] == .dark)
            #expect(store[.frame] == WindowFrame(width: 1, height: 2, title: "T\"itle"))
            #expect(store.diagnostics.isEmpty)
        }
    }

    @Test("non-finite and signed-zero doubles round-trip")
    func specialDoubles() throws {
        let fixture = try PostgreSQLFixture()
        for value in [Double.infinity, -Double.infinity, -0.0, 5e-324, 1.7976931348623157e308] {
            try fixture.prefs.set(value, for: .ratio)
            let read = try fixture.reopen()[.ratio]
            #expect(read == value && read.sign == value.sign, "\(value) read back as \(read)")
        }
        try fixture.prefs.set(.nan, for: .ratio)
        #expect(try fixture.reopen()[.ratio].isNaN)
    }

    @Test("values are kept as the other stores keep them (type name and JSON text), readable in psql")
    func readableInPsql() throws {
        let fixture = try PostgreSQLFixture()
        try fixture.prefs.set(42, for: .launchCount)
        try fixture.prefs.set(["a"], for: .tags)
        let rows = try server().psql("SELECT key, type, value FROM prefs WHERE namespace = '\(fixture.namespace)' ORDER BY key")
        #expect(rows == "launchCount|int|42\ntags|[string]|[\"a\"]", "\(rows)")
        #expect(try server().psql("SELECT value FROM prefs_meta WHERE name = 'format_version'") == "1")
        #expect(try server().psql("SELECT generation > 0 FROM prefs_namespaces WHERE namespace = '\(fixture.namespace)'") == "t")
        // A snapshot of a file store migrates in and out unchanged.
        let directory = try TemporaryDirectory()
        let sqlite = try Prefs(.sqlite(directory.file("p.sqlite")))
        try sqlite.setStoredValues(try fixture.prefs.snapshot().mapValues { Optional($0) })
        #expect(try sqlite.snapshot() == fixture.prefs.snapshot())
    }

    @Test("reset of one key, several keys, and all keys but some")
    func reset() throws {
        let fixture = try PostgreSQLFixture()
        let prefs = fixture.prefs
        prefs[.launchCount] = 3
        prefs[.name] = "x"
        prefs[.flag] = true
        prefs[.tags] = ["t"]
        try prefs.reset(.launchCount)
        #expect(prefs[.launchCount] == 0 && !prefs.isStored(.launchCount))
        #expect(prefs[.name] == "x")
        try prefs.reset(.name, .flag)
        #expect(!prefs.isStored(.name) && !prefs.isStored(.flag))
        prefs[.launchCount] = 5
        prefs[.name] = "y"
        try prefs.resetAll(keeping: [.tags])
        #expect(!prefs.isStored(.launchCount) && !prefs.isStored(.name))
        #expect(prefs[.tags] == ["t"])
        #expect(try fixture.reopen().snapshot().keys.sorted() == ["tags"])
        #expect(prefs.diagnostics.isEmpty, "\(prefs.diagnostics)")
    }

    @Test("a key reads its former names' value; the value moves to the new name with the key's next write")
    func renames() throws {
        let fixture = try PostgreSQLFixture()
        try fixture.prefs.setStoredValue(StoredValue(type: .int, json: .int(7)), forKey: "olderName")
        let other = try fixture.reopen()
        #expect(other[.renamed] == 7)
        #expect(try other.snapshot().keys.sorted() == ["olderName"], "a read writes nothing")
        try other.update(.renamed) { $0 += 1 }
        #expect(try other.snapshot().keys.sorted() == ["newName"])
        #expect(try fixture.reopen()[.renamed] == 8)
        // The declaration, with its former names, is recorded for tools.
        try other.declare(.renamed)
        let declared = try fixture.reopen().declaredKeys()
        #expect(declared["newName"] == KeyDeclaration(type: .int, initial: .int(0), formerNames: ["oldName", "olderName"]))
        #expect(
            try server().psql("SELECT string_agg(former, ',' ORDER BY position) FROM prefs_renamed WHERE namespace = '\(fixture.namespace)'")
                == "oldName,olderName")
        try other.reset(.renamed)
        #expect(try fixture.reopen()[.renamed] == 0)
    }

    @Test("declared keys are recorded with type and initial value; declaring stores no values")
    func declarations() throws {
        let fixture = try PostgreSQLFixture()
        _ = fixture.prefs[.launchCount]
        #expect(try fixture.reopen().declaredKeys().isEmpty, "a read declares nothing")
        try fixture.prefs.declare(.launchCount, .name, .nickname)
        let declared = try fixture.reopen().declaredKeys()
        #expect(declared["launchCount"] == KeyDeclaration(type: .int, initial: .int(0)))
        #expect(declared["name"] == KeyDeclaration(type: .string, initial: .string("anonymous")))
        #expect(declared["nickname"] == KeyDeclaration(type: .string, initial: nil))
        #expect(try fixture.reopen().snapshot().isEmpty)
    }

    @Test("a batch writes many values in one transaction; a failing transaction writes nothing")
    func batchesAndTransactions() throws {
        let fixture = try PostgreSQLFixture()
        let prefs = fixture.prefs
        let keys = (0..<200).map { Prefs.Key<Int>("k\($0)", initial: -1) }
        try prefs.batch { transaction in
            for (index, key) in keys.enumerated() { try transaction.set(index, for: key) }
        }
        let other = try fixture.reopen()
        #expect(try other.snapshot().count == 200)
        #expect(other[keys[199]] == 199)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try prefs.transaction { transaction in
                transaction[.launchCount] = 99
                transaction[keys[0]] = 1000
                throw Abort()
            }
        }
        #expect(try fixture.reopen()[.launchCount] == 0)
        #expect(try fixture.reopen()[keys[0]] == 0)
        #expect(prefs[keys[0]] == 0)
    }

    @Test("values too large are refused and nothing is written")
    func limits() throws {
        let fixture = try PostgreSQLFixture()
        let big = String(repeating: "x", count: Prefs.maximumValueBytes + 1)
        #expect(throws: PrefsError.self) { try fixture.prefs.set(big, for: .name) }
        #expect(try fixture.reopen().snapshot().isEmpty)
        // The largest accepted value round-trips.
        let largest = String(repeating: "y", count: Prefs.maximumValueBytes)
        try fixture.prefs.set(largest, for: .name)
        #expect(try fixture.reopen()[.name] == largest)
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

    @Test("a database marked with a newer format is refused with a clear error, and left untouched")
    func newerFormatRefused() throws {
        let server = try server()
        let database = "newer_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let url = server.url(database: database)
        _ = try Prefs(.postgreSQL(url, namespace: "n"))  // creates the schema
        try server.psql("UPDATE prefs_meta SET value = '2' WHERE name = 'format_version'", database: database)
        do {
            _ = try Prefs(.postgreSQL(url, namespace: "n"))
            Issue.record("a newer format was opened")
        } catch let error as PrefsError {
            guard case .unsupportedFormatVersion(_, let found, let supported) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(found == 2 && supported == 1)
        }
        #expect(try server.psql("SELECT value FROM prefs_meta", database: database) == "2")
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

    @Test("schema creation is safe when many instances open a new database at once")
    func concurrentSchemaCreation() async throws {
        let server = try server()
        let database = "fresh_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let url = server.url(database: database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                group.addTask { _ = try Prefs(.postgreSQL(url, namespace: "n\(index)")) }
            }
            try await group.waitForAll()
        }
        #expect(try server.psql("SELECT count(*) FROM prefs_namespaces", database: database) == "6")
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
