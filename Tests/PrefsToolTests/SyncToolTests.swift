import Foundation
import Prefs
import PrefsSync
import PrefsTestHarness
import PrefsTesting
import Testing

/// `prefs-tool sync status` and `sync log`, read from a JSON store two engines synced.
@Suite struct SyncToolTests {
    @Test("status shows the device, queue and conflicts; log shows the merges; a store that never synced says so")
    func statusAndLog() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("phone.json")
        let server = InProcessSyncTransport()
        let phone = try Prefs(.jsonFile(path))
        let phoneClock = TestClock()
        let phoneEngine = try SyncEngine(prefs: phone, transport: server, namespaces: ["editor."], device: "phone", clock: phoneClock.function)
        let laptopClock = TestClock()
        laptopClock.advance(by: 5)
        let laptop = try Prefs(.memory)
        let laptopEngine = try SyncEngine(prefs: laptop, transport: server, namespaces: ["editor."], device: "laptop", clock: laptopClock.function)
        try phone.setStoredValue(try StoredValue("Menlo"), forKey: "editor.font")
        try phoneEngine.captureLocalChanges()
        try laptop.setStoredValue(try StoredValue("Monaco"), forKey: "editor.font")
        try await laptopEngine.sync()
        try await phoneEngine.sync()  // the phone's earlier change loses: a conflict
        try phone.setStoredValue(nil, forKey: "editor.font")
        try phone.setStoredValue(try StoredValue(true), forKey: "editor.wrap")
        try phoneEngine.captureLocalChanges()  // two changes queued, not pushed

        let status = try await tool("--store", path.path, "sync", "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("device\tphone\n"), "\(status.stdout)")
        #expect(status.stdout.contains("conflicts\t1\n"), "\(status.stdout)")
        #expect(status.stdout.contains("pending\t2\n"), "\(status.stdout)")
        #expect(status.stdout.contains("editor.font\t") && status.stdout.contains("(removed)"), "\(status.stdout)")
        #expect(status.stdout.contains("editor.wrap\t") && status.stdout.contains("-phone\tbool true"), "\(status.stdout)")

        let json = try await tool("--store", path.path, "sync", "status", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["device"] as? String == "phone")
        #expect(object["conflicts"] as? Int == 1)
        #expect((object["pending"] as? [Any])?.count == 2)

        let log = try await tool("--store", path.path, "sync", "log")
        #expect(log.status == 0, "\(log.stderr)")
        #expect(
            log.stdout.contains("merged editor.font: kept string \"Monaco\"") && log.stdout.contains("over string \"Menlo\"")
                && log.stdout.contains("(conflict)"), "\(log.stdout)")

        let fresh = directory.file("fresh.json")
        try Prefs(.jsonFile(fresh)).setStoredValue(try StoredValue(1), forKey: "editor.size")
        let never = try await tool("--store", fresh.path, "sync", "status")
        #expect(never.status == 0 && never.stderr.contains("never synced"), "\(never.stdout)\(never.stderr)")
    }
}
