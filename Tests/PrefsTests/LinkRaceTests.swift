import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Another user (`prefs-mallory`, a real second account) swaps what is at a name in a shared sticky directory in a
/// tight loop while root, the victim, runs a few hundred operations on that name. Nothing outside the intended
/// directory may be created, replaced or read, whatever the timing: each test passes every time, and each failed
/// before paths were resolved once through directory descriptors (the counts are in the test's comment).
@Suite(
    "Races against another user in a shared directory", .serialized,
    .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct LinkRaceTests {
    /// `name` in `directory`, reached by a path whose every lookup takes long, as the attacker of issue 28 made root's to
    /// widen its windows: 150 times `d/../` through a folder `d`, then a chain of 30 links (`c0 -> c1`, …, `c29 -> .`).
    /// The folder and the links are root's own, so the rule follows them.
    static func slowPath(in directory: URL, to name: String) throws -> String {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("d"), withIntermediateDirectories: false)
        for index in 0..<30 {
            let target = index == 29 ? "." : "c\(index + 1)"
            try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("c\(index)").path, withDestinationPath: target)
        }
        return directory.path + "/" + String(repeating: "d/../", count: 150) + "c0/" + name
    }

    /// Runs `body` up to `attempts` times, for about `seconds`, and at least `minimum` times unless a minute passes (a
    /// slow machine, ThreadSanitizer: the race is tried as often wherever it runs); returns how many times it ran. Real
    /// time is the point: the other user's process swaps the name meanwhile.
    @discardableResult
    static func repeatedly(_ attempts: Int = 3000, seconds: Double = 2, minimum: Int = 60, _ body: () -> Void) -> Int {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int64(seconds * 1000))
        let limit = clock.now + .seconds(60)
        var count = 0
        while count < attempts, clock.now < end || (count < minimum && clock.now < limit) {
            body()
            count += 1
        }
        return count
    }

    /// Removes what root (this process) left at `names` in `directory`, so that the other user can go on swapping (in a
    /// sticky directory they cannot replace root's files).
    static func removeOwnFiles(in directory: URL, _ names: [String]) {
        for name in names {
            let path = directory.appendingPathComponent(name).path
            if fileOwnerAndMode(path)?.uid == geteuid() { unlink(path) }
        }
    }

    /// The device, inode and bytes of the file at `path` (links not followed).
    static func fingerprint(_ path: String) -> [UInt64]? {
        var info = stat()
        guard lstat(path, &info) == 0, let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino), UInt64(info.st_mode)] + data.map(UInt64.init)
    }

    static let secret = Data(#"{"formatVersion": 1, "values": {"token": {"type": "string", "value": "SECRET-TOKEN-4711"}}}"#.utf8)

    /// Finding 1 of issue 28: `readlink`, then `lstat` of the same name. The other user flips the name between a plain
    /// file and a link to root's file; root's export replaced that file in 2 to 37 attempts (here: every run of 300).
    @Test("export to a name flipped between a plain file and a link to root's file never replaces that file")
    func exportThroughAFlippedName() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let victim = own.file("passwd").path
        try Data("root's own file\n".utf8).write(to: URL(fileURLWithPath: victim))
        let before = Self.fingerprint(victim)
        let path = try Self.slowPath(in: shared.url, to: "X")
        let swapper = try await LinkSwapper.start(as: mallory, in: shared.url, name: "X", entries: [.file, .link(to: victim)], exchange: true)
        let attempts = Self.repeatedly {
            try? StoreArchive.write(Self.secret, to: path)
            Self.removeOwnFiles(in: shared.url, ["X"])
        }
        let swaps = try await swapper.stop()
        #expect(swaps > 0 && attempts > 50, "\(swaps) swaps against \(attempts) exports")
        #expect(Self.fingerprint(victim) == before, "root's file was replaced")
        #expect(try FileManager.default.contentsOfDirectory(atPath: own.url.path) == ["passwd"])
    }

    /// Finding 1 of issue 28, for a store: root's `--store /tmp/X.json set` created a file and its `.lock` where the
    /// link pointed, in 2 to 48 attempts (here: every run of 300).
    @Test("a JSON store at a name flipped between a plain file and a link creates nothing where the link points")
    func storeThroughAFlippedName() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let swapper = try await LinkSwapper.start(
            as: mallory, in: shared.url, name: "X.json", entries: [.file, .link(to: own.file("victim.json").path)], exchange: true)
        let url = URL(fileURLWithPath: try Self.slowPath(in: shared.url, to: "X.json"))
        let attempts = Self.repeatedly {
            if let prefs = try? Prefs(.jsonFile(url, lockTimeout: .milliseconds(200))) {
                try? prefs.setStoredValue(StoredValue(type: .int, json: .int(1)), forKey: "a")
                try? prefs.close()
            }
            Self.removeOwnFiles(in: shared.url, ["X.json", "X.json.lock", "X.json.journal"])
        }
        let swaps = try await swapper.stop()
        #expect(swaps > 0 && attempts > 50, "\(swaps) swaps against \(attempts) opens")
        #expect(try FileManager.default.contentsOfDirectory(atPath: own.url.path) == [], "created through the link")
    }

    /// Finding 2 of issue 28: the path was checked, `stat`ed, then opened by name again. The other user exchanges
    /// (`RENAME_EXCHANGE`) a link to a device like /dev/null and a hard link to her own file; root wrote the export into
    /// her file in 6 to 53 attempts. The device is a node of the test's own (`mknod`, as /dev/null), since the race can
    /// replace it too.
    @Test("export to a name exchanged between a link to a device and the other user's file never writes into her file")
    func exportIntoTheOtherUsersFile() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let device = own.file("null").path
        try #require(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // 1, 3: /dev/null
        let before = Self.fingerprint(device)
        let mine = shared.file("mine").path
        let made = try await mallory.shell("touch '\(mine)' && chmod 644 '\(mine)'")
        #expect(made.status == 0, "\(made.stderr)")
        let path = try Self.slowPath(in: shared.url, to: "X")
        let swapper = try await LinkSwapper.start(
            as: mallory, in: shared.url, name: "X", entries: [.hardLink(to: mine), .link(to: device)], exchange: true)
        let attempts = Self.repeatedly {
            try? StoreArchive.write(Self.secret, to: path)
            Self.removeOwnFiles(in: shared.url, ["X"])
        }
        let swaps = try await swapper.stop()
        #expect(swaps > 0 && attempts > 50, "\(swaps) swaps against \(attempts) exports")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mine)).isEmpty, "the export was written into the other user's file")
        #expect(Self.fingerprint(device) == before, "the device was replaced")
        #expect(try FileManager.default.contentsOfDirectory(atPath: own.url.path) == ["null"])
    }

    /// Finding 3 of issue 28: links were checked when the store opened only. Once root's store was open, the other user
    /// put a link to her own document at the store's name, and root's store then held her values (every time).
    @Test("a link planted at a JSON store's name after it opened is not followed: the store never holds the other user's values")
    func linkPlantedAfterOpening() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("X.json")
        let prefs = try Prefs(.jsonFile(url))
        let hers = shared.file("hers.json").path
        let document = #"{"formatVersion": 1, "values": {"feedURL": {"type": "url", "value": "https://evil.example/feed.json"}}}"#
        let planted = try await mallory.shell("printf '%s' '\(document)' > '\(hers)' && ln -s '\(hers)' '\(url.path)'")
        #expect(planted.status == 0, "\(planted.stderr)")

        #expect(throws: PrefsError.untrustedLink(path: url.path, owner: mallory.uid)) {
            try prefs.setStoredValue(StoredValue(type: .int, json: .int(1)), forKey: "a")
        }
        #expect(throws: PrefsError.untrustedLink(path: url.path, owner: mallory.uid)) { try prefs.refresh() }
        #expect(try prefs.snapshot()["feedURL"] == nil)
        #expect(try String(contentsOfFile: hers, encoding: .utf8) == document)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) == hers, "left as it was")
    }
}

/// A store never follows a link put at its name after it opened, whoever put it there: what it reads and writes
/// stays in the folder it opened, and the change is reported.
@Suite("A store's name swapped after it opened")
struct SwappedStoreNameTests {
    @Test("a JSON store whose file is replaced by a link reports it and does not read through it")
    func jsonStoreReplacedByALink() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.json")
        let log = DiagnosticLog()
        let prefs = try Prefs(.jsonFile(url)) { log.append($0) }
        try prefs.setStoredValue(StoredValue(type: .int, json: .int(1)), forKey: "a")
        let other = directory.file("other.json")
        try Data(#"{"formatVersion": 1, "values": {"b": {"type": "int", "value": 2}}}"#.utf8).write(to: other)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: other)

        let error = #expect(throws: PrefsError.self) { try prefs.refresh() }
        let swapped = PrefsError.io(path: url.path, operation: "open (a symbolic link stands at this name; not followed)", errno: ELOOP)
        #expect(error == swapped)
        prefs.refreshReportingErrors()  // what polling does: a diagnostic, not a throw
        #expect(log.all.map(\.kind) == [.refreshFailed(swapped, during: nil)])
        #expect(try prefs.snapshot()["b"] == nil)
        #expect(throws: PrefsError.self) { try prefs.setStoredValue(StoredValue(type: .int, json: .int(3)), forKey: "c") }
        #expect(try String(contentsOf: other, encoding: .utf8).contains(#""b""#))
        #expect(try !String(contentsOf: other, encoding: .utf8).contains(#""c""#), "written through the link")
    }
}
