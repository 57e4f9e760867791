import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// A store another user can read but not write (QA inspecting an app's store): prefs-tool, run as that user, lists,
/// reads, exports and checks it, a write fails with `readOnlyStore`, and the store's files are left exactly as they were.
@Suite("A read-only store", .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct ReadOnlyStoreTests {
    /// What the other user cannot write, and how.
    enum Restriction: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// The store's files are mode 0644 in a directory mode 0755, both root's.
        case fileMode
        /// The files are writable by everyone (0666), the directory is not (0755): the lock file, WAL and journal
        /// cannot be created beside the store.
        case directory
        var testDescription: String { rawValue }
    }

    @Test(
        "list, get, export and check work as another user; set fails with a clear error; nothing changes on disk",
        arguments: StoreFile.allCases, Restriction.allCases)
    func readOnlyStore(file: StoreFile, restriction: Restriction) async throws {
        let mallory = try OtherUser.ensure()
        // Both the store and the tool lie where the other user can reach them, wherever the clone and its build are.
        let directory = try OtherUser.reachableDirectory()
        let path = file.path(in: directory)
        let prefs = try Prefs(file == .json ? .jsonFile(URL(fileURLWithPath: path)) : .sqlite(URL(fileURLWithPath: path)))
        try prefs.set(3, for: Prefs.Key<Int>("launchCount", initial: 0))
        try prefs.set("dark", for: Prefs.Key<String>("theme", initial: "light"))
        try prefs.close()
        #expect(chmod(directory.url.path, 0o755) == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        for name in names { #expect(chmod(directory.file(name).path, restriction == .fileMode ? 0o644 : 0o666) == 0) }
        let before = try snapshot(directory)

        let (toolDirectory, tool) = try OtherUser.reachableExecutable("prefs-tool")
        defer { withExtendedLifetime(toolDirectory) {} }
        func asMallory(_ arguments: String) async throws -> ChildProcess.Result {
            try await mallory.shell("XDG_CONFIG_HOME=/nonexistent PREFS_STORE= '\(tool)' --store '\(path)' \(arguments)")
        }
        let list = try await asMallory("list")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("launchCount") && list.stdout.contains("theme"), "\(list.stdout)")
        let get = try await asMallory("get launchCount")
        #expect(get.status == 0 && get.stdout == "3\n", "\(get.stdout)\(get.stderr)")
        let export = try await asMallory("export")
        #expect(export.status == 0 && export.stdout.contains("\"dark\""), "\(export.stderr)")
        let check = try await asMallory("check")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        let set = try await asMallory("set launchCount 4")
        #expect(set.status == 74, "\(set.stdout)")
        #expect(set.stderr.contains("read-only"), "\(set.stderr)")
        #expect(set.stderr.contains(restriction == .fileMode ? "file is not writable" : "directory is not writable"), "\(set.stderr)")

        #expect(try snapshot(directory) == before, "another user's read-only session changed the store's files")
        let reread = try Prefs(file == .json ? .jsonFile(URL(fileURLWithPath: path)) : .sqlite(URL(fileURLWithPath: path)))
        #expect(reread[Prefs.Key<Int>("launchCount", initial: 0)] == 3)
    }

    /// Every file in `directory` with its bytes.
    private func snapshot(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            files[name] = try Data(contentsOf: directory.file(name))
        }
        return files
    }
}
