import Foundation
import TestFixtures
@testable import Prefs
import PrefsJSON
import PrefsSupport
import PrefsTestHarness
import PrefsTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A person edits a JSON store's file while its latest writes sit in the journal (the app runs, or crashed before it
/// folded them): for each key the edit changed, the edit wins over the journal; the journal's other changes still
/// apply; a diagnostic names the keys; the next write folds it all into the file (see `JSONJournalMerge`).
@Suite("Hand edits of a JSON store with a journal")
struct HandEditTests {
    enum Edit: String, CaseIterable {
        /// Rewritten in place, as an editor that saves into the same file does.
        case inPlace
        /// Written to another file and renamed over the store, as most editors save.
        case renamed
    }

    static func key(_ name: String) -> Prefs.Key<Int?> { Prefs.Key<Int?>(name) }

    /// Edits the values of the store file at `url` as a person would: each given key set (or removed, for nil), the
    /// rest of the file as it was.
    static func edit(_ url: URL, _ changes: [String: Int?], how: Edit) throws {
        var root = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var values = try #require(root["values"] as? [String: Any])
        for (key, value) in changes {
            values[key] = value.map { ["type": "int", "value": $0] as [String: Any] }
        }
        root["values"] = values
        let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
        switch how {
        case .inPlace:
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: data)
            try handle.close()
        case .renamed:
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).swp")
            try data.write(to: temporary)
            #expect(rename(temporary.path, url.path) == 0)
        }
    }

    static func editsKept(_ log: DiagnosticLog) -> [[String]] {
        log.all.compactMap { diagnostic in
            if case .handEditKept(_, let keys) = diagnostic.kind { return keys }
            return nil
        }
    }

    @Test(
        "an edit while a writer runs: the edited keys keep the edit, the others their journaled values; reported; the next write folds both",
        arguments: Edit.allCases)
    func editWhileWriterRuns(how: Edit) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let log = DiagnosticLog()
        let writer = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil)) { log.append($0) }
        try writer.set(1, for: Self.key("a"))  // the file
        try writer.set(2, for: Self.key("b"))  // the journal from here on
        try writer.set(3, for: Self.key("c"))
        try writer.set(20, for: Self.key("a"))
        try writer.reset(Self.key("d"))
        // The person sees a = 1 in the file (a = 20 is in the journal) and changes it; adds c by hand (the journal
        // sets it too); adds e; leaves b alone.
        try Self.edit(url, ["a": 100, "c": 300, "e": 5], how: how)

        let reader = try Prefs(.jsonFile(url))
        #expect(reader[Self.key("a")] == 100 && reader[Self.key("c")] == 300, "the edit wins for what it changed")
        #expect(reader[Self.key("b")] == 2, "the journal's other changes apply")
        #expect(reader[Self.key("e")] == 5)
        #expect(reader.diagnostics.map(\.kind) == [.handEditKept(path: url.path, keys: ["a", "c"])], "\(reader.diagnostics)")
        #expect(try reader.integrityProblems() == [], "an edit is no damage")

        try writer.set(6, for: Self.key("f"))  // reads the edit under the lock, then writes the file whole, with f
        #expect(Self.editsKept(log) == [["a", "c"]], "\(log.all)")
        try writer.refresh()  // the writer sees other processes' changes (here, the person's) once it refreshes
        #expect(writer[Self.key("a")] == 100 && writer[Self.key("b")] == 2 && writer[Self.key("c")] == 300 && writer[Self.key("f")] == 6)
        let file = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        #expect(file.values["a"]?.json == .int(100) && file.values["b"]?.json == .int(2) && file.values["c"]?.json == .int(300))
        #expect(file.values["e"]?.json == .int(5) && file.values["f"]?.json == .int(6))
        #expect(try String(contentsOf: URL(fileURLWithPath: url.path + ".journal"), encoding: .utf8).split(separator: "\n").count == 1, "a new journal")
        let fresh = try Prefs(.jsonFile(url))
        #expect(fresh.diagnostics.isEmpty, "folded: nothing left to merge")
        #expect(fresh[Self.key("a")] == 100 && fresh[Self.key("b")] == 2 && fresh[Self.key("f")] == 6)
        try writer.set(7, for: Self.key("a"))  // and later writes win over the edit, as any write does
        #expect(try Prefs(.jsonFile(url))[Self.key("a")] == 7)
    }

    @Test("an edit that removes a key the journal changed removes it; a declaration edited by hand is kept too")
    func editRemovesAndRedeclares() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try writer.set(1, for: Self.key("a"))
        try writer.set(2, for: Self.key("a"))
        try writer.set(3, for: Prefs.Key<Int>("counter", initial: 0))  // declared in the journal
        var root = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var values = try #require(root["values"] as? [String: Any])
        values["a"] = nil
        root["values"] = values
        root["declared"] = ["counter": ["type": "int", "initial": 10]]
        try JSONSerialization.data(withJSONObject: root).write(to: url)
        let reader = try Prefs(.jsonFile(url))
        #expect(reader[Self.key("a")] == nil, "removed by the edit")
        #expect(try reader.storedValue(forKey: "counter") == StoredValue(type: .int, json: .int(3)))
        #expect(try reader.declaredKeys()["counter"]?.initial == .int(10), "the edited declaration")
        #expect(reader.diagnostics.map(\.kind) == [.handEditKept(path: url.path, keys: ["a", "counter"])])
        withExtendedLifetime(writer) {}
    }

    /// The writer is killed with its latest writes in the journal (no close, no idle fold); a person edits the file;
    /// the next process to open the store reads the merge and says so, and its first write folds it.
    @Test("an edit after the writer crashed is kept for the keys it changed, and reported", arguments: Edit.allCases)
    func editAfterCrash(how: Edit) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let (process, out, err) = try ChildProcess.start(
            "prefs-test-child", ["repeat", "json", url.path, "k", "set"],
            environment: ["PREFS_TEST_JOURNAL_COMPACTION_BYTES": "1000000000", "PREFS_TEST_NO_IDLE_COMPACTION": "1"])
        _ = try await ChildProcess.read(out.fileHandleForReading) { $0 == "ack 5" }
        kill(process.processIdentifier, SIGKILL)
        let result = try await ChildProcess.finish(process, out, err)
        #expect(result.signaled, "\(result.stderr)")
        let journal = try String(contentsOf: URL(fileURLWithPath: url.path + ".journal"), encoding: .utf8)
        #expect(journal.contains(#""k-2":{"type":"int","value":2}"#), "k-2 = 2 is in the journal: \(journal)")

        try Self.edit(url, ["k-2": -2, "byHand": 1], how: how)  // the file has no k-2 yet: the person adds it
        let log = DiagnosticLog()
        let prefs = try Prefs(.jsonFile(url)) { log.append($0) }
        #expect(prefs[Prefs.Key<Int>("k-2", initial: 0)] == -2, "the edit is kept")
        #expect(prefs[Prefs.Key<Int>("k-3", initial: 0)] == 3 && prefs[Prefs.Key<Int>("k-5", initial: 0)] == 5, "nothing acknowledged is lost")
        #expect(prefs[Prefs.Key<Int>("byHand", initial: 0)] == 1)
        #expect(Self.editsKept(log) == [["k-2"]], "\(log.all)")

        let check = try await ChildProcess.run("prefs-tool", ["--store", url.path, "check"])
        #expect(check.status == 0, "\(check)")
        #expect(check.stderr.contains("note: ") && check.stderr.contains(#"changes to "k-2": the edit is kept"#), "\(check.stderr)")
        try prefs.set(9, for: Prefs.Key<Int>("later", initial: 0))
        let fresh = try Prefs(.jsonFile(url))
        #expect(fresh.diagnostics.isEmpty && fresh[Prefs.Key<Int>("k-2", initial: 0)] == -2 && fresh[Prefs.Key<Int>("k-4", initial: 0)] == 4)
    }

    /// A key's `"was"` digest is computed from what the writer holds in memory, which after its own compaction is what it
    /// wrote, not what it read: every value type must digest alike both ways, or a store would report edits nobody made.
    @Test("no edit is seen where there is none: values of every type, folded by the writer itself, then changed again")
    func noFalseEdits() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil).journalCompactionFloor(64))
        func setAll(_ round: Int) throws {
            try writer.set(round % 2 == 0, for: .flag)
            try writer.set(Double(round) + 0.1, for: .ratio)
            try writer.set(Double(round), for: Prefs.Key<Double>("integral", initial: 0))
            try writer.set(-0.0 * Double(round + 1), for: Prefs.Key<Double>("negativeZero", initial: 1))
            try writer.set(Double.infinity, for: Prefs.Key<Double>("infinite", initial: 0))
            try writer.set(Float(0.1) * Float(round + 1), for: Prefs.Key<Float>("float", initial: 0))
            try writer.set(UInt64.max - UInt64(round), for: Prefs.Key<UInt64>("big", initial: 0))
            try writer.set("é\u{301} \"\(round)\"\n", for: .name)
            try writer.set(Date(timeIntervalSince1970: 1_700_000_000.123_456_789 + Double(round)), for: .lastLaunch)
            try writer.set(Data([0, UInt8(round), 255]), for: .blob)
            try writer.set(URL(string: "https://example.com/\(round)?q=%20")!, for: .homepage)
            try writer.set(["a": [Date(timeIntervalSince1970: Double(round) + 0.5)]], for: .visits)
            try writer.set(WindowFrame(width: round, height: 2, title: "ü"), for: .frame)
            try writer.set(Decimal(string: "3.14159265358979323846")! + Decimal(round), for: Prefs.Key<Decimal>("decimal", initial: 0))
            try writer.set(Set(["b", "a", "\(round)"]), for: Prefs.Key<Set<String>>("set", initial: []))
            try writer.set(round..<(round + 10), for: Prefs.Key<Range<Int>>("range", initial: 0..<1))
        }
        var generations: Set<String> = []
        for round in 0..<12 {  // the journal outgrows 4x the file every few rounds: the writer folds it, and goes on
            try setAll(round)
            let document = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
            if let generation = JSONJournal.generation(of: document) { generations.insert(generation) }
        }
        #expect(generations.count > 2, "the writer folded its journal several times: \(generations.count)")
        let fresh = try Prefs(.jsonFile(url))
        #expect(fresh.diagnostics.isEmpty, "\(fresh.diagnostics)")
        #expect(fresh[.ratio] == 11.1 && fresh[Prefs.Key<UInt64>("big", initial: 0)] == UInt64.max - 11)
        withExtendedLifetime(writer) {}
    }

    @Test("a writer folds its journal into the file a second after its last write (on the store's clock): the file a person opens is current")
    func idleCompaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let clock = StoreClock.Manual()
        let writer = try Prefs(Prefs.Storage.jsonFile(url).clock(StoreClock(clock)))
        try writer.set(1, for: Self.key("a"))
        try writer.set(2, for: Self.key("b"))  // in the journal
        func fileHoldsB() throws -> Bool {
            try JSONStoreDocument(data: Data(contentsOf: url), path: url.path).values["b"]?.json == .int(2)
        }
        #expect(try !fileHoldsB(), "at once, b is in the journal")
        clock.advance(by: .milliseconds(900))
        #expect(try !fileHoldsB(), "0.9 s later, still in the journal")
        clock.advance(by: .milliseconds(200))  // the fold runs on this thread, as the clock passes its deadline
        #expect(try fileHoldsB(), "folded once the writer was idle for a second")
        let journal = try String(contentsOf: URL(fileURLWithPath: url.path + ".journal"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 1, "the journal holds its header alone: \(journal)")
        #expect(clock.pendingCount == 0, "nothing more to do")
        withExtendedLifetime(writer) {}
    }

    @Test("another writer's record that a writer's idle fold took in is still news to that writer's next refresh")
    func idleFoldKeepsOthersWritesNews() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let clock = StoreClock.Manual()
        let app = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: .seconds(2)).clock(StoreClock(clock)))
        try app.set(0, for: Self.key("b"))  // the first write makes the file
        try app.set(1, for: Self.key("a"))  // the next goes to the journal: a fold is due 2 s later
        #expect(app[Self.key("a")] == 1)  // cached
        // Another writer (an extension; a store of its own, which never folds) within those 2 s: a journal record
        // the app's fold will read.
        let other = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try other.set(2, for: Self.key("a"))
        func journalLines() throws -> Int {
            try String(contentsOf: URL(fileURLWithPath: url.path + ".journal"), encoding: .utf8).split(separator: "\n").count
        }
        #expect(try journalLines() == 3, "the app's record and the other writer's, before the fold")
        clock.advance(by: .seconds(2))
        #expect(try journalLines() == 1, "the app folded both writes")
        try app.refresh()
        #expect(app[Self.key("a")] == 2, "the fold read the other writer's record; the refresh must not keep the cached 1")
        withExtendedLifetime(other) {}
    }
}
