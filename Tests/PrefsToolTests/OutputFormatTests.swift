import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

/// Output for pipes and for people: one line per key in a pipe, aligned and escaped on a terminal (issue 19
/// items 4 and 10; issue 16 items 7 and 8).
@Suite("prefs-tool: output for pipes and terminals")
struct OutputFormatTests {
    /// A value with every character that breaks a line format or a terminal.
    static let hostile = "a\nb\tc\\d\r\u{1B}[31mred\u{9B}2J\u{7F}\u{202E}evil\u{2066}"

    @Test("piped list is one line per key: \\n, \\t, \\r and \\\\ are escaped inside fields, in keys too", arguments: StoreFile.allCases)
    func pipedListOneLinePerKey(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.setStoredValues(["multi": StoredValue(type: .string, json: .string(Self.hostile)), "plain": StoredValue(type: .int, json: .int(1))])
        try prefs.close()
        // A key with a tab and one with a newline, written by another program (the library refuses such names).
        try await writeRawKeys(["k\tey", "line\nbreak"], to: store, file: file)
        let result = try await tool("--store", store, "list")
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 4, "one line per key: \(result.stdout)")
        #expect(lines.allSatisfy { $0.split(separator: "\t", omittingEmptySubsequences: false).count == 3 }, "three fields each")
        #expect(lines.contains("k\\tey\tstring\tx"))
        #expect(lines.contains("line\\nbreak\tstring\tx"))
        // In a pipe, only the four characters of the line format are escaped; the rest is the exact text.
        #expect(lines.contains("multi\tstring\ta\\nb\\tc\\\\d\\r\u{1B}[31mred\u{9B}2J\u{7F}\u{202E}evil\u{2066}"), "\(lines)")
    }

    /// Adds string values under names the library would refuse, as another program might.
    func writeRawKeys(_ names: [String], to store: String, file: StoreFile) async throws {
        switch file {
        case .json:
            guard case .object(var root) = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: store))),
                case .object(var values)? = root["values"]
            else { throw PrefsError.corruptStore(path: store, reason: "test setup") }
            for name in names { values[name] = .object(["type": .string("string"), "value": .string("x")]) }
            root["values"] = .object(values)
            try JSON.object(root).serializedData(.pretty).write(to: URL(fileURLWithPath: store))
        case .sqlite:
            // Bound through the shell's own quoting: char() spells the control characters.
            let statements = names.map { name in
                let spelled = name.unicodeScalars.map { $0.value < 0x20 ? "' || char(\($0.value)) || '" : String($0) }.joined()
                return "INSERT INTO prefs (key, type, value) VALUES ('\(spelled)', 'string', 'x');"
            }
            let result = try await ChildProcess.runSystem("/usr/bin/sqlite3", [store, statements.joined(separator: " ")])
            guard result.status == 0 else { throw PrefsError.corruptStore(path: store, reason: "sqlite3: \(result.stderr)") }
        }
    }

    @Test("on a terminal, list is aligned, cut to the width with …, and escapes every control character (a backslash stays)", arguments: StoreFile.allCases)
    func terminalList(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0))
        try prefs.setStoredValues([
            "dialog_neverAgain": StoredValue(type: .bool, json: .bool(true)),
            "dialogs.welcome": StoredValue(
                type: .json,
                json: .object([
                    "id": .string("welcome"), "presentations": .int(2), "lastResponse": .string("neverRemind"),
                    "firstPresented": .string("2026-11-29T08:24:31.06376409530639648Z"),
                ])),
            "multi": StoredValue(type: .string, json: .string(Self.hostile)),
        ])
        let result = try await toolOnTerminal(["--store", store, "list"], columns: 60)
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                dialog_neverAgain  bool    true
                dialogs.welcome    json    {"firstPresented":"2026-11-29T08…
                lastMessageId      int     0  (initial)
                multi              string  a\\nb\\tc\\d\\r\\u{1B}[31mred\\u{9B}2J…

                """)
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.count <= 60 })
        let wide = try await toolOnTerminal(["--store", store, "list", "dialogs.*"], columns: 200)
        #expect(
            wide.stdout
                == #"dialogs.welcome  json  {"firstPresented":"2026-11-29T08:24:31.063Z","id":"welcome","lastResponse":"neverRemind","presentations":2}"#
                + "\n",
            "timestamps to the millisecond")
        let exact = try await tool("--store", store, "get", "dialogs.welcome", "--json")
        #expect(exact.stdout.contains("08:24:31.06376409530639648Z"), "--json keeps every digit")
    }

    /// Finding 4 of issue 27: in a pipe, dates were cut to milliseconds, so that setting what `get` printed changed the
    /// stored date. A pipe gets every digit; a terminal still shows milliseconds.
    @Test("in a pipe a date is exact: set with what get printed stores the same date; a terminal shows milliseconds", arguments: StoreFile.allCases)
    func exactDatesInPipes(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let key = Prefs.Key<Date>("lastSync", initial: Date(timeIntervalSince1970: 0))
        let date = Date(timeIntervalSince1970: 1_700_000_000.123_456_789)
        try Prefs(.file(URL(fileURLWithPath: store))).set(date, for: key)
        let stored = try #require(try Prefs(.file(URL(fileURLWithPath: store))).storedValue(forKey: "lastSync"))
        guard case .string(let exact) = stored.json else { throw PrefsError.corruptStore(path: store, reason: "not a date") }
        #expect(exact.count > "2023-11-14T22:13:20.123Z".count, "more than milliseconds: \(exact)")

        let got = try await tool("--store", store, "get", "lastSync")
        #expect(got.stdout == exact + "\n")
        #expect(try await tool("--store", store, "set", "lastSync", String(got.stdout.dropLast())).status == 0)
        let after = try Prefs(.file(URL(fileURLWithPath: store)))
        #expect(try after.storedValue(forKey: "lastSync") == stored, "the round trip changed nothing")
        #expect(after[key] == date, "bit for bit")
        #expect(try await tool("--store", store, "list", "lastSync").stdout == "lastSync\tdate\t\(exact)\n")
        let onTerminal = try await toolOnTerminal(["--store", store, "get", "lastSync"], columns: 80)
        #expect(onTerminal.stdout == "2023-11-14T22:13:20.123Z\n", "for reading: \(onTerminal.stdout)")
    }

    @Test("list PATTERN filters with shell wildcards, in every format; no match exits 1", arguments: StoreFile.allCases)
    func patterns(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        for key in ["dialog_neverAgain", "dialogs.welcome", "lastMessageId", "UserHasSeenMsg"] {
            #expect(try await tool("--store", store, "set", key, "1").status == 0)
        }
        #expect(try await tool("--store", store, "list", "dialog*").stdout == "dialog_neverAgain\tint\t1\ndialogs.welcome\tint\t1\n")
        #expect(try await tool("--store", store, "list", "last*", "*Msg").stdout == "UserHasSeenMsg\tint\t1\nlastMessageId\tint\t1\n")
        #expect(try await tool("--store", store, "list", "dialogs.[w]elcome").stdout == "dialogs.welcome\tint\t1\n")
        #expect(
            try JSON.parse(try await tool("--store", store, "list", "--json", "last*").stdout)
                == .object([
                    "lastMessageId": .object([
                        "type": .string("int"), "value": .int(1), "initial": .null, "stored": .bool(true), "source": .string("stored"),
                    ])
                ]))
        let none = try await tool("--store", store, "list", "lastMesageId")
        #expect(none.status == 1)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr == "prefs-tool: error: no key matches \"lastMesageId\"; did you mean \"lastMessageId\"?\n")
    }

    @Test("--json on a terminal escapes C1 controls, DEL and bidirectional overrides; in a pipe the JSON is as serialized")
    func jsonOnTerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        let prefs = try Prefs(.sqlite(URL(fileURLWithPath: store)))
        try prefs.setStoredValue(StoredValue(type: .string, json: .string(Self.hostile)), forKey: "multi")
        try prefs.setStoredValue(
            StoredValue(
                type: .json,
                json: .object([
                    "presentations": .int(1), "lastResponse": .string("ok\u{202E}"),
                ])), forKey: "dialogs.\u{202E}evil")
        let escaped = #""a\nb\tc\\d\r\u001b[31mred\u009b2J\u007f\u202eevil\u2066""#
        for arguments in [["list", "--json"], ["get", "multi", "--json"], ["export"], ["export", "-"], ["dialogs", "--json"]] {
            let terminal = try await toolOnTerminal(["--store", store] + arguments)
            #expect(terminal.status == 0, "\(arguments): \(terminal)")
            #expect(
                !terminal.stdout.unicodeScalars.contains {
                    (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
                },
                "\(arguments): \(terminal.stdout)")
            #expect(!terminal.stdout.contains("\u{1B}"), "\(arguments)")
            if arguments[0] != "dialogs" { #expect(terminal.stdout.contains(escaped), "\(arguments): \(terminal.stdout)") }
            #expect(terminal.stdout.contains(#"\u202e"#), "\(arguments)")
            // Still JSON, meaning the same document as the pipe gets.
            let piped = try await tool(["--store", store] + arguments)
            #expect(try JSON.parse(terminal.stdout) == JSON.parse(piped.stdout), "\(arguments)")
            #expect(piped.stdout.contains("\u{202E}"), "a pipe gets the serializer's text")
        }
    }

    @Test("get on a terminal shows a newline as \\n, not \\u{A}")
    func getOnTerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.json").path
        #expect(try await tool("--store", store, "set", "two", "line 1\nline 2").status == 0)
        #expect(try await toolOnTerminal(["--store", store, "get", "two"]).stdout == "line 1\\nline 2\n")
        #expect(try await tool("--store", store, "get", "two").stdout == "line 1\nline 2\n", "a pipe gets the exact text")
    }

    @Test("help fits 80 columns: the overview and every command's help")
    func helpWidth() async throws {
        let overview = try await tool("--help")
        var lines = overview.stdout.split(separator: "\n").map(String.init)
        for name in ["list", "get", "set", "reset", "stores", "export", "import", "diff", "migrate", "watch", "check", "dialogs", "feed", "demo"] {
            let help = try await tool("help", name)
            #expect(help.status == 0 && help.stdout.hasPrefix("usage: "), "\(name)")
            lines += help.stdout.split(separator: "\n").map(String.init)
        }
        let long = lines.filter { $0.count > 80 }
        #expect(long.isEmpty, "\(long)")
    }
}
