import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Swift compares strings by canonical equivalence, so `"\u{E9}"` (NFC) and `"e\u{301}"` (NFD) are one key; SQLite
/// compares bytes. One key must never have two stored values.
@Suite("Key names in other Unicode spellings")
struct KeyNormalizationTests {
    static let composed = Prefs.Key<String>("caf\u{E9}", initial: "none")
    static let decomposed = Prefs.Key<String>("cafe\u{301}", initial: "none")

    @Test("NFC and NFD spellings of a name are one key, through a reopen and a reset", arguments: Backend.allCases)
    func oneKey(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.set("A", for: Self.composed)
        try fixture.prefs.set("B", for: Self.decomposed)
        #expect(fixture.prefs[Self.composed] == "B")
        let reopened = try fixture.reopen()
        #expect(reopened[Self.composed] == "B")
        #expect(reopened[Self.decomposed] == "B")
        #expect(try reopened.snapshot().count == 1)
        if backend == .sqlite, let path = fixture.path {
            #expect(try await rows(path) == ["636166C3A9|B"], "one row, spelled in NFC")
        }
        try reopened.resetAll()
        let again = try fixture.reopen()
        #expect(again[Self.decomposed] == "none")
        #expect(try again.snapshot().isEmpty)
    }

    @Test("rows another program wrote in NFD read as the key, the NFC row wins, and a write or reset removes them")
    func foreignSpellings() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("s.sqlite")
        try Prefs(.sqlite(url)).set(1, for: Prefs.Key("other", initial: 0))
        // The NFD row first, so row order alone would let it win.
        _ = try await sqlite(
            url.path,
            """
            INSERT INTO prefs VALUES (CAST(x'63616665CC81' AS TEXT), 'string', 'nfd');
            INSERT INTO prefs VALUES (CAST(x'636166C3A9' AS TEXT), 'string', 'nfc');
            """)
        let prefs = try Prefs(.sqlite(url))
        #expect(prefs[Self.decomposed] == "nfc")
        #expect(try prefs.snapshot().count == 2)
        let problems = try prefs.integrityProblems()
        #expect(problems.contains { $0.contains(#""café" is also stored under 1 spelling(s) not in Unicode NFC"#) }, "\(problems)")

        try prefs.set("new", for: Self.composed)
        #expect(try await rows(url.path) == ["636166C3A9|new", "6F74686572|1"])
        #expect(try Prefs(.sqlite(url))[Self.composed] == "new")

        // Only the NFD spelling: it is the key's value, and a reset removes it.
        _ = try await sqlite(url.path, "DELETE FROM prefs; INSERT INTO prefs VALUES (CAST(x'63616665CC81' AS TEXT), 'string', 'x');")
        let fresh = try Prefs(.sqlite(url))
        #expect(fresh[Self.composed] == "x")
        try fresh.reset(Self.composed)
        #expect(try await rows(url.path) == [])
        #expect(try Prefs(.sqlite(url))[Self.composed] == "none")
    }

    @Test("a large batch (written in key order) replaces an NFD row, removes what it resets, and keeps the rest")
    func largeBatch() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("s.sqlite")
        let keys = (0..<150).map { Prefs.Key<Int>("k\($0)", initial: -1) }
        try Prefs(.sqlite(url)).batch { transaction in for (i, key) in keys.enumerated() { try transaction.set(i, for: key) } }
        _ = try await sqlite(url.path, "INSERT INTO prefs VALUES (CAST(x'63616665CC81' AS TEXT), 'string', 'nfd');")
        let prefs = try Prefs(.sqlite(url))
        try prefs.batch { transaction in
            for (i, key) in keys.enumerated() where i % 3 == 0 { transaction.reset(key) }
            for (i, key) in keys.enumerated() where i % 3 == 1 { try transaction.set(i * 10, for: key) }
            try transaction.set("nfc", for: Self.composed)
        }
        let rows = try await rows(url.path)
        #expect(rows.count == 101, "\(rows.count) rows")
        #expect(rows.contains("636166C3A9|nfc") && !rows.contains { $0.hasPrefix("63616665CC81") }, "the NFD row is replaced")
        let reopened = try Prefs(.sqlite(url))
        for (i, key) in keys.enumerated() {
            #expect(reopened[key] == [-1, i * 10, i][i % 3], "\(key.name)")
        }
        #expect(reopened[Self.decomposed] == "nfc")
    }

    @Test("check reports rows whose key is not text, and they are left alone")
    func nonTextKeys() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("s.sqlite")
        try Prefs(.sqlite(url)).set(1, for: Prefs.Key("a", initial: 0))
        _ = try await sqlite(url.path, "INSERT INTO prefs VALUES (x'00FF', 'int', 2);")
        let prefs = try Prefs(.sqlite(url))
        #expect(try prefs.snapshot().keys.sorted() == ["a"])
        #expect(try prefs.integrityProblems() == ["1 row(s) in prefs have a key that is not text; Prefs ignores them"])
        try prefs.resetAll()
        #expect(try await sqlite(url.path, "SELECT hex(key) FROM prefs;").stdout == "00FF\n")
    }

    private func sqlite(_ path: String, _ sql: String) async throws -> ChildProcess.Result {
        let result = try await ChildProcess.runSystem("/usr/bin/sqlite3", [path, sql])
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    private func rows(_ path: String) async throws -> [String] {
        try await sqlite(path, "SELECT hex(key) || '|' || value FROM prefs ORDER BY key;").stdout
            .split(separator: "\n").map(String.init)
    }
}

/// SQLite's POSIX locks belong to the process, and closing *any* descriptor of the database file drops them all
/// (https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
/// Had opening a second store read the file through a descriptor of its own, the first connection would lose its
/// shared lock; another process closing would then take itself for the last user and delete the WAL under it.
@Suite("SQLite: several stores on one file in one process", .serialized)
struct SQLiteSharedFileTests {
    @Test("opening another store on the same file keeps the first one's locks", arguments: ["s.sqlite", "s-no-extension"])
    func secondStoreKeepsLocks(name: String) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(name)
        let key = Prefs.Key("n", initial: 0)
        let first = try Prefs(.sqlite(url))
        try first.set(1, for: key)
        let second = try Prefs(Prefs.Storage.file(url))
        #expect(second[key] == 1)
        // Another process reads and closes: it must see that this process still has the database open.
        let result = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, "SELECT value FROM prefs;"])
        #expect(result.stdout == "1\n", "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"), "the WAL of an open store was removed")
        try first.set(2, for: key)
        try second.refresh()
        #expect(second[key] == 2)
        #expect(try first.integrityProblems() == [])
    }

    @Test("the 256-byte limit is measured in NFC: both spellings of a name are valid, or neither is")
    func lengthInNFC() {
        let fits = String(repeating: "k", count: 254)
        #expect(KeyName.problem(with: fits + "\u{E9}") == nil)
        #expect(KeyName.problem(with: fits + "e\u{301}") == nil, "257 bytes as given, 256 in NFC")
        let over = String(repeating: "k", count: 255)
        #expect(KeyName.problem(with: over + "\u{E9}") == "a key name is at most 256 bytes; this one is 257")
        #expect(KeyName.problem(with: over + "e\u{301}") == "a key name is at most 256 bytes; this one is 257")
    }
}
