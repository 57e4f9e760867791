import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting

/// The stores the snapshot part runs on: the file backends, and PostgreSQL on a private server.
enum SnapshotBackend: String, CaseIterable, Sendable {
    case json
    case sqlite
    case postgresql

    /// The storage a process opens: `location` is a file path, or for PostgreSQL the server's URL (namespace "transfer").
    func storage(_ location: String) -> Prefs.Storage {
        switch self {
        case .json: TortureBackend.json.storage(location)
        case .sqlite: TortureBackend.sqlite.storage(location)
        // A long deadline: under this contention a transaction may conflict for a while before it commits.
        case .postgresql: .postgreSQL(location, namespace: "transfer", options: PostgreSQLOptions(timeout: .seconds(60)))
        }
    }
}

// MARK: - Child: transfer until done

/// `--child transfer`: one process's transactions of the snapshot part (``TransferWorkload``). Opens the store, prints
/// `ready`, starts when its stdin closes (so that every process runs at once), then prints the tally
/// (`bodies B torn T committed C`) and `end`.
enum TransferChild {
    static func run(_ options: ChildOptions) throws {
        let name = try options.string("backend")
        guard let backend = SnapshotBackend(rawValue: name) else { throw TortureError("unknown backend \(name)") }
        let prefs = try Prefs(backend.storage(try options.path()))
        say("ready")
        _ = FileHandle.standardInput.readDataToEndOfFile()
        var random = SeededGenerator(seed: try options.seed(), stream: 7, UInt64(try options.integer("process")))
        let tally = try TransferWorkload.run(
            prefs, keys: TransferWorkload.keys(prefix: "t", count: try options.integer("keys")),
            transactions: try options.integer("transactions"), random: &random)
        try prefs.close()
        say(tally.line)
        say("end")
    }
}

// MARK: - Parent: start the processes, add up, check

/// Processes moving value between keys in transactions on one store, each body checking that the keys sum to zero:
/// a body that reads otherwise saw a state that never existed. Every backend must show none, and the keys must sum to
/// zero afterwards with every transaction committed.
struct SnapshotReads {
    struct Report: Sendable {
        var backend: SnapshotBackend
        var processes = 0
        var transactions = 0
        var keys = 0
        var tally = TransferWorkload.Tally()
        var seconds = 0.0
        var failures: [String] = []
        /// Why it could not run here (no PostgreSQL server programs), or nil.
        var skipped: String?
    }

    let processes: Int
    let transactions: Int
    let keys: Int
    let seed: UInt64
    let directory: String

    func run() -> [Report] {
        SnapshotBackend.allCases.map { backend in
            let start = ContinuousClock.now
            var report = Report(backend: backend, processes: processes, transactions: transactions, keys: keys)
            do {
                if backend == .postgresql {
                    let server: TestPostgreSQLServer
                    do {
                        server = try TestPostgreSQLServer()
                    } catch let missing as TestPostgreSQLServer.Missing {
                        report.skipped = missing.description
                        return report
                    }
                    defer { server.stop() }
                    try runOnce(backend, location: server.url, report: &report)
                } else {
                    try runOnce(backend, location: (directory as NSString).appendingPathComponent("transfer-\(backend.rawValue)"), report: &report)
                }
            } catch {
                report.failures.append("\(error)")
            }
            report.seconds = (ContinuousClock.now - start).seconds
            return report
        }
    }

    private func runOnce(_ backend: SnapshotBackend, location: String, report: inout Report) throws {
        let errorLog = (directory as NSString).appendingPathComponent("transfer-stderr.log")
        let children = try (0..<processes).map { process in
            try Subprocess(
                [
                    "--child", "transfer", "--backend", backend.rawValue, "--path", location, "--process", String(process),
                    "--keys", String(keys), "--transactions", String(transactions), "--seed", String(seed),
                ], errorPath: errorLog)
        }
        // Every process opened its store before any starts: they contend from the first transaction.
        for child in children { child.readLines(until: { $0.contains("ready") || $0.last == "end" }, timeout: .seconds(120)) }
        for child in children { child.closeInput() }
        for (process, child) in children.enumerated() {
            child.readLines(until: { $0.last == "end" }, timeout: .seconds(600))
            child.kill()
            child.wait()
            guard child.lines.last == "end", let tally = child.lines.dropLast().last.flatMap(TransferWorkload.Tally.init(line:)) else {
                let stderr = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
                report.failures.append("process \(process) did not finish: \(child.lines.last ?? "no output") \(stderr)")
                continue
            }
            if tally.committed != transactions { report.failures.append("process \(process) committed \(tally.committed) of \(transactions)") }
            report.tally = report.tally + tally
        }
        if report.tally.torn > 0 {
            report.failures.append(
                "\(report.tally.torn) of \(report.tally.bodies) transaction bodies read keys not summing to zero, first \(report.tally.firstTorn ?? [])")
        }
        let prefs = try Prefs(backend.storage(location))
        defer { try? prefs.close() }  // read-only use; nothing to lose
        let values = TransferWorkload.keys(prefix: "t", count: keys).map { prefs[$0] }
        if values.reduce(0, +) != 0 { report.failures.append("the keys hold \(values) afterwards, not summing to zero") }
    }
}
