import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import PrefsJSON

enum JSONTestValues {
    /// Doubles that are easy to get wrong when printing or parsing.
    static let trickyDoubles: [Double] = [
        0.1, 0.2, 0.30000000000000004, 1.0, -1.0, 1e300, -1e300, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 2.2250738585072014e-308,
        1.7976931348623157e308, -0.0, 0.0, 1e-5, 123456789.125, 9007199254740994, 1e21, 1e22, 1e23, 3.14159,
        2.5e-7, 0.000001, 1e16, 4.35, 8.41e21, .leastNormalMagnitude / 3,
    ]

    /// A random finite double: random bit patterns, small decimals or tricky values.
    static func double(_ rng: inout SeededGenerator) -> Double {
        switch rng.next() % 3 {
        case 0:
            let value = Double(bitPattern: rng.next())
            return value.isFinite ? value : 0.5
        case 1:
            return Double(Int64.random(in: -1_000_000...1_000_000, using: &rng)) / 1000
        default:
            return trickyDoubles[Int(rng.next() % UInt64(trickyDoubles.count))]
        }
    }

    /// A random string with ASCII, escapes, controls, U+2028 and non-ASCII.
    static func string(_ rng: inout SeededGenerator) -> String {
        let pieces = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ß", "€", "😀",
            "\u{2028}", "\u{2029}", "\u{FEFF}", "key", "long text without escapes ",
        ]
        let count = Int(rng.next() % 12)
        return (0..<count).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
    }

    /// A random JSON tree up to `depth` levels deep.
    static func value(_ rng: inout SeededGenerator, depth: Int) -> JSON {
        let kind = depth > 0 ? rng.next() % 8 : rng.next() % 6
        switch kind {
        case 0: return .null
        case 1: return .bool(rng.next() & 1 == 0)
        case 2:
            let special: [Int] = [0, 1, -1, .min, .max, .min + 1, .max - 1]
            return .int(rng.next() & 1 == 0 ? Int(truncatingIfNeeded: rng.next()) : special[Int(rng.next() % 7)])
        case 3: return .double(double(&rng))
        case 4, 5: return .string(string(&rng))
        case 6: return .array((0..<Int(rng.next() % 5)).map { _ in value(&rng, depth: depth - 1) })
        default:
            var members: [String: JSON] = [:]
            for _ in 0..<Int(rng.next() % 5) { members[string(&rng)] = value(&rng, depth: depth - 1) }
            return .object(members)
        }
    }
}

/// Compares JSON values treating doubles by bit pattern (so -0.0 differs from 0.0).
func jsonIdentical(_ lhs: JSON, _ rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case let (.double(left), .double(right)): left.bitPattern == right.bitPattern
    case let (.array(left), .array(right)): left.count == right.count && zip(left, right).allSatisfy(jsonIdentical)
    case let (.object(left), .object(right)):
        left.count == right.count && left.allSatisfy { key, value in right[key].map { jsonIdentical(value, $0) } ?? false }
    default: lhs == rhs
    }
}
