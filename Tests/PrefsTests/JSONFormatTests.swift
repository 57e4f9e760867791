import Foundation
import TestFixtures
@testable import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The JSON store's two formats and release 0.1 (see `JSONStoreDocument`): a format-1 file is the whole store in
/// 0.1's vocabulary and is written under `flock` as 0.1 locks it; format 2 has a journal, which 0.1 refuses.
/// (Release 0.1's own build meets these files in `prefs-torture --long`; its files are read in `ReleaseFixtureTests`.)
@Suite("JSON store formats and release 0.1")
struct JSONFormatTests {
    static let a = Prefs.Key<Int?>("a"), b = Prefs.Key<Int?>("b")
    static let big = Prefs.Key<UInt64>("big", initial: 0)
    static let counts = Prefs.Key<[UInt8]>("counts", initial: [])

    static func document(_ url: URL) throws -> JSONStoreDocument {
        try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
    }

    static func journalExists(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path + ".journal")
    }

    /// Release 0.1's writers lock `STORE.lock` with `flock` alone; while one holds it, a writer of this release must
    /// wait on any store 0.1 may write (format 1, or a store not created yet), and need not on a format-2 store,
    /// which 0.1 refuses.
    @Test("a format-1 (or new) store is written under flock too, as release 0.1 locks it; a format-2 store needs only the mutex")
    func flockForReleaseZeroOne() async throws {
        let directory = try TemporaryDirectory()
        let formatOne = directory.file("one.json"), removed = directory.file("removed.json"), formatTwo = directory.file("two.json")
        try Data(#"{"formatVersion":1,"values":{"a":{"type":"int","value":1}}}"#.utf8).write(to: formatOne)
        for url in [formatOne, removed, formatTwo] {
            // A first write maps the lock file's page (under flock, once per store).
            let writer = try Prefs(.jsonFile(url, lockTimeout: .milliseconds(300)))
            try writer.set(1, for: Self.a)
            if url == removed {  // the store's files removed: 0.1 would create the file again
                for file in [url.path, url.path + ".journal"] where FileManager.default.fileExists(atPath: file) {
                    try FileManager.default.removeItem(atPath: file)
                }
            }
            let (process, out, err) = try ChildProcess.start("prefs-test-child", ["flock", url.path + ".lock"])
            _ = try await ChildProcess.read(out.fileHandleForReading) { $0 == "locked" }
            if url == formatTwo {
                try writer.set(2, for: Self.b)
            } else {
                #expect(throws: PrefsError.lockTimeout(path: url.path + ".lock", seconds: 0.3, heldInThisProcess: false), "\(url.lastPathComponent)") {
                    try writer.set(2, for: Self.b)
                }
            }
            kill(process.processIdentifier, SIGKILL)
            _ = try await ChildProcess.finish(process, out, err)
            try writer.set(3, for: Self.b)
            #expect(try Prefs(.jsonFile(url))[Self.b] == 3)
        }
        #expect(try Self.document(formatOne).formatVersion == 1, "still format 1: 0.1 may write it")
        #expect(try Self.document(removed).formatVersion == 2, "created again in format 2")
    }

    @Test("a new store is format 2 with a journal; a reader that knows only format 1 is told, and nothing is changed")
    func newStoreIsFormatTwo() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let prefs = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try prefs.set(1, for: Self.a)
        try prefs.set(2, for: Self.b)
        let document = try Self.document(url)
        #expect(document.formatVersion == 2 && JSONJournal.generation(of: document) != nil)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(#""formatVersion": 2,"#))
        // What release 0.1 checks before reading anything else (JSONStoreDocument there supports 1).
        let root = try JSON.parse(Data(contentsOf: url))
        #expect(root["formatVersion"] == .int(2), "0.1 throws unsupportedFormatVersion(found: 2, supported: 1)")
        withExtendedLifetime(prefs) {}
    }

    @Test("formatVersion: 1 writes release 0.1's vocabulary: uint as int, declarations 0.1 cannot say kept in declaredInFull; read back whole")
    func formatOneVocabulary() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let prefs = try Prefs(.jsonFile(url, formatVersion: 1))
        try prefs.set(UInt64(Int.max), for: Self.big)
        try prefs.set([1, 255], for: Self.counts)
        try prefs.set(4, for: .renamed)
        #expect(!Self.journalExists(url), "format 1 has no journal")
        let root = try JSON.parse(Data(contentsOf: url))
        #expect(root["formatVersion"] == .int(1))
        #expect(root["values"]?["big"] == .object(["type": .string("int"), "value": .int(Int.max)]))
        #expect(root["values"]?["counts"]?["type"] == .string("[int]"))
        #expect(root["declared"]?["big"] == .object(["type": .string("int"), "initial": .int(0)]), "a type 0.1 knows")
        #expect(root["declared"]?["newName"]?["formerNames"] == nil, "0.1 drops what it does not know from a declaration")
        #expect(root["declaredInFull"]?["newName"]?["formerNames"] == .array([.string("oldName"), .string("olderName")]))
        #expect(root["declaredInFull"]?["big"]?["type"] == .string("uint"))
        #expect(root["journalGeneration"] == nil)

        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[Self.big] == UInt64(Int.max) && reopened[Self.counts] == [1, 255] && reopened[.renamed] == 4)
        let declared = try reopened.declaredKeys()
        #expect(declared["newName"]?.formerNames == ["oldName", "olderName"] && declared["big"]?.type == .uint)
        #expect(try reopened.snapshot() == prefs.snapshot(), "the writer holds what readers read")

        // 0.1 declares a key again (its Key has no former names): its declaration is the newer one.
        var edited = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var declaredByZeroOne = try #require(edited["declared"] as? [String: Any])
        declaredByZeroOne["newName"] = ["type": "int", "initial": 7]
        edited["declared"] = declaredByZeroOne
        try JSONSerialization.data(withJSONObject: edited).write(to: url)
        let afterRedeclaration = try Prefs(.jsonFile(url)).declaredKeys()
        #expect(afterRedeclaration["newName"]?.initial == .int(7) && afterRedeclaration["newName"]?.formerNames == [])
        #expect(afterRedeclaration["big"]?.type == .uint, "other keys keep theirs")
    }

    @Test("a uint above Int.max cannot be written in format 1: encodingFailed names the key, and nothing is written")
    func formatOneRefusesBigUnsigned() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let prefs = try Prefs(.jsonFile(url, formatVersion: 1))
        try prefs.set(1, for: Self.a)
        let before = try Data(contentsOf: url)
        #expect {
            try prefs.set(UInt64.max, for: Self.big)
        } throws: { error in
            guard case PrefsError.encodingFailed("big", let reason) = error else { return false }
            return reason.contains("format 1") && reason.contains("formatVersion: 2")
        }
        #expect(try Data(contentsOf: url) == before)
        let upgrading = try Prefs(.jsonFile(url, formatVersion: 2))
        try upgrading.set(UInt64.max, for: Self.big)
        #expect(try Prefs(.jsonFile(url))[Self.big] == UInt64.max)
    }

    @Test("formatVersion: 1 turns a format-2 store back into format 1 at its first write: the journal folded in and removed")
    func downgrade() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try writer.set(1, for: Self.a)
        try writer.set(2, for: Self.b)  // in the journal
        #expect(Self.journalExists(url))
        let downgrading = try Prefs(.jsonFile(url, formatVersion: 1))
        try downgrading.set(3, for: .launchCount)
        let document = try Self.document(url)
        #expect(document.formatVersion == 1 && document.values.count == 3, "the whole store in the file")
        #expect(!Self.journalExists(url))
        try writer.set(4, for: Self.a)  // a format-2 writer meets a format-1 file: it keeps it format 1
        #expect(try Self.document(url).formatVersion == 1 && !Self.journalExists(url))
        #expect(try Prefs(.jsonFile(url))[Self.a] == 4)
    }

    @Test("a format version this release does not write is refused at open", arguments: [0, 3])
    func unknownRequestedFormat(version: Int) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        #expect(throws: PrefsError.unsupportedFormatVersion(path: url.path, found: version, supported: 2)) {
            _ = try Prefs(.jsonFile(url, formatVersion: version))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [])
    }

    /// What a development build between the two releases left, once 0.1 rewrote the file (finding 1 of issue 27):
    /// a format-1 file and, beside it, a journal holding writes the file lacks. Nothing applies it (a format-1 file
    /// has no journal); it is reported, `check` names it, and the next write keeps its bytes aside.
    @Test("a journal that does not belong to its file but holds changes it lacks is reported, never applied, and moved aside by the next write")
    func strayJournal() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Data(#"{"formatVersion":1,"journalGeneration":"00000000000000aa","values":{"a":{"type":"int","value":1}}}"#.utf8).write(to: url)
        var journal = JSONJournal.header(generation: "00000000000000aa")
        journal += JSONJournal.record(seq: 1, changes: Changeset(values: ["c": .set(StoredValue(type: .int, json: .int(9)))]))
        journal += JSONJournal.record(seq: 2, changes: Changeset(values: ["a": .set(StoredValue(type: .int, json: .int(1)))]))
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        try journal.write(to: journalURL)

        let log = DiagnosticLog()
        let prefs = try Prefs(.jsonFile(url)) { log.append($0) }
        #expect(prefs[Self.a] == 1 && prefs[Prefs.Key<Int?>("c")] == nil, "a format-1 file is the whole store")
        #expect(log.all.map(\.kind) == [.journalNotApplied(path: journalURL.path, keys: ["c"], movedTo: nil)], "\(log.all)")
        let problems = try prefs.integrityProblems()
        #expect(problems.count == 1 && problems[0].contains("does not belong") && problems[0].contains(#""c""#), "\(problems)")
        #expect(try prefs.quickCheckProblems() == problems, "a tool does not write over it")
        #expect(try Data(contentsOf: journalURL) == journal, "reading changes nothing")

        try prefs.set(2, for: Self.b)
        guard case .journalNotApplied(_, ["c"], let aside?)? = log.all.last?.kind else {
            Issue.record("not moved aside: \(log.all)")
            return
        }
        #expect(aside.hasPrefix(journalURL.path + ".unapplied-"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == journal, "kept byte for byte")
        #expect(try Prefs(.jsonFile(url)).integrityProblems() == [])
    }

    @Test("a journal folded into the file already (a compaction cut short before it replaced the journal) is no problem")
    func foldedJournalIsNoProblem() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try writer.set(1, for: Self.a)
        try writer.set(2, for: Self.b)
        let journalURL = URL(fileURLWithPath: url.path + ".journal")
        let oldJournal = try Data(contentsOf: journalURL)
        try writer.close()  // compacts: a new generation
        try oldJournal.write(to: journalURL)  // as if the compaction died before replacing the journal
        let log = DiagnosticLog()
        let reader = try Prefs(.jsonFile(url)) { log.append($0) }
        #expect(reader[Self.b] == 2 && log.all.isEmpty, "\(log.all)")
        #expect(try reader.integrityProblems() == [])
    }

    @Test("an export is in format 1, which release 0.1 imports, unless it holds what only format 2 says")
    func exportFormats() throws {
        let plain = StoreArchive.encode(["a": StoredValue(type: .int, json: .int(1))], declarations: ["a": KeyDeclaration(type: .int, initial: .int(0))])
        #expect(try JSON.parse(plain)["formatVersion"] == .int(1))
        let unsigned = StoreArchive.encode(["n": StoredValue(type: .uint, json: .int(1))])
        #expect(try JSON.parse(unsigned)["formatVersion"] == .int(2))
        let renamed = StoreArchive.encode([:], declarations: ["b": KeyDeclaration(type: .int, initial: .int(0), formerNames: ["a"])])
        #expect(try JSON.parse(renamed)["formatVersion"] == .int(2))
        for data in [plain, unsigned, renamed] {
            #expect(try StoreArchive.contents(of: data, source: "export") == StoreArchive.contents(of: data, source: "export"))
        }
        #expect(try StoreArchive.contents(of: renamed, source: "export").declarations["b"]?.formerNames == ["a"])
        #expect(try StoreArchive.contents(of: unsigned, source: "export").values["n"]?.type == .uint, "read back exactly")
    }

    @Test("a lock file whose page a newer release laid out is refused, and left as it is")
    func newerLockPage() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Prefs(.jsonFile(url)).set(1, for: Self.a)
        let lock = URL(fileURLWithPath: url.path + ".lock")
        var page = try Data(contentsOf: lock)
        #expect(page.prefix(8) == Data("RFSLCKH1".utf8), "the page's magic bytes, version 1 last")
        page[7] = UInt8(ascii: "2")
        try page.write(to: lock)
        let writer = try Prefs(.jsonFile(url))
        #expect(throws: PrefsError.unsupportedFormatVersion(path: lock.path, found: 2, supported: 1)) {
            try writer.set(2, for: Self.a)
        }
        #expect(try Data(contentsOf: lock) == page)
        #expect(writer[Self.a] == 1)
    }
}
