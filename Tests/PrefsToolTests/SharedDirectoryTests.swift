import Foundation
import TestFixtures
@_spi(Tooling) import Prefs
@_spi(Harness) import PrefsTestSupport
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
        #expect(lock.stderr.contains("qa.json.lock: open lock file failed"), "\(lock.stderr)")
        #expect(!FileManager.default.fileExists(atPath: victim), "nothing created through the planted .lock link")

        let store = try await tool("--store", shared.file("linked.json").path, "set", "a", "1")
        #expect(store.status == 74)
        #expect(
            store.stderr.contains("linked.json: refusing to follow a symbolic link owned by another user (uid \(mallory.uid)) in a shared sticky directory"),
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
                == "prefs-tool: error: \(store)\(suffix): open (a symbolic link, which SQLite does not follow) failed: Too many levels of symbolic links (errno 40)\n",
            "\(set.stderr)")
        #expect(fileOwnerAndMode(store) == nil, "no database created")
    }

    @Test("a store another user created with mode 0666 becomes the writer's own, mode 0600, which they can no longer edit")
    func foreignModeNotKept() async throws {
        let mallory = try OtherUser.ensure()
        let shared = try OtherUser.sharedDirectory()
        let store = shared.file("qa.json").path
        let created = try await mallory.shell(#"printf '{"formatVersion": 1, "values": {}}' > '"# + store + "' && chmod 666 '\(store)'")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(fileOwnerAndMode(store)?.mode == 0o666)
        let set = try await tool("--store", store, "set", "secret", "hunter2")
        #expect(set.status == 0, "\(set.stderr)")
        let after = try #require(fileOwnerAndMode(store))
        #expect(after.uid == geteuid())
        #expect(after.mode == 0o600)
        let edit = try await mallory.shell("printf '{}' > '\(store)'")
        #expect(edit.status != 0, "mallory could still write the store")
        #expect(try await tool("--store", store, "get", "secret").stdout == "hunter2\n")
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
