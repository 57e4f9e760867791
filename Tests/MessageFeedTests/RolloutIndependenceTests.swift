@testable import MessageFeed
import Foundation
import TestFixtures
import PrefsTestHarness
import PrefsTesting
import Testing

/// Rollout buckets of one installation for different messages are independent: two rollouts overlap in the share
/// of installations independence predicts, within a few standard deviations.
@Suite("Rollout buckets")
struct RolloutIndependenceTests {
    /// Installation ids as MessageCenter makes them (UUID strings), from a fixed seed.
    static let installations: [String] = {
        var generator = SeededGenerator(seed: 17)
        return (0..<20_000).map { _ in
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                )
            ).uuidString
        }
    }()

    /// Whether each installation is in a `percent` rollout of `messageId`.
    static func included(_ messageId: Int, _ percent: Int) -> [Bool] {
        installations.map { MessageTargeting.rolloutBucket(installationId: $0, messageId: messageId) < percent }
    }

    /// `count` is within `sigmas` standard deviations of a binomial with `trials` and probability `p`.
    static func isNear(_ count: Int, trials: Int, p: Double, sigmas: Double = 5) -> Bool {
        let mean = Double(trials) * p
        return abs(Double(count) - mean) <= sigmas * (mean * (1 - p)).squareRoot()
    }

    @Test(
        "two rollouts overlap as independent draws would, for several pairs of messages and percentages",
        arguments: [
            (1, 10, 2, 10), (2, 50, 3, 50), (1, 30, 7, 20), (41, 10, 42, 10), (100, 50, 101, 10), (9, 1, 10, 99),
        ])
    func overlapsAreIndependent(first: Int, firstPercent: Int, second: Int, secondPercent: Int) {
        let a = Self.included(first, firstPercent), b = Self.included(second, secondPercent)
        let n = Self.installations.count
        let inA = a.filter { $0 }.count, inB = b.filter { $0 }.count
        let both = zip(a, b).filter { $0 && $1 }.count
        let p = Double(firstPercent) / 100, q = Double(secondPercent) / 100
        #expect(Self.isNear(inA, trials: n, p: p), "message \(first): \(inA) of \(n) at \(firstPercent)%")
        #expect(Self.isNear(inB, trials: n, p: q), "message \(second): \(inB) of \(n) at \(secondPercent)%")
        #expect(
            Self.isNear(both, trials: n, p: p * q),
            "messages \(first) and \(second): \(both) in both, \(Double(n) * p * q) expected of independent rollouts")
    }

    @Test("the buckets of one message are uniform: chi-square over 100 buckets within 5 standard deviations of its mean")
    func bucketsAreUniform() {
        var counts = [Int](repeating: 0, count: 100)
        for installation in Self.installations { counts[MessageTargeting.rolloutBucket(installationId: installation, messageId: 5)] += 1 }
        let expected = Double(Self.installations.count) / 100
        let chiSquare = counts.reduce(0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        #expect(chiSquare < 99 + 5 * (2 * 99.0).squareRoot(), "chi-square \(chiSquare) with 99 degrees of freedom")
    }

    @Test(
        "SHA-256 gives the FIPS 180-4 test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (String(repeating: "a", count: 1_000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
        ])
    func sha256(input: String, digest: String) {
        #expect(SHA256.hash(Array(input.utf8)).map { String(format: "%02x", $0) }.joined() == digest)
    }
}
