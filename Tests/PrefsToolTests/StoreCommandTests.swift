import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("prefs-tool: store commands")
struct StoreCommandTests {
    @Test("set creates the store (mode 0600); get prints plain text or JSON", arguments: StoreFile.allCases)
    func setAndGet(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        for (key, value, plain, json) in [
            ("count", "42", "42", "42"), ("flag", "true", "true", "true"), ("ratio", "0.25", "0.25", "0.25"),
            ("name", "hello world", "hello world", "\"hello world\""),
        ] {
            let set = try await tool("--store", store, "set", key, value)
            #expect(set.status == 0 && set.stdout.isEmpty && set.stderr.isEmpty, "\(set)")
            #expect(try await tool("--store", store, "get", key).stdout == plain + "\n")
            #expect(try await tool("--store=\(store)", "get", key, "--json").stdout == json + "\n")
        }
        let mode = try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        #expect(prefs[Prefs.Key("count", initial: 0)] == 42)
        #expect(prefs[Prefs.Key("flag", initial: false)] == true)
        #expect(prefs[Prefs.Key("name", initial: "")] == "hello world")
    }

    @Test("set with --type and with a declared type; a bad value exits 65 and writes nothing", arguments: StoreFile.allCases)
    func typedSet(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0), Prefs.Key("homepage", initial: URL(string: "https://a.example")!))
        #expect(try await tool("--store", store, "set", "when", "2026-11-29T10:00:00+01:00", "--type", "date").status == 0)
        #expect(try await tool("--store", store, "get", "when").stdout == "2026-11-29T09:00:00Z\n")
        #expect(try await tool("--store", store, "set", "homepage", "https://x.example/a?b=1#c").status == 0)
        #expect(try await tool("--store", store, "get", "homepage").stdout == "https://x.example/a?b=1#c\n")
        #expect(try await tool("--store", store, "set", "tags", #"["a","b"]"#, "--type", "json").status == 0)
        #expect(try await tool("--store", store, "get", "tags", "--json").stdout == "[\n  \"a\",\n  \"b\"\n]\n")

        let bad = try await tool("--store", store, "set", "lastMessageId", "seven")
        #expect(bad.status == 65)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr == "prefs-tool: error: \"seven\" is not a valid int: expected an integer in -9223372036854775808...9223372036854775807\n")
        let mismatch = try await tool("--store", store, "set", "lastMessageId", "7", "--type", "string")
        #expect(mismatch.status == 65)
        #expect(mismatch.stderr == "prefs-tool: error: key \"lastMessageId\" is declared as int, not string\n")
        #expect(try prefs.storedValue(forKey: "lastMessageId") == nil, "nothing written")
        let badType = try await tool("--store", store, "set", "x", "1", "--type", "integer")
        #expect(badType.status == 64)
        #expect(badType.stderr.hasPrefix("prefs-tool: error: unknown type 'integer'"))
    }

    @Test("a double beyond the range exits 65 and writes nothing; nan, inf and infinity are accepted only when written as such")
    func doubleOutOfRange() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        try Prefs(.sqlite(URL(fileURLWithPath: store))).declare(Prefs.Key("ratio", initial: 0.5))
        for (key, text, type) in [("d", "1e400", ["--type", "double"]), ("d", "-1e400", ["--type", "double"]), ("ratio", "1e309", [])] {
            let result = try await tool(["--store", store, "set"] + type + ["--", key, text])
            #expect(result.status == 65, "\(text): \(result)")
            #expect(result.stderr == "prefs-tool: error: \"\(text)\" is not a valid double: out of range (the largest double is 1.7976931348623157e+308)\n")
            #expect(try await tool("--store", store, "get", key).stdout == (key == "ratio" ? "0.5\n" : ""), "nothing written")
        }
        let json = try await tool("--store", store, "set", "j", "[1, 1e400]", "--type", "json")
        #expect(json.status == 65)
        #expect(json.stderr.contains("number 1e400 is out of range"), "\(json.stderr)")
        for (text, shown) in [("inf", "inf"), ("-Infinity", "-inf"), ("+INF", "inf"), ("NaN", "nan"), ("1.7976931348623157e308", "1.7976931348623157e+308")] {
            #expect(try await tool("--store", store, "set", "--type", "double", "--", "d", text).status == 0, "\(text)")
            #expect(try await tool("--store", store, "get", "d").stdout == shown + "\n", "\(text)")
        }
    }

    @Test("get of a key neither stored nor declared exits 1 with nothing on stdout; a declared key prints its initial value", arguments: StoreFile.allCases)
    func getMissing(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        try Prefs(.file(URL(fileURLWithPath: store))).declare(Prefs.Key("lastMessageId", initial: 0))
        let missing = try await tool("--store", store, "get", "lastMesageId")
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr == "prefs-tool: error: key \"lastMesageId\" not found; did you mean \"lastMessageId\"?\n")
        #expect(try await tool("--store", store, "get", "lastMessageId").stdout == "0\n")

        // Declared with a nil initial value (an Optional key) and nothing stored: no value, and no did-you-mean to itself.
        try Prefs(.file(URL(fileURLWithPath: store))).declare(Prefs.Key<String?>("nickname", initial: nil))
        let empty = try await tool("--store", store, "get", "nickname")
        #expect(empty.status == 1)
        #expect(empty.stderr == "prefs-tool: error: key \"nickname\" has no value: nothing is stored, and its declared initial value (string) is nil\n")
        #expect(try await tool("--store", store, "list").stdout == "lastMessageId\tint\t0\t(initial)\nnickname\tstring\tnull\t(initial)\n")
    }

    @Test("list shows stored and declared keys; --json gives type, value, initial, stored and source", arguments: StoreFile.allCases)
    func list(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0))
        try prefs.set(true, for: Prefs.Key("dialog_neverAgain", initial: false))
        let plain = try await tool("--store", store, "list")
        #expect(plain.stdout == "dialog_neverAgain\tbool\ttrue\nlastMessageId\tint\t0\t(initial)\n")
        let json = try await tool("--store", store, "list", "--json")
        #expect(json.status == 0)
        #expect(
            try JSON.parse(json.stdout)
                == .object([
                    "dialog_neverAgain": .object([
                        "type": .string("bool"), "value": .bool(true), "initial": .bool(false), "stored": .bool(true), "source": .string("stored"),
                    ]),
                    "lastMessageId": .object([
                        "type": .string("int"), "value": .int(0), "initial": .int(0), "stored": .bool(false), "source": .string("initial"),
                    ]),
                ]))
        #expect(json.stdout.hasSuffix("}\n"))
    }

    @Test("reset lastMessageId, several keys, --all; a key with nothing to reset is named on stderr, exit 0", arguments: StoreFile.allCases)
    func reset(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.setStoredValues([
            "lastMessageId": StoredValue(type: .int, json: .int(3)), "a": StoredValue(type: .int, json: .int(1)), "b": StoredValue(type: .int, json: .int(2)),
        ])
        #expect(try await tool("--store", store, "reset", "lastMessageId").status == 0)
        #expect(try await tool("--store", store, "get", "lastMessageId").status == 1)
        let again = try await tool("--store", store, "reset", "lastMessageId")
        #expect(again.status == 0, "resetting what is already reset exits 0, as dialogs reset does")
        let partly = try await tool("--store", store, "reset", "a", "zzz")
        #expect(partly.status == 0)
        #expect(partly.stderr == "prefs-tool: warning: key \"zzz\" is neither stored nor declared: nothing to reset\n")
        #expect(try await tool("--store", store, "get", "a").status == 1, "the known key was reset anyway")
        #expect(try await tool("--store", store, "reset", "--all").status == 0)
        #expect(try await tool("--store", store, "list").stdout.isEmpty)
        #expect(try await tool("--store", store, "reset").status == 64)
    }

    @Test("the tool resets a key while another process holds the store open, and that process sees the change", arguments: StoreFile.allCases)
    func resetSeenByLiveProcess(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let app = try Prefs(.file(URL(fileURLWithPath: store)), pollInterval: .milliseconds(20))
        let lastMessageId = Prefs.Key("lastMessageId", initial: 0)
        try app.set(5, for: lastMessageId)
        var values = app.values(for: lastMessageId).makeAsyncIterator()
        #expect(await values.next() == 5)
        #expect(try await tool("--store", store, "reset", "lastMessageId").status == 0)
        #expect(await values.next() == 0, "the open store saw the reset by itself")
        #expect(app[lastMessageId] == 0)
    }

    @Test("a corrupt store exits 65 and nothing is written, moved or renamed", arguments: StoreFile.allCases)
    func corruptStore(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let garbage = Data("\u{1B}[31mnot a store\u{7}".utf8)
        try garbage.write(to: URL(fileURLWithPath: store))
        for arguments in [["list"], ["get", "x"], ["set", "x", "1"], ["reset", "--all"], ["check"], ["export"], ["dialogs"]] {
            let result = try await tool(["--store", store] + arguments)
            #expect(result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("prefs-tool: error: \(store): "))
            #expect(!result.stderr.contains("\u{1B}"), "control characters from the file are escaped")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [URL(fileURLWithPath: store).lastPathComponent])
    }

    @Test(
        "an SQLite store whose schema was damaged exits 65 naming what is missing, and the file is untouched",
        arguments: [("DROP TABLE prefs;", "no such table: prefs"), ("DROP TABLE prefs_declared;", "no such table: prefs_declared")])
    func damagedSchema(damage: String, missing: String) async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        #expect(try await ChildProcess.runSystem("/usr/bin/sqlite3", [store, damage]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for arguments in [["list"], ["get", "a"], ["set", "z", "1"], ["check"], ["export"]] {
            let result = try await tool(["--store", store] + arguments)
            #expect(result.status == 65, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("prefs-tool: error: \(store): a Prefs store whose schema is damaged (\(missing))"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["s.sqlite"])
    }

    @Test(
        "an SQLite store with damaged pages: every command that writes exits 65, and no byte changes",
        arguments: [12, 20] as [Int])
    func damagedPages(page: Int) async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        var values: [String: StoredValue?] = [:]
        for index in 0..<400 { values[String(format: "key%04d", index)] = StoredValue(type: .string, json: .string(String(repeating: "v", count: 150))) }
        try prefs.setStoredValues(values)
        try prefs.close()
        let pageSize = 4096
        let size = try #require(try FileManager.default.attributesOfItem(atPath: store)[.size] as? Int)
        try #require(size >= (page + 1) * pageSize, "the store has \(size / pageSize) pages")
        // Overwrite 4,000 bytes of one page in the middle of the file with random bytes.
        var random = SeededGenerator(seed: UInt64(page))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        try handle.write(contentsOf: Data((0..<4000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let document = directory.file("import.json").path
        try Data(#"{"formatVersion": 1, "values": {"z": {"type": "int", "value": 1}}}"#.utf8).write(to: URL(fileURLWithPath: document))
        let plist = directory.file("defaults.plist").path
        try PropertyListSerialization.data(fromPropertyList: ["z": 1], format: .xml, options: 0).write(to: URL(fileURLWithPath: plist))
        let target = directory.file("copy.sqlite").path
        for arguments in [
            ["set", "z", "1"], ["set", "key0001", "x"], ["reset", "key0001"], ["reset", "--all"], ["import", document],
            ["import", "--plist", plist], ["dialogs", "reset", "--all"], ["migrate", "--to", target],
        ] {
            let result = try await tool(["--store", store] + arguments)
            #expect(result.status == 65, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("prefs-tool: error: ") && result.stderr.contains("nothing was written"), "\(arguments): \(result.stderr)")
        }
        #expect(try await tool("--store", store, "check").status == 65)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "no byte changed")
        // Opening in WAL mode creates the log and shared-memory files; a store found damaged keeps them (empty of
        // frames) rather than checkpoint at close. Nothing else appears: no copy, no target store.
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(listing.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") } == ["defaults.plist", "import.json", "s.sqlite"], "\(listing)")
        let logSize = try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int
        #expect(logSize == nil || logSize == 0, "no frame in the log")
    }

    /// SQLite copies the write-ahead log into the database file when the last connection closes. On a damaged
    /// store that would change the bytes a recovery needs, and `check` and `list` would write to a store they refuse.
    @Test("a damaged store with a write-ahead log still pending is left exactly as it was, log included, by every command")
    func damagedPagesWithPendingLog() async throws {
        let directory = try TemporaryDirectory()
        let original = directory.file("o.sqlite").path
        let store = directory.file("s.sqlite").path
        var values: [String: StoredValue?] = [:]
        for index in 0..<400 { values[String(format: "key%04d", index)] = StoredValue(type: .string, json: .string(String(repeating: "v", count: 150))) }
        let first = try Prefs(.sqlite(URL(fileURLWithPath: original)))
        try first.setStoredValues(values)
        try first.close()  // every page in the database file (the last connection checkpoints when it closes)
        // A log with frames: copied while a connection that wrote them is still open (as after a crash).
        let writer = try Prefs(.sqlite(URL(fileURLWithPath: original)))
        try writer.set(1, for: Prefs.Key("late", initial: 0))
        try FileManager.default.copyItem(atPath: original, toPath: store)
        try FileManager.default.copyItem(atPath: original + "-wal", toPath: store + "-wal")
        try writer.close()
        let log = try Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
        try #require(!log.isEmpty)
        // Damage a page the log holds no newer copy of: SQLite reads a logged page from the log, so damage there would
        // be invisible. The keys went in in dictionary order, which differs from run to run, and so does the page the
        // late write touched; the pages in the log are read from its frame headers (a 32-byte log header, then per
        // frame a 24-byte header starting with the page number, and the page).
        let database = try Data(contentsOf: URL(fileURLWithPath: store))
        let pageSize = Int(database[16]) << 8 | Int(database[17])
        let logged = Set(
            stride(from: 32, to: log.count - 24, by: 24 + pageSize).map { offset in
                log[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            })
        let damaged = try #require((3...(database.count / pageSize)).first { !logged.contains($0) }, "a page not in the log")
        var random = SeededGenerator(seed: 5)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.seek(toOffset: UInt64((damaged - 1) * pageSize))
        try handle.write(contentsOf: Data((0..<4000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for arguments in [["check"], ["list"], ["export"], ["set", "z", "1"], ["reset", "--all"]] {
            let result = try await tool(["--store", store] + arguments)
            #expect(result.status == 65, "\(arguments): \(result)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "\(arguments): the database file changed")
            #expect(try Data(contentsOf: URL(fileURLWithPath: store + "-wal")) == log, "\(arguments): the log changed or was merged")
        }
        // In this process too: a store that finds damage keeps the log when it is released.
        #expect(throws: PrefsError.self) {
            let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
            defer { try? prefs.close() }
            if try prefs.integrityProblems().isEmpty { return }
            throw PrefsError.corruptStore(path: store, reason: "found by integrityProblems()")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "-wal")) == log)
    }

    @Test("a missing store is an I/O error for commands that only read")
    func missingStore() async throws {
        let directory = try TemporaryDirectory()
        let result = try await tool("--store", directory.file("none.sqlite").path, "list")
        #expect(result.status == 74)
        #expect(result.stderr == "prefs-tool: error: no store at \(directory.file("none.sqlite").path)\n")
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.sqlite").path))
        // Without --store or PREFS_STORE, the hint says how to name one.
        let defaulted = try await tool(["list"], environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(
            defaulted.stderr == "prefs-tool: error: no store at \(directory.url.path)/prefs/default.sqlite (give --store PATH, --app ID or set PREFS_STORE)\n")
    }

    @Test("PREFS_STORE picks the store when --store is absent")
    func environmentStore() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("env.json").path
        #expect(try await tool(["set", "k", "v"], environment: ["PREFS_STORE": store]).status == 0)
        #expect(try await tool(["get", "k"], environment: ["PREFS_STORE": store]).stdout == "v\n")
    }

    @Test("values from the store are printed with control characters escaped on a terminal only; raw to a pipe")
    func rawToPipe() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        #expect(try await tool("--store", store, "set", "evil", "a\u{1B}[2Jb").status == 0)
        #expect(try await tool("--store", store, "get", "evil").stdout == "a\u{1B}[2Jb\n", "a pipe gets the exact bytes")
        #expect(try await tool("--store", store, "get", "evil", "--json").stdout == "\"a\\u001b[2Jb\"\n")
    }
}
