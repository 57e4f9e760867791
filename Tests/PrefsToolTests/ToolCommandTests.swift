import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("prefs-tool: usage, transfer, watch, check, dialogs")
struct ToolCommandTests {
    @Test("--version prints the latest release that CHANGELOG.md records")
    func versionMatchesChangelog() async throws {
        let changelog = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../CHANGELOG.md"),
            encoding: .utf8)
        // The first release heading below "Unreleased": `## [0.2.0] - 2026-12-02` or `## 0.2.0 - 2026-12-02`.
        let releases = changelog.split(separator: "\n").compactMap { $0.prefixMatch(of: #/## \[?(\d+\.\d+\.\d+)\]?/#)?.output.1 }
        let latest = String(try #require(releases.first, "CHANGELOG.md records no release"))
        #expect(try await tool("--version").stdout == "prefs-tool \(latest)\n")
        #expect(Release.version == latest)
    }

    @Test("help goes to stdout with exit 0; a typo gets a did-you-mean, a usage line and exit 64")
    func usage() async throws {
        let help = try await tool("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: prefs-tool [--store PATH | --app ID] COMMAND"))
        #expect(help.stderr.isEmpty)
        #expect(try await tool("help", "reset").stdout.hasPrefix("usage: prefs-tool [--store PATH] reset KEY… | --all\n"))
        #expect(try await tool("reset", "--help").status == 0)
        let typo = try await tool("rest", "lastMessageId")
        #expect(typo.status == 64)
        #expect(typo.stdout.isEmpty)
        #expect(
            typo.stderr
                == "prefs-tool: error: unknown command 'rest'; did you mean 'reset'?\nusage: prefs-tool [--store PATH | --app ID] COMMAND [ARGUMENTS…]\n(see 'prefs-tool help')\n"
        )
        let option = try await tool("list", "--jsn")
        #expect(option.status == 64)
        #expect(
            option.stderr
                == "prefs-tool: error: unknown option '--jsn' for 'list'; did you mean '--json'?\nusage: prefs-tool [--store PATH] list [PATTERN…] [--json] [--arguments ARGS]\n"
        )
        #expect(try await tool().status == 64)
        #expect(try await tool("--stor", "x", "list").stderr.hasPrefix("prefs-tool: error: unknown option '--stor'; did you mean '--store'?\n"))
        #expect(try await tool("help", "help").stdout.hasPrefix("prefs-tool: inspect and reset"))
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        #expect(
            try await tool("--store", store, "set", "x", "1", "--type", "integer").stderr
                .hasPrefix(
                    "prefs-tool: error: unknown type 'integer'; did you mean 'int'? (types: bool, int, uint, double, string, date, data, url, json, [T], [string: T])\n"
                ))
        #expect(try await tool("--store", store, "--", "set", "x", "1").status == 0, "'--' before the command ends the global options")
        for empty in [["--store=", "set", "x", "1"], ["--store", "", "list"]] {
            let refused = try await tool(empty)
            #expect(refused.status == 64, "\(empty)")
            #expect(refused.stderr.hasPrefix("prefs-tool: error: option '--store' needs a path, not an empty value\n"), "\(refused.stderr)")
        }
        #expect(try await tool("get").status == 64)
    }

    @Test("-- ends options: a key that starts with a dash")
    func doubleDash() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        #expect(try await tool("--store", store, "set", "--", "-odd", "1").status == 0)
        #expect(try await tool("--store", store, "get", "--", "-odd").stdout == "1\n")
    }

    @Test("a value that starts with '-' is a usage error that shows how to pass it with '--'")
    func negativeValueHint() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        let refused = try await tool("--store", store, "set", "n", "-x")
        #expect(refused.status == 64)
        #expect(
            refused.stderr == """
                prefs-tool: error: unknown option '-x' (to pass a value that starts with '-', put '--' before it: set n -- -x)
                usage: prefs-tool [--store PATH] set KEY VALUE [--type TYPE]

                """)
        #expect(!FileManager.default.fileExists(atPath: store), "nothing written")
        // A negative number where a value is expected is the value, as in git config.
        #expect(try await tool("--store", store, "set", "m", "-5").status == 0)
        #expect(try await tool("--store", store, "set", "d", "-0.25", "--type", "double").status == 0)
        #expect(try await tool("--store", store, "get", "m", "--json").stdout == "-5\n")
        #expect(try await tool("--store", store, "get", "d").stdout == "-0.25\n")
        #expect(try await tool("--store", store, "set", "d", "-inf", "--type", "double").status == 0)
        let quoted = try await tool("--store", store, "set", "a b", "-x y")
        #expect(
            quoted.stderr.hasPrefix(
                "prefs-tool: error: unknown option '-x y' (to pass a value that starts with '-', put '--' before it: set 'a b' -- '-x y')\n"),
            "\(quoted.stderr)")
        #expect(try await tool("--store", store, "set", "n", "--", "-5").status == 0)
        #expect(try await tool("--store", store, "get", "n").stdout == "-5\n")
        let noRoom = try await tool("--store", store, "get", "n", "-j")
        #expect(noRoom.stderr.hasPrefix("prefs-tool: error: unknown option '-j'\n"), "no hint when no value is expected: \(noRoom.stderr)")
    }

    @Test("export then import round-trips every type; a bad document exits 65 and changes nothing", arguments: StoreFile.allCases)
    func exportImport(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let source = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: source)))
        let when = Date(timeIntervalSinceReferenceDate: 123.456)
        try prefs.set(when, for: Prefs.Key("when", initial: Date()))
        try prefs.set(Data([0, 1, 2]), for: Prefs.Key("blob", initial: Data()))
        try prefs.set(["a": [1, 2]], for: Prefs.Key("nested", initial: [String: [Int]]()))
        let exported = try await tool("--store", source, "export")
        #expect(exported.status == 0)
        let target = directory.file("copy.sqlite").path
        let imported = try await tool(["--store", target, "import", "-"], stdin: exported.stdout)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Prefs(.sqlite(URL(fileURLWithPath: target))).snapshot() == prefs.snapshot())

        let file = directory.file("export.json").path
        #expect(try await tool("--store", source, "export", file).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == exported.stdout)

        let bad = #"{"formatVersion": 1, "values": {"ok": {"type": "int", "value": 1}, "bad": {"type": "int", "value": "x"}}}"#
        let refused = try await tool(["--store", target, "import", "-"], stdin: bad)
        #expect(refused.status == 65)
        #expect(refused.stderr == "prefs-tool: error: <stdin>: $.values.bad.value: type int: expected an integer, found string\n")
        #expect(try Prefs(.sqlite(URL(fileURLWithPath: target))).storedValue(forKey: "ok") == nil, "all or nothing")
    }

    @Test("export and import refuse the store itself, by any path, and its sidecars (exit 64, nothing written)", arguments: StoreFile.allCases)
    func exportOntoStore(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0))
        try prefs.set(true, for: Prefs.Key("dialog_neverAgain", initial: false))
        try prefs.close()
        let name = URL(fileURLWithPath: store).lastPathComponent
        try FileManager.default.createSymbolicLink(atPath: directory.file("link").path, withDestinationPath: name)
        try FileManager.default.linkItem(atPath: store, toPath: directory.file("hard").path)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        for destination in [store, directory.url.path + "/./" + name, "link", "hard", "\(name)-wal", "\(name)-shm", "\(name)-journal", "\(name).lock"] {
            let result = try await tool(["--store", store, "export", destination.hasPrefix("/") ? destination : directory.file(destination).path])
            #expect(result.status == 64, "\(destination): \(result)")
            #expect(result.stderr.hasPrefix("prefs-tool: error: refusing to export to "), "\(result.stderr)")
            #expect(result.stderr.contains("it is the store"), "\(result.stderr)")
        }
        let itself = try await tool("--store", store, "export", store)
        #expect(itself.stderr.hasPrefix("prefs-tool: error: refusing to export to \(store): it is the store itself (\(store)); nothing was written\n"))
        let viaLink = try await tool("--store", directory.file("link").path, "export", store)
        #expect(viaLink.status == 64, "a store named by a link: \(viaLink)")
        for arguments in [["import", store], ["import", "--plist", directory.file("hard").path]] {
            let imported = try await tool(["--store", store] + arguments)
            #expect(imported.status == 64, "\(arguments): \(imported)")
            #expect(imported.stderr.hasPrefix("prefs-tool: error: refusing to import from "), "\(imported.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == listing)
        #expect(try await tool("--store", store, "list").stdout == "dialog_neverAgain\tbool\ttrue\nlastMessageId\tint\t0\t(initial)\n")
    }

    @Test("export and migrate refuse a store holding a value that does not fit its type: an export must import back")
    func exportUnreadableValue() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        try Data(#"{"formatVersion": 1, "values": {"bad": {"type": "int", "value": "x"}, "ok": {"type": "int", "value": 1}}}"#.utf8)
            .write(to: URL(fileURLWithPath: store))
        let exported = try await tool("--store", store, "export", directory.file("e.json").path)
        #expect(exported.status == 65)
        #expect(exported.stderr == "prefs-tool: error: \(store): $.values.bad.value: type int: expected an integer, found string\n", "\(exported.stderr)")
        let migrated = try await tool("--store", store, "migrate", "--to", directory.file("m.sqlite").path)
        #expect(migrated.status == 65, "\(migrated)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["s.json"], "nothing written")
    }

    @Test("export to a symbolic link writes through: the link stays and its target gets the document")
    func exportThroughLink() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        try FileManager.default.createDirectory(at: directory.file("exports"), withIntermediateDirectories: false)
        let target = directory.file("exports/latest.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = directory.file("latest.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "exports/latest.json")
        #expect(try await tool("--store", store, "export", link).status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "exports/latest.json", "the link stays")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == (try await tool("--store", store, "export")).stdout)
        let dangling = directory.file("new.json").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "exports/new.json")
        #expect(try await tool("--store", store, "export", dangling).status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("exports/new.json").path), "a dangling link's target is created")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dangling) == "exports/new.json")
    }

    @Test("export to /dev/stdout or a FIFO of one's own writes in place, as a shell's > does")
    func exportToStreams() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        let expected = try await tool("--store", store, "export").stdout
        // The tool's stdout is a pipe here: /dev/stdout leads to it.
        let toStdout = try await tool("--store", store, "export", "/dev/stdout")
        #expect(toStdout.status == 0, "\(toStdout)")
        #expect(toStdout.stdout == expected)
        // (Not /dev/null: run as root, the old code renamed a regular file over it.)
        let fifo = directory.file("fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        // A reader from the start, so the tool's open does not wait; it reads once the tool has exited (the document
        // is far below a pipe's 64 KiB). Had the tool replaced the FIFO instead, this descriptor would read nothing.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let toFIFO = try await tool("--store", store, "export", fifo)
        #expect(toFIFO.status == 0, "\(toFIFO)")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case let count = read(reader, &buffer, buffer.count), count > 0 { received += buffer[0..<count] }
        #expect(String(decoding: received, as: UTF8.self) == expected, "the FIFO's reader gets the document")
    }

    @Test("import --plist reads a binary property list; a file that is not one exits 65 and changes nothing", arguments: StoreFile.allCases)
    func importPlist(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let plist = directory.file("com.example.app.plist")
        let defaults: [String: Any] = ["lastMessageId": 3, "UserHasSeenMsg": true, "when": Date(timeIntervalSince1970: 0)]
        try PropertyListSerialization.data(fromPropertyList: defaults, format: .binary, options: 0).write(to: plist)
        let result = try await tool("--store", store, "import", "--plist", plist.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "imported 3 values from \(plist.path)\n")
        #expect(try await tool("--store", store, "list").stdout == "UserHasSeenMsg\tbool\ttrue\nlastMessageId\tint\t3\nwhen\tdate\t1970-01-01T00:00:00Z\n")
        let garbage = directory.file("garbage.plist")
        try Data("not a plist at all".utf8).write(to: garbage)
        let before = try await tool("--store", store, "export").stdout
        let refused = try await tool("--store", store, "import", "--plist", garbage.path)
        #expect(refused.status == 65)
        #expect(refused.stderr.hasPrefix("prefs-tool: error: \(garbage.path): not a property list"))
        #expect(try await tool("--store", store, "export").stdout == before)
    }

    @Test("migrate copies values and declarations to another backend; the source is untouched; conflicts refuse")
    func migrate() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("a.json").path
        let prefs = try Prefs(.jsonFile(URL(fileURLWithPath: source)))
        try prefs.set(3, for: Prefs.Key("lastMessageId", initial: 0))
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let target = directory.file("b.sqlite").path
        let result = try await tool("--store", source, "migrate", "--to", target)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "copied 1 value and 1 declaration to \(target)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
        let copy = try Prefs(.sqlite(URL(fileURLWithPath: target)))
        #expect(copy[Prefs.Key("lastMessageId", initial: 0)] == 3)
        #expect(try copy.declaredKeys()["lastMessageId"] == KeyDeclaration(type: .int, initial: .int(0)))
        try copy.set(4, for: Prefs.Key("lastMessageId", initial: 0))
        let conflict = try await tool("--store", source, "migrate", "--to", target)
        #expect(conflict.status == 65)
        #expect(try await tool("--store", source, "migrate", "--to", target, "--overwrite").status == 0)
    }

    @Test("migrate --to the source store itself, by another path, or to one of its files exits 64 and writes nothing", arguments: StoreFile.allCases)
    func migrateOntoSource(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        try FileManager.default.createSymbolicLink(atPath: directory.file("link").path, withDestinationPath: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        for target in [store, directory.file("link").path, store + "-wal", store + ".lock"] {
            let result = try await tool("--store", store, "migrate", "--to", target)
            #expect(result.status == 64, "\(target): \(result)")
            #expect(result.stderr.hasPrefix("prefs-tool: error: refusing to migrate to \(target): it is the source store"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == listing)
    }

    @Test("a migrate that fails leaves no new target store behind, and an existing target as it was", arguments: ["new/deeper/t.sqlite", "new/t.json"])
    func migrateFailureLeavesNothing(target: String) async throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("big.json").path
        // A hand-edited store can hold a value over the 1 MiB limit, which no store accepts as a write.
        let big = String(repeating: "x", count: Prefs.maximumValueBytes + 10)
        try Data(#"{"formatVersion": 1, "values": {"ok": {"type": "int", "value": 1}, "big": {"type": "string", "value": "\#(big)"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: source))
        let refused = try await tool("--store", source, "--create-dirs", "migrate", "--to", directory.file(target).path)
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("the limit is"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["big.json"], "no target, no directory")

        let existing = directory.file("existing.sqlite").path
        #expect(try await tool("--store", existing, "set", "keep", "1").status == 0)
        #expect(try await tool("--store", source, "migrate", "--to", existing).status == 65)
        #expect(try await tool("--store", existing, "list").stdout == "keep\tint\t1\n")
    }

    @Test("check passes a sound store and names a value of the wrong shape", arguments: StoreFile.allCases)
    func check(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.set(1, for: Prefs.Key("n", initial: 0))
        let ok = try await tool("--store", store, "check")
        #expect(ok.status == 0)
        #expect(ok.stdout == "ok: \(store) (1 value)\n")
        try prefs.setStoredValue(StoredValue(type: .date, json: .string("yesterday")), forKey: "when")
        let bad = try await tool("--store", store, "check")
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("type date: \"yesterday\" is not an ISO-8601 date"), "\(bad.stderr)")
    }

    @Test("watch prints each change made by another process")
    func watch() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("w.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        try prefs.set(1, for: Prefs.Key("a", initial: 0))
        var environment = ProcessInfo.processInfo.environment
        environment["PREFS_STORE"] = store
        let (process, out, err) = try ChildProcess.start("prefs-tool", ["watch", "a", "--interval", "20"], environment: environment)
        defer { process.signal(SIGKILL) }  // a failed wait leaves no watcher behind (no-op once reaped)
        // Each step waits for the line that shows watch saw the previous one: "watching …" once it has read the
        // store, then each change's own line, so no change can fall before watch starts or merge into the next.
        _ = try await ChildProcess.read(err.fileHandleForReading) { $0.hasPrefix("watching ") }
        try prefs.set(2, for: Prefs.Key("a", initial: 0))
        try prefs.set(9, for: Prefs.Key("other", initial: 0))
        var printed = try await ChildProcess.read(out.fileHandleForReading) { $0.hasSuffix("\ta\tint\t2\t(was 1)") }
        try prefs.reset(Prefs.Key("a", initial: 0))
        printed += try await ChildProcess.read(out.fileHandleForReading) { $0.hasSuffix("\ta\tint\t(reset)\t(was 2)") }
        kill(process.processIdentifier, SIGINT)  // Ctrl-C
        let result = try await ChildProcess.finish(process, out, err)
        // TIME<TAB>KEY<TAB>TYPE<TAB>VALUE<TAB>(was OLD), the time in UTC to the millisecond.
        let lines = (printed + result.stdout).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(lines.map { Array($0.dropFirst()) } == [["a", "int", "2", "(was 1)"], ["a", "int", "(reset)", "(was 2)"]], "\(printed + result.stdout)")
        for line in lines {
            let time = try #require(line.first)
            #expect(time.count == 24 && time.hasSuffix("Z") && (try? ISO8601.parse(time)) != nil, "\(time)")
        }
        #expect(!result.signaled && result.status == 0, "an interrupt ends watch cleanly: \(result)")
    }

    @Test("watch on a JSON store another program rewrites in place (briefly empty): reports it and keeps watching")
    func watchThroughRewrite() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("w.json").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        let next = try await tool("--store", directory.file("next.json").path, "set", "a", "2")
        #expect(next.status == 0)
        let (process, out, err) = try ChildProcess.start("prefs-tool", ["--store", store, "watch", "--interval", "20"])
        defer { process.signal(SIGKILL) }  // a failed wait leaves no watcher behind (no-op once reaped)
        // Each step waits for what shows watch saw the previous one.
        var errors = try await ChildProcess.read(err.fileHandleForReading) { $0.hasPrefix("watching ") }
        // `cat next.json > w.json`, with the truncated file held empty until watch has reported it.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.truncate(atOffset: 0)
        errors += try await ChildProcess.read(err.fileHandleForReading) { $0.contains("the file is empty") }
        try handle.write(contentsOf: Data(contentsOf: directory.file("next.json")))
        try handle.close()
        errors += try await ChildProcess.read(err.fileHandleForReading) { $0.contains("the store can be read again") }
        let printed = try await ChildProcess.read(out.fileHandleForReading) { $0.hasSuffix("\t(was 1)") }
        kill(process.processIdentifier, SIGINT)
        let result = try await ChildProcess.finish(process, out, err)
        errors += result.stderr
        #expect(result.status == 0, "\(errors)")
        let lines = (printed + result.stdout).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(lines.map { Array($0.dropFirst()) } == [["a", "int", "2", "(was 1)"]], "\(printed + result.stdout)")
        #expect(errors.contains("the file is empty") && errors.contains("; still watching\n"), "\(errors)")
    }

    @Test("dialogs --arguments: a scheme's -UserHasSeenMsg decides never remind as the app launched so reads it; nothing is written")
    func dialogsWithArguments() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("d.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        let gate = DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides())
        try gate.record(.neverRemind, for: Dialog("intro", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg")))
        let before = try prefs.snapshot()
        let plain = try await tool("--store", store, "dialogs")
        #expect(plain.status == 0 && !plain.stdout.contains("argument"), "\(plain)")

        let no = try await tool("--store", store, "dialogs", "--arguments", "-UserHasSeenMsg NO")
        #expect(no.status == 0, "\(no.stderr)")
        #expect(no.stdout.hasPrefix("intro\t") && no.stdout.hasSuffix("\targument -UserHasSeenMsg NO: may show this launch\n"), "\(no.stdout)")
        let json = try await tool("--store", store, "dialogs", "list", "--json", "--arguments", "-UserHasSeenMsg NO")
        #expect(try JSON.parse(json.stdout)["intro"]?["neverRemindArgument"] == .bool(false), "\(json.stdout)")
        let explain = try await tool("--store", store, "dialogs", "explain", "intro", "--arguments", "-launchCount 3 -UserHasSeenMsg YES")
        #expect(explain.stdout.hasPrefix("intro\t") && explain.stdout.contains("\targument -UserHasSeenMsg YES: never remind this launch\n"))
        // An argument that reads as no Bool is ignored, as the app ignores it: the store decides.
        let maybe = try await tool("--store", store, "dialogs", "--arguments", "-UserHasSeenMsg maybe")
        #expect(maybe.status == 0 && !maybe.stdout.contains("argument"), "\(maybe)")
        #expect(try await tool("--store", store, "dialogs", "--arguments", "-UserHasSeenMsg 'NO").status == 64)
        #expect(try prefs.snapshot() == before, "the arguments are never written")
    }

    @Test("dialogs list and reset")
    func dialogs() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("d.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        try prefs.set(9, for: Prefs.Key("unrelated", initial: 0))
        try prefs.setStoredValue(
            StoredValue(
                type: .json,
                json: .object([
                    "presentations": .int(2), "lastResponse": .string("neverRemind"), "neverRemindSince": .string("2026-11-29T10:00:00Z"),
                ])), forKey: "dialogs.welcome")
        let list = try await tool("--store", store, "dialogs")
        #expect(list.stdout == "welcome\tshown 2\tanswered neverRemind\tnever remind since 2026-11-29T10:00:00Z\n")
        let json = try await tool("--store", store, "dialogs", "list", "--json")
        #expect(try JSON.parse(json.stdout)["welcome"]?["presentations"] == .int(2))
        let unknown = try await tool("--store", store, "dialogs", "reset", "welcom")
        #expect(unknown.status == 0, "nothing is left to reset: the same exit as 'reset' of a key with nothing stored")
        #expect(unknown.stderr == "prefs-tool: warning: no dialog \"welcom\" has stored state: nothing to reset; did you mean \"welcome\"?\n")
        #expect(try await tool("--store", store, "dialogs", "reset", "welcome").status == 0)
        let again = try await tool("--store", store, "dialogs", "reset", "welcome")
        #expect(again.status == 0, "resetting what is already reset: \(again)")
        #expect(try await tool("--store", store, "dialogs").stdout.isEmpty)
        #expect(try await tool("--store", store, "dialogs", "rest").status == 64)

        // An id that is not a key name (seed 000's "msg:" + a message with a newline) is listed under its hashed key's name.
        let gate = DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides())
        try gate.record(.neverRemind, for: Dialog("msg:Line 1\nLine 2"))
        let hashed = String(DialogRecord.storeKeyName(for: "msg:Line 1\nLine 2").dropFirst(DialogRecord.keyPrefix.count))
        #expect(try await tool("--store", store, "dialogs").stdout.hasPrefix("\(hashed)\tshown 0\tanswered neverRemind\t"))
        let hashedJSON = try JSON.parse(try await tool("--store", store, "dialogs", "list", "--json").stdout)
        #expect(hashedJSON[hashed]?["id"] == .string("msg:Line 1\nLine 2"))
        #expect(try await tool("--store", store, "dialogs", "reset", hashed).status == 0)
        #expect(try await tool("--store", store, "dialogs").stdout.isEmpty)
    }

    @Test("demo runs the seed flows on a temporary SQLite store, asks nothing without a terminal, and exits 0")
    func demo() async throws {
        let scratch = try TemporaryDirectory()  // the demo's own directory, with its store, goes in there and with it
        let result = try await tool("demo", environment: ["TMPDIR": scratch.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("suppressed for this session (OK)"))
        #expect(result.stdout.contains("not shown: never remind since"))
        #expect(result.stdout.contains("the user taps OK → lastMessageId = 1"))
        #expect(result.stdout.contains("no message: message 1: id > lastMessageId (1 is not > 1)"))
        #expect(result.stdout.contains("(shown again: QA can check the message as often as needed)"))
        let directory = try TemporaryDirectory()
        let store = directory.file("demo.sqlite").path
        #expect(try await tool("--store", store, "demo").status == 0)
        #expect(try await tool("--store", store, "get", "dialog_neverAgain").stdout == "true\n")
    }
}
