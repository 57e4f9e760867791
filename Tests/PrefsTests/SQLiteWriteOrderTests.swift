import Foundation
@testable import Prefs
import PrefsSQLite
import PrefsTestHarness
import Testing

/// The order an SQLite commit writes its rows in: every row once, by the bytes of its key, whatever the keys share.
@Suite("SQLite write order")
struct SQLiteWriteOrderTests {
    /// Keys alike in their first eight bytes (compared whole), shorter than eight bytes (a prefix of another), empty,
    /// alike but for the eighth byte, non-ASCII, and alike in some bytes only (a radix pass skipped, one not).
    static let awkward = [
        "prefs.app.b", "prefs.app.a", "prefs.app", "prefs.ap", "prefs.apq", "prefs.app.aa", "", "p", "pr", "prefs.apz",
        "caf\u{E9}", "cafe", "caf\u{E9}s", "z", "\u{1F600}", "k10", "k9", "k100", "k1", "k0", "K", "~",
        "abcdefgh", "abcdefgi", "abcdefg", "abcdefgh\u{0}", "abcdefgh0", "abcdefgg",
    ]

    /// `keys` as the commit sorts them.
    static func sorted(_ keys: [String]) -> [String] {
        var entries = keys.enumerated().map { KeyOrder.KeyOrdered(prefix: KeyOrder.leadingBytes($1), key: $1, value: $0) }
        KeyOrder.sortByKey(&entries)
        #expect(entries.allSatisfy { keys[$0.value] == $0.key }, "each key keeps its value")
        return entries.map(\.key)
    }

    /// `keys` sorted by their UTF-8 bytes, the order SQLite's `BINARY` collation keeps.
    static func byteOrder(_ keys: [String]) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    @Test("the awkward keys come out in byte order, each once")
    func awkwardKeys() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            let keys = Self.awkward.shuffled(using: &random)
            #expect(Self.sorted(keys) == Self.byteOrder(keys))
        }
    }

    @Test("random keys of random lengths come out in byte order", arguments: [UInt64(1), 2, 3])
    func randomKeys(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        // Few letters, so that many keys share their first bytes, and lengths around eight.
        let letters = Array("ab\u{E9}.Z")
        var keys = Set<String>()
        while keys.count < 3_000 {
            keys.insert(String((0..<Int.random(in: 0...12, using: &random)).map { _ in letters.randomElement(using: &random)! }))
        }
        let shuffled = Array(keys).shuffled(using: &random)
        #expect(Self.sorted(shuffled) == Self.byteOrder(shuffled))
    }

    @Test("keys under one long prefix are sorted by their following bytes, eight at a time, to their last byte")
    func sharedPrefixes() {
        var random = SeededGenerator(seed: 5)
        // 19 and 27 shared bytes: runs alike in two and three windows of eight, whose keys end before, at and after a
        // window's end (16, 24, 32 bytes), some alike but for trailing NULs, and more of them than a run compares whole.
        var keys = Set<String>()
        for (prefix, total) in [("settings.display.ab", 1_500), ("settings.display.abcdefg.xy", 3_000)] {
            while keys.count < total {
                let tail = String((0..<Int.random(in: 0...14, using: &random)).map { _ in "a.\u{0}9\u{E9}".randomElement(using: &random)! })
                keys.insert(prefix + tail)
            }
        }
        keys.formUnion(["settings.display", "settings.display.", "settings.display.ab\u{0}", "settings.display.ab\u{0}\u{0}"])
        let shuffled = Array(keys).shuffled(using: &random)
        #expect(Self.sorted(shuffled) == Self.byteOrder(shuffled))
    }

    @Test("a commit's change table is visited in byte order, each row once with its own change")
    func changeTableOrder() throws {
        let names = (0..<3_000).map { "com.example.app.settings.\($0 % 10).item-\($0)" }
        let changes = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, Changeset.Change.set($0.storedValue())) })
        var visited: [(String, Changeset.Change)] = []
        try SQLiteBackend.forEachInKeyOrder(ChangeTable(changes)) { key, change throws(SQLiteError) in visited.append((key, change)) }
        #expect(visited.map(\.0) == Self.byteOrder(names))
        #expect(visited.allSatisfy { changes[$0.0] == $0.1 })
    }

    /// A value the sort must move, not copy or drop.
    final class Box {
        let key: String
        init(_ key: String) { self.key = key }
    }

    @Test("keys and values held on the heap are moved whole: each entry keeps its own, and none is kept after")
    func heapEntries() {
        var random = SeededGenerator(seed: 11)
        // Longer than a small string's 15 bytes, so each key is a heap object too.
        let keys = (0..<2_000).map { "preferences.section\($0 % 7).name-\(Int.random(in: 0..<1_000_000, using: &random))-\($0)" }
        weak var watched: Box?
        do {
            var entries = keys.map { KeyOrder.KeyOrdered(prefix: KeyOrder.leadingBytes($0), key: $0, value: Box($0)) }
            watched = entries[0].value
            KeyOrder.sortByKey(&entries)
            #expect(entries.map(\.key) == Self.byteOrder(keys))
            #expect(entries.allSatisfy { $0.value.key == $0.key })
            #expect(watched != nil)
        }
        #expect(watched == nil, "the sorted array held the last reference")
    }

    @Test("a large commit visits every row once, with its own value, in byte order")
    func largeCommit() throws {
        let rows = Dictionary(uniqueKeysWithValues: (0..<5_000).map { ("k\($0)", $0) })
        var visited: [(String, Int)] = []
        try SQLiteBackend.forEachInKeyOrder(rows) { key, value throws(SQLiteError) in visited.append((key, value)) }
        #expect(visited.map(\.0) == Self.byteOrder(Array(rows.keys)))
        #expect(visited.allSatisfy { rows[$0.0] == $0.1 })
    }
}
