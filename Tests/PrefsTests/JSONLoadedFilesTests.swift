import Foundation
@testable import Prefs
import PrefsTesting
import Testing

/// What a JSON store's backend loaded (``JSONLoadedFiles``), replaced whole by each load and write, and format 1's
/// rules (``JSONFormatOne``) apart from the files.
@Suite("JSON loaded files and format 1")
struct JSONLoadedFilesTests {
    static let stamp = FileSystem.Stamp(device: 1, inode: 2, size: 3, modified: 4, changed: 5)

    static func loaded(format: Int?, stamp: FileSystem.Stamp? = Self.stamp, journalApplies: Bool = false) -> JSONLoadedFiles {
        JSONLoadedFiles(
            stamp: stamp, generation: format == 2 ? "g" : nil, format: format, snapshot: .none, editedKeys: JSONJournalMerge.Keys(),
            journalApplies: journalApplies)
    }

    static func backend(_ url: URL, formatVersion: Int? = nil) throws -> JSONFileBackend {
        var options = JSONFileBackend.Options(durability: .processCrash, writeMode: .immediate, recovery: .fail, lockTimeout: .seconds(5))
        options.formatVersion = formatVersion
        options.idleCompactionDelay = nil
        return try JSONFileBackend(path: url.path, options: options)
    }

    static func set(_ name: String, _ value: Int) throws -> Changeset {
        var changes = Changeset()
        changes.values[name] = .set(try StoredValue(value))
        return changes
    }

    @Test("release 0.1's writers are excluded from a missing or format-1 file only; a write keeps the file's format unless told")
    func formatRules() {
        #expect(JSONFormatOne.previousReleasesMayWrite(.none))
        #expect(JSONFormatOne.previousReleasesMayWrite(Self.loaded(format: 1)))
        #expect(!JSONFormatOne.previousReleasesMayWrite(Self.loaded(format: 2)))
        #expect(JSONFormatOne.targetFormat(requested: nil, .none) == JSONStoreDocument.formatVersion)
        #expect(JSONFormatOne.targetFormat(requested: nil, Self.loaded(format: 1)) == 1)
        #expect(JSONFormatOne.targetFormat(requested: 2, Self.loaded(format: 1)) == 2)
        #expect(JSONFormatOne.targetFormat(requested: 1, Self.loaded(format: 2)) == 1)
        #expect(JSONFormatOne.targetFormat(requested: nil, Self.loaded(format: 1, stamp: nil)) == 2, "a removed file is created anew")
    }

    @Test("a format-1 write is the whole document in format 1; nothing to write when the file already says it all")
    func formatOneDocument() throws {
        let committed = JSONStoreDocument()
        let change = try Self.set("a", 1)
        let next = try #require(try JSONFormatOne.nextDocument(committed, changes: change, record: change, loaded: Self.loaded(format: 2)))
        #expect(next.formatVersion == 1 && next.values["a"] != nil)
        #expect(try JSONFormatOne.nextDocument(committed, changes: Changeset(), record: Changeset(), loaded: Self.loaded(format: 1)) == nil)
        #expect(
            try JSONFormatOne.nextDocument(committed, changes: Changeset(), record: Changeset(), loaded: Self.loaded(format: 1, journalApplies: true))
                != nil, "a journal beside it is folded in")
        #expect(try JSONFormatOne.nextDocument(committed, changes: Changeset(), record: Changeset(), loaded: .none) != nil, "no file yet")
        var huge = Changeset()
        huge.values["big"] = .set(try StoredValue(UInt64.max))
        #expect(throws: PrefsError.self) { try JSONFormatOne.nextDocument(committed, changes: huge, record: huge, loaded: .none) }
    }

    @Test("with(…) replaces one member and keeps the others")
    func replacingOneMember() {
        let loaded = Self.loaded(format: 2)
        let applying = loaded.with(journalApplies: true)
        #expect(applying.journalApplies && applying.stamp == loaded.stamp && applying.generation == "g" && applying.format == 2)
        guard case .computed = loaded.with(snapshot: .computed(JSONJournal.SnapshotDigest(Data("{}".utf8)))).snapshot else {
            Issue.record("the digest was not kept")
            return
        }
    }

    @Test("a write, a reload of another process's file and a removal each replace what was loaded, whole")
    func replacedWhole() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.json")
        let backend = try Self.backend(url)
        #expect(backend.loaded.stamp == nil && backend.loaded.format == nil)
        try backend.apply(Self.set("a", 1))
        let written = backend.loaded
        #expect(written.stamp != nil && written.format == 2 && written.generation != nil)

        // Another process writes the file in format 1: the reload reads it all anew, and no journal applies to it.
        try Data(#"{"formatVersion":1,"values":{"a":{"type":"int","value":7}}}"#.utf8).write(to: url)
        #expect(try backend.refresh())
        #expect(backend.loaded.format == 1 && backend.loaded.generation == nil && !backend.loaded.journalApplies)
        #expect(backend.loaded.stamp != written.stamp)
        guard case .read = backend.loaded.snapshot else {
            Issue.record("the digest of a snapshot only read is computed when first asked for")
            return
        }
        let seven = try StoredValue(7)
        #expect(backend.value(forKey: "a") == seven)
        #expect(backend.snapshotDigest != nil)
        guard case .computed = backend.loaded.snapshot else {
            Issue.record("the digest asked for is kept")
            return
        }

        try FileManager.default.removeItem(at: url)
        _ = try backend.refresh()
        #expect(backend.loaded.stamp == nil && backend.loaded.format == nil && backend.loaded.generation == nil)
        backend.close()
    }
}
