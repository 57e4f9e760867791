import Foundation
import Prefs
import PrefsJSON

/// The figures of a run: printed as a table, written as JSON with `--json-out`.
struct Summary {
    var seed: UInt64
    var mode: TortureOptions.Mode
    var crash: [CrashInjection.Report] = []
    var contention: [Contention.Report] = []
    var snapshots: [SnapshotReads.Report] = []
    var faults: [Faults.Check] = []
    var releases: [ReleaseCompatibility.Check] = []
    var seconds = 0.0

    var failures: [String] {
        var failures: [String] = crash.flatMap { report in report.failures.map { "crash [\(report.backend.rawValue)] \($0)" } }
        failures += contention.flatMap { report in report.failures.map { "contention [\(report.backend.rawValue)] \($0)" } }
        failures += snapshots.flatMap { report in report.failures.map { "snapshot reads [\(report.backend.rawValue)] \($0)" } }
        failures += faults.filter { $0.outcome == .failed }.map { "fault \"\($0.name)\" [\($0.backend.rawValue)]: \($0.detail)" }
        failures += releases.filter { !$0.passed }.map { "releases \"\($0.name)\": \($0.detail)" }
        return failures
    }

    var passed: Bool { failures.isEmpty }

    /// Checks that could not run here (a tmpfs needs root, the PostgreSQL case its server programs): the run passed
    /// without them, so it is incomplete.
    var skipped: [String] {
        faults.filter { $0.outcome == .skipped }.map { "fault \"\($0.name)\" [\($0.backend.rawValue)]: \($0.detail)" }
            + snapshots.compactMap { report in report.skipped.map { "snapshot reads [\(report.backend.rawValue)]: \($0)" } }
    }

    var complete: Bool { skipped.isEmpty }

    /// The summary table.
    func table() -> String {
        var lines: [String] = []
        if !crash.isEmpty {
            lines.append(
                "Crash injection (SIGKILL at random moments; after each kill the store opens, passes its integrity check and holds exactly the acknowledged writes)"
            )
            lines.append("(kills: after the child's first acknowledged operation / all, including kills before it opened the store)")
            lines.append(row("backend", "kills", "acked ops", "in flight, committed", "unflushed lost", "tmp seen/kept", "seconds", "result"))
            for report in crash {
                lines.append(
                    row(
                        report.backend.rawValue, "\(report.killsAfterFirstAcknowledgement)/\(report.kills)", "\(report.acknowledgedOperations)",
                        "\(report.inFlightCommitted)",
                        report.backend == .jsonCoalesced ? "\(report.unflushedLost)" : "-", "\(report.temporaryFilesSeen)/\(report.temporaryFilesAfterWrite)",
                        String(format: "%.1f", report.seconds), report.failures.isEmpty ? "ok" : "\(report.failures.count) FAILED"))
            }
            let journaled = crash.filter { $0.backend != .sqlite }
            if !journaled.isEmpty {
                lines.append(
                    "  JSON journal: "
                        + journaled.map {
                            "\($0.backend.rawValue) \($0.tornJournalTails) torn tails left by kills (never applied), \($0.compactions) compactions between kills"
                        }.joined(separator: "; "))
            }
            lines.append("")
        }
        if !contention.isEmpty {
            lines.append("Contention (processes × threads on one store; counters equal acknowledged increments, own keys their last value, nothing torn)")
            lines.append(row("backend", "runs", "procs×threads", "increments", "sets", "reads", "seconds", "result"))
            for report in contention {
                lines.append(
                    row(
                        report.backend.rawValue, "\(report.runs)", "\(report.processes)×\(report.threads)", "\(report.increments)",
                        "\(report.sets)", "\(report.reads)", String(format: "%.1f", report.seconds),
                        report.failures.isEmpty ? "ok" : "\(report.failures.count) FAILED"))
            }
            lines.append("")
        }
        if !snapshots.isEmpty {
            lines.append(
                "Snapshot reads (processes moving value between keys in transactions; every body checks the keys sum to zero: a torn read otherwise)")
            lines.append(row("backend", "procs", "committed", "bodies (with reruns)", "torn", "seconds", "result"))
            for report in snapshots {
                let result = report.skipped != nil ? "SKIPPED" : report.failures.isEmpty ? "ok" : "\(report.failures.count) FAILED"
                lines.append(
                    row(
                        report.backend.rawValue, "\(report.processes)", "\(report.tally.committed)", "\(report.tally.bodies)", "\(report.tally.torn)",
                        String(format: "%.1f", report.seconds), result))
            }
            lines.append("")
        }
        if !faults.isEmpty {
            lines.append("Faults (a typed error, nothing lost)")
            for check in faults {
                let mark =
                    switch check.outcome {
                    case .passed: "ok  ";
                    case .failed: "FAIL";
                    case .skipped: "SKIP";
                    case .notApplicable: "n/a "
                    }
                lines.append("  \(mark) \(check.name) [\(check.backend.rawValue)]: \(check.detail)")
            }
            lines.append("")
        }
        if !releases.isEmpty {
            lines.append("Releases (0.1, built from its commit, and this release on the same stores)")
            for check in releases { lines.append("  \(check.passed ? "ok  " : "FAIL") \(check.name): \(check.detail)") }
            lines.append("")
        }
        let passedFaults = faults.count(where: { $0.outcome == .passed })
        let applicable = faults.count(where: { $0.outcome != .notApplicable })
        lines.append(
            "seed \(seed), \(mode.rawValue) mode, \(String(format: "%.0f", seconds)) s: "
                + "\(crash.map(\.killsAfterFirstAcknowledgement).reduce(0, +)) kills after a first acknowledged write survived "
                + "(\(crash.map(\.kills).reduce(0, +)) in all), "
                + "\(contention.map(\.operations).reduce(0, +)) contended operations, "
                + "\(snapshots.map(\.tally.torn).reduce(0, +)) torn of \(snapshots.map(\.tally.bodies).reduce(0, +)) transaction bodies, "
                + "\(passedFaults) of \(applicable) fault checks passed"
                + (complete ? "" : "; INCOMPLETE: \(skipped.count) checks could not run here") + (passed ? "" : "; \(failures.count) FAILURES"))
        return lines.joined(separator: "\n")
    }

    private func row(_ cells: String...) -> String {
        let widths = [16, 7, 11, 21, 15, 15, 8, 10]
        return "  " + zip(cells, widths).map { cell, width in cell.padding(toLength: max(width, cell.count + 1), withPad: " ", startingAt: 0) }.joined()
    }

    /// The figures as JSON, for the README and CI.
    func json() -> JSON {
        .object([
            "seed": .int(Int(seed)),
            "mode": .string(mode.rawValue),
            "seconds": .double((seconds * 10).rounded() / 10),
            "passed": .bool(passed),
            "complete": .bool(complete),
            "skipped": .array(skipped.map(JSON.string)),
            "crash": .array(
                crash.map { report in
                    .object([
                        "backend": .string(report.backend.rawValue), "rounds": .int(report.rounds), "kills": .int(report.kills),
                        "killsAfterFirstAcknowledgement": .int(report.killsAfterFirstAcknowledgement),
                        "operationsKilledInFlight": .object(report.killedInFlight.mapValues(JSON.int)),
                        "acknowledgedOperations": .int(report.acknowledgedOperations), "inFlightCommitted": .int(report.inFlightCommitted),
                        "unflushedLost": .int(report.unflushedLost), "flushesAcknowledged": .int(report.flushesAcknowledged),
                        "freshStarts": .int(report.freshStarts),
                        "temporaryFilesSeen": .int(report.temporaryFilesSeen), "temporaryFilesAfterWrite": .int(report.temporaryFilesAfterWrite),
                        "seconds": .double((report.seconds * 10).rounded() / 10),
                        "tornJournalTails": .int(report.tornJournalTails), "compactions": .int(report.compactions),
                        "failures": .array(report.failures.map(JSON.string)),
                    ])
                }),
            "contention": .array(
                contention.map { report in
                    .object([
                        "backend": .string(report.backend.rawValue), "runs": .int(report.runs), "processes": .int(report.processes),
                        "threads": .int(report.threads), "increments": .int(report.increments), "sets": .int(report.sets),
                        "reads": .int(report.reads), "seconds": .double((report.seconds * 10).rounded() / 10),
                        "failures": .array(report.failures.map(JSON.string)),
                    ])
                }),
            "snapshots": .array(
                snapshots.map { report in
                    .object([
                        "backend": .string(report.backend.rawValue), "processes": .int(report.processes),
                        "transactionsPerProcess": .int(report.transactions), "keys": .int(report.keys), "committed": .int(report.tally.committed),
                        "bodies": .int(report.tally.bodies), "torn": .int(report.tally.torn), "seconds": .double((report.seconds * 10).rounded() / 10),
                        "skipped": report.skipped.map(JSON.string) ?? .null, "failures": .array(report.failures.map(JSON.string)),
                    ])
                }),
            "faults": .array(
                faults.map { check in
                    .object([
                        "name": .string(check.name), "backend": .string(check.backend.rawValue),
                        "outcome": .string(check.outcome.rawValue), "detail": .string(check.detail),
                    ])
                }),
            "releases": .array(
                releases.map { check in .object(["name": .string(check.name), "passed": .bool(check.passed), "detail": .string(check.detail)]) }),
        ])
    }
}
