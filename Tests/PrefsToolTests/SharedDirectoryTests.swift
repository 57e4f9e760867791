import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

/// A second user, `prefs-mallory`, shares a sticky world-writable directory (like /tmp) with the tool's user, who is
/// root here as in CI. Mallory acts through real child processes running as that account.
@Suite("Another user in a shared directory", .enabled(if: OtherUser.canRun, "needs root to create and become a second user"))
struct SharedDirectoryTests {
    /// A JSON store holding `secret` under many keys (4 MB, so that writing it takes a few milliseconds), in a private
    /// directory; returns its path.
    private func secretStore(_ directory: TemporaryDirectory, secret: String) throws -> String {
        let path = directory.file("private.json").path
        let prefs = try Prefs(.jsonFile(URL(fileURLWithPath: path)))
        try prefs.setStoredValues(
            Dictionary(
                uniqueKeysWithValues: (0..<200).map {
                    ("key\($0)", .some(StoredValue(type: .string, json: .string(secret + String(repeating: "x", count: 20_000)))))
                }))
        try prefs.close()
        return path
    }

    @Test("export: another user polling the shared directory never reads the store, from any file it writes")
    func exportNeverReadable() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let store = try secretStore(own, secret: "SECRET-4711")
        let stop = shared.file("stop").path
        // Opens every file it can as soon as it appears, waits a moment with it open (the writer may chmod meanwhile),
        // then reads it through the open descriptor.
        let (poller, out, err) = try mallory.start(
            """
            cd '\(shared.url.path)' || exit 2
            end=$((SECONDS + 60))
            while [ ! -e stop ] && [ $SECONDS -lt $end ]; do
              for f in .[!.]* *; do
                [ -f "$f" ] || continue
                exec 3<"$f" 2>/dev/null || continue
                for ((i = 0; i < 300; i++)); do :; done
                IFS= read -r -d '' -n 512 content <&3
                exec 3<&-
                case "$content" in *SECRET-4711*) echo "read $f"; exit 0;; esac
              done
            done
            echo clean
            """)
        for round in 0..<10 {
            let export = try await tool("--store", store, "export", shared.file("export.json").path)
            #expect(export.status == 0, "\(export.stderr)")
            #expect(fileOwnerAndMode(shared.file("export.json").path)?.mode == 0o600, "round \(round)")
        }
        #expect(FileManager.default.createFile(atPath: stop, contents: nil))
        let polled = try await ChildProcess.finish(poller, out, err)
        #expect(polled.stdout == "clean\n", "\(polled.stdout)\(polled.stderr)")
    }

    @Test("links planted by another user are not followed: the store, its .lock file, an export's destination")
    func plantedLinks() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let victim = own.file("nologin").path  // think /etc/nologin
        let victimStore = own.file("victim.json").path
        try Data("root's own file\n".utf8).write(to: URL(fileURLWithPath: victimStore))
        let planted = try await mallory.shell(
            """
            cd '\(shared.url.path)' && ln -s '\(victim)' qa.json.lock && ln -s '\(victimStore)' linked.json \
              && ln -s '\(victimStore)' out.json
            """)
        #expect(planted.status == 0, "\(planted.stderr)")

        let lock = try await tool("--store", shared.file("qa.json").path, "set", "a", "1")
        #expect(lock.status == 74)
        #expect(lock.stderr.contains("qa.json.lock: refusing to follow a symbolic link owned by another user (uid \(mallory.uid))"), "\(lock.stderr)")
        #expect(!FileManager.default.fileExists(atPath: victim), "nothing created through the planted .lock link")

        let store = try await tool("--store", shared.file("linked.json").path, "set", "a", "1")
        #expect(store.status == 74)
        #expect(
            store.stderr.contains("linked.json: refusing to follow a symbolic link owned by another user (uid \(mallory.uid))"),
            "\(store.stderr)")
        #expect(try await tool("--store", own.file("mine.json").path, "set", "a", "1").status == 0)
        let export = try await tool("--store", own.file("mine.json").path, "export", shared.file("out.json").path)
        #expect(export.status == 74, "\(export.stderr)")
        #expect(export.stderr.contains("refusing to follow a symbolic link owned by another user"), "\(export.stderr)")
        #expect(try String(contentsOfFile: victimStore, encoding: .utf8) == "root's own file\n")

        // The user's own link in the same directory is followed, as before.
        try FileManager.default.createSymbolicLink(atPath: shared.file("mine.json").path, withDestinationPath: own.file("target.json").path)
        let followed = try await tool("--store", shared.file("mine.json").path, "set", "a", "1")
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(FileManager.default.fileExists(atPath: own.file("target.json").path))
    }

    @Test(
        "-wal and -shm links another user planted beside a new SQLite store: refused by name, and no database is left behind",
        arguments: ["-wal", "-shm"])
    func plantedSQLiteSidecars(suffix: String) async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let store = shared.file("qa.sqlite").path
        let planted = try await mallory.shell("ln -s /nonexistent-prefs-target '\(store)\(suffix)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let set = try await tool("--store", store, "set", "a", "1")
        #expect(set.status == 74)
        #expect(
            set.stderr
                == "prefs-tool: error: \(store)\(suffix): refusing to follow a symbolic link owned by another user (uid \(mallory.uid)); its owner is \(OtherUser.name): remove it as that user or root, or move the store to a folder only you can write\n",
            "\(set.stderr)")
        #expect(fileOwnerAndMode(store) == nil, "no database created")
    }

    @Test("a store another user created with mode 0666 in a shared folder is refused, naming them, and left as it was")
    func foreignStoreRefused() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let store = shared.file("qa.json").path
        let document = #"{"formatVersion": 1, "values": {"feedURL": {"type": "url", "value": "https://evil.example/"}}}"#
        let created = try await mallory.shell("printf '%s' '\(document)' > '\(store)' && chmod 666 '\(store)'")
        #expect(created.status == 0, "\(created.stderr)")
        for arguments in [["set", "secret", "hunter2"], ["get", "feedURL"]] {
            let run = try await tool(["--store", store] + arguments)
            #expect(run.status == 74)
            #expect(
                run.stderr
                    == "prefs-tool: error: \(store): refusing a file owned by another user (uid \(mallory.uid)) in a shared folder; its owner is \(OtherUser.name): remove it as that user or root, or move the store to a folder only you can write\n",
                "\(run.stderr)")
        }
        #expect(fileOwnerAndMode(store).map { [$0.uid, $0.mode] } == [mallory.uid, 0o666])
        #expect(try String(contentsOfFile: store, encoding: .utf8) == document)
        #expect(fileOwnerAndMode(store + ".lock") == nil)
    }

    @Test("demo --store PATH writes no file beside PATH: a messages.json link planted there is left alone")
    func demoWritesOnlyItsOwnFiles() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let own = try TemporaryDirectory()
        let victim = own.file("my-feed.json").path
        try Data("[]\n".utf8).write(to: URL(fileURLWithPath: victim))
        let planted = try await mallory.shell("ln -s '\(victim)' '\(shared.file("messages.json").path)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let demo = try await tool("--store", shared.file("demo.sqlite").path, "demo")
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "[]\n")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: shared.file("messages.json").path)) == victim)
        let feedLine = try #require(demo.stdout.split(separator: "\n").first { $0.contains("feed: file://") })
        #expect(!feedLine.contains(shared.url.path), "\(feedLine)")
    }

    // MARK: - Folders above the store (finding 4 of issue 28)

    @Test("a folder link another user planted: --create-dirs creates nothing where it points, and an export lands nowhere")
    func plantedFolderLink() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()  // think /etc
        let own = try TemporaryDirectory()
        let link = shared.file("qa").path
        let planted = try await mallory.shell("ln -s '\(victim.url.path)' '\(link)'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let refusal = "\(link): refusing to follow a symbolic link owned by another user (uid \(mallory.uid))"

        for store in ["\(link)/x.json", "\(link)/sub/x.sqlite"] {
            let set = try await tool("--store", store, "--create-dirs", "set", "a", "1")
            #expect(set.status == 74, "\(set.stderr)")
            #expect(set.stderr.contains(refusal), "\(set.stderr)")
        }
        #expect(try await tool("--store", own.file("mine.json").path, "set", "a", "1").status == 0)
        let export = try await tool("--store", own.file("mine.json").path, "export", "\(link)/out.json")
        #expect(export.status == 74, "\(export.stderr)")
        #expect(export.stderr.contains(refusal), "\(export.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [], "written through the link")
    }

    @Test("--create-dirs makes each missing folder itself, mode 0700, and never adopts one another user made")
    func createDirectoriesInASharedFolder() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()
        let made = try await tool("--store", shared.file("a/b/x.json").path, "--create-dirs", "set", "a", "1")
        #expect(made.status == 0, "\(made.stderr)")
        for folder in ["a", "a/b"] {
            #expect(fileOwnerAndMode(shared.file(folder).path).map { [$0.uid, $0.mode] } == [geteuid(), 0o700], "\(folder)")
        }

        let theirs = shared.file("m").path
        let planted = try await mallory.shell("mkdir '\(theirs)' && chmod 777 '\(theirs)' && ln -s '\(victim.file("x.json").path)' '\(theirs)/x.json'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let set = try await tool("--store", "\(theirs)/sub/x.json", "--create-dirs", "set", "a", "1")
        #expect(set.status == 74)
        #expect(
            set.stderr.contains("\(theirs): refusing a folder another user could change (owner uid \(mallory.uid), mode 0777)"), "\(set.stderr)")
        #expect(try await tool("--store", "\(theirs)/x.json", "--create-dirs", "set", "a", "1").status == 74)
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [])
        #expect(!FileManager.default.fileExists(atPath: "\(theirs)/sub"))
    }

    @Test("XDG_CONFIG_HOME or HOME in another user's hands: --app and the default store refuse, naming the variable")
    func hostileConfigHome() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let victim = try TemporaryDirectory()
        let config = shared.file("cfg").path
        let planted = try await mallory.shell("mkdir '\(config)' && ln -s '\(victim.url.path)' '\(config)/prefs'")
        #expect(planted.status == 0, "\(planted.stderr)")

        let app = try await tool(["--app", "com.example.app", "set", "a", "1"], environment: ["XDG_CONFIG_HOME": config])
        #expect(app.status == 65)
        #expect(
            app.stderr.contains(
                "\(config): this folder cannot hold a store: XDG_CONFIG_HOME (\(config)) chose it, and \(config): refusing a folder another user could change"
            ), "\(app.stderr)")
        let home = try await tool(["set", "a", "1"], environment: ["XDG_CONFIG_HOME": "", "HOME": shared.url.path])
        #expect(home.status == 65)
        #expect(
            home.stderr.contains("HOME (\(shared.url.path)) chose it, and \(shared.url.path) is a folder other users can write (mode 1777)"), "\(home.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.url.path) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared.url.path) == ["cfg"])
    }
}

@Suite("Store file modes")
struct StoreFileModeTests {
    @Test("a JSON store of one's own keeps its mode on a write, less group and other write bits")
    func ownModeWithoutWriteBits() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("store.json").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        chmod(store, 0o666)
        #expect(try await tool("--store", store, "set", "a", "2").status == 0)
        #expect(fileOwnerAndMode(store)?.mode == 0o644)
        chmod(store, 0o640)
        #expect(try await tool("--store", store, "set", "a", "3").status == 0)
        #expect(fileOwnerAndMode(store)?.mode == 0o640)
    }

    @Test("demo --store PATH leaves the user's own messages.json beside PATH as it was")
    func demoKeepsNeighbours() async throws {
        let directory = try TemporaryDirectory()
        let feed = directory.file("messages.json").path
        try Data("[]\n".utf8).write(to: URL(fileURLWithPath: feed))
        let demo = try await tool("--store", directory.file("demo.sqlite").path, "demo")
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(try String(contentsOfFile: feed, encoding: .utf8) == "[]\n")
    }
}
