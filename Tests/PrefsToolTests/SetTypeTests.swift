import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 19, items 1 and 2: `set` keeps types and text; typos do not create things silently.
@Suite("prefs-tool: set keeps types, typos are named")
struct SetTypeTests {
    func stored(_ store: String, _ key: String) throws -> StoredValue? {
        try Prefs(.file(URL(fileURLWithPath: store))).storedValue(forKey: key)
    }

    @Test("inference never loses text: 007, +5, 1.10 and 1e3 stay strings; 7, -5, 0.25 and true are typed", arguments: StoreFile.allCases)
    func inferenceKeepsText(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        for (key, text, type) in [
            ("zip", "007", ValueType.string), ("plus", "+5", .string), ("appVersionSeen", "1.10", .string), ("exp", "1e3", .string),
            ("negativeZero", "-0", .string), ("n", "7", .int), ("m", "-5", .int), ("ratio", "0.25", .double), ("flag", "true", .bool),
        ] {
            let result = try await tool("--store", store, "set", key, text)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(key): \(result)")
            #expect(try stored(store, key)?.type == type, "\(key) = \(text)")
            #expect(try await tool("--store", store, "get", key).stdout == text + "\n", "\(text) prints back as written")
        }
    }

    @Test("an existing key keeps its stored type: set note 5 stays a string, set arr '[4,5]' stays [int]", arguments: StoreFile.allCases)
    func existingKeyKeepsType(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.setStoredValues([
            "note": StoredValue(type: .string, json: .string("hello")),
            "arr": StoredValue(type: .array(.int), json: .array([.int(1), .int(2), .int(3)])),
            "ratio": StoredValue(type: .double, json: .double(0.5)),
            "when": StoredValue(type: .date, json: .string("2026-11-29T10:00:00Z")),
        ])
        for (key, text, expected) in [
            ("note", "5", StoredValue(type: .string, json: .string("5"))),
            ("arr", "[4,5]", StoredValue(type: .array(.int), json: .array([.int(4), .int(5)]))),
            ("ratio", "2", StoredValue(type: .double, json: .double(2))),
            ("when", "2026-12-01", StoredValue(type: .date, json: .string("2026-12-01T00:00:00Z"))),
        ] {
            let result = try await tool("--store", store, "set", key, text)
            #expect(result.status == 0, "\(key): \(result)")
            #expect(try stored(store, key) == expected, "\(key) = \(text)")
        }
        #expect(
            try await tool("--store", store, "list").stdout
                == "arr\t[int]\t[4,5]\nnote\tstring\t5\nratio\tdouble\t2.0\nwhen\tdate\t2026-12-01T00:00:00Z\n")
    }

    @Test("a value that does not fit the stored type is refused with a hint naming --type, and --type changes the type", arguments: StoreFile.allCases)
    func changeRefusedWithHint(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        #expect(try await tool("--store", store, "set", "count", "3").status == 0)
        let refused = try await tool("--store", store, "set", "count", "hello")
        #expect(refused.status == 65)
        #expect(
            refused.stderr == """
                prefs-tool: error: "hello" is not a valid int: expected an integer in -9223372036854775808...9223372036854775807; \
                key "count" holds an int (to store a string instead, give --type string)

                """)
        #expect(try stored(store, "count") == StoredValue(type: .int, json: .int(3)), "nothing written")
        let decimal = try await tool("--store", store, "set", "count", "2.5")
        #expect(decimal.stderr.hasSuffix("key \"count\" holds an int (to store a double instead, give --type double)\n"), "\(decimal.stderr)")
        #expect(try await tool("--store", store, "set", "count", "hello", "--type", "string").status == 0)
        #expect(try stored(store, "count") == StoredValue(type: .string, json: .string("hello")))
    }

    @Test("every type list prints is accepted by --type: [int], [string: date], nested; unknown names are refused", arguments: StoreFile.allCases)
    func collectionTypes(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        for (key, text, type) in [
            ("arr", "[1,2,3]", "[int]"), ("dates", #"{"a": "2026-11-29T10:00:00Z"}"#, "[string: date]"),
            ("nested", "[[true], []]", "[[bool]]"), ("spaced", #"{"x": 1.5}"#, "[string:double]"),
        ] {
            let result = try await tool("--store", store, "set", key, text, "--type", type)
            #expect(result.status == 0, "\(type): \(result)")
            #expect(try stored(store, key)?.type == ValueType(type), "\(type)")
        }
        let listed = try await tool("--store", store, "list").stdout.split(separator: "\n").map { $0.split(separator: "\t")[1] }
        #expect(listed == ["[int]", "[string: date]", "[[bool]]", "[string: double]"])
        for printed in listed {
            let empty = printed.hasPrefix("[string:") ? "{}" : "[]"
            #expect(try await tool("--store", store, "set", "again", empty, "--type", String(printed)).status == 0, "\(printed)")
        }
        let wrongShape = try await tool("--store", store, "set", "arr2", #"[1,"a"]"#, "--type", "[int]")
        #expect(wrongShape.status == 65)
        #expect(
            wrongShape.stderr.hasPrefix(#"prefs-tool: error: "[1,\"a\"]" is not a valid [int]: [1]: type int: expected an integer, found string"#),
            "\(wrongShape.stderr)")
        let unknown = try await tool("--store", store, "set", "x", "1", "--type", "[integer]")
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("prefs-tool: error: unknown type '[integer]'"), "\(unknown.stderr)")
        let future = try await tool("--store", store, "set", "x", "1", "--type", "money")
        #expect(future.status == 64, "a type only a newer release knows cannot be written: \(future)")
    }

    @Test("a new key close to a stored or declared one is written with a warning naming it; other new keys are quiet", arguments: StoreFile.allCases)
    func typoWarning(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0))
        try prefs.set(1, for: Prefs.Key("count", initial: 0))
        let typo = try await tool("--store", store, "set", "lastMesageId", "5")
        #expect(typo.status == 0)
        #expect(
            typo.stderr == """
                prefs-tool: warning: "lastMesageId" is a new key; did you mean "lastMessageId"? (prefs-tool reset lastMesageId removes it)

                """)
        #expect(try await tool("--store", store, "set", "cuont", "2").stderr.contains(#"did you mean "count"?"#), "a swap of two letters")
        #expect(try await tool("--store", store, "set", "LastMessageID", "2").stderr.contains(#"did you mean "lastMessageId"?"#), "case only")
        for quiet in ["count2", "welcome", "lastMessageId", "cnt", "lastMessageDate"] {
            let result = try await tool("--store", store, "set", quiet, "1")
            #expect(result.status == 0 && result.stderr.isEmpty, "\(quiet): \(result.stderr)")
        }
        #expect(try await tool("--store", store, "set", "lastMesageId", "6").stderr.isEmpty, "an existing key is not new")
    }

    @Test("a store in a missing folder is refused unless --create-dirs; the default location creates its folder", arguments: StoreFile.allCases)
    func noParentFolders(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("typo/dir/store.\(file.rawValue)").path
        for arguments in [["set", "a", "1"], ["import", "-"], ["feed", "fetch", "http://127.0.0.1:1/m.json"]] {
            let refused = try await tool(["--store", store] + arguments, stdin: #"{"formatVersion": 1, "values": {}}"#)
            #expect(refused.status == 74, "\(arguments): \(refused)")
            #expect(
                refused.stderr
                    == "prefs-tool: error: no folder \(directory.url.path)/typo/dir for a new store at \(store) (give --create-dirs to create it); nothing was written\n"
            )
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty, "no folder created")
        let source = directory.file("source.json").path
        #expect(try await tool("--store", source, "set", "a", "1").status == 0)
        let migrated = try await tool("--store", source, "migrate", "--to", directory.file("other/m.sqlite").path)
        #expect(migrated.status == 74, "\(migrated)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !$0.hasSuffix(".lock") } == ["source.json"])
        #expect(try await tool("--store", store, "--create-dirs", "set", "a", "1").status == 0)
        #expect(try await tool("--create-dirs", "--store", store, "get", "a").stdout == "1\n")
        let home = directory.file("home").path
        #expect(try await tool(["--app", "com.example.app", "set", "a", "1"], environment: ["XDG_CONFIG_HOME": home]).status == 0)
        #expect(FileManager.default.fileExists(atPath: "\(home)/prefs/com.example.app.sqlite"))
    }

    @Test("watch of a key neither stored nor declared says so, with the nearest key, and watches for it")
    func watchMissingKey() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("w.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        try prefs.set(1, for: Prefs.Key("lastMessageId", initial: 0))
        var environment = ProcessInfo.processInfo.environment
        environment["PREFS_STORE"] = store
        let (process, out, err) = try ChildProcess.start("prefs-tool", ["watch", "lastMesageId", "--interval", "20"], environment: environment)
        defer { process.signal(SIGKILL) }  // a failed wait leaves no watcher behind (no-op once reaped)
        // Each step waits for what shows watch saw the previous one: "watching …" once it has read the store, then the line.
        var errors = try await ChildProcess.read(err.fileHandleForReading) { $0.hasPrefix("watching ") }
        try prefs.setStoredValue(StoredValue(type: .int, json: .int(4)), forKey: "lastMesageId")
        var printed = try await ChildProcess.read(out.fileHandleForReading) { $0.hasSuffix("\tlastMesageId\tint\t4\t(new)") }
        kill(process.processIdentifier, SIGINT)
        let result = try await ChildProcess.finish(process, out, err)
        errors += result.stderr
        printed += result.stdout
        #expect(
            errors.hasPrefix("prefs-tool: warning: key \"lastMesageId\" is neither stored nor declared; did you mean \"lastMessageId\"?\n"),
            "\(errors)")
        #expect(printed.hasSuffix("\tlastMesageId\tint\t4\t(new)\n"), "\(printed)")
        #expect(result.status == 0)
    }
}
