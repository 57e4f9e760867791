import Foundation
@testable import Prefs
import PrefsJSON
import PrefsTestHarness
import Testing

/// The order a compaction writes a document's keys in (``KeyOrder``) against `JSON.keyPrecedes` itself, on keys that
/// share prefixes, differ only past eight bytes, are prefixes of each other, or hold NUL bytes and non-ASCII text.
@Suite("Document key order")
struct KeyOrderTests {
    static func expectOrder(_ keys: [String], _ comment: Comment? = nil) {
        let sorted = KeyOrder.sorted(keys) { $0 }
        #expect(sorted == keys.sorted(by: JSON.keyPrecedes), comment)
    }

    @Test("random keys from a small alphabet, with and without a long shared prefix, sort as keyPrecedes sorts them", arguments: [UInt64(1), 2, 3])
    func randomKeys(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let alphabet: [String] = ["a", "b", "\u{0}", "é", "z", "0", "\u{1F600}"]
        for round in 0..<200 {
            let prefix = round % 3 == 0 ? "" : String(repeating: "com.example.app.", count: round % 3)
            let keys = Set(
                (0..<Int.random(in: 0..<40, using: &random)).map { _ in
                    prefix + (0..<Int.random(in: 0..<14, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
                })
            Self.expectOrder(Array(keys), "round \(round)")
        }
    }

    @Test("keys that tie on their first bytes, keys that are each other's prefixes, one key, none")
    func edges() {
        Self.expectOrder(["abcdefgh1", "abcdefgh", "abcdefgh0", "abcdefgh\u{0}", "abcdefg"])
        Self.expectOrder(["same.prefix.longer.than.eight.bytes.b", "same.prefix.longer.than.eight.bytes.a", "same.prefix"])
        Self.expectOrder(["", "a", "\u{0}"])
        Self.expectOrder(["only"])
        Self.expectOrder([])
        Self.expectOrder((0..<1_000).map { "key\($0)" }.shuffled())
    }
}
