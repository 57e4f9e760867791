import Testing
@testable import MessageFeed
import PrefsTestHarness
import PrefsTesting
import PrefsJSON

@Suite("Version")
struct VersionTests {
    /// A version known to be valid.
    private func v(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Version {
        try #require(Version(text), sourceLocation: sourceLocation)
    }

    // MARK: - Parsing

    @Test(
        "valid versions keep their components as written",
        arguments: [
            ("1", [1]), ("17.0", [17, 0]), ("17.0.1", [17, 0, 1]), (" 2.0028\n", [2, 28]),
            ("0", [0]), ("999999999", [999_999_999]), ("1.2.3.4.5.6.7.8", [1, 2, 3, 4, 5, 6, 7, 8]),
            ("\t007.08", [7, 8]),
        ])
    func validVersions(text: String, components: [Int]) {
        #expect(Version(text)?.components == components)
    }

    @Test("description joins the components, trailing zeros kept")
    func description() throws {
        #expect(try v("17.0").description == "17.0")
        #expect(try v("17.0.0").description == "17.0.0")
        #expect(try v("2.0028").description == "2.28")
        #expect(try Version(v("1.10").description) == v("1.10"))
    }

    @Test(
        "strict parsing rejects everything but digits and dots",
        arguments: [
            "", " ", "1.", ".1", "1..2", "v1", "1.2-beta", "-1", "1e3", "+1", "1.2.", "1 2", "1,2", "١", "½",
            "17.0 (21A329)", "1.*", "0x10", "1.2.3.4.5.6.7.8.9",
        ])
    func rejected(text: String) {
        #expect(Version(text) == nil)
    }

    @Test(
        "overflow-sized numbers are rejected, never trapped",
        arguments: [
            "99999999999999999999999", "1.99999999999999999999999", "1000000000", "9223372036854775808",
            "18446744073709551616.1",
        ])
    func overflow(text: String) {
        #expect(Version(text) == nil)
        #expect(Version(lenient: text) == nil)
    }

    @Test("init(components:) validates count and range")
    func componentsInit() {
        #expect(Version(components: [17, 4, 1])?.description == "17.4.1")
        #expect(Version(components: []) == nil)
        #expect(Version(components: [-1]) == nil)
        #expect(Version(components: [1_000_000_000]) == nil)
        #expect(Version(components: Array(repeating: 1, count: 9)) == nil)
        #expect(Version(components: [999_999_999])?.components == [999_999_999])
    }

    @Test("LosslessStringConvertible round-trips")
    func lossless() throws {
        for text in ["1", "17.0", "1.2.3", "0.0.0.1"] {
            #expect(try Version(v(text).description)?.components == v(text).components)
        }
    }

    // MARK: - Comparison traps

    @Test("1.10 is above 1.9 (numeric, not lexical)")
    func numericNotLexical() throws {
        #expect(try v("1.10") > v("1.9"))
        #expect(try v("1.9") < v("1.10"))
        #expect(try v("10") > v("9"))
    }

    @Test("missing components count as zero: 16 == 16.0, 17 == 17.0.0 with equal hashes")
    func zeroPadding() throws {
        #expect(try v("16") == v("16.0"))
        #expect(try !(v("16") < v("16.0")) && !(v("16.0") < v("16")))
        #expect(try v("17") == v("17.0.0"))
        #expect(try v("17").hashValue == v("17.0.0").hashValue)
        #expect(try Set([v("17"), v("17.0"), v("17.0.0")]).count == 1)
        #expect(try v("0") == v("0.0.0"))
        #expect(try v("0").hashValue == v("0.0").hashValue)
        #expect(try v("17.0.1") > v("17"))
        #expect(try v("17") < v("17.0.0.1"))
    }

    @Test("2.0028 is major 2, minor 28: below 3.0, equal to 2.28")
    func leadingZeros() throws {
        #expect(try v("2.0028") < v("3.0"))
        #expect(try v("2.0028") == v("2.28"))
        #expect(try v("2.0028") > v("2.9"))
    }

    @Test("sorting mixes lengths correctly")
    func sorting() throws {
        let sorted = try ["1.10", "1.9", "1", "1.0.1", "0.9.9", "2", "1.9.0"].map { try v($0) }.sorted()
        #expect(sorted.map(\.description) == ["0.9.9", "1", "1.0.1", "1.9", "1.9.0", "1.10", "2"])
    }

    // MARK: - Lenient

    @Test(
        "lenient parsing takes the leading numeric dotted prefix",
        arguments: [
            ("1.2-beta", [1, 2]), ("17.0 (21A329)", [17, 0]), ("1.", [1]), ("  3.4.5  ", [3, 4, 5]),
            ("2.0028rc1", [2, 28]), ("1..2", [1]), ("1.2.3.4.5.6.7.8.9", [1, 2, 3, 4, 5, 6, 7, 8]),
            ("16", [16]), ("5.x", [5]),
        ])
    func lenient(text: String, components: [Int]) {
        #expect(Version(lenient: text)?.components == components)
    }

    @Test("lenient parsing still needs a leading digit", arguments: ["", "v1.2", "beta", ".1", "-1", " "])
    func lenientRejects(text: String) {
        #expect(Version(lenient: text) == nil)
    }

    // MARK: - Property

    /// The order by definition: zero-pad both to 8 components, compare lexicographically.
    private func reference(_ a: Version, _ b: Version) -> Int {
        let pad = { (v: Version) in v.components + Array(repeating: 0, count: 8 - v.components.count) }
        let (x, y) = (pad(a), pad(b))
        if x == y { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    @Test("comparison is a total order consistent with == and hashing (seeded)", arguments: [1, 42, 20_240_917])
    func totalOrder(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        // Small values and short lengths make ties and trailing zeros common.
        let pool = [0, 0, 0, 1, 2, 9, 10, 28, 999_999_999]
        let versions: [Version] = try (0..<60).map { _ in
            let count = Int.random(in: 1...4, using: &rng)
            let components = (0..<count).map { _ in pool.randomElement(using: &rng) ?? 0 }
            return try #require(Version(components: components))
        }
        for a in versions {
            #expect(a == a && !(a < a))
            for b in versions {
                let expected = reference(a, b)
                // Exactly one of <, ==, > holds, and it agrees with the reference order.
                #expect([a < b, a == b, a > b].filter { $0 }.count == 1)
                #expect((a < b) == (expected < 0) && (a == b) == (expected == 0) && (a > b) == (expected > 0))
                #expect((a < b) == (b > a))
                if a == b { #expect(a.hashValue == b.hashValue) }
                for c in versions.prefix(20) where a <= b && b <= c {
                    #expect(a <= c)
                }
            }
            #expect(Version(a.description) == a)
        }
    }
}
