import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Files another user puts beside a store in a shared folder before the store made its own (item 4 of issue 43): a
/// `.lock`, `.journal`, `-wal`, `-shm` or `-journal` of theirs locked the owner out of their own store, reads too, with
/// an error that named no user and no way out, while a planted JSON journal was silently replaced when a new store was
/// created. One rule now: the owner still reads, their file is never read, written, replaced or removed, and a write
/// that needs it fails at once, naming the file, its owner and what to do. With a real second user, `prefs-mallory`.
@Suite("Files another user put beside a store in a shared folder", .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct SquatterTests {
    static let one = StoredValue(type: .int, json: .int(1))
    static let two = StoredValue(type: .int, json: .int(2))
    static let planted = "planted by another user\n"
    static let remedy = "its owner is \(OtherUser.name): remove it as that user or root, or move the store to a folder only you can write"

    /// A store at `url` whose lock and busy timeouts are long: a write refused "at once" fails well before them.
    static func storage(_ url: URL, formatVersion: Int? = nil) -> Prefs.Storage {
        url.pathExtension == "json" ? .jsonFile(url, lockTimeout: .seconds(180), formatVersion: formatVersion) : .sqlite(url, busyTimeout: .seconds(180))
    }

    /// Has `mallory` put a file (mode 0666, holding ``planted``) or a link (to /etc/passwd) at `path`.
    static func plant(_ path: String, link: Bool, as mallory: OtherUser) async throws {
        let script = link ? "ln -s /etc/passwd '\(path)'" : "printf '\(planted)' > '\(path)' && chmod 666 '\(path)'"
        let result = try await mallory.shell(script)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Whether the file or link mallory put at `path` is still there, as it was.
    static func untouched(_ path: String, link: Bool, by mallory: OtherUser) -> Bool {
        guard fileOwnerAndMode(path)?.uid == mallory.uid else { return false }
        if link { return (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == "/etc/passwd" }
        return (try? String(contentsOfFile: path, encoding: .utf8)) == planted
    }

    static func refusal(_ path: String, link: Bool, owner: uid_t) -> PrefsError {
        link ? .untrustedLink(path: path, owner: owner) : .untrustedFile(path: path, owner: owner)
    }

    /// Before: every read and write of the store failed with "refusing a file owned by another user (uid 999) in a
    /// shared folder".
    @Test(
        "a side file another user planted beside an existing store: the owner reads, a write fails at once naming them, their file stays; once gone, writes work",
        arguments: ["store.json.lock", "store.json.journal", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal"], [false, true])
    func plantedBesideExistingStore(side: String, link: Bool) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let ext = side.hasPrefix("store.json") ? "json" : "sqlite"
        let url = shared.file("store.\(ext)")
        let first = try Prefs(Self.storage(url))
        try first.setStoredValue(Self.one, forKey: "a")
        try first.close()
        // The store as an earlier release (or someone tidying up) left it, without that side file: SQLite, none.
        for name in ext == "json" ? [side] : ["store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal"] { unlink(shared.file(name).path) }
        let path = shared.file(side).path
        try await Self.plant(path, link: link, as: mallory)

        let prefs = try Prefs(Self.storage(url))
        #expect(try prefs.storedValue(forKey: "a") == Self.one)
        #expect(prefs.diagnostics.map(\.kind).contains(.untrustedFileIgnored(path: path, owner: mallory.uid)), "\(prefs.diagnostics)")
        #expect(
            prefs.diagnostics.contains {
                "\($0)".contains("its owner is \(OtherUser.name), is not read") && "\($0)".contains("remove it as that user or root")
            },
            "\(prefs.diagnostics)")

        let refusal = Self.refusal(path, link: link, owner: mallory.uid)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(throws: refusal) { try prefs.setStoredValue(Self.two, forKey: "a") }
        // Not a timing: a refusal that waited would wait out the 180 s lock or busy timeout; a loaded machine takes seconds.
        #expect(clock.now - started < .seconds(90), "at once, not after the 180 s lock or busy timeout")
        #expect(refusal.description.hasSuffix(Self.remedy), "\(refusal)")
        #expect(Self.untouched(path, link: link, by: mallory))
        #expect(try Prefs(Self.storage(url)).storedValue(forKey: "a") == Self.one, "nothing written")

        let removed = try await mallory.shell("rm '\(path)'")
        #expect(removed.status == 0, "\(removed.stderr)")
        try prefs.setStoredValue(Self.two, forKey: "a")  // the same store, once the file is gone
        try prefs.close()
        #expect(try Prefs(Self.storage(url)).storedValue(forKey: "a") == Self.two)
    }

    /// Before: a store opened before the journal was planted replaced it with its own at its first write (as root).
    @Test(
        "a side file another user planted where a new store's goes is refused at the first write, not replaced, and no store is created",
        // An SQLite store opened before holds its side files already: only one opened after.
        arguments: [
            ("new.json.journal", false), ("new.json.journal", true), ("new.json.lock", false), ("new.json.lock", true),
            ("new.sqlite-wal", false), ("new.sqlite-shm", false), ("new.sqlite-journal", false),
        ])
    func plantedBeforeCreation(side: String, openedFirst: Bool) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file(side.hasPrefix("new.json") ? "new.json" : "new.sqlite")
        let path = shared.file(side).path
        let early = openedFirst ? try Prefs(Self.storage(url)) : nil
        try await Self.plant(path, link: false, as: mallory)
        let write = Result { () throws(PrefsError) in
            let prefs = if let early { early } else { try Prefs(Self.storage(url)) }
            try prefs.setStoredValue(Self.one, forKey: "a")
        }
        #expect(throws: PrefsError.untrustedFile(path: path, owner: mallory.uid)) { try write.get() }
        #expect(Self.untouched(path, link: false, by: mallory))
        #expect(fileOwnerAndMode(url.path) == nil, "no store file")
    }

    @Test("a store in a shared folder holds every side file from its first write: nobody can put one there afterwards", arguments: ["json", "sqlite"])
    func sideFilesHeld(ext: String) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.\(ext)")
        let prefs = try Prefs(Self.storage(url))
        try prefs.setStoredValue(Self.one, forKey: "a")
        try prefs.close()
        for suffix in ext == "json" ? [".lock", ".journal"] : ["-wal", "-shm", "-journal"] {
            let path = url.path + suffix
            #expect(fileOwnerAndMode(path).map { [$0.uid, $0.mode] } == [geteuid(), 0o600], "\(suffix) held")
            let planted = try await mallory.shell("ln -s /etc/passwd '\(path)' || printf x > '\(path)'")
            #expect(planted.status != 0, "\(suffix): the name is taken")
        }
        #expect(try Prefs(Self.storage(url)).storedValue(forKey: "a") == Self.one)
    }

    /// A writer open since before the journal was planted holds writes in its WAL, which the database file alone does
    /// not have: the store cannot be read without the rollback-journal check SQLite would make on their file.
    @Test("an SQLite store whose WAL holds writes is refused beside another user's -journal, naming it; readable again once its writer closed")
    func walWithWritesBesidePlantedJournal() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.sqlite")
        let writer = try Prefs(Self.storage(url))
        try writer.setStoredValue(Self.one, forKey: "a")
        unlink(url.path + "-journal")  // as an earlier release left it
        let path = url.path + "-journal"
        try await Self.plant(path, link: false, as: mallory)
        #expect(throws: PrefsError.untrustedFile(path: path, owner: mallory.uid)) { try Prefs(Self.storage(url)) }
        try writer.setStoredValue(Self.two, forKey: "a")  // its connection was open before: SQLite in WAL mode never reads the journal
        try writer.close()  // checkpoints, and empties the WAL
        #expect(try Prefs(Self.storage(url)).storedValue(forKey: "a") == Self.two)
        #expect(Self.untouched(path, link: false, by: mallory))
    }

    /// Before: a write in format 1 removed the journal beside the file, whoever's it was (as root, it could).
    @Test("a JSON store in format 1 writes beside another user's journal, which it needs not, and leaves it")
    func formatOneBesidePlantedJournal() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let url = shared.file("store.json")
        let first = try Prefs(Self.storage(url, formatVersion: 1))
        try first.setStoredValue(Self.one, forKey: "a")
        try first.close()
        let path = url.path + ".journal"
        try await Self.plant(path, link: false, as: mallory)
        let prefs = try Prefs(Self.storage(url, formatVersion: 1))
        try prefs.setStoredValue(Self.two, forKey: "a")
        try prefs.close()
        #expect(Self.untouched(path, link: false, by: mallory))
        #expect(try Prefs(Self.storage(url, formatVersion: 1)).storedValue(forKey: "a") == Self.two)
    }
}

@Suite("Errors about another user's files name them")
struct OwnerNameTests {
    @Test("an untrusted file or link names its owner by name, or by uid alone when the user database has none, and what to do")
    func ownerNamed() {
        let remedy = "remove it as that user or root, or move the store to a folder only you can write"
        #expect(
            PrefsError.untrustedFile(path: "/tmp/s.json.lock", owner: 0).description
                == "/tmp/s.json.lock: refusing a file owned by another user (uid 0) in a shared folder; its owner is root: \(remedy)")
        #expect(
            PrefsError.untrustedLink(path: "/tmp/s.json", owner: 3_999_999).description
                == "/tmp/s.json: refusing to follow a symbolic link owned by another user (uid 3999999): \(remedy)")
    }
}
