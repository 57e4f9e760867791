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

/// The JSON store's journal (`FILE.journal`): one self-checking line per committed change set, folded into the
/// snapshot by compaction. Serialized: the compaction bound is process-wide, and one test lowers it.
@Suite("JSON store journal", .serialized)
struct JSONJournalTests {
    static let a = Prefs.Key<Int?>("a"), b = Prefs.Key<Int?>("b"), c = Prefs.Key<Int?>("c")
    static let name = Prefs.Key<String>("name", initial: "")

    static func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: URL(fileURLWithPath: url.path + ".journal"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    static func journal(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".journal") }

    /// A store holding a = 1 in its snapshot and b = 2, c = 3, name = "x", a removed in its journal (records 1–3), and
    /// the store that wrote it: keep it alive (`withExtendedLifetime`), as closing or releasing it folds the journal
    /// (it does not fold it when idle, as stores do by default).
    static func journaled(_ directory: TemporaryDirectory) throws -> (URL, Prefs) {
        let url = directory.file("p.json")
        let prefs = try Prefs(Prefs.Storage.jsonFile(url).idleCompaction(after: nil))
        try prefs.set(1, for: a)  // a new store: the snapshot is written whole
        try prefs.set(2, for: b)
        try prefs.batch { transaction in
            try transaction.set(3, for: c)
            try transaction.set("x", for: name)
        }
        try prefs.reset(a)
        return (url, prefs)
    }

    @Test("CRC-32 is the IEEE one (zlib's check value)")
    func crc() {
        #expect(JSONJournal.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(JSONJournal.crc32([UInt8]()) == 0)
        // Eight bytes per step, then a byte at a time: every length against the plain bitwise definition.
        var random = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            #expect(JSONJournal.crc32(bytes) == crc ^ 0xFFFF_FFFF, "\(length) bytes: \(bytes)")
        }
    }

    @Test("each committed change set is one line appended to FILE.journal; the snapshot is unchanged; a reopen reads both")
    func appendAndReopen() throws {
        let directory = try TemporaryDirectory()
        let (url, writer) = try Self.journaled(directory)
        defer { withExtendedLifetime(writer) {} }
        let snapshot = try JSON.parse(Data(contentsOf: url))
        #expect(snapshot["values"]?["a"] == .object(["type": .string("int"), "value": .int(1)]))
        #expect(snapshot["values"]?["b"] == nil)
        let lines = try Self.lines(url)
        #expect(lines.count == 5 && lines.last == "", "a header, three records, a final newline: \(lines)")
        #expect(lines[0].hasPrefix(#"{"format":"prefs-journal","formatVersion":1,"generation":""#))
        #expect(lines[1].hasPrefix(#"{"seq":1,"values":{"b":{"type":"int","value":2}},"declared":{"b":{"#))
        // The first record that changes a key says what the snapshot held for it: a's record, 1.
        let one = String(format: "%08x", JSONJournal.digest(StoredValue(type: .int, json: .int(1))))
        #expect(lines[3].hasPrefix(#"{"seq":3,"values":{"a":null},"was":{"a":"\#(one)"},"crc":""#), "\(lines[3])")
        let absent = String(format: "%08x", JSONJournal.digest(nil as StoredValue?))
        #expect(lines[1].contains(#""was":{"b":"\#(absent)"}"#), "b was absent: \(lines[1])")
        // The digest is part of the format: the Storage article's example, forever.
        #expect(JSONJournal.digest(StoredValue(type: .int, json: .int(3))) == 0xFEE1_E64D)
        #expect(JSONJournal.digest(StoredValue(type: .string, json: .string("dark"))) == 0x15FB_124D)
        for line in lines.dropLast() {
            #expect((try? JSON.parse(line)) != nil, "every line is JSON: \(line)")
        }
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[Self.a] == nil)
        #expect(reopened[Self.b] == 2)
        #expect(reopened[Self.c] == 3)
        #expect(reopened[Self.name] == "x")
        #expect(reopened.diagnostics.isEmpty)
        #expect(try reopened.integrityProblems() == [])
        #expect(try reopened.declaredKeys()["b"]?.type == .int)
    }

    @Test("a coalesced flush's record says what each key and declaration replaced: the snapshot's, or nothing")
    func coalescedRecordSaysWhatWasReplaced() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        do {
            let first = try Prefs(.jsonFile(url))
            try first.set(1, for: Self.a)  // a new store: a = 1 and a's declaration in the snapshot
            try first.close()
        }
        let oldDeclaration = try #require(try Prefs(.jsonFile(url)).declaredKeys()["a"])
        let store = try Prefs(Prefs.Storage.jsonFile(url, writeMode: .coalesced(.seconds(3600))).idleCompaction(after: nil))
        defer { withExtendedLifetime(store) {} }
        let redeclared = Prefs.Key<Int>("a", initial: 9)  // a's declaration changes with its first write here
        try store.set(5, for: redeclared)
        try store.set(6, for: redeclared)  // pending already: still the snapshot's 1 that the record replaces
        try store.set(2, for: Self.b)  // a key the file never held
        try store.flush()
        let record = try JSON.parse(try #require(try Self.lines(url).dropLast().last))
        func hex(_ digest: UInt32) -> JSON { .string(String(format: "%08x", digest)) }
        let absent = hex(JSONJournal.digest(nil as StoredValue?))
        #expect(record["values"]?["a"]?["value"] == .int(6))
        #expect(record["was"] == .object(["a": hex(JSONJournal.digest(StoredValue(type: .int, json: .int(1)))), "b": absent]))
        #expect(record["wasDeclared"] == .object(["a": hex(JSONJournal.digest(oldDeclaration)), "b": hex(JSONJournal.digest(nil as KeyDeclaration?))]))
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[redeclared] == 6 && reopened[Self.b] == 2)
        #expect(try reopened.integrityProblems() == [])
    }

    @Test("another store on the file reads appended records on refresh(), and a compaction's new generation")
    func incrementalReader() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(.jsonFile(url))
        try writer.set(1, for: Self.a)
        let reader = try Prefs(.jsonFile(url))
        #expect(reader[Self.a] == 1)
        for value in 2...5 {
            try writer.set(value, for: Self.a)
            try writer.set(value * 10, for: Self.b)
            try reader.refresh()
            #expect(reader[Self.a] == value)
            #expect(reader[Self.b] == value * 10)
        }
        try writer.close()  // compacts: a new snapshot, a new journal
        #expect(try Self.lines(url).count == 2, "only the header is left")
        try reader.refresh()
        #expect(reader[Self.a] == 5)
        #expect(reader[Self.b] == 50)
        try reader.set(6, for: Self.c)
        #expect(try Prefs(.jsonFile(url)).snapshot().count == 3)
    }

    @Test(
        "a torn last record (cut mid-line, or garbage after it) is not applied, is reported, and the next write drops it",
        arguments: ["cut", "garbage", "garbage lines", "bad checksum"])
    func tornTail(kind: String) throws {
        let directory = try TemporaryDirectory()
        let (url, writer) = try Self.journaled(directory)
        defer { withExtendedLifetime(writer) {} }
        let journal = Self.journal(url)
        var data = try Data(contentsOf: journal)
        let lastLine = data.dropLast().lastIndex(of: 0x0A)! + 1
        switch kind {
        case "cut": data = data.prefix(lastLine + (data.count - lastLine) / 2)  // record 3 (a removed) torn
        case "garbage": data.append(Data(#"{"seq":4,"values":{"a":{"type":"int","val"#.utf8))
        case "garbage lines": data.append(Data("\u{0}\u{0}\u{0}\nnot json\n{\"seq\":4}\n".utf8))
        default: data[data.count - 5] = data[data.count - 5] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        }
        try data.write(to: journal)
        let log = DiagnosticLog()
        let prefs = try Prefs(.jsonFile(url)) { log.append($0) }
        let tornRecord3 = kind == "cut" || kind == "bad checksum"
        #expect(prefs[Self.a] == (tornRecord3 ? 1 : nil), "nothing past the last good record is applied, and nothing before it is lost")
        #expect(prefs[Self.c] == 3)
        let torn = log.all.compactMap { diagnostic -> (String, Int)? in
            if case .journalTornTail(let path, let line, _) = diagnostic.kind { return (path, line) }
            return nil
        }
        #expect(torn.count == 1 && torn.first?.0 == journal.path && torn.first?.1 == (tornRecord3 ? 4 : 5), "\(log.all)")
        #expect(try prefs.integrityProblems() == [], "a torn tail is what a killed writer leaves, not damage")
        #expect(try prefs.quickCheckProblems() == [], "a torn tail does not stop a tool from writing")
        #expect(try Data(contentsOf: journal) == data, "opening and checking change nothing")

        try prefs.set(7, for: Self.b)
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened.diagnostics.isEmpty, "the write cut the torn tail off")
        #expect(reopened[Self.b] == 7)
        #expect(reopened[Self.a] == (tornRecord3 ? 1 : nil))
        #expect(try reopened.integrityProblems() == [])
    }

    @Test("a bad line with good records after it is corruption: corruptStore names the journal and the line; nothing is changed")
    func corruptionInTheMiddle() throws {
        let directory = try TemporaryDirectory()
        let (url, writer) = try Self.journaled(directory)
        defer { withExtendedLifetime(writer) {} }
        let journal = Self.journal(url)
        var lines = try Self.lines(url)
        lines[2] = lines[2].replacingOccurrences(of: #""value":3"#, with: #""value":4"#)  // record 2, line 3
        let damaged = Data(lines.joined(separator: "\n").utf8)
        try damaged.write(to: journal)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect {
            _ = try Prefs(.jsonFile(url))
        } throws: { error in
            guard case PrefsError.corruptStore(let path, let reason) = error else { return false }
            return path == journal.path && reason.hasPrefix("journal line 3: checksum mismatch")
        }
        #expect(try Data(contentsOf: journal) == damaged)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == before)

        // Opted-in recovery moves the snapshot and its journal aside, byte for byte, and starts empty.
        let snapshot = try Data(contentsOf: url)
        let recovered = try Prefs(.jsonFile(url, recovery: .moveAsideAndStartEmpty))
        #expect(recovered[Self.a] == nil && recovered[Self.b] == nil, "empty")
        guard case .recovered(let aside, _)? = recovered.diagnostics.first?.kind else {
            Issue.record("no recovery reported: \(recovered.diagnostics)")
            return
        }
        #expect(aside.hasPrefix(url.path + ".corrupt-"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == snapshot)
        let journalAside = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("p.json.journal.corrupt-") }
        #expect(journalAside.count == 1)
        #expect(try journalAside.first.map { try Data(contentsOf: directory.file($0)) } == damaged)
        try recovered.set(9, for: Self.b)
        #expect(try Prefs(.jsonFile(url)).snapshot()["b"] == StoredValue(type: .int, json: .int(9)))
    }

    @Test("a journal written by a newer format is refused, and left as it is")
    func newerFormat() throws {
        let directory = try TemporaryDirectory()
        let (url, writer) = try Self.journaled(directory)
        defer { withExtendedLifetime(writer) {} }
        let journal = Self.journal(url)
        var lines = try Self.lines(url)
        let generation = try #require(JSON.parse(lines[0])["generation"])
        let body = #"{"format":"prefs-journal","formatVersion":2,"generation":\#(generation.serialized())"#
        lines[0] = body + #","crc":""# + String(format: "%08x", JSONJournal.crc32(Array(body.utf8))) + #""}"#
        let newer = Data(lines.joined(separator: "\n").utf8)
        try newer.write(to: journal)
        #expect {
            _ = try Prefs(.jsonFile(url))
        } throws: { error in
            guard case PrefsError.unsupportedFormatVersion(let path, 2, 1) = error else { return false }
            return path == journal.path
        }
        #expect(try Data(contentsOf: journal) == newer)
    }

    @Test("a format-1 snapshot (release 0.1's, or by hand) stays format 1, rewritten whole, with no journal; formatVersion: 2 upgrades it")
    func formatOneSnapshot() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Data(#"{"formatVersion":1,"values":{"a":{"type":"int","value":1}}}"#.utf8).write(to: url)
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(2, for: Self.b)
        try prefs.set(3, for: Self.c)
        let snapshot = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        #expect(snapshot.formatVersion == 1 && snapshot.values.count == 3, "the whole store in the file")
        #expect(JSONJournal.generation(of: snapshot) == nil)
        #expect(!FileManager.default.fileExists(atPath: Self.journal(url).path), "no journal")
        #expect(try Prefs(.jsonFile(url)).snapshot().count == 3)

        let upgrading = try Prefs(Prefs.Storage.jsonFile(url, formatVersion: 2).idleCompaction(after: nil))
        #expect(upgrading[Self.c] == 3, "read as it is")
        #expect(try JSONStoreDocument(data: Data(contentsOf: url), path: url.path).formatVersion == 1, "a read changes nothing")
        try upgrading.set(4, for: Self.a)  // the first write upgrades: the file whole, with a generation and a journal
        let upgraded = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        #expect(upgraded.formatVersion == 2 && JSONJournal.generation(of: upgraded) != nil)
        try upgrading.set(5, for: Self.a)
        #expect(try Self.lines(url).count == 3, "then journaled: a header and one record")
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[Self.a] == 5 && reopened[Self.b] == 2 && reopened[Self.c] == 3)
        withExtendedLifetime(upgrading) {}
    }

    @Test("a coalesced store appends one record per flush")
    func coalesced() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Prefs(.jsonFile(url)).set(0, for: Self.a)
        let prefs = try Prefs(Prefs.Storage.jsonFile(url, writeMode: .coalesced(.seconds(3600))).idleCompaction(after: nil))
        for value in 1...50 { try prefs.set(value, for: Self.a) }
        try prefs.set(1, for: Self.b)
        #expect((try? Self.lines(url)) == nil, "nothing written before the flush")
        try prefs.flush()
        let lines = try Self.lines(url)
        #expect(lines.count == 3, "a header and one record: \(lines)")
        let reader = try Prefs(.jsonFile(url))
        #expect(reader[Self.a] == 50 && reader[Self.b] == 1)
    }

    @Test("compaction folds the journal into a new snapshot once it outgrows the bound; the old generation is never read again")
    func compaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let prefs = try Prefs(Prefs.Storage.jsonFile(url).journalCompactionFloor(2048))
        let reader = try Prefs(.jsonFile(url))
        var generations: Set<String> = []
        for value in 0..<600 {
            try prefs.set(value, for: Prefs.Key<Int?>("k\(value % 20)"))
            let document = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
            generations.insert(try #require(JSONJournal.generation(of: document)))
            let size = (try? FileManager.default.attributesOfItem(atPath: Self.journal(url).path))?[.size] as? Int ?? 0
            #expect(size <= JSONJournal.compactionThreshold(snapshotSize: try Data(contentsOf: url).count, floor: 2048) + 200, "compacted once past the bound")
            if value % 7 == 0 {
                try reader.refresh()
                #expect(reader[Prefs.Key<Int?>("k\(value % 20)")] == value)
            }
        }
        #expect(generations.count > 3, "several compactions: \(generations.count)")
        let header = try JSON.parse(Self.lines(url)[0])
        let document = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        #expect(header["generation"] == .string(try #require(JSONJournal.generation(of: document))), "the journal continues the snapshot")
        let values = try Prefs(.jsonFile(url)).snapshot()
        #expect(values.count == 20)
        #expect((0..<20).allSatisfy { values["k\($0)"]?.json == .int(580 + $0) })
    }

    /// The files at each step of a compaction, as a crash there leaves them: (1) before it (a snapshot and its journal),
    /// (2) inside the snapshot's replace (a temporary file beside them), (3) after the snapshot's rename, before the
    /// journal's reset (a new snapshot, the old journal), (4) after it. Every state holds every write, and later
    /// writes are never undone by an old record.
    @Test("a crash at each step of a compaction loses nothing and applies nothing twice", arguments: [1, 2, 3, 4])
    func crashDuringCompaction(step: Int) throws {
        let directory = try TemporaryDirectory()
        let (url, writer) = try Self.journaled(directory)  // a removed, b = 2, c = 3, name = "x", mostly in the journal
        let oldSnapshot = try Data(contentsOf: url), oldJournal = try Data(contentsOf: Self.journal(url))
        withExtendedLifetime(writer) {}
        let compacted = directory.file("compacted.json")
        try oldSnapshot.write(to: compacted)
        try oldJournal.write(to: Self.journal(compacted))
        let compactor = try Prefs(.jsonFile(compacted))
        try compactor.set(2, for: Self.b)  // a write, so that close() compacts
        try compactor.close()
        let newSnapshot = try Data(contentsOf: compacted), newJournal = try Data(contentsOf: Self.journal(compacted))
        #expect(newSnapshot != oldSnapshot && String(decoding: newJournal, as: UTF8.self).split(separator: "\n").count == 1)

        let cut = directory.file("cut.json")
        switch step {
        case 1: try oldSnapshot.write(to: cut); try oldJournal.write(to: Self.journal(cut))
        case 2:
            try oldSnapshot.write(to: cut); try oldJournal.write(to: Self.journal(cut))
            try newSnapshot.prefix(newSnapshot.count / 2).write(to: directory.file("cut.json.tmp-999999-1"))
        case 3: try newSnapshot.write(to: cut); try oldJournal.write(to: Self.journal(cut))
        default: try newSnapshot.write(to: cut); try newJournal.write(to: Self.journal(cut))
        }
        let prefs = try Prefs(.jsonFile(cut))
        #expect(prefs.diagnostics.isEmpty)
        #expect(prefs[Self.a] == nil && prefs[Self.b] == 2 && prefs[Self.c] == 3 && prefs[Self.name] == "x", "step \(step)")
        try prefs.set(1, for: Self.a)  // a later write of a key an old record removed
        try prefs.set(5, for: Self.b)
        let reopened = try Prefs(.jsonFile(cut))
        #expect(reopened[Self.a] == 1 && reopened[Self.b] == 5 && reopened[Self.c] == 3, "step \(step)")
        #expect(try reopened.integrityProblems() == [])
        #expect(!FileManager.default.fileExists(atPath: directory.file("cut.json.tmp-999999-1").path), "the leftover is removed")
    }

    /// A writer checks the files it holds open (an `inotify` watch on Linux, `fstat` and `statx` elsewhere), not their
    /// paths: these are the changes behind its back that it must still notice before its next append.
    @Test("a journal removed under a writer: its next set starts a new journal, and a fresh open reads it")
    func journalRemovedUnderWriter() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(.jsonFile(url))
        for value in 1...3 { try writer.set(value, for: Self.a) }  // the snapshot, then two appends: the writer now watches both files
        try #require(unlink(Self.journal(url).path) == 0)
        try writer.set(4, for: Self.b)
        #expect(try Prefs(.jsonFile(url))[Self.b] == 4, "not appended to the removed file")
        withExtendedLifetime(writer) {}
    }

    @Test("a snapshot edited in place under a writer: the writer reads the edit before its next append, and its compaction keeps it")
    func snapshotEditedInPlace() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let writer = try Prefs(.jsonFile(url))
        for value in 1...3 { try writer.set(value, for: Self.a) }
        var document = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        document.values["c"] = StoredValue(type: .int, json: .int(7))
        let handle = try FileHandle(forWritingTo: url)  // the same inode, rewritten (as an editor that saves in place)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: document.encoded())
        try handle.close()
        try writer.set(5, for: Self.b)
        #expect(writer[Self.c] == 7, "the edit was read before the append")
        try writer.close()  // compacts: the snapshot is rewritten from what the writer holds
        let fresh = try Prefs(.jsonFile(url))
        #expect(fresh[Self.a] == 3 && fresh[Self.b] == 5 && fresh[Self.c] == 7)
    }

    @Test("two processes appending at once lose nothing, across compactions, and a live reader sees every value")
    func twoProcesses() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Prefs(.jsonFile(url)).set(0, for: Self.a)
        let environment = ["PREFS_TEST_JOURNAL_COMPACTION_BYTES": "4096"]
        async let first = ChildProcess.run("prefs-test-child", ["write", "json", url.path, "x", "300"], environment: environment)
        async let second = ChildProcess.run("prefs-test-child", ["write", "json", url.path, "y", "300"], environment: environment)
        let reader = try Prefs(.jsonFile(url))
        _ = try await eventually(timeout: .seconds(120)) {
            try reader.refresh()
            return try reader.snapshot().count >= 601
        }
        let results = try await [first, second]
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        try reader.refresh()
        for prefix in ["x", "y"] {
            for index in 0..<300 {
                #expect(reader[Prefs.Key<Int>("\(prefix)-\(index)", initial: -1)] == index)
            }
        }
        let fresh = try Prefs(.jsonFile(url))
        #expect(try fresh.snapshot().count == 601)
        #expect(try fresh.integrityProblems() == [])
    }

    /// Kills a writer (SIGKILL) after a random number of acknowledged sets, with compactions every few records, so that
    /// kills land mid-append and mid-compaction; every acknowledged write survives every later round.
    @Test("a writer SIGKILLed mid-append or mid-compaction loses nothing acknowledged", arguments: ["set", "batch"])
    func killedWriter(operation: String) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        var random = SystemRandomNumberGenerator()
        var rounds: [(prefix: String, acknowledged: Int)] = []
        for round in 0..<8 {
            let prefix = "r\(round)"
            let (process, out, err) = try ChildProcess.start(
                "prefs-test-child", ["repeat", "json", url.path, prefix, operation],
                environment: ["PREFS_TEST_JOURNAL_COMPACTION_BYTES": "2048"])
            let target = Int.random(in: 0...40, using: &random)
            let before = try await ChildProcess.read(out.fileHandleForReading) { $0 == "ack \(target)" }
            kill(process.processIdentifier, SIGKILL)
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.signaled && result.status == SIGKILL, "\(result.stderr)")
            let acknowledged =
                (before + result.stdout).split(separator: "\n").compactMap { line in
                    line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil
                }.max() ?? -1
            rounds.append((prefix, acknowledged))

            let prefs = try Prefs(.jsonFile(url))
            #expect(try prefs.integrityProblems() == [], "round \(round)")
            let values = try prefs.snapshot()
            try prefs.close()
            for earlier in rounds {
                let crash = CrashOperation(rawValue: operation)!
                #expect(crash.problems(in: values, prefix: earlier.prefix, acknowledged: earlier.acknowledged) == [], "after round \(round)")
            }
        }
    }
}
