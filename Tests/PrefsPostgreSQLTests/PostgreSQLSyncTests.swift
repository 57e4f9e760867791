import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsSync
import PrefsTestHarness
import PrefsTesting
import Testing

extension Prefs.Keys {
    fileprivate static let syncedTheme = Key<String>("theme", initial: "light")
}

/// Issue 45: the PostgreSQL server of sync. Each user is a role; each device a local store and an engine over a
/// `PostgreSQLSyncTransport` connected as its user.
@Suite("PostgreSQL sync transport")
struct PostgreSQLSyncTests {
    /// A database of its own, its sync tables created by the superuser, and two user roles.
    private func setUp() throws -> (admin: String, alice: String, bob: String, database: String) {
        let server = try server()
        let database = "sync_\(UUID().uuidString.prefix(8).lowercased())"
        let suffix = UUID().uuidString.prefix(8).lowercased()
        try server.psql("CREATE DATABASE \(database)")
        try server.psql("CREATE ROLE alice_\(suffix) LOGIN; CREATE ROLE bob_\(suffix) LOGIN", database: database)
        return (
            server.url(database: database), server.url(database: database, user: "alice_\(suffix)"),
            server.url(database: database, user: "bob_\(suffix)"), database
        )
    }

    /// The clocks start at the real time: the server refuses a push stamped far from its own clock.
    private func engine(_ prefs: Prefs, _ transport: PostgreSQLSyncTransport, _ device: String, clock: TestClock = TestClock(Date())) throws -> SyncEngine {
        try SyncEngine(prefs: prefs, transport: transport, keys: [Prefs.Keys.syncedTheme], namespaces: ["editor."], device: device, clock: clock.function)
    }

    @Test("a user's devices converge through the server, which applies the same rule; another user's keys are out of reach")
    func twoUsersDevices() async throws {
        let setup = try setUp()
        _ = try await PostgreSQLSyncTransport(setup.admin).pull(since: nil)  // the owner creates the tables
        let alicePhone = try Prefs(.memory)
        let aliceLaptop = try Prefs(.memory)
        let bobPhone = try Prefs(.memory)
        let phoneEngine = try engine(alicePhone, try PostgreSQLSyncTransport(setup.alice), "alice-phone")
        let laptopClock = TestClock(Date())
        laptopClock.advance(by: 2)
        let laptopEngine = try engine(aliceLaptop, try PostgreSQLSyncTransport(setup.alice), "alice-laptop", clock: laptopClock)
        let bobEngine = try engine(bobPhone, try PostgreSQLSyncTransport(setup.bob), "bob-phone")

        try alicePhone.set("dark", for: .syncedTheme)
        try alicePhone.setStoredValue(try StoredValue(15), forKey: "editor.fontSize")
        try phoneEngine.captureLocalChanges()
        try aliceLaptop.set("sepia", for: .syncedTheme)  // later by the laptop's clock: it wins wherever it arrives
        try await laptopEngine.sync()
        try await phoneEngine.sync()
        try await laptopEngine.sync()
        for prefs in [alicePhone, aliceLaptop] {
            #expect(prefs[.syncedTheme] == "sepia")
            #expect(try prefs.storedValue(forKey: "editor.fontSize") == (try StoredValue(15)))
        }
        #expect(try phoneEngine.conflictCount() == 1)

        // Bob sees none of Alice's keys, and his own theme is his.
        try await bobEngine.sync()
        #expect(!bobPhone.isStored(.syncedTheme))
        try bobPhone.set("light-bob", for: .syncedTheme)
        try await bobEngine.sync()
        try await phoneEngine.sync()
        #expect(alicePhone[.syncedTheme] == "sepia")
        // Row-level security, asked directly as Bob: Alice's rows are invisible and cannot be written.
        let server = try server()
        let bobRole = String(setup.bob.split(separator: "@")[0].dropFirst("postgresql://".count))
        let aliceRole = String(setup.alice.split(separator: "@")[0].dropFirst("postgresql://".count))
        let visible = try server.psql("SET ROLE \(bobRole); SELECT count(*) FROM prefs_sync WHERE user_name = '\(aliceRole)'", database: setup.database)
        #expect(visible.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("0"), "\(visible)")
        #expect(throws: (any Error).self) {
            try server.psql(
                "SET ROLE \(bobRole); INSERT INTO prefs_sync (user_name, key, hlc, change_id, revision) VALUES ('\(aliceRole)', 'theme', '9', 'x', 1)",
                database: setup.database)
        }
        let updated = try server.psql(
            "SET ROLE \(bobRole); UPDATE prefs_sync SET hlc = '999' WHERE user_name = '\(aliceRole)' RETURNING key", database: setup.database)
        #expect(!updated.contains("theme"), "\(updated)")
    }

    @Test("devices as processes: two of Alice's write one key at once and converge; Bob's device reads nothing of hers")
    func devicesAsProcesses() async throws {
        let setup = try setUp()
        _ = try await PostgreSQLSyncTransport(setup.admin).pull(since: nil)
        let directory = try TemporaryDirectory()
        @Sendable func device(_ name: String, _ url: String, _ value: String) async throws -> String {
            let store = directory.file("\(name).json").path
            let result = try await ChildProcess.run("prefs-test-child", ["sync", "json", store, name, url, "editor.font", value])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        async let phone = device("phone", setup.alice, "Menlo")
        async let laptop = device("laptop", setup.alice, "Monaco")
        _ = try await (phone, laptop)
        let phoneValue = try await device("phone", setup.alice, "-")
        let laptopValue = try await device("laptop", setup.alice, "-")
        #expect(phoneValue == laptopValue)
        #expect(["value \"Menlo\"", "value \"Monaco\""].contains(phoneValue), "\(phoneValue)")
        #expect(try await device("bob", setup.bob, "-") == "value none")
    }

    @Test("a push repeated after a lost answer applies once; an older change arriving late loses on the server")
    func idempotentAndOrderIndependent() async throws {
        let setup = try setUp()
        let transport = try PostgreSQLSyncTransport(setup.admin)
        let older = SyncChange(key: "theme", value: try StoredValue("old"), timestamp: HybridTimestamp(milliseconds: 1000, counter: 0, device: "a"), id: "c1")
        let newer = SyncChange(key: "theme", value: try StoredValue("new"), timestamp: HybridTimestamp(milliseconds: 1000, counter: 1, device: "b"), id: "c2")
        try await transport.push([newer])
        let first = try await transport.pull(since: nil)
        try await transport.push([newer])  // again: no new revision
        try await transport.push([older])  // late and older: refused by the server's rule
        let after = try await transport.pull(since: first.cursor)
        #expect(first.changes == [newer])
        #expect(after.changes.isEmpty && after.cursor == first.cursor)
        #expect(try await transport.pull(since: nil).changes == [newer])
    }

    @Test("a push stamped beyond the maximum skew of the server's clock is refused whole, and applies nothing")
    func skewRefusedByTheServer() async throws {
        let setup = try setUp()
        let transport = try PostgreSQLSyncTransport(setup.admin, maximumSkew: .seconds(60))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let fine = SyncChange(key: "editor.a", value: try StoredValue(1), timestamp: HybridTimestamp(milliseconds: now, counter: 0, device: "a"), id: "f")
        let ahead = SyncChange(
            key: "editor.b", value: try StoredValue(2), timestamp: HybridTimestamp(milliseconds: now + 3_600_000, counter: 0, device: "a"), id: "x")
        let error = await #expect(throws: PrefsError.self) { try await transport.push([fine, ahead]) }
        guard case .backend(_, let reason)? = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("editor.b") && reason.contains("ahead of the server's clock"), "\(reason)")
        #expect(try await transport.pull(since: nil).changes.isEmpty)
        try await transport.push([fine])
        #expect(try await transport.pull(since: nil).changes == [fine])
    }

    @Test("a device behind a compaction is told to resync from scratch")
    func compaction() async throws {
        let setup = try setUp()
        let transport = try PostgreSQLSyncTransport(setup.admin)
        let stamp = { (ms: Int64) in HybridTimestamp(milliseconds: ms, counter: 0, device: "a") }
        try await transport.push([SyncChange(key: "editor.a", value: try StoredValue(1), timestamp: stamp(1000), id: "a1")])
        let behind = try await transport.pull(since: nil).cursor
        try await transport.push([SyncChange(key: "editor.a", value: nil, timestamp: stamp(2000), id: "a2")])
        try await transport.push([SyncChange(key: "editor.b", value: try StoredValue(2), timestamp: stamp(3000), id: "b1")])
        #expect(try transport.compact(tombstonesBefore: 5000) == 1)
        let resync = try await transport.pull(since: behind)
        #expect(resync.compacted)
        #expect(resync.changes.map(\.key) == ["editor.b"])
        let current = try await transport.pull(since: resync.cursor)
        #expect(!current.compacted && current.changes.isEmpty)
    }

    @Test("a database whose sync tables are in a newer format is refused, not written")
    func newerFormatRefused() async throws {
        let setup = try setUp()
        _ = try await PostgreSQLSyncTransport(setup.admin).pull(since: nil)
        try server().psql("UPDATE prefs_sync_meta SET value = '2' WHERE name = 'format_version'", database: setup.database)
        let error = await #expect(throws: PrefsError.self) {
            _ = try await PostgreSQLSyncTransport(setup.admin).pull(since: nil)
        }
        guard case .unsupportedFormatVersion(_, let found, let supported)? = error else {
            Issue.record("expected unsupportedFormatVersion, got \(String(describing: error))")
            return
        }
        #expect(found == 2 && supported == 1)
    }
}
