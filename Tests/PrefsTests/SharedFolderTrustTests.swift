import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The trust rule on every folder above a store or an export (finding 4 of issue 28), and on the files another user
/// plants beside a store in a shared folder (finding 6), with a real second user, `prefs-mallory`.
@Suite(
    "Folders above a store, and files beside it, that another user controls", .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct SharedFolderTrustTests {
    static let value = StoredValue(type: .int, json: .int(1))

    static func storage(_ url: URL) -> Prefs.Storage {
        url.pathExtension == "json" ? .jsonFile(url) : .sqlite(url)
    }

    // MARK: - Folders (finding 4)

    /// `/tmp/qa -> /etc`: the link is in a folder of the path, which only the last component's link was checked for.
    @Test("a link another user planted as a folder of the path is not followed, by a store or an export", arguments: ["json", "sqlite"])
    func linkedFolder(ext: String) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()
        let planted = try await mallory.shell("ln -s '\(victim.url.path)' '\(shared.file("qa").path)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let refusal = PrefsError.untrustedLink(path: shared.file("qa").path, owner: mallory.uid)

        #expect(throws: refusal) { try Prefs(Self.storage(shared.file("qa").appendingPathComponent("store.\(ext)"))) }
        #expect(throws: refusal) { try Prefs(Self.storage(shared.file("qa").appendingPathComponent("sub/store.\(ext)"))) }
        #expect(throws: refusal) { try StoreArchive.write(Data("{}".utf8), to: shared.file("qa").appendingPathComponent("out.json").path) }
        #expect(throws: refusal) { try Prefs.Storage.createFolders(of: shared.file("qa").appendingPathComponent("a/b/store.json").path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [], "created through the link")
    }

    @Test("a folder another user made in a shared folder is not adopted, even one of root's with the link inside it")
    func foreignFolder() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()
        let folder = shared.file("qa")
        let planted = try await mallory.shell(
            "mkdir '\(folder.path)' && chmod 777 '\(folder.path)' && ln -s '\(victim.file("store.json").path)' '\(folder.path)/store.json'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let refusal = PrefsError.untrustedFolder(path: folder.path, owner: mallory.uid, mode: 0o777)
        #expect(throws: refusal) { try Prefs(.jsonFile(folder.appendingPathComponent("store.json"))) }
        #expect(throws: refusal) { try Prefs.Storage.createFolders(of: folder.appendingPathComponent("store.json").path) }
        #expect(throws: refusal) { try StoreArchive.write(Data("{}".utf8), to: folder.appendingPathComponent("out.json").path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [])
        #expect(
            refusal.description.hasSuffix(
                "(owner uid \(mallory.uid), mode 0777): the folders of a store must be owned by root or this user and not writable by others, unless sticky like /tmp"
            ))
    }

    @Test("a folder of root's that others can write without the sticky bit is refused; made sticky, it is a shared folder")
    func writableFolder() throws {
        let own = try TemporaryDirectory()
        let folder = own.file("drop")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        #expect(chmod(folder.path, 0o777) == 0)
        #expect(throws: PrefsError.untrustedFolder(path: folder.path, owner: 0, mode: 0o777)) { try Prefs(.jsonFile(folder.appendingPathComponent("s.json"))) }
        #expect(chmod(folder.path, 0o1777) == 0)
        let prefs = try Prefs(.jsonFile(folder.appendingPathComponent("s.json")))
        try prefs.setStoredValue(Self.value, forKey: "a")
        #expect(fileOwnerAndMode(folder.appendingPathComponent("s.json").path)?.mode == 0o600)
    }

    @Test("a folder its group can write is refused, unless that group is its owner's alone")
    func groupWritableFolder() throws {
        let mallory = try OtherUser.ensure()
        let own = try TemporaryDirectory()
        let mine = own.file("mine")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: false)
        #expect(chmod(mine.path, 0o775) == 0)  // group root: root's own group, as a user's private group under umask 002
        try Prefs(.jsonFile(mine.appendingPathComponent("s.json"))).setStoredValue(Self.value, forKey: "a")
        let team = own.file("team")
        try FileManager.default.createDirectory(at: team, withIntermediateDirectories: false)
        #expect(chown(team.path, 0, mallory.gid) == 0 && chmod(team.path, 0o775) == 0)
        #expect(throws: PrefsError.untrustedFolder(path: team.path, owner: 0, mode: 0o775)) { try Prefs(.jsonFile(team.appendingPathComponent("s.json"))) }
    }

    @Test("createFolders makes each missing folder itself, mode 0700, and checks those that exist")
    func createdFolders() throws {
        let shared = try OtherUser.sharedDirectory()
        let store = shared.file("a/b/store.json").path
        try Prefs.Storage.createFolders(of: store)
        #expect(fileOwnerAndMode(shared.file("a").path)?.mode == 0o700)
        #expect(fileOwnerAndMode(shared.file("a/b").path)?.mode == 0o700)
        try Prefs.Storage.createFolders(of: store)  // existing now: checked, kept
        #expect(fileOwnerAndMode(shared.file("a/b").path).map { [$0.uid, $0.mode] } == [geteuid(), 0o700])
    }

    @Test("XDG_CONFIG_HOME and HOME are used only when no other user can change them")
    func configHome() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()
        let config = shared.file("cfg").path
        let planted = try await mallory.shell("mkdir '\(config)' && ln -s '\(victim.url.path)' '\(config)/prefs'")
        #expect(planted.status == 0, "\(planted.stderr)")

        let hostile = Result { () throws(PrefsError) in try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": config]) }
        #expect(
            hostile.failure
                == .unusableFolder(
                    path: config,
                    reason: "XDG_CONFIG_HOME (\(config)) chose it, and "
                        + PrefsError.untrustedFolder(path: config, owner: mallory.uid, mode: 0o755).description))
        let sharedItself = Result { () throws(PrefsError) in
            try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": shared.url.path])
        }
        #expect(
            sharedItself.failure
                == .unusableFolder(
                    path: shared.url.path,
                    reason: "XDG_CONFIG_HOME (\(shared.url.path)) chose it, and it is a folder other users can write (mode 1777)"))
        let home = Result { () throws(PrefsError) in try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["HOME": shared.url.path]) }
        #expect(
            home.failure
                == .unusableFolder(
                    path: shared.url.path + "/.config",
                    reason: "HOME (\(shared.url.path)) chose it, and \(shared.url.path) is a folder other users can write (mode 1777)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [])

        let own = try TemporaryDirectory()
        #expect(
            try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": own.url.path]).path
                == own.url.path + "/prefs/com.example.app.sqlite")
    }

    // MARK: - Files beside a store (finding 6)

    /// A lock file planted and held with `flock` made every write wait 5 s and fail with a lock timeout.
    @Test("a lock file another user planted and holds in a shared folder fails a write at once, naming its owner")
    func plantedLockFile() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.json")
        let lock = url.path + ".lock"
        // One process, holding the lock on its own descriptor until it is terminated.
        let (holder, out, err) = try mallory.start(
            "touch '\(lock)' && chmod 666 '\(lock)' && exec 9<>'\(lock)' && flock -x 9 && touch '\(lock).held' && exec sleep 30")
        defer { _ = holder.signal(SIGKILL) }
        #expect(await eventually { FileManager.default.fileExists(atPath: lock + ".held") })
        let prefs = try Prefs(.jsonFile(url))
        #expect(throws: PrefsError.untrustedFile(path: lock, owner: mallory.uid)) { try prefs.setStoredValue(Self.value, forKey: "a") }
        #expect(fileOwnerAndMode(url.path) == nil, "nothing written")
        _ = holder.signal(SIGKILL)
        _ = try? await ChildProcess.finish(holder, out, err)
    }

    /// SQLite removed `-wal` and `-shm` when the last connection closed; a link planted there afterwards made every
    /// write fail with `SQLITE_READONLY`.
    @Test("an SQLite store in a shared folder keeps its -wal and -shm, so another user cannot plant them after it closed")
    func sidecarsKept() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.sqlite")
        let first = try Prefs(.sqlite(url))
        try first.setStoredValue(Self.value, forKey: "a")
        try first.close()
        for suffix in ["", "-wal", "-shm"] {
            let file = try #require(fileOwnerAndMode(url.path + suffix), "\(suffix) kept")
            #expect([file.uid, file.mode] == [geteuid(), 0o600], "\(suffix)")
        }
        let planted = try await mallory.shell("ln -s /nonexistent-prefs-target '\(url.path)-wal'; ln -s /nonexistent-prefs-target '\(url.path)-shm'")
        #expect(planted.status != 0, "the names are root's: the links cannot replace them")
        let second = try Prefs(.sqlite(url))
        try second.setStoredValue(StoredValue(type: .int, json: .int(2)), forKey: "a")
        try second.close()
        #expect(try Prefs(.sqlite(url)).storedValue(forKey: "a") == StoredValue(type: .int, json: .int(2)))
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
