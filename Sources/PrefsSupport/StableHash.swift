/// FNV-1a, 64 bits: a hash that gives the same value in every process, on every platform, forever.
///
/// Swift's `Hasher` is seeded per process, so it cannot decide a rollout bucket or name a stored key.
/// FNV-1a is not cryptographic; it only has to spread installation ids evenly over 100 buckets, and make feed URLs,
/// dialog ids and PostgreSQL namespaces unlikely to collide where they name a key or a channel (each user checks what it
/// found: the feed cache records its URL, a notification carries its namespace).
///
/// ```swift
/// StableHash.fnv1a64("")                  // 0xcbf29ce484222325
/// StableHash.fnv1a64("a")                 // 0xaf63dc4c8601ec8c
/// StableHash.hex("https://example.com/messages.json").count   // 16
/// ```
package enum StableHash {
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    package static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The FNV-1a 64-bit hash of the UTF-8 bytes of `text`.
    package static func fnv1a64(_ text: String) -> UInt64 {
        var hash = offsetBasis
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// The hash as 16 lowercase hex digits.
    package static func hex(_ text: String) -> String {
        hex(fnv1a64(text))
    }

    /// `hash` as 16 lowercase hex digits.
    package static func hex(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
