import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// The library's side of the symlink policy (the tool's is in PrefsToolTests): a link another user planted in a
/// sticky world-writable directory is never followed, whatever `fs.protected_symlinks` says. And a lock file another
/// user planted is refused.
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

        // Not sticky but writable by all: the folder itself is refused, since anyone could replace what is in it.
        chmod(shared.url.path, 0o777)
        #expect(throws: PrefsError.untrustedFolder(path: shared.url.path, owner: 0, mode: 0o777)) { try Prefs(storage) }
        #expect(fileOwnerAndMode(target) == nil)

        // This user's own link, in a folder only root and this user can write, is followed.
        let mine = own.file("mine.\(ext)")
        try FileManager.default.createSymbolicLink(atPath: mine.path, withDestinationPath: target)
        let prefs = try Prefs(ext == "json" ? .jsonFile(mine) : .sqlite(mine))
        try prefs.setStoredValue(StoredValue(type: .int, json: .int(1)), forKey: "a")
        try prefs.close()
        #expect(fileOwnerAndMode(target)?.uid == geteuid())
    }

    /// A writer maps its own lock file to keep the write lock in it (FileLock); a mapped file that its owner shrinks
    /// faults (SIGBUS) on the next access, and another user's lock file could be held for ever. So a lock file another
    /// user planted in a shared folder is refused, naming them, and never opened for locking.
    @Test("a lock file another user planted beside a JSON store is refused, naming its owner, and left as it was")
    func plantedLockFile() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.json")
        let lock = url.path + ".lock"
        let planted = try await mallory.shell("touch '\(lock)' && chmod 666 '\(lock)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let prefs = try Prefs(.jsonFile(url))
        #expect(throws: PrefsError.untrustedFile(path: lock, owner: mallory.uid)) { try prefs.set(1, for: .launchCount) }
        #expect(fileOwnerAndMode(url.path) == nil, "nothing written")
        #expect(fileOwnerAndMode(lock).map { [$0.uid, $0.mode] } == [mallory.uid, 0o666], "left as it was")
        #expect(try Data(contentsOf: URL(fileURLWithPath: lock)).isEmpty)
    }
}
