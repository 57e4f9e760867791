import Foundation

// The command line: options for a run, and the child modes the run spawns.

let usage =
    "usage: prefs-bench [--quick] [--json-out PATH] [--svg-out PATH] [--sizes N,N,…] [--workloads 1,2,…]"
    + " | --summary RESULTS.json [--svg-out PATH] | --help"

let help = """
    \(usage)

    Times every Prefs backend beside the baselines a user would otherwise choose (Dictionary+Mutex,
    raw sqlite3, JSONEncoder/JSONDecoder with an atomic replace, UserDefaults) in the same run, and
    prints medians, spread, operations per second and ratios, with the targets met or missed.

      --quick            N = 1,000 only, few rounds (what CI runs)
      --json-out PATH    the results as JSON (default .build/prefs-bench-results.json)
      --svg-out PATH     an SVG chart of the target ratios
      --sizes N,N,…      key counts (default 1000,10000,100000)
      --workloads 1,2,…  which workloads to run (default all: 1 get, 2 set, 3 batch, 4 coalesced JSON,
                         5 cold start, 6 concurrent, 7 DialogGate, 8 peak memory, 9 PostgreSQL
                         against raw libpq on a private server, skipped when initdb is missing, 10 app launch
                         with 200 and 1,000 keys of mixed types, 11 Codable values)
      --summary PATH     print a run's targets and peak memory (its --json-out file) as Markdown tables,
                         as Benchmarks.md shows them (CI checks the page against the committed run);
                         with --svg-out PATH also the run's chart
      --help             this text

    Run it with: swift run -c release prefs-bench
    Tables go to stdout, progress to stderr. Exit status 0, or 64 for bad arguments.
    """

struct Options {
    var quick = false
    var jsonOut = ".build/prefs-bench-results.json"
    var svgOut: String?
    var sizes: [Int]?
    var workloads: Set<Int> = Set(1...Options.lastWorkload)
    static let lastWorkload = 11
}

enum Command {
    case run(Options)
    case help
    /// Markdown tables of a committed run, and its chart when asked: `--summary RESULTS.json [--svg-out PATH]`.
    case summary(path: String, svgOut: String?)
    /// A fresh process that opens a store and reads one key: `--child-cold-start KIND PATH KEY [int|string]`.
    case coldStart(kind: String, path: String, key: String, valueType: String)
    /// A fresh process that fills a store and reports its peak RSS: `--child-peak-memory KIND N`.
    case peakMemory(kind: String, n: Int)
    /// A fresh process that opens a launch store and reads its 20 keys: `--child-launch KIND PATH N`.
    case launch(kind: String, path: String, n: Int)
}

struct UsageError: Error { var message: String }

func parseArguments(_ arguments: [String]) throws(UsageError) -> Command {
    var options = Options()
    var rest = arguments[...]
    func value(for flag: String) throws(UsageError) -> String {
        guard let value = rest.popFirst(), !value.hasPrefix("--") else { throw UsageError(message: "\(flag) needs a value") }
        return value
    }
    func integers(for flag: String) throws(UsageError) -> [Int] {
        let list = try value(for: flag).split(separator: ",").map { Int($0) }
        guard !list.isEmpty, list.allSatisfy({ ($0 ?? 0) > 0 }) else { throw UsageError(message: "\(flag) takes positive integers separated by commas") }
        return list.map { $0! }
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--help", "-h": return .help
        case "--summary":
            let path = try value(for: argument)
            if rest.first == "--svg-out" {
                rest.removeFirst()
                let svg = try value(for: "--svg-out")
                if rest.isEmpty { return .summary(path: path, svgOut: svg) }
            }
            guard rest.isEmpty else { throw UsageError(message: "--summary takes one results file and, optionally, --svg-out PATH") }
            return .summary(path: path, svgOut: nil)
        case "--quick": options.quick = true
        case "--json-out": options.jsonOut = try value(for: argument)
        case "--svg-out": options.svgOut = try value(for: argument)
        case "--sizes": options.sizes = try integers(for: argument)
        case "--workloads":
            options.workloads = Set(try integers(for: argument))
            guard options.workloads.isSubset(of: 1...Options.lastWorkload) else {
                throw UsageError(message: "workloads are 1 to \(Options.lastWorkload)")
            }
        case "--child-cold-start":
            guard rest.count == 3 || rest.count == 4 else { throw UsageError(message: "--child-cold-start KIND PATH KEY [int|string]") }
            let parts = Array(rest)
            return .coldStart(kind: parts[0], path: parts[1], key: parts[2], valueType: parts.count == 4 ? parts[3] : "int")
        case "--child-launch":
            guard rest.count == 3, let n = Int(rest.last!) else { throw UsageError(message: "--child-launch KIND PATH N") }
            return .launch(kind: rest.first!, path: Array(rest)[1], n: n)
        case "--child-peak-memory":
            guard rest.count == 2, let n = Int(rest.last!) else { throw UsageError(message: "--child-peak-memory KIND N") }
            return .peakMemory(kind: rest.first!, n: n)
        default: throw UsageError(message: "unknown argument \(argument)")
        }
    }
    return .run(options)
}
