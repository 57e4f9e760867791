import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

/// Faults found by `prefs-torture` (Torture/prefs-torture), each reduced to its smallest form.
@Suite("Faults found by prefs-torture")
struct FaultRegressionTests {
    static let a = Prefs.Key<Int?>("a"), b = Prefs.Key<Int?>("b"), c = Prefs.Key<Int?>("c")

    /// Another process replaces the store file; this store's next write merges into the new file (correct),
    /// but it used to swallow the change: refresh() then saw nothing new and the cache kept the old values.
    @Test("after a write absorbs another process's replacement of the JSON file, refresh() shows the new content")
    func jsonWriteAfterReplacement() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(1, for: Self.a)
        try prefs.set(2, for: Self.b)
        let other = try Prefs(.jsonFile(directory.file("other.json")))
        try other.set(10, for: Self.a)
        try other.close()
        try #require(rename(directory.file("other.json").path, url.path) == 0)

        try prefs.set(3, for: Self.c)
        #expect(try Prefs(.jsonFile(url)).snapshot().keys.sorted() == ["a", "c"], "merged by key into the replacement")
        try prefs.refresh()
        #expect(prefs[Self.a] == 10)
        #expect(prefs[Self.b] == nil)
    }

    @Test("after a write absorbs another process's deletion of the JSON file, refresh() reads it as a reset")
    func jsonWriteAfterDeletion() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(1, for: Self.a)
        try #require(unlink(url.path) == 0)

        try prefs.set(3, for: Self.c)
        #expect(try Prefs(.jsonFile(url)).snapshot().keys.sorted() == ["c"], "the deleted value is not written back")
        try prefs.refresh()
        #expect(prefs[Self.a] == nil)
    }

    /// The open connection kept writing to the unlinked inode: the write returned, and no other process ever saw it.
    /// The store now reopens the path (README, "Fuzzing"): the write succeeds, into a new file, as after a reset.
    @Test(
        "a write after another process deletes the SQLite file reopens the path: the write lands in a new file",
        arguments: [false, true])
    func sqliteWriteAfterDeletion(removingSidecars: Bool) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(1, for: Self.a)
        for suffix in removingSidecars ? ["", "-wal", "-shm"] : [""] { unlink(url.path + suffix) }

        try prefs.set(3, for: Self.c)
        #expect(FileManager.default.fileExists(atPath: url.path), "the path was reopened and written")
        let fresh = try Prefs(.sqlite(url))
        #expect(fresh[Self.c] == 3, "an acknowledged write must be visible to a new process")
        #expect(fresh[Self.a] == nil, "a deleted store reads as a reset; its old WAL must not be replayed into the new file")
        #expect(try fresh.integrityProblems() == [])
    }

    @Test("a write after another process replaces the SQLite file reopens the path: the write goes to the new file")
    func sqliteWriteAfterReplacement() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(1, for: Self.a)
        try Self.replaceStore(at: url, in: directory)

        try prefs.set(3, for: Self.c)
        let fresh = try Prefs(.sqlite(url))
        #expect(fresh[Self.b] == 10)
        #expect(fresh[Self.c] == 3, "an acknowledged write must be visible to a new process")
        #expect(fresh[Self.a] == nil, "the replaced file's WAL must not be replayed into the new file")
        #expect(try fresh.integrityProblems() == [])
    }

    /// Issue 32: on Linux the moved-file check is an inotify watch once a `stat` has passed. Every way of taking the
    /// path from the open file, made after many writes the watch vouched for, must still be seen at the next write.
    @Test(
        "after many writes, a deletion, a rename away or a replacement of the SQLite file is seen at the next write",
        arguments: ["delete", "rename away", "replace", "chmod then replace"])
    func sqliteMovedAfterQuietWrites(change: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        for value in 0..<50 { try prefs.set(value, for: Self.a) }
        switch change {
        case "delete":
            unlink(url.path)
        case "rename away":
            try #require(rename(url.path, url.path + ".old") == 0)
        default:
            if change.hasPrefix("chmod") { chmod(url.path, 0o600) }  // an event of its own, checked and watched again
            for value in 50..<60 { try prefs.set(value, for: Self.a) }
            try Self.replaceStore(at: url, in: directory)
        }
        try prefs.set(3, for: Self.c)
        let fresh = try Prefs(.sqlite(url))
        #expect(fresh[Self.c] == 3, "an acknowledged write must be visible to a new process")
        #expect(fresh[Self.a] == nil, "the file the path names now holds no value of the one taken away")
        #expect(fresh[Self.b] == (change.contains("replace") ? 10 : nil))
        #expect(try fresh.integrityProblems() == [])
    }

    /// Renames another SQLite store, holding `b` = 10, over the one at `url`, as another process would.
    private static func replaceStore(at url: URL, in directory: TemporaryDirectory) throws {
        let other = try Prefs(.sqlite(directory.file("other.sqlite")))
        try other.set(10, for: b)
        try other.close()
        try #require(rename(directory.file("other.sqlite").path, url.path) == 0)
    }

    /// FileSystem.createDirectory lost the errno on Linux (the underlying error is not an NSError there)
    /// and reported "Permission denied" for a path blocked by a regular file.
    @Test("a store under a regular file fails with ENOTDIR, not EACCES", arguments: ["prefs.json", "prefs.sqlite"])
    func regularFileInThePath(name: String) throws {
        let directory = try TemporaryDirectory()
        try Data("x".utf8).write(to: directory.file("blocker"))
        let url = directory.file("blocker").appendingPathComponent("sub").appendingPathComponent(name)
        #expect {
            _ = try Prefs(.file(url))
        } throws: { error in
            guard case PrefsError.io(_, _, let code)? = error as? PrefsError else { return false }
            return code == ENOTDIR
        }
    }
}
