import Foundation
import Prefs
import PrefsJSON

/// The command line: `prefs-torture [--quick | --long] [--seed N] [--json-out PATH] [--only PARTS] [--keep] [--verbose]`.
struct TortureOptions {
    enum Mode: String { case quick, long }
    enum Part: String, CaseIterable { case crash, contention, snapshots, faults, releases }

    var mode = Mode.quick
    var seed = UInt64.random(in: 1...999_999)
    var jsonOut: String?
    var parts = Set(Part.allCases)
    /// Whether `--only` chose the parts (then `releases` runs in quick mode too).
    var partsChosen = false
    var keep = false
    var verbose = false
    /// Exit 0 even when fault checks could not run here (they are still listed as skipped).
    var allowSkips = false

    /// Kills per backend configuration (JSON, SQLite, coalesced JSON).
    var killsPerBackend: Int { mode == .quick ? 40 : 1000 }
    /// How long the processes contend, per backend.
    var contentionSeconds: Int { mode == .quick ? 10 : 240 }
    /// Contention runs per backend (each with a fresh store).
    var contentionRuns: Int { mode == .quick ? 1 : 2 }
    let contentionProcesses = 3
    let contentionThreads = 2
    /// Processes of the snapshot part, per backend, and the transactions each commits.
    var snapshotProcesses: Int { mode == .quick ? 6 : 8 }
    var snapshotTransactions: Int { mode == .quick ? 250 : 1000 }
    let snapshotKeys = 4
    /// Whether release 0.1 is built and run beside this one: in long mode, or when `--only` names it.
    var runsReleases: Bool { parts.contains(.releases) && (mode == .long || partsChosen) }
    /// Rounds of both releases writing one store at once, per backend.
    var releaseRounds: Int { mode == .quick ? 1 : 5 }

    static let usage =
        "usage: prefs-torture [--quick | --long] [--seed N] [--json-out PATH] [--only crash,contention,snapshots,faults,releases] [--keep] [--verbose] [--allow-skips]"

    static let help = """
        prefs-torture: crash injection, multi-process contention, snapshot reads and fault injection against Prefs' stores.

        \(usage)

          --quick            under a minute: 40 kills per backend, 10 s of contention per backend, 6 × 250 transfer
                             transactions per backend (JSON, SQLite, PostgreSQL), every fault (default; CI)
          --long             about 30 minutes: 1000 kills per backend, 2 × 4 min of contention per backend, 8 × 1000
                             transfer transactions per backend, every fault, and
                             release 0.1 built from its commit (Tests/Releases/build-release.sh; $PREFS_RELEASE_BUILDS keeps
                             the build) writing the same stores as this release at once
          --seed N           replay a run: the same seed gives the same operations and kill plans
          --json-out PATH    also write the summary figures as JSON
          --only PARTS       run some parts only: crash, contention, snapshots, faults, releases (comma-separated)
          --keep             keep the working directory (its path is printed)
          --verbose          one line per round
          --allow-skips      exit 0 even when fault checks could not run here (a tmpfs needs root); still listed
          -h, --help         this help

        Exit status: 0 when every check passed, 1 when a write was lost or torn, a transaction body read a torn state, or a
        fault was mishandled, 3 when every check that ran passed but some could not run here (a tmpfs needs root, the
        PostgreSQL case its server programs; unless --allow-skips), 64 on a usage error.
        """

    /// Parses the arguments; throws a usage message.
    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(for option: String) throws -> String {
            guard let next = rest.popFirst() else { throw TortureError("\(option) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            var argument = argument
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                rest.insert(String(argument[argument.index(after: equals)...]), at: rest.startIndex)
                argument = String(argument[..<equals])
            }
            switch argument {
            case "--quick": mode = .quick
            case "--long": mode = .long
            case "--seed":
                let text = try value(for: argument)
                guard let number = UInt64(text) else { throw TortureError("--seed expects a non-negative integer, not \"\(text)\"") }
                seed = number
            case "--json-out": jsonOut = try value(for: argument)
            case "--only":
                let names = try value(for: argument).split(separator: ",").map(String.init)
                parts = []
                partsChosen = true
                for name in names {
                    guard let part = Part(rawValue: name) else {
                        throw TortureError("unknown part \"\(name)\"; the parts are crash, contention, snapshots, faults, releases")
                    }
                    parts.insert(part)
                }
            case "--keep": keep = true
            case "--verbose": verbose = true
            case "--allow-skips": allowSkips = true
            default: throw TortureError("unknown option \"\(argument)\"")
            }
        }
    }
}

/// The arguments of a `--child KIND --name value …` invocation.
struct ChildOptions {
    let kind: String
    private var values: [String: String] = [:]

    init(_ arguments: [String]) throws {
        guard let kind = arguments.first else { throw TortureError("--child needs a kind") }
        self.kind = kind
        var index = 1
        while index + 1 < arguments.count, arguments[index].hasPrefix("--") {
            values[String(arguments[index].dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        guard index == arguments.count else { throw TortureError("--child \(kind): cannot read \(arguments[index...])") }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw TortureError("--child \(kind) needs --\(name)") }
        return value
    }

    func integer(_ name: String, default fallback: Int? = nil) throws -> Int {
        guard let text = values[name] else {
            if let fallback { return fallback }
            throw TortureError("--child \(kind) needs --\(name)")
        }
        guard let number = Int(text) else { throw TortureError("--\(name) expects an integer") }
        return number
    }

    func path() throws -> String { try string("path") }
    func seed() throws -> UInt64 { UInt64(try integer("seed")) }

    func backend() throws -> TortureBackend {
        let name = try string("backend")
        guard let backend = TortureBackend(rawValue: name) else { throw TortureError("unknown backend \(name)") }
        return backend
    }

    func durability() throws -> Prefs.Durability {
        values["durability"] == "powerLoss" ? .powerLoss : .processCrash
    }
}
