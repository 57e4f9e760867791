import Prefs
import PrefsTestHarness
import PrefsTesting

/// What a crash-injection child does, operation by operation. The sequence follows from (seed, round) alone,
/// so the parent regenerates it and knows what every acknowledgement stands for and what was in flight.
///
/// Every value is a `String` unique to its write (`r3.o17.k05:…`), so a value found after a kill names the
/// write it came from, and a torn or mixed value cannot match the model.
struct CrashWorkload {
    enum Operation: CustomStringConvertible {
        case set(key: String, value: String)
        /// One batch: every entry commits or none (`nil` removes).
        case batch([(key: String, value: String?)])
        case reset([String])
        /// `update`: the value becomes `counted(old, tag:)`, a count of the updates it has seen.
        case update(key: String, tag: String)
        /// `transaction`: reads `read`, writes each of `writes` from what it read, and counts `read` up, atomically.
        case transaction(read: String, writes: [String], tag: String)
        /// A second store instance updates `to`, declared with `formerNames: [from]`, leaving its value as it reads it:
        /// a read never writes, so the value under `from` moves with that write (and `from` is settled).
        case rename(from: String, to: String)
        /// Coalesced mode only: `flush()`; what was acknowledged before it returned is promised.
        case flush

        /// The kind of operation, for the report's count of kills by what was in flight.
        var kind: String {
            switch self {
            case .set: "set"
            case .batch: "batch"
            case .reset: "reset"
            case .update: "update"
            case .transaction: "transaction"
            case .rename: "rename"
            case .flush: "flush"
            }
        }

        var description: String {
            switch self {
            case .set(let key, let value): "set \(key) = \(value.prefix(24))…"
            case .batch(let entries): "batch of \(entries.count) (\(entries.map(\.key).joined(separator: ",")))"
            case .reset(let keys): "reset \(keys.joined(separator: ","))"
            case .update(let key, _): "update \(key)"
            case .transaction(let read, let writes, _): "transaction reading \(read), writing \(writes.joined(separator: ","))"
            case .rename(let from, let to): "rename \(from) → \(to)"
            case .flush: "flush"
            }
        }
    }

    /// The keys written: plain ones, and pairs that renames move values between.
    static let plainKeys = (0..<24).map { "k\($0 < 10 ? "0" : "")\($0)" }
    static let renamePairs = (0..<4).map { ("a\($0)", "b\($0)") }
    static let allKeys = plainKeys + renamePairs.flatMap { [$0.0, $0.1] }

    let round: Int
    let coalesced: Bool
    private var random: SeededGenerator
    private(set) var index = 0

    init(seed: UInt64, round: Int, coalesced: Bool) {
        self.round = round
        self.coalesced = coalesced
        random = SeededGenerator(seed: seed, stream: 1, UInt64(round))
    }

    /// The next operation of the sequence.
    mutating func next() -> Operation {
        defer { index += 1 }
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case ..<24:
            let key = Self.allKeys.randomElement(using: &random)!
            return .set(key: key, value: value(for: key))
        case ..<31:
            return .update(key: Self.allKeys.randomElement(using: &random)!, tag: "r\(round).o\(index)")
        case ..<38:
            let keys = Self.allKeys.shuffled(using: &random).prefix(Int.random(in: 2...6, using: &random))
            return .transaction(read: keys.first!, writes: Array(keys.dropFirst()), tag: "r\(round).o\(index)")
        case ..<68:
            let count = Int.random(in: 1...20, using: &random)
            let keys = Self.allKeys.shuffled(using: &random).prefix(count)
            return .batch(keys.map { key in (key, random.chance(0.15) ? nil : value(for: key)) })
        case ..<78:
            let count = Int.random(in: 1...3, using: &random)
            return .reset(Array(Self.allKeys.shuffled(using: &random).prefix(count)))
        case ..<92:
            let (a, b) = Self.renamePairs.randomElement(using: &random)!
            return random.chance(0.5) ? .rename(from: a, to: b) : .rename(from: b, to: a)
        default:
            if coalesced { return .flush }
            let key = Self.allKeys.randomElement(using: &random)!
            return .set(key: key, value: value(for: key))
        }
    }

    /// An update's new value: its tag and the number of updates the key has seen (`r3.o17:u=4`); a value
    /// some other operation wrote counts as 0.
    static func counted(_ old: String?, tag: String) -> String {
        var count = 0
        if let old, let range = old.range(of: ":u=") { count = Int(old[range.upperBound...]) ?? 0 }
        return "\(tag):u=\(count + 1)"
    }

    /// A value a transaction writes from what it read: names the write and the value read (its head, so the
    /// value stays short), so a transaction that read a stale value writes a value the model does not expect.
    static func derived(from seen: String?, key: String, tag: String) -> String {
        "\(tag).\(key):saw=\(seen.map { String($0.prefix(24)) } ?? "nil")"
    }

    /// A value unique to this write; mostly short, sometimes a few KiB so that file writes take longer.
    private mutating func value(for key: String) -> String {
        let length = random.chance(0.1) ? Int.random(in: 1000...8000, using: &random) : Int.random(in: 0...64, using: &random)
        let head = "r\(round).o\(index).\(key):"
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let start = Int.random(in: 0..<alphabet.count, using: &random)
        return head + String((0..<length).map { alphabet[(start + $0) % alphabet.count] })
    }
}

/// The values a store should hold: key → value. The parent's model of what the children did.
typealias ModelState = [String: String]

extension CrashWorkload.Operation {
    /// The state after this operation, given the state before (the store's documented semantics).
    func applied(to state: ModelState) -> ModelState {
        var next = state
        switch self {
        case .set(let key, let value):
            next[key] = value
        case .batch(let entries):
            for (key, value) in entries { next[key] = value }
        case .reset(let keys):
            for key in keys { next[key] = nil }
        case .update(let key, let tag):
            next[key] = CrashWorkload.counted(state[key], tag: tag)
        case .transaction(let read, let writes, let tag):
            for key in writes { next[key] = CrashWorkload.derived(from: state[read], key: key, tag: tag) }
            next[read] = CrashWorkload.counted(state[read], tag: tag)
        case .rename(let from, let to):
            // A value already under the new name wins; otherwise the former name's value moves. Either way the write
            // of the key removes the former name's value.
            if next[to] == nil { next[to] = next[from] }
            next[from] = nil
        case .flush:
            break
        }
        return next
    }
}

extension ModelState {
    /// A store snapshot as a model state; nil (with the reason) when a value is not a string this harness wrote.
    init(snapshot: [String: StoredValue]) throws {
        self.init()
        for (key, stored) in snapshot {
            guard stored.type == .string, case .string(let text) = stored.json else {
                throw TortureError("key \(key) holds \(stored), which no writer wrote")
            }
            self[key] = text
        }
    }

    /// The differences from `expected`, one line per key, for failure reports.
    func differences(from expected: ModelState, limit: Int = 6) -> [String] {
        let keys = Set(keys).union(expected.keys).sorted()
        var lines: [String] = []
        for key in keys where self[key] != expected[key] {
            lines.append("\(key): expected \(Self.short(expected[key])), found \(Self.short(self[key]))")
        }
        return lines.count > limit ? Array(lines.prefix(limit)) + ["… \(lines.count - limit) more"] : lines
    }

    static func short(_ value: String?) -> String {
        guard let value else { return "(absent)" }
        return value.count > 40 ? "\"\(value.prefix(40))…\" (\(value.count) chars)" : "\"\(value)\""
    }
}
