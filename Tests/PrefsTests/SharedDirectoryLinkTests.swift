import Foundation
import TestFixtures
@_spi(Tooling) import Prefs
@_spi(Harness) import PrefsTestSupport
import Testing

/// The library's side of the symlink policy (the tool's is in PrefsToolTests): a link another user planted in a
/// sticky world-writable directory is never followed, whatever `fs.protected_symlinks` says. And a lock file another
/// user planted is only locked, never mapped.
@Suite("Links another user planted", .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct SharedDirectoryLinkTests {
    @Test(
        "opening a store through another user's link in a sticky directory throws untrustedLink and creates nothing",
        arguments: ["json", "sqlite"])
    func plantedStoreLink(ext: String) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let target = own.file("target.\(ext)").path
        let link = shared.file("store.\(ext)")
        let planted = try await mallory.shell("ln -s '\(target)' '\(link.path)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let storage: Prefs.Storage = ext == "json" ? .jsonFile(link) : .sqlite(link)
        #expect(throws: PrefsError.untrustedLink(path: link.path, owner: mallory.uid)) { try Prefs(storage) }
        #expect(fileOwnerAndMode(target) == nil)
        #expect(fileOwnerAndMode(target + ".lock") == nil)

        // Not sticky: the link is followed (the directory's owner decides what is in it).
        chmod(shared.url.path, 0o777)
        let prefs = try Prefs(storage)
        try prefs.setStoredValue(StoredValue(type: .int, json: .int(1)), forKey: "a")
        try prefs.close()
        #expect(fileOwnerAndMode(target)?.uid == geteuid())
    }

    /// A writer maps its own lock file to keep the write lock in it (FileLock); a mapped file that its owner shrinks
    /// faults (SIGBUS) on the next access. So another user's lock file is only ever `flock`ed.
    @Test("a lock file another user planted beside a JSON store is never mapped: shrinking it cannot crash a writer")
    func plantedLockFile() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.json")
        let lock = url.path + ".lock"
        let planted = try await mallory.shell("touch '\(lock)' && chmod 666 '\(lock)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(1, for: .launchCount)
        let shrunk = try await mallory.shell("truncate -s 0 '\(lock)'")
        #expect(shrunk.status == 0, "\(shrunk.stderr)")
        try prefs.set(2, for: .launchCount)
        try prefs.close()
        #expect(try Prefs(.jsonFile(url))[.launchCount] == 2)
        #expect(fileOwnerAndMode(lock)?.uid == mallory.uid, "left as it was")
    }
}
