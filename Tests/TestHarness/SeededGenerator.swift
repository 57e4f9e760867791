/// SplitMix64: a small, fast generator whose whole sequence follows from its seed, so `--seed N` replays a run
/// and a child process can regenerate the operations its parent expects. Used by the tests and by prefs-torture.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    /// A generator for one part of a run (a round, a process, a thread), independent of the others.
    package init(seed: UInt64, stream: UInt64...) {
        var mixed = SeededGenerator(seed: seed)
        for part in stream { mixed = SeededGenerator(seed: mixed.next() ^ (part &* 0x9E37_79B9_7F4A_7C15)) }
        self = mixed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }
}
