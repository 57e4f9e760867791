import Foundation
import Prefs

// Workload 11: Codable values. A Codable set costs what JSONEncoder costs plus what the store costs to keep the encoded
// text; a first read (the store opened anew) costs the store's read of that text plus JSONDecoder. The baselines do
// exactly that with the same store: encode with JSONEncoder and set the text as a String, or read the String and
// decode it with JSONDecoder, so a ratio above 1 is what Prefs adds by converting a Codable value more than once.

/// A Codable value of the size apps keep (a window's state, an onboarding record).
struct BenchRecord: Codable, Hashable, PrefsStorable {
    var title: String
    var count: Int
    var ratio: Double
    var enabled: Bool
    var tags: [String]
    var origin: [String: Int]

    static func make(_ index: Int, variant: Int) -> BenchRecord {
        BenchRecord(
            title: "record-\(index)-\(variant)", count: index &* 31 &+ variant, ratio: Double(index) / 16, enabled: index % 2 == 0,
            tags: ["a\(index)", "b\(variant)"], origin: ["x": index, "y": variant])
    }

    static let empty = BenchRecord(title: "", count: 0, ratio: 0, enabled: false, tags: [], origin: [:])
}

extension Bench {
    func codableValues(n: Int) throws {
        let names = (0..<n).map { "r\($0)" }
        let textNames = (0..<n).map { "t\($0)" }
        let keys = names.map { Prefs.Key($0, initial: BenchRecord.empty) }
        let textKeys = textNames.map { Prefs.Key($0, initial: "") }
        let values = (0..<2).map { variant in (0..<n).map { BenchRecord.make($0, variant: variant) } }
        let info = (n: n, label: "N = \(Format.count(n)), Codable", type: "Codable")

        // Sets into a memory store: Prefs' own Codable set, against JSONEncoder and a set of the encoded text.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let setContenders = [
            Contender(name: "JSONEncoder + Prefs memory set of the text", role: .baseline, maxOps: n) {
                let prefs = try Prefs(.memory)
                return .init { round, ops in
                    let batch = values[(round + 2) % 2]
                    return try timed(ops: ops) {
                        for i in 0..<ops { try prefs.set(String(decoding: try encoder.encode(batch[i]), as: UTF8.self), for: textKeys[i]) }
                    }
                }
            },
            Contender(name: "Prefs memory · Codable set", role: .subject, maxOps: n) {
                let prefs = try Prefs(.memory)
                return .init { round, ops in
                    let batch = values[(round + 2) % 2]
                    return try timed(ops: ops) { for i in 0..<ops { try prefs.set(batch[i], for: keys[i]) } }
                }
            },
        ]
        try measure(
            workload: 11, title: "Codable set: one encoding per write", data: info, contenders: setContenders, metric: "set",
            phaseDisplay: .perOperation,
            rules: [Rule(subject: "Prefs memory · Codable set", baseline: "JSONEncoder + Prefs memory set of the text", target: .within(1.3))])

        // First reads in a SQLite store opened anew each round: the Codable key against its text read as a String and
        // decoded with JSONDecoder.
        let directory = Scratch.directory("codable")
        defer { Scratch.remove(directory) }
        let storage = Backend.sqlite.storage(in: directory)
        do {
            let prefs = try Prefs(storage)
            try prefs.batch { transaction in
                for i in 0..<n {
                    try transaction.set(values[0][i], for: keys[i])
                    try transaction.set(String(decoding: try encoder.encode(values[0][i]), as: UTF8.self), for: textKeys[i])
                }
            }
            try prefs.close()
            let reopened = try Prefs(storage)
            guard reopened[keys[n - 1]] == values[0][n - 1] else { throw BenchError("workload 11: the Codable value did not read back") }
            try reopened.close()
        }
        let budget = settings.budget(n)
        let maxOps = max(1, n / (budget.rounds + 2))
        func firstReads(_ name: String, _ role: Contender.Role, _ read: @escaping (Prefs, Int) throws -> BenchRecord) -> Contender {
            Contender(name: name, role: role, maxOps: maxOps, adaptive: true) {
                let next = Counter()
                return .init { _, ops in
                    let prefs = try Prefs(storage)
                    defer { try? prefs.close() }
                    let start = next.value
                    next.value += ops
                    return try timed(ops: ops) { for i in start..<start + ops { blackHole(try read(prefs, i % n)) } }
                }
            }
        }
        let decoder = JSONDecoder()
        try measure(
            workload: 11, title: "Codable first read: one decoding per read", data: info,
            contenders: [
                firstReads("Prefs sqlite first get of the text + JSONDecoder", .baseline) { prefs, i in
                    try decoder.decode(BenchRecord.self, from: Data(prefs[textKeys[i]].utf8))
                },
                firstReads("Prefs sqlite · Codable first get", .subject) { prefs, i in prefs[keys[i]] },
            ],
            metric: "first get", phaseDisplay: .perOperation,
            rules: [
                Rule(
                    subject: "Prefs sqlite · Codable first get", baseline: "Prefs sqlite first get of the text + JSONDecoder",
                    target: .within(1.3))
            ])
    }
}
