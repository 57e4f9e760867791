import BenchSQLite
import Foundation

// prefs-bench: parses the arguments and dispatches. See --help.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("prefs-bench: \(message)\n".utf8))
    exit(status)
}

let command: Command
do {
    command = try parseArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.message)\n\(usage)", status: 64)
}

switch command {
case .help:
    print(help)
case .summary(let path, let svgOut):
    do {
        print(try Report.markdownSummary(of: path), terminator: "")
        if let svgOut {
            let document = try JSONDecoder().decode(Report.Document.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            try Report.writeSVG(document.measurements, to: svgOut)
        }
    } catch {
        fail("\(path): \(error)", status: 1)
    }
case .coldStart(let kind, let path, let key, let valueType):
    do { try childColdStart(kind: kind, path: path, key: key, valueType: valueType) } catch { fail("\(error)", status: 1) }
case .launch(let kind, let path, let n):
    do { try childLaunch(kind: kind, path: path, n: n) } catch { fail("\(error)", status: 1) }
case .peakMemory(let kind, let n):
    do { try childPeakMemory(kind: kind, n: n) } catch { fail("\(error)", status: 1) }
case .run(let options):
    let sizes = options.sizes ?? (options.quick ? [1_000] : [1_000, 10_000, 100_000])
    let bench = Bench(settings: Settings(quick: options.quick))
    #if DEBUG
    let build = "debug"
    #else
    let build = "release"
    #endif
    let host = [
        "cores": "\(ProcessInfo.processInfo.activeProcessorCount)",
        "os": ProcessInfo.processInfo.operatingSystemVersionString,
        "sqlite": String(cString: sqlite3_libversion()),
        "build": build,
    ]
    print(
        "prefs-bench \(options.quick ? "--quick " : "")· \(build) build · \(host["cores"]!) cores · SQLite \(host["sqlite"]!) · N = \(sizes.map(Format.count).joined(separator: ", "))"
    )
    print("Times are medians over interleaved rounds; ratio = this contender's time ÷ the baseline's (below 1: faster).")
    do {
        try bench.run(sizes: sizes, workloads: options.workloads)
    } catch {
        Scratch.removeAll()
        fail("\(error)", status: 1)
    }
    Report.printTargets(bench.recorder.measurements)
    for note in bench.recorder.notes { print("  note: \(note)") }
    let document = Report.Document(
        date: ISO8601DateFormatter().string(from: Date()), quick: options.quick, sizes: sizes, host: host,
        measurements: bench.recorder.measurements, peakMemory: bench.recorder.memory, notes: bench.recorder.notes)
    do {
        try Report.writeJSON(document, to: options.jsonOut)
        progress("results: \(options.jsonOut)")
        if let svg = options.svgOut {
            try Report.writeSVG(bench.recorder.measurements, to: svg)
            progress("chart: \(svg)")
        }
    } catch {
        Scratch.removeAll()
        fail("writing results: \(error)", status: 1)
    }
    Scratch.removeAll()
}
