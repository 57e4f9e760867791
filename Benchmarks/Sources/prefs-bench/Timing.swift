import Foundation

// Timing: a monotonic clock, repeated rounds that interleave contenders, median and spread.

let clock = ContinuousClock()

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Keeps a value alive and opaque to the optimizer, so the work that produced it is not removed.
@_optimize(none) @inline(never)
func blackHole<T>(_ value: T) {}

/// One timed sample: how many operations ran and how long they took together.
struct Trial {
    var ops: Int
    var elapsed: Duration
    /// Parts of the sample timed on their own (a flush after sets, the open+read inside a process), by name.
    var phases: [String: Trial] = [:]
}

/// Times `body`, which performs `ops` operations.
@inline(__always)
func timed(ops: Int, _ body: () throws -> Void) rethrows -> Trial {
    let start = clock.now
    try body()
    return Trial(ops: ops, elapsed: clock.now - start)
}

/// Median and spread of a set of samples, in nanoseconds.
struct Stats: Codable {
    var median: Double
    var min: Double
    var max: Double
    var q1: Double
    var q3: Double
    var samples: Int

    init(_ values: [Double]) {
        precondition(!values.isEmpty, "no samples")
        let sorted = values.sorted()
        func quantile(_ q: Double) -> Double {
            let position = q * Double(sorted.count - 1)
            let lower = Int(position.rounded(.down)), upper = Int(position.rounded(.up))
            return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
        }
        median = quantile(0.5)
        min = sorted[0]
        max = sorted[sorted.count - 1]
        q1 = quantile(0.25)
        q3 = quantile(0.75)
        samples = sorted.count
    }
}

/// Something timed in a workload: a Prefs backend (the subject) or a baseline it is compared with.
struct Contender {
    enum Role: String, Codable { case subject, baseline }

    /// A prepared contender: `run(round, ops)` performs one timed sample; `finish` releases its files.
    struct Prepared {
        var run: (_ round: Int, _ ops: Int) throws -> Trial
        var finish: () -> Void = {}
    }

    var name: String
    var role: Role
    /// The most operations a sample may perform (the workload's N, or fewer when an operation touches all N keys).
    var maxOps: Int
    /// Whether the sample size is chosen from a probe so that one sample takes about the round budget.
    var adaptive = false
    /// What this contender's main metric is called when it differs from the workload's.
    var metric: String? = nil
    var prepare: () throws -> Prepared
}

/// How many rounds to run and how long one sample may take.
struct Budget {
    var rounds: Int
    var minRounds: Int
    /// The time one adaptive sample aims for.
    var sample: Duration
    /// After this much total time a contender stops being sampled (once it has `minRounds` samples).
    var perContender: Duration
}

/// Runs every contender in interleaved rounds (A B C, A B C, …) so that a slow phase of a noisy machine
/// affects them alike, and every contender the same number of rounds (the run stops, for all, once it has
/// `minRounds` and one contender has spent its budget), so that ratios can be taken round by round.
/// Returns the per-operation times in nanoseconds, by contender name, in round order.
func runRounds(_ contenders: [Contender], budget: Budget, label: String) throws -> [String: (perOp: [Double], ops: Int)] {
    var prepared: [Contender.Prepared] = []
    defer { prepared.forEach { $0.finish() } }
    var opsPerSample: [Int] = []
    for contender in contenders {
        let ready = try contender.prepare()
        prepared.append(ready)
        var ops = contender.maxOps
        if contender.adaptive {
            // Probe with a few operations (also a warm-up), then size the sample to the budget.
            let probeOps = Swift.min(3, contender.maxOps)
            let probe = try ready.run(-1, probeOps)
            let perOp = Swift.max(probe.elapsed.nanoseconds / Double(probeOps), 1)
            ops = Swift.max(probeOps, Swift.min(contender.maxOps, Int(budget.sample.nanoseconds / perOp)))
        }
        opsPerSample.append(ops)
    }
    var results = [[Double]](repeating: [], count: contenders.count)
    var phases = [[String: (perOp: [Double], ops: Int)]](repeating: [:], count: contenders.count)
    var spent = [Duration](repeating: .zero, count: contenders.count)
    for round in 0..<budget.rounds {
        if round >= budget.minRounds, spent.contains(where: { $0 > budget.perContender }) { break }
        progress("\(label): round \(round + 1)/\(budget.rounds)")
        for index in contenders.indices {
            let trial = try prepared[index].run(round, opsPerSample[index])
            spent[index] += trial.elapsed
            results[index].append(trial.elapsed.nanoseconds / Double(trial.ops))
            for (name, phase) in trial.phases {
                phases[index][name, default: ([], phase.ops)].perOp.append(phase.elapsed.nanoseconds / Double(phase.ops))
            }
        }
    }
    var byName: [String: (perOp: [Double], ops: Int)] = [:]
    for (index, contender) in contenders.enumerated() {
        byName[contender.name] = (results[index], opsPerSample[index])
        for (name, phase) in phases[index] { byName[contender.name + " · " + name] = phase }
    }
    return byName
}

/// Projects how long `n` operations take from runs of n/20 and n/10, assuming time grows as k^exponent:
/// lets a workload skip a contender whose cost grows faster than linearly instead of running for minutes.
func projectedTime(n: Int, _ run: (Int) throws -> Duration) rethrows -> (seconds: Double, exponent: Double) {
    let small = max(n / 20, 1), large = max(n / 10, 2)
    let t1 = try run(small).nanoseconds, t2 = try run(large).nanoseconds
    let exponent = max(1, log(t2 / max(t1, 1)) / log(Double(large) / Double(small)))
    return (t2 * pow(Double(n) / Double(large), exponent) / 1e9, exponent)
}

/// Progress goes to stderr; stdout carries only the tables.
func progress(_ message: String) {
    FileHandle.standardError.write(Data(("· " + message + "\n").utf8))
}

/// Human forms of times and rates.
enum Format {
    static func time(_ nanoseconds: Double) -> String {
        switch nanoseconds {
        case ..<1_000: return String(format: "%.0f ns", nanoseconds)
        case ..<10_000: return String(format: "%.2f µs", nanoseconds / 1e3)
        case ..<1_000_000: return String(format: "%.1f µs", nanoseconds / 1e3)
        case ..<10_000_000: return String(format: "%.2f ms", nanoseconds / 1e6)
        case ..<1_000_000_000: return String(format: "%.1f ms", nanoseconds / 1e6)
        default: return String(format: "%.2f s", nanoseconds / 1e9)
        }
    }

    static func rate(_ perSecond: Double) -> String {
        switch perSecond {
        case ..<1_000: return String(format: "%.1f/s", perSecond)
        case ..<1_000_000: return String(format: "%.1f k/s", perSecond / 1e3)
        default: return String(format: "%.2f M/s", perSecond / 1e6)
        }
    }

    static func ratio(_ ratio: Double) -> String {
        switch ratio {
        case ..<0.01: return String(format: "%.4f×", ratio)
        case ..<0.1: return String(format: "%.3f×", ratio)
        case ..<100: return String(format: "%.2f×", ratio)
        default: return String(format: "%.0f×", ratio)
        }
    }

    static func count(_ n: Int) -> String {
        n >= 1000 && n % 1000 == 0 ? "\(n / 1000)k" : "\(n)"
    }
}
