import Foundation
import TestFixtures
import PrefsTestHarness
import PrefsTesting
import Testing
@testable import Prefs
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsJSON
import PrefsSQLite

/// Store files edited by hand or by other programs into shapes Prefs never writes: each used to crash or hang
/// the process that opened them. Each must now open, or fail with a typed error, and change nothing.
@Suite("Hostile store files")
struct HostileStoreFileTests {
    static let a = Prefs.Key<Int?>("a"), b = Prefs.Key<Int?>("b")
    static let rows = Prefs.Key<[[String: Int]]?>("rows")

    /// `levels` brackets around `base`: `[[int]]` for 2.
    static func nested(_ levels: Int, _ base: String = "int") -> String {
        String(repeating: "[", count: levels) + base + String(repeating: "]", count: levels)
    }

    // MARK: - Type names

    /// `ValueType.init?(_:)` recursed once per level, copying the rest of the name each time: a 6,000-level name in a
    /// store's `type` crashed the process with SIGSEGV when it opened the store.
    @Test("a type name nested 6,000 levels is refused, not a crash; 130 levels still parse")
    func deepTypeNames() throws {
        #expect(ValueType(Self.nested(6000)) == nil)
        #expect(ValueType.limitProblem(Self.nested(6000)) == "a type name longer than 2048 bytes")
        #expect(ValueType(Self.nested(131)) == nil, "265 bytes: within the length limit, over the depth limit")
        #expect(ValueType.limitProblem(Self.nested(131)) == "a type name nested more than 130 levels deep")
        #expect(ValueType(Self.nested(130))?.description == Self.nested(130))
        let dictionaries = String(repeating: "[string: ", count: 130) + "date" + String(repeating: "]", count: 130)
        #expect(ValueType(dictionaries)?.description == dictionaries)
        #expect(ValueType(String(repeating: "x", count: 2049)) == nil)
        #expect(ValueType(String(repeating: "x", count: 2048)) == .other(String(repeating: "x", count: 2048)))
        #expect(ValueType.limitProblem("[a b]") == nil, "malformed, not over a limit")
    }

    /// `[int]` and the other arrays of a scalar are read without the general loop (every row of such a value names its
    /// type): only when spelled exactly, never a bracket that a combining mark makes another character.
    @Test("a scalar type is found by its name's bytes, each name as its type's description spells it, and nothing else")
    func scalarTypeNamesByBytes() {
        func lookUp(_ name: String) -> ValueType? {
            var name = name
            return name.withUTF8 { ValueType.scalar(utf8: UnsafeRawBufferPointer($0)) }
        }
        let scalars: [ValueType] = [.bool, .int, .uint, .double, .string, .date, .data, .url, .json]
        for type in scalars {
            #expect(lookUp(type.description) == type)
            #expect(ValueType(type.description) == type)
        }
        let nearMisses = [
            "", "in", "Int", "INT", "int ", " int", "intt", "uin", "uints", "strinG", "doubl", "[int]", "i\u{0}t", "boo\u{0}", "js\u{0}n",
            "\u{0}\u{0}\u{0}", "dat", "datum",
        ]
        for name in nearMisses {
            #expect(lookUp(name) == nil, "\(name.debugDescription)")
        }
        #expect(ValueType("Int") == .other("Int"), "another case is another type")
    }

    @Test("arrays of scalars read as the general parser reads them; a bracket with a combining mark is no bracket")
    func scalarArrayTypeNames() {
        for name in ["bool", "int", "uint", "double", "string", "date", "data", "url", "json"] {
            #expect(ValueType("[\(name)]") == .array(ValueType(name)!), "\(name)")
            #expect(ValueType("[\(name)]")?.description == "[\(name)]")
            #expect(ValueType(" [ \(name) ]") == .array(ValueType(name)!), "trimmed by the general loop")
        }
        #expect(ValueType("[\u{301}int]") == nil, "\"[\u{301}\" is one character, not a bracket")
        #expect(ValueType("[int]\u{301}") == nil)
        #expect(ValueType("[in]") == .array(.other("in")))
        #expect(ValueType("[]") == nil)
    }

    /// The recursive parser took any colon inside the brackets for a dictionary's, so `[[string: int]]`, the type of a
    /// `[[String: Int]]` value, did not parse: the value was written and then not readable as its type.
    @Test(
        "every type's name parses back to the type, an array of dictionaries too",
        arguments: [
            ValueType.array(.dictionary(.int)), .dictionary(.array(.dictionary(.date))), .array(.array(.dictionary(.json))),
            .dictionary(.dictionary(.string)), .array(.other("future.type-2")), .dictionary(.url),
        ])
    func typeNamesRoundTrip(type: ValueType) {
        #expect(ValueType(type.description) == type)
        #expect(ValueType(" \(type.description)\t") == type)
    }

    @Test(
        "names with spaces inside the brackets parse as before",
        arguments: [
            ("[ string : [ int ] ]", ValueType.dictionary(.array(.int))), ("[ [string:date] ]", .array(.dictionary(.date))),
            ("[string]", .array(.string)), ("[stringy: int]", nil), ("[int: string]", nil), ("[]", nil), ("[string: ]", nil),
        ])
    func spacedTypeNames(name: String, expected: ValueType?) {
        #expect(ValueType(name) == expected)
    }

    @Test("a [[String: Int]] value reads back after reopening", arguments: [Backend.json, .sqlite])
    func arrayOfDictionariesSurvivesReopening(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        try Prefs(backend.storage(directory)).set([["x": 1], ["y": 2]], for: Self.rows)
        let reopened = try Prefs(backend.storage(directory))
        #expect(reopened[Self.rows] == [["x": 1], ["y": 2]])
        #expect(try reopened.integrityProblems() == [])
    }

    @Test(
        "a JSON store whose value has an overlong or overdeep type name opens; the value is kept as found, and check reports it",
        arguments: [(6000, "longer than 2048 bytes"), (131, "nested more than 130 levels deep")])
    func jsonStoreWithDeepTypeName(levels: Int, problem: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let type = Self.nested(levels)
        try Data(#"{"formatVersion":1,"values":{"a":{"type":"\#(type)","value":1}}}"#.utf8).write(to: url)

        let prefs = try Prefs(.jsonFile(url))
        #expect(try prefs.storedValue(forKey: "a") == StoredValue(type: .other(type), json: .int(1)))
        #expect(prefs[Self.a] == nil, "a type this release does not read is a mismatch, not a crash")
        let problems = try prefs.integrityProblems()
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("$.values.a: type \"[[[[") == true)
        #expect(problems.first?.hasSuffix(problem) == true)

        try prefs.set(2, for: Self.b)  // a rewrite of the file keeps the entry as found
        let written = try JSON.parse(Data(contentsOf: url))
        #expect(written["values"]?["a"] == .object(["type": .string(type), "value": .int(1)]))
        #expect(written["values"]?["b"] == .object(["type": .string("int"), "value": .int(2)]))
    }

    @Test("a JSON store declaring a key with an overlong type name fails to open with corruptStore, and is not changed")
    func jsonStoreDeclaringDeepTypeName() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let content = Data(#"{"declared":{"a":{"type":"\#(Self.nested(6000))"}},"formatVersion":1,"values":{}}"#.utf8)
        try content.write(to: url)
        let error = #expect(throws: PrefsError.self) { try Prefs(.jsonFile(url)) }
        guard case .corruptStore(_, let reason)? = error else { Issue.record("expected corruptStore, got \(String(describing: error))"); return }
        #expect(reason == "$.declared.a.type: expected a type name such as \"int\", found a type name longer than 2048 bytes")
        #expect(try Data(contentsOf: url) == content)
    }

    @Test("an SQLite store whose prefs.type holds a 6,000-level type name opens; the value is kept, and check reports it")
    func sqliteStoreWithDeepTypeName() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let type = Self.nested(6000)
        let first = try Prefs(.sqlite(url))
        try first.set(1, for: Self.a)
        try first.close()
        let connection = try SQLiteConnection(path: url.path)
        let update = try connection.statement("UPDATE prefs SET type = ?1 WHERE key = 'a'")
        try update.bind(.text(type))
        _ = try update.step()
        update.reset()
        connection.close()

        let prefs = try Prefs(.sqlite(url))
        #expect(try prefs.storedValue(forKey: "a") == StoredValue(type: .other(type), json: .int(1)))
        #expect(prefs[Self.a] == nil)
        let problems = try prefs.integrityProblems()
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("key \"a\": type \"[[[[") == true)
        #expect(problems.first?.hasSuffix("longer than 2048 bytes") == true)
        try prefs.set(2, for: Self.b)
        #expect(try Prefs(.sqlite(url)).storedValue(forKey: "a") == StoredValue(type: .other(type), json: .int(1)))
    }

    @Test("a value whose type nests deeper than 128 levels is refused on write, as it could not be read back as that type")
    func writingATypeTooDeep() throws {
        var type = ValueType.int
        for _ in 0..<129 { type = .array(type) }
        let prefs = try Prefs(.memory)
        #expect(throws: PrefsError.valueTooDeep(key: "a", limit: 128)) {
            try prefs.setStoredValue(StoredValue(type: type, json: .array([])), forKey: "a")
        }
    }

    // MARK: - Files that are not regular files

    /// What is at `path` itself (a symbolic link is not followed): its mode's file type bits and, for a link, its target.
    static func entry(_ path: String) -> (type: mode_t, target: String?) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return (0, nil) }
        return (info.st_mode & S_IFMT, try? FileManager.default.destinationOfSymbolicLink(atPath: path))
    }

    /// Opens the store in a child process (`prefs-test-child open`, memory capped at 1 GiB), so a store that hangs
    /// fails the test instead of stalling the suite: the child is killed after `limit` (nil), a generous guard only.
    static func openInChild(_ kind: String, _ path: String, limit: Duration = .seconds(30)) async throws -> ChildProcess.Result? {
        let (process, out, err) = try ChildProcess.start("prefs-test-child", ["open", kind, path])
        do {
            return try await ChildProcess.finish(process, out, err, timeout: limit)
        } catch is ChildProcess.TimedOut {
            return nil
        }
    }

    /// `FileSystem.contents(of:)` and `prefix(of:count:)` opened the path without `O_NONBLOCK` and read whatever was
    /// there: a FIFO at a store's path hung `prefs-tool list` for ever, and a link to `/dev/zero` read until memory ran out.
    @Test(
        "a FIFO or a link to /dev/zero at the store path fails to open at once with corruptStore, and stays as it was",
        arguments: [("prefs.json", "json"), ("prefs.sqlite", "sqlite"), ("prefs.json", "file"), ("prefs.sqlite", "file"), ("prefs", "file")],
        [true, false])
    func notARegularFile(place: (name: String, kind: String), fifo: Bool) async throws {
        let (name, kind) = place
        let directory = try TemporaryDirectory()
        let path = directory.file(name).path
        if fifo {
            try #require(mkfifo(path, 0o600) == 0)
        } else {
            try #require(symlink("/dev/zero", path) == 0)
        }
        let before = Self.entry(path)

        let reason = fifo ? "not a regular file (a FIFO)" : "not a regular file (a character device)"
        let result = try await Self.openInChild(kind, path)
        guard let result else {
            Issue.record("opening did not return within 30 s")
            return
        }
        guard !result.signaled, result.status == 2, result.stderr.contains(reason) else {
            Issue.record("expected a refusal naming \"\(reason)\", got status \(result.status): \(result.stderr)")
            return  // not again in this process: it could hang or fill the memory here
        }

        // In this process too, now that it returns: the typed error. Recovery is asked for only where a regression
        // would rename a FIFO in the temporary directory, never the device behind the link.
        let url = directory.file(name)
        let expected = PrefsError.corruptStore(path: fifo ? path : "/dev/zero", reason: reason)
        let storages: [Prefs.Storage] =
            switch kind {
            case "json": [.jsonFile(url)] + (fifo ? [.jsonFile(url, recovery: .moveAsideAndStartEmpty)] : [])
            case "sqlite": [.sqlite(url)] + (fifo ? [.sqlite(url, recovery: .moveAsideAndStartEmpty)] : [])
            default: []
            }
        for storage in storages {
            #expect(throws: expected) { try Prefs(storage) }
        }
        if kind == "file" {
            #expect(throws: expected) { try Prefs(.file(url)) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [name], "nothing created beside it")
        #expect(Self.entry(path) == before, "the FIFO or the link is left as it was")
    }

    @Test("a FIFO at a JSON store's lock file fails the write at once with corruptStore; the store is not changed")
    func fifoAtTheLockFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(1, for: Self.a)
        let content = try Data(contentsOf: url)
        let lock = url.path + ".lock"
        try #require(unlink(lock) == 0 && mkfifo(lock, 0o600) == 0)

        let other = try Prefs(.jsonFile(url))
        #expect(throws: PrefsError.corruptStore(path: lock, reason: "not a regular file (a FIFO)")) {
            try other.set(2, for: Self.b)
        }
        #expect(try Data(contentsOf: url) == content)
        #expect(Self.entry(lock).type == S_IFIFO)
    }

    @Test("a directory at the store path still fails with EISDIR", arguments: ["prefs.json", "prefs.sqlite"])
    func directoryAtTheStorePath(name: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        #expect(throws: PrefsError.io(path: url.path, operation: "read", errno: EISDIR)) { try Prefs(.file(url)) }
    }
}
