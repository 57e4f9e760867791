import Foundation

// What a run found: one measurement per contender and metric, with ratios to baselines and targets.

/// A reported target: met when the subject's time divided by the baseline's is at most `maxRatio`.
struct Target: Codable {
    var maxRatio: Double
    var text: String

    static func within(_ factor: Double) -> Target { Target(maxRatio: factor, text: "≤\(Format.ratio(factor))") }
    static func faster(by factor: Double) -> Target { Target(maxRatio: 1 / factor, text: "≥\(Int(factor))× faster") }
}

/// Subject time ÷ baseline time (below 1: the subject is faster), with the target when there is one.
struct Comparison: Codable {
    var baseline: String
    var ratio: Double
    var target: Target?
    var met: Bool?
}

struct Measurement: Codable {
    enum Display: String, Codable {
        /// Time per operation (reads, sets).
        case perOperation
        /// Time of the whole sample (a flush of N keys, a process).
        case total
    }

    var workload: Int
    var n: Int
    var valueType: String
    var contender: String
    var role: Contender.Role
    /// What was timed: "get", "set", "flush", "process", "reads", …
    var metric: String
    var display: Display
    /// Operations per sample; the stats are per operation.
    var opsPerSample: Int
    var nanosecondsPerOperation: Stats
    var operationsPerSecond: Double
    var comparisons: [Comparison] = []
    var note: String?

    /// The median of what the table shows (per operation or per sample).
    var shownMedian: Double { display == .total ? nanosecondsPerOperation.median * Double(opsPerSample) : nanosecondsPerOperation.median }
    var id: String { "\(contender) · \(metric)" }
}

struct PeakMemory: Codable {
    var contender: String
    var n: Int
    /// VmHWM after making the keys and values, before the store.
    var baseKiB: Int
    /// VmHWM at the end: after filling the store and reading every key.
    var peakKiB: Int
    /// The heap in use then (before the store closes) less the heap in use at the base: what the contender keeps.
    /// Nil in runs before it was measured, and where malloc cannot tell.
    var heapBytes: Int?
}

/// One row of a comparison rule: `subject` against `baseline`, optionally with a target.
struct Rule {
    var subject: String
    var baseline: String
    var target: Target?
}

/// Collects every measurement of the run.
final class Recorder {
    var measurements: [Measurement] = []
    var memory: [PeakMemory] = []
    var notes: [String] = []
    /// Measurements of the current table, printed by `flush`.
    private var pending: [Measurement] = []

    /// Turns the rounds of one group into measurements, with the comparisons of `rules`. A result named
    /// "X" is contender X's main metric; "X · phase" is a phase of it. Rules name either.
    func record(
        workload: Int, n: Int, valueType: String, contenders: [Contender], results: [String: (perOp: [Double], ops: Int)],
        metric: String, display: Measurement.Display = .perOperation,
        phaseDisplay: Measurement.Display = .total, rules: [Rule], notes: [String: String] = [:]
    ) {
        var group: [(order: Int, main: Bool, measurement: Measurement, perRound: [Double])] = []
        for (id, result) in results where !result.perOp.isEmpty {
            let parts = id.components(separatedBy: " · ")
            let contender = parts[0]
            let isMain = parts.count == 1
            let stats = Stats(result.perOp)
            let order = contenders.firstIndex { $0.name == contender } ?? contenders.count
            let role = order < contenders.count ? contenders[order].role : .subject
            let mainMetric = (order < contenders.count ? contenders[order].metric : nil) ?? metric
            group.append(
                (
                    order, isMain,
                    Measurement(
                        workload: workload, n: n, valueType: valueType, contender: contender, role: role,
                        metric: isMain ? mainMetric : parts[1], display: isMain ? display : phaseDisplay,
                        opsPerSample: result.ops, nanosecondsPerOperation: stats,
                        operationsPerSecond: 1e9 / stats.median, note: notes[id]), result.perOp
                ))
        }
        func find(_ name: String) -> Int? {
            group.firstIndex { $0.measurement.id == name } ?? group.firstIndex { $0.main && $0.measurement.contender == name }
        }
        for rule in rules {
            guard let subject = find(rule.subject), let baseline = find(rule.baseline) else { continue }
            let base = group[baseline].measurement
            let ratio = Self.ratio(group[subject].perRound, to: group[baseline].perRound)
            group[subject].measurement.comparisons.append(
                Comparison(
                    baseline: base.id, ratio: ratio, target: rule.target, met: rule.target.map { ratio <= $0.maxRatio }))
        }
        // Baselines first, then subjects, each in the order contenders were given, main metric before phases.
        group.sort { a, b in
            let ka = (a.measurement.role == .baseline ? 0 : 1, a.order, a.main ? 0 : 1, a.measurement.metric)
            let kb = (b.measurement.role == .baseline ? 0 : 1, b.order, b.main ? 0 : 1, b.measurement.metric)
            return ka < kb
        }
        pending.append(contentsOf: group.map(\.measurement))
        measurements.append(contentsOf: group.map(\.measurement))
    }

    /// The median of the round-by-round ratios (each round's subject sample over the same round's baseline sample,
    /// so a slow phase of the machine cancels out); the ratio of the medians when the two have different rounds.
    static func ratio(_ subject: [Double], to baseline: [Double]) -> Double {
        guard subject.count == baseline.count, !subject.isEmpty else { return Stats(subject).median / Stats(baseline).median }
        return Stats(zip(subject, baseline).map { $0 / $1 }).median
    }

    /// Prints the pending rows as one table under `title`.
    func printTable(_ title: String) {
        Report.printTable(title: title, rows: pending)
        pending = []
    }

    func note(_ text: String) {
        guard !notes.contains(text) else { return }
        notes.append(text)
        progress("note: " + text)
    }
}
