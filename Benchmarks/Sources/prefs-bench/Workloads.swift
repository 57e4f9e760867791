import Foundation

// The run: settings, data sets, and the order of workloads. Each workload is in its own Workloads+*.swift.

struct Settings {
    var quick: Bool

    /// Rounds and sample sizes for one key count.
    func budget(_ n: Int) -> Budget {
        if quick { return Budget(rounds: 5, minRounds: 3, sample: .milliseconds(20), perContender: .milliseconds(400)) }
        switch n {
        case ...2_000: return Budget(rounds: 9, minRounds: 5, sample: .milliseconds(50), perContender: .seconds(2))
        case ...20_000: return Budget(rounds: 7, minRounds: 3, sample: .milliseconds(80), perContender: .seconds(3))
        default: return Budget(rounds: 5, minRounds: 3, sample: .milliseconds(120), perContender: .seconds(3))
        }
    }

    /// How long the concurrent workload runs per round.
    var concurrentDuration: Duration { quick ? .milliseconds(100) : .milliseconds(300) }
    /// How many fresh processes each cold-start contender spawns.
    var coldStarts: Int { quick ? 3 : 7 }
    /// The longest one sample may be projected to take before its contender is skipped (with a note).
    var sampleLimitSeconds: Double { quick ? 10 : 30 }
    /// UserDefaults is skipped above this many keys: here every set rewrites the whole domain as XML (~1 ms per set
    /// at 10k keys) and the XML writer is itself O(N²) (a 100k-key `setPersistentDomain` did not finish in 5 minutes).
    var userDefaultsLimit: Int { 10_000 }
}

final class Bench {
    let settings: Settings
    let recorder = Recorder()
    private var dataSets: [String: Any] = [:]

    init(settings: Settings) {
        self.settings = settings
    }

    /// The keys and values for `n`, made once per run.
    func data<V: BenchValue>(_ n: Int, _: V.Type) throws -> DataSet<V> {
        let id = "\(n)-\(V.label)"
        if let cached = dataSets[id] as? DataSet<V> { return cached }
        let made = try DataSet<V>(n: n)
        dataSets[id] = made
        return made
    }

    func run(sizes: [Int], workloads: Set<Int>) throws {
        let started = clock.now
        func each(_ workload: Int, _ body: (Int) throws -> Void) throws {
            guard workloads.contains(workload) else { return }
            for n in sizes { try body(n) }
        }
        try each(1) { n in
            try typedGet(data(n, Int.self)); try typedGet(data(n, String.self))
        }
        try each(2) { n in
            try singleSet(data(n, Int.self)); try singleSet(data(n, String.self))
        }
        try each(3) { n in
            try batchSet(data(n, Int.self)); try batchSet(data(n, String.self))
        }
        try each(4) { n in
            try coalescedJSON(data(n, Int.self)); try coalescedJSON(data(n, String.self))
        }
        try each(5) { n in
            try coldStart(data(n, Int.self)); try coldStart(data(n, String.self))
        }
        try each(6) { n in
            try concurrent(data(n, Int.self)); try concurrent(data(n, String.self))
        }
        if workloads.contains(7) { try dialogGate() }
        if workloads.contains(8) { for n in settings.quick ? [1_000] : [1_000, 100_000] { try peakMemory(n: n) } }
        if workloads.contains(9) { try postgreSQL(n: sizes.min() ?? 1_000) }
        if workloads.contains(10) { for n in settings.quick ? [200] : [200, 1_000] { try appLaunch(n: n) } }
        if workloads.contains(11) { for n in sizes where n <= 10_000 { try codableValues(n: n) } }
        progress("done in \(Format.time((clock.now - started).nanoseconds))")
    }

    /// Whether UserDefaults runs at `n` keys in `workload`; notes it when not.
    func includesDefaults(_ n: Int, workload: Int) -> Bool {
        if n <= settings.userDefaultsLimit { return true }
        recorder.note(
            "workload \(workload), N = \(Format.count(n)): UserDefaults skipped (above \(Format.count(settings.userDefaultsLimit)) keys; CoreFoundation's plist writer is O(N²) per write here)"
        )
        return false
    }

    /// Runs contenders in rounds and records them as one table.
    func measure(
        workload: Int, title: String, data: (n: Int, label: String, type: String), contenders: [Contender],
        metric: String, display: Measurement.Display = .perOperation, phaseDisplay: Measurement.Display = .total,
        rules: [Rule], notes: [String: String] = [:], budget: Budget? = nil
    ) throws {
        let results = try runRounds(contenders, budget: budget ?? settings.budget(data.n), label: "\(workload). \(title), \(data.label)")
        recorder.record(
            workload: workload, n: data.n, valueType: data.type, contenders: contenders,
            results: results, metric: metric, display: display, phaseDisplay: phaseDisplay, rules: rules, notes: notes)
        recorder.printTable("\(workload). \(title) · \(data.label)")
    }
}

extension DataSet {
    var info: (n: Int, label: String, type: String) { (n, label, V.label) }
}

// Contender names shared by workloads.
enum Name {
    static let dictionary = "Dictionary+Mutex"
    /// Workload 8's contenders that set their keys one at a time.
    static let memoryOneByOne = "Prefs memory, one by one"
    static let dictionaryOneByOne = "Dictionary+Mutex, one by one"
    static let rawAutocommit = "raw sqlite3 autocommit"
    static let rawTransaction = "raw sqlite3 one transaction"
    static let rawSQLite = "raw sqlite3"
    static let rawRows = "raw sqlite3, rows only"
    static let rawTyped = "raw sqlite3, typed rows"
    static let jsonEncoder = "JSONEncoder + atomic replace"
    static let jsonDecoder = "JSONDecoder"
    static let defaults = "UserDefaults"
    static let write2 = "one write(2) of the same journal line"
    static let lmdb = "LMDB"
    static let lmdbNoSync = "LMDB MDB_NOSYNC"
    static let lmdbTransaction = "LMDB MDB_NOSYNC one transaction"
}
