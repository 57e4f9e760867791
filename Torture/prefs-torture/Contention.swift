import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import PrefsSupport

/// The keys contending processes share and own.
enum ContentionKeys {
    static let counters = (0..<4).map { "shared\($0)" }
    /// Incremented together in one transaction: always equal.
    static let pair = ("pairA", "pairB")
    static let ownPerThread = 3

    static func own(process: Int, thread: Int, index: Int) -> String { "own.p\(process).t\(thread).\(index)" }

    /// A value a thread writes to its own key: a header naming the write, then a payload derived from it,
    /// so a torn or mixed value is recognized wherever it is read.
    static func ownValue(process: Int, thread: Int, sequence: Int, length: Int) -> String {
        "p\(process)t\(thread)#\(sequence):" + payload(sequence, length: length)
    }

    static func payload(_ sequence: Int, length: Int) -> String {
        let unit = "\(sequence),"
        return String(String(repeating: unit, count: length / unit.count + 1).prefix(length))
    }

    /// Nil when `value` is one an own-key writer could have written; otherwise what is wrong with it.
    static func problem(withOwnValue value: String) -> String? {
        guard let colon = value.firstIndex(of: ":"), let hash = value.firstIndex(of: "#"), hash < colon,
            let sequence = Int(value[value.index(after: hash)..<colon])
        else { return "no header" }
        let payloadText = value[value.index(after: colon)...]
        return payloadText == payload(sequence, length: payloadText.count)[...] ? nil : "payload does not match its header"
    }
}

// MARK: - Child: contend until the deadline

/// `--child contend`: several threads share one store instance and, until the deadline, increment shared
/// counters atomically, write their own keys, and read everything back checking that no value is torn.
/// At the end it prints what was acknowledged: `inc KEY N`, `pair N`, `last KEY VALUE`, `count KIND N`.
enum ContentionChild {
    struct Tally: Sendable {
        var increments: [String: Int] = [:]
        var pairIncrements = 0
        var last: [String: String] = [:]
        var counts: [String: Int] = [:]
        var problems: [String] = []
    }

    static func run(_ options: ChildOptions) throws {
        let backend = try options.backend()
        let process = try options.integer("process")
        let threads = try options.integer("threads")
        let seconds = try options.integer("seconds")
        let processes = try options.integer("processes")
        let seed = try options.seed()
        let prefs = try Prefs(backend.storage(try options.path()))
        let deadline = ContinuousClock.now + .seconds(seconds)
        let tallies = Locked<[Tally]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededGenerator(seed: seed, stream: 4, UInt64(process), UInt64(thread))
            let tally = contend(
                prefs, process: process, thread: thread, processes: processes,
                threads: threads, until: deadline, random: &random)
            tallies.withLock { $0.append(tally) }
        }
        var total = Tally()
        for tally in tallies.withLock({ $0 }) {
            total.increments.merge(tally.increments, uniquingKeysWith: +)
            total.pairIncrements += tally.pairIncrements
            total.last.merge(tally.last) { _, new in new }
            total.counts.merge(tally.counts, uniquingKeysWith: +)
            total.problems += tally.problems
        }
        for (key, count) in total.increments.sorted(by: { $0.key < $1.key }) { say("inc \(key) \(count)") }
        say("pair \(total.pairIncrements)")
        for (key, value) in total.last.sorted(by: { $0.key < $1.key }) { say("last \(key) \(value)") }
        for (kind, count) in total.counts.sorted(by: { $0.key < $1.key }) { say("count \(kind) \(count)") }
        for problem in total.problems.prefix(20) { say("problem \(problem)") }
        say("end")
    }

    private static func contend(
        _ prefs: Prefs, process: Int, thread: Int, processes: Int, threads: Int,
        until deadline: ContinuousClock.Instant, random: inout SeededGenerator
    ) -> Tally {
        var tally = Tally()
        var sequence = 0
        let counters = ContentionKeys.counters.map { Prefs.Key<Int>($0, initial: 0) }
        let pairA = Prefs.Key<Int>(ContentionKeys.pair.0, initial: 0), pairB = Prefs.Key<Int>(ContentionKeys.pair.1, initial: 0)
        let ownKeys = (0..<ContentionKeys.ownPerThread).map {
            Prefs.Key<String?>(ContentionKeys.own(process: process, thread: thread, index: $0))
        }
        let everyOwnName = (0..<processes).flatMap { p in
            (0..<threads).flatMap { t in (0..<ContentionKeys.ownPerThread).map { ContentionKeys.own(process: p, thread: t, index: $0) } }
        }
        func count(_ kind: String) { tally.counts[kind, default: 0] += 1 }
        func problem(_ text: String) { tally.problems.append("p\(process)t\(thread): \(text)") }

        while ContinuousClock.now < deadline {
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case ..<30:
                    let index = Int.random(in: 0..<counters.count, using: &random)
                    try prefs.update(counters[index]) { $0 += 1 }
                    tally.increments[counters[index].name, default: 0] += 1
                    count("increments")
                case ..<40:
                    try prefs.transaction { transaction in
                        transaction[pairA] += 1
                        transaction[pairB] += 1
                    }
                    tally.pairIncrements += 1
                    count("increments")
                case ..<75:
                    sequence += 1
                    let key = ownKeys.randomElement(using: &random)!
                    let length = random.chance(0.1) ? Int.random(in: 500...4000, using: &random) : Int.random(in: 0...80, using: &random)
                    let value = ContentionKeys.ownValue(process: process, thread: thread, sequence: sequence, length: length)
                    try prefs.set(value, for: key)
                    tally.last[key.name] = value
                    count("sets")
                case ..<90:
                    let name = random.chance(0.5) ? everyOwnName.randomElement(using: &random)! : ContentionKeys.counters.randomElement(using: &random)!
                    if let stored = try prefs.storedValue(forKey: name) { check(name, stored, problem) }
                    count("reads")
                case ..<95:
                    let (a, b) = try prefs.transaction { transaction in (transaction[pairA], transaction[pairB]) }
                    if a != b { problem("a transaction read pairA = \(a), pairB = \(b)") }
                    count("reads")
                default:
                    try prefs.refresh()
                    let snapshot = try prefs.snapshot()
                    for (name, stored) in snapshot { check(name, stored, problem) }
                    if snapshot[pairA.name] != snapshot[pairB.name] {
                        problem("a snapshot holds pairA = \(snapshot[pairA.name]?.preview() ?? "-"), pairB = \(snapshot[pairB.name]?.preview() ?? "-")")
                    }
                    count("reads")
                }
            } catch {
                problem("error: \(error)")
                count("errors")
            }
        }
        return tally
    }

    private static func check(_ name: String, _ stored: StoredValue, _ problem: (String) -> Void) {
        if name.hasPrefix("own.") {
            guard stored.type == .string, case .string(let text) = stored.json else { return problem("\(name) holds \(stored)") }
            if let reason = ContentionKeys.problem(withOwnValue: text) { problem("\(name) holds a torn value (\(reason)): \(stored.preview(limit: 60))") }
        } else {
            guard stored.type == .int, case .int(let number) = stored.json, number >= 0 else { return problem("\(name) holds \(stored)") }
        }
    }
}

// MARK: - Parent: start the processes, add up, compare

/// Several processes × threads on one store for a bounded time; afterwards every shared counter equals the
/// acknowledged increments (no lost update) and every own key holds its last acknowledged value.
struct Contention {
    struct Report: Sendable {
        var backend: TortureBackend
        var runs = 0
        var processes = 0
        var threads = 0
        var seconds = 0.0
        var increments = 0
        var sets = 0
        var reads = 0
        var failures: [String] = []
        var operations: Int { increments + sets + reads }
    }

    let backend: TortureBackend
    let runs: Int
    let processes: Int
    let threads: Int
    let seconds: Int
    let seed: UInt64
    let directory: String

    func run() -> Report {
        var report = Report(backend: backend, processes: processes, threads: threads)
        let start = ContinuousClock.now
        for run in 0..<runs {
            do {
                try runOnce(run, report: &report)
            } catch {
                report.failures.append("run \(run): \(error)")
            }
            report.runs += 1
        }
        report.seconds = (ContinuousClock.now - start).seconds
        return report
    }

    private func runOnce(_ run: Int, report: inout Report) throws {
        let path = (directory as NSString).appendingPathComponent("contention-\(run)-\(backend.fileName)")
        let errorLog = (directory as NSString).appendingPathComponent("contention-stderr.log")
        let children = try (0..<processes).map { process in
            try Subprocess(
                [
                    "--child", "contend", "--backend", backend.rawValue, "--path", path, "--process", String(process),
                    "--processes", String(processes), "--threads", String(threads), "--seconds", String(seconds),
                    "--seed", String(seed &+ UInt64(run)),
                ], errorPath: errorLog)
        }
        var increments: [String: Int] = [:]
        var pairIncrements = 0
        var last: [String: String] = [:]
        var problems: [String] = []
        for (process, child) in children.enumerated() {
            child.readLines(until: { $0.last == "end" }, timeout: .seconds(seconds + 120))
            child.kill()
            child.wait()
            guard child.lines.last == "end" else {
                let stderr = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
                throw TortureError("process \(process) did not finish: \(child.lines.last ?? "no output") \(stderr)")
            }
            for line in child.lines {
                let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
                switch parts.first {
                case "inc": increments[parts[1], default: 0] += Int(parts[2]) ?? 0
                case "pair": pairIncrements += Int(parts[1]) ?? 0
                case "last": last[parts[1]] = parts.count > 2 ? parts[2] : ""
                case "count":
                    let number = Int(parts[2]) ?? 0
                    switch parts[1] {
                    case "increments": report.increments += number
                    case "sets": report.sets += number
                    case "reads": report.reads += number
                    default: break
                    }
                case "problem": problems.append(line.dropFirst("problem ".count).description)
                default: break
                }
            }
        }
        report.failures += problems.prefix(10).map { "run \(run): \($0)" }

        let prefs = try Prefs(backend.checkerStorage(path))
        defer { try? prefs.close() }  // read-only use; nothing to lose
        let integrity = try prefs.integrityProblems()
        if !integrity.isEmpty { report.failures.append("run \(run): integrity problems: \(integrity.joined(separator: "; "))") }
        let snapshot = try prefs.snapshot()
        func intValue(_ name: String) -> Int {
            if case .int(let number)? = snapshot[name]?.json { return number }
            return 0
        }
        for name in ContentionKeys.counters where intValue(name) != increments[name, default: 0] {
            report.failures.append("run \(run): \(name) is \(intValue(name)) after \(increments[name, default: 0]) acknowledged increments (lost updates)")
        }
        for name in [ContentionKeys.pair.0, ContentionKeys.pair.1] where intValue(name) != pairIncrements {
            report.failures.append("run \(run): \(name) is \(intValue(name)) after \(pairIncrements) acknowledged transactions")
        }
        for (name, value) in last.sorted(by: { $0.key < $1.key }) {
            guard case .string(let found)? = snapshot[name]?.json, found == value else {
                report.failures.append(
                    "run \(run): \(name) holds \(ModelState.short(snapshot[name].map { $0.preview() })), not its last acknowledged value \(ModelState.short(value))"
                )
                continue
            }
        }
    }
}
