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

    /// `keys` sorted by their UTF-8 bytes, the order SQLite's `BINARY` collation keeps.
    static func byteOrder(_ keys: [String]) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    @Test("the awkward keys come out in byte order, each once")
    func awkwardKeys() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            let keys = Self.awkward.shuffled(using: &random)
            let order = SQLiteBackend.keyOrder(of: keys)
            #expect(Set(order).count == keys.count)
            #expect(order.map { keys[Int($0)] } == Self.byteOrder(keys))
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
        let order = SQLiteBackend.keyOrder(of: shuffled)
        #expect(order.map { shuffled[Int($0)] } == Self.byteOrder(shuffled))
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
