// prefs-torture: crash injection, contention, snapshot reads and fault injection against Prefs' stores.
//
//   swift run -c release prefs-torture --quick            under a minute (CI)
//   swift run -c release prefs-torture --long             about 30 minutes (with release 0.1 built and run beside this one)
//   swift run -c release prefs-torture --seed 1234 --json-out figures.json
//
// The same binary is its own child process: `--child KIND …` (see CrashChild, ContentionChild, FaultChild).
import Foundation
import Prefs

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--child" {
    do {
        let options = try ChildOptions(Array(arguments.dropFirst()))
        switch options.kind {
        case "crash": try CrashChild.run(options)
        case "contend": try ContentionChild.run(options)
        case "transfer": try TransferChild.run(options)
        case "release-update", "release-write": try ReleaseChild.run(options)
        default: try FaultChild.run(options)
        }
        exit(0)
    } catch {
        say("error \(error)")
        FileHandle.standardError.write(Data("prefs-torture child: \(error)\n".utf8))
        exit(2)
    }
}

if arguments.contains("--help") || arguments.contains("-h") {
    say(TortureOptions.help)
    exit(0)
}

let options: TortureOptions
do {
    options = try TortureOptions(arguments)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n\(TortureOptions.usage)\n".utf8))
    exit(64)
}

let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-torture-\(getpid())").path
do {
    try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
} catch {
    FileHandle.standardError.write(Data("Error: cannot create \(workDirectory): \(error)\n".utf8))
    exit(74)
}
say("prefs-torture: \(options.mode.rawValue) mode, seed \(options.seed) (replay with --seed \(options.seed)), working in \(workDirectory)")

var summary = Summary(seed: options.seed, mode: options.mode)
let started = ContinuousClock.now

func subdirectory(_ name: String) -> String {
    let path = (workDirectory as NSString).appendingPathComponent(name)
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)  // a failure shows as the store failing to open
    return path
}

if options.parts.contains(.crash) {
    for backend in TortureBackend.allCases {
        say("crash injection [\(backend.rawValue)]: \(options.killsPerBackend) kills…")
        let report = CrashInjection(
            backend: backend, rounds: options.killsPerBackend, seed: options.seed,
            directory: subdirectory("crash-\(backend.rawValue)"), verbose: options.verbose
        ).run()
        for failure in report.failures { say("  FAILED: \(failure)") }
        summary.crash.append(report)
    }
}

if options.parts.contains(.contention) {
    for backend in TortureBackend.fileBackends {
        say(
            "contention [\(backend.rawValue)]: \(options.contentionProcesses) processes × \(options.contentionThreads) threads, "
                + "\(options.contentionRuns) × \(options.contentionSeconds) s…")
        let report = Contention(
            backend: backend, runs: options.contentionRuns, processes: options.contentionProcesses,
            threads: options.contentionThreads, seconds: options.contentionSeconds, seed: options.seed,
            directory: subdirectory("contention-\(backend.rawValue)")
        ).run()
        for failure in report.failures { say("  FAILED: \(failure)") }
        summary.contention.append(report)
    }
}

if options.parts.contains(.snapshots) {
    say(
        "snapshot reads [\(SnapshotBackend.allCases.map(\.rawValue).joined(separator: ", "))]: \(options.snapshotProcesses) processes × "
            + "\(options.snapshotTransactions) transactions moving value between \(options.snapshotKeys) keys…")
    summary.snapshots = SnapshotReads(
        processes: options.snapshotProcesses, transactions: options.snapshotTransactions, keys: options.snapshotKeys, seed: options.seed,
        directory: subdirectory("snapshots")
    ).run()
    for report in summary.snapshots {
        for failure in report.failures { say("  FAILED [\(report.backend.rawValue)]: \(failure)") }
        if let skipped = report.skipped { say("  skipped [\(report.backend.rawValue)]: \(skipped)") }
    }
}

if options.parts.contains(.faults) {
    say("faults…")
    summary.faults = Faults(directory: subdirectory("faults"), verbose: options.verbose).run()
}

if options.runsReleases {
    say("releases: 0.1 (built from its commit) and this release on the same stores…")
    summary.releases = ReleaseCompatibility(directory: subdirectory("releases"), rounds: options.releaseRounds, verbose: options.verbose).run()
    for check in summary.releases where !check.passed { say("  FAILED: \(check.name): \(check.detail)") }
}

summary.seconds = (ContinuousClock.now - started).seconds
say("")
say(summary.table())
if let path = options.jsonOut {
    do {
        var data = summary.json().serializedData(.pretty)
        data.append(0x0A)
        try data.write(to: URL(fileURLWithPath: path))
    } catch {
        FileHandle.standardError.write(Data("Error: cannot write \(path): \(error)\n".utf8))
    }
}
if options.keep {
    say("kept \(workDirectory)")
} else {
    try? FileManager.default.removeItem(atPath: workDirectory)  // best effort: a leftover temporary directory loses nothing
}
if !summary.passed {
    say("\nFAILED:")
    for failure in summary.failures { say("  \(failure)") }
}
if summary.passed, !summary.complete {
    say("\nINCOMPLETE (exit 3\(options.allowSkips ? ", but --allow-skips: exit 0" : ""); run as root, or install PostgreSQL, for these):")
    for skipped in summary.skipped { say("  \(skipped)") }
    if !options.allowSkips { exit(3) }
}
exit(summary.passed ? 0 : 1)
