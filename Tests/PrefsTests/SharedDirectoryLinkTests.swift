import Foundation
@_spi(Tooling) import Prefs
import PrefsTestSupport
import Testing

/// The library's side of the symlink policy (the tool's is in PrefsToolTests): a link another user planted in a
/// sticky world-writable directory is never followed, whatever `fs.protected_symlinks` says.
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
}
