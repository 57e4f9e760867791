import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The process's one inotify instance, shared by every store (item 5 of issue 43): a process with 600 stores held 128
/// instances, the whole per-user limit, one a store. Each case runs `prefs-test-child many` (see ManyStores.swift), a
/// process of its own, so that its counts of instances, watches, checks, descriptors and threads are its stores' alone.
#if os(Linux)
@Suite("One inotify instance for every store of a process")
struct SharedFileWatchTests {
    /// The numbers a `many` child prints on a line such as `armed instances=1 watches=1000 slow=2000 fast=0`.
    static func numbers(_ line: String?) -> [String: Int] {
        var result: [String: Int] = [:]
        for word in (line ?? "").split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) { result[String(parts[0])] = value }
        }
        return result
    }

    /// Starts the child on `count` stores in `directory`; once they are armed, has `writeOthers` set "other" = I in
    /// store I from another process, keeping the stores it returns open while the child looks; returns the child's
    /// three report lines.
    static func run(
        _ kind: String, count: Int, in directory: URL, child: (executable: String, prefix: [String]) = (ChildProcess.executable("prefs-test-child").path, []),
        hog: Bool = false, writeOthers: () async throws -> [Prefs]
    ) async throws -> (armed: String?, seen: String?, closed: String?, result: ChildProcess.Result) {
        let session = try ChildSession.start(child.executable, child.prefix + ["many", kind, directory.path, "\(count)"] + (hog ? ["hog"] : []))
        let armed = await session.nextLine()
        guard armed?.hasPrefix("armed") == true else { return (armed, nil, nil, try await session.finish()) }
        let others = try await writeOthers()
        session.send("go")
        let seen = await session.nextLine()
        let closed = await session.nextLine()
        for prefs in others { try prefs.close() }
        return (armed, seen, closed, try await session.finish())
    }

    /// Before: each store took an instance of its own at its first write, and stores past the 128th none, checking
    /// the slow way (and saying nothing).
    @Test(
        "500 stores in one process use one inotify instance; each sees another process's write the fast way; closing removes their watches",
        arguments: ["json", "sqlite"])
    func fiveHundredStores(kind: String) async throws {
        let directory = try TemporaryDirectory()
        // This process is the other one: its writes go to the journal, or to the database, replacing no file.
        let (armedLine, seenLine, closedLine, result) = try await Self.run(kind, count: 500, in: directory.url) {
            try (0..<500).map { index in
                let url = directory.file("store-\(index).\(kind)")
                let prefs = try Prefs(kind == "json" ? .jsonFile(url).idleCompaction(after: nil) : .sqlite(url))
                try prefs.setStoredValue(StoredValue(type: .int, json: .int(index)), forKey: "other")
                return prefs
            }
        }
        #expect(result.status == 0, "\(result.stderr)")
        let armed = Self.numbers(armedLine), seen = Self.numbers(seenLine), closed = Self.numbers(closedLine)
        #expect(armed["instances"] == 1, "\(armedLine ?? "no line")")
        // A JSON writer watches its file and its journal; an SQLite store its database.
        #expect(armed["watches"] == (kind == "json" ? 1000 : 500), "\(armedLine ?? "no line")")
        #expect(seenLine?.hasPrefix("seen 500 ") == true, "every store read the other process's write: \(seenLine ?? "no line")")
        #expect(seen["slow"] == 0, "no store looked at its files' status: \(seenLine ?? "no line")")
        #expect(seen["fast"] == 500, "\(seenLine ?? "no line")")
        #expect(seen["limitDiagnostics"] == 0)
        #expect(closed["watches"] == 0, "closing the stores removed their watches: \(closedLine ?? "no line")")
        #expect(closed["instances"] == 1, "the instance stays for the next store")
        #expect(closed["descriptors"] == 1, "only the instance is left open: \(closedLine ?? "no line")")
        #expect(closed["threads"] == 0, "no thread reads the instance: \(closedLine ?? "no line")")
    }

    @Test("a store file replaced behind the store (an editor renames its copy over it) is noticed through the shared instance")
    func replacementNoticed() throws {
        let directory = try TemporaryDirectory()
        let mine = try (0..<3).map { index in try Prefs(.jsonFile(directory.file("s\(index).json")).idleCompaction(after: nil)) }
        for prefs in mine {
            for round in 1...3 { try prefs.setStoredValue(StoredValue(type: .int, json: .int(round)), forKey: "own") }
        }
        // A person's editor writes the file anew and renames it over the store's (no journal: format 1). The journal the
        // store holds open does not change: had the shared instance not counted the rename for this store, its check
        // would vouch for the files it holds and read nothing new.
        let edited = #"{"formatVersion": 1, "values": {"own": {"type": "int", "value": 3}, "other": {"type": "int", "value": 10}}}"#
        try Data(edited.utf8).write(to: directory.file("edit.tmp"))
        #expect(rename(directory.file("edit.tmp").path, directory.file("s1.json").path) == 0)
        try mine[1].refresh()
        #expect(try mine[1].storedValue(forKey: "other") == StoredValue(type: .int, json: .int(10)))
        for prefs in mine { try prefs.close() }
    }

    /// Run as a second real user who has no inotify instance left (the child takes them all first): a user's limit,
    /// not the process's.
    @Test(
        "with no inotify instance left, stores check the slow way, still see other processes' writes, and one says why",
        .enabled(if: OtherUser.canRun, "needs root to become a second user"), arguments: ["json", "sqlite"])
    func noInstanceLeft(kind: String) async throws {
        let mallory = try OtherUser.ensure()
        let (binaries, child) = try OtherUser.reachableExecutable("prefs-test-child")
        let directory = try OtherUser.reachableDirectory(prefix: "prefs-inotify", mode: 0o755)
        #expect(chown(directory.url.path, mallory.uid, mallory.gid) == 0)
        let (armedLine, seenLine, closedLine, result) = try await Self.run(
            kind, count: 20, in: directory.url,
            child: ("/usr/bin/setpriv", ["--reuid=\(mallory.uid)", "--regid=\(mallory.gid)", "--clear-groups", "--", child]), hog: true
        ) {
            // Another process of the same user (a store refuses another user's files in a folder it does not own).
            let written = try await mallory.shell(
                "for i in $(seq 0 19); do '\(child)' set \(kind) '\(directory.url.path)'/store-$i.\(kind) other int $i >/dev/null || exit 1; done")
            #expect(written.status == 0, "\(written.stderr)")
            return []
        }
        _ = binaries
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.numbers(armedLine)["instances"] == 0, "\(armedLine ?? "no line")")
        let seen = Self.numbers(seenLine)
        #expect(seenLine?.hasPrefix("seen 20 ") == true, "\(seenLine ?? "no line")")
        #expect(seen["fast"] == 0 && seen["slow"] ?? 0 >= 20, "\(seenLine ?? "no line")")
        #expect(seen["limitDiagnostics"] == 1, "one diagnostic for the process, not one a store: \(seenLine ?? "no line")")
        #expect(Self.numbers(closedLine)["descriptors"] == 0, "\(closedLine ?? "no line")")
    }
}
#endif
