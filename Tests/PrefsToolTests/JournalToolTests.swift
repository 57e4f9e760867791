import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// prefs-tool on a JSON store whose latest writes are in its journal (`FILE.journal`), not yet in the snapshot.
@Suite("prefs-tool and the JSON store's journal")
struct JournalToolTests {
    @Test("list, get and export read the snapshot and the journal; check notes a torn last record; a write removes it")
    func journal() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("store.json").path
        let writer = try Prefs(Prefs.Storage.jsonFile(URL(fileURLWithPath: store)).idleCompaction(after: nil))
        try writer.set(1, for: Prefs.Key("a", initial: 0))  // a new store: the snapshot
        try writer.set(2, for: Prefs.Key("b", initial: 0))  // the journal
        try writer.set(3, for: Prefs.Key("c", initial: 0))
        defer { withExtendedLifetime(writer) {} }  // a close (or a second without writes, unless turned off) would fold the journal

        #expect(try await tool("--store", store, "list").stdout == "a\tint\t1\nb\tint\t2\nc\tint\t3\n")
        #expect(try await tool("--store", store, "get", "c").stdout == "3\n")
        let export = try await tool("--store", store, "export")
        #expect(try StoreArchive.decode(Data(export.stdout.utf8), source: "export").count == 3)
        #expect(try await tool("--store", store, "check").status == 0)

        let journal = URL(fileURLWithPath: store + ".journal")
        let data = try Data(contentsOf: journal)
        try data.dropLast(10).write(to: journal)  // c's record torn
        let check = try await tool("--store", store, "check")
        #expect(check.status == 0, "a torn tail is what a killed writer leaves, not damage")
        #expect(check.stderr.contains("note: ") && check.stderr.contains("store.json.journal ends in a torn record at line 3"), "\(check.stderr)")
        #expect(try await tool("--store", store, "list").stdout == "a\tint\t1\nb\tint\t2\n", "nothing past the last good record")
        #expect(try await tool("--store", store, "set", "d", "4").status == 0, "a torn tail does not stop a write")
        let after = try await tool("--store", store, "check")
        #expect(after.status == 0 && after.stderr.isEmpty, "\(after.stderr)")
        #expect(try await tool("--store", store, "export", store + ".journal").status == 64, "the journal is one of the store's files")
    }
}
