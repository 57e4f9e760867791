import Foundation
import Prefs
import PrefsJSON
import PrefsPostgreSQL

/// `namespaces [list] [--json]`, `namespaces delete NAME…`, `namespaces prune`, `namespaces history NAME --keep D|--off`:
/// a PostgreSQL database's namespaces, managed (``PostgreSQLDatabase``).
enum NamespacesCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "namespaces", summary: "List, delete and prune the namespaces of a PostgreSQL store.",
            usage:
                "prefs-tool --store postgresql://… namespaces [list] [--json] | delete NAME… | prune [--inactive-for D] [--tombstones-older-than D] | history NAME --keep D|--off",
            help: """
                For a PostgreSQL store (--store postgresql://… or key=value pairs, or $PREFS_STORE); --namespace is not
                needed. D is a duration: a number and s, m, h or d (90d, 12h).
                list: one line per namespace: NAME<TAB>VALUES<TAB>LAST WRITE (UTC, or -)<TAB>HISTORY (its retention, or -).
                --json prints [{"name", "values", "lastWrite", "historyRetentionSeconds"}].
                delete: deletes each namespace wholly (values, declarations, history), in one transaction; a NAME that
                holds nothing is named on stderr. Stores open on it read it as empty from their next check.
                prune: removes history past each namespace's retention or its newest 10,000 entries (stores prune the
                namespaces they write themselves), and records of removed values older than --tombstones-older-than
                (default 30d); with --inactive-for, first deletes every namespace not written for that long, naming
                each. Run it from a periodic job.
                history: keeps NAME's history for D (--off: keeps none), so that watches from a revision receive every
                change within it.
                """,
            actions: [
                CommandSpec(
                    name: "namespaces list", summary: "", usage: "prefs-tool --store postgresql://… namespaces [list] [--json]", help: "", flags: ["json"]),
                CommandSpec(
                    name: "namespaces delete", summary: "", usage: "prefs-tool --store postgresql://… namespaces delete NAME…", help: "",
                    positionals: 1...Int.max),
                CommandSpec(
                    name: "namespaces prune", summary: "",
                    usage: "prefs-tool --store postgresql://… namespaces prune [--inactive-for D] [--tombstones-older-than D]", help: "",
                    options: ["inactive-for", "tombstones-older-than"]),
                CommandSpec(
                    name: "namespaces history", summary: "", usage: "prefs-tool --store postgresql://… namespaces history NAME --keep D|--off",
                    help: "", options: ["keep"], flags: ["off"], positionals: 1...1),
            ],
            defaultAction: "list")
    ) { arguments, context in
        guard let conninfo = context.store.connectionString else {
            throw ToolError.usage("'namespaces' manages a PostgreSQL store: give --store postgresql://… (or $PREFS_STORE)", context.usage)
        }
        let database = PostgreSQLDatabase(conninfo)
        do {
            switch arguments.action {
            case "delete":
                for name in arguments.positionals where !(try database.deleteNamespace(name)) {
                    Terminal.warning("namespace \(ValueText.quoted(name)) holds nothing: nothing to delete")
                }
            case "prune":
                if let text = arguments.option("inactive-for") {
                    for name in try database.deleteNamespaces(inactiveFor: try duration(text, option: "inactive-for", context)) {
                        Terminal.note("deleted namespace \(ValueText.quoted(name))")
                    }
                }
                let age = try arguments.option("tombstones-older-than").map { try duration($0, option: "tombstones-older-than", context) }
                let report = try age.map { try database.prune(tombstonesOlderThan: $0) } ?? database.prune()
                Terminal.note("pruned \(report.historyEntries) history entries and \(report.tombstones) records of removed values")
            case "history":
                let name = arguments.positionals[0]
                switch (arguments.option("keep"), arguments.flag("off")) {
                case (let text?, false): try database.setHistoryRetention(try duration(text, option: "keep", context), for: name)
                case (nil, true): try database.setHistoryRetention(nil, for: name)
                default: throw ToolError.usage("give --keep D or --off", context.usage)
                }
            default:
                let namespaces = try database.namespaces()
                if arguments.flag("json") {
                    Output.json(
                        .array(
                            namespaces.map { namespace in
                                .object([
                                    "name": .string(namespace.name), "values": .int(namespace.values),
                                    "lastWrite": namespace.lastWrite.map { .string(ISO8601.format($0, fractionDigits: 3)) } ?? .null,
                                    "historyRetentionSeconds": namespace.historyRetention.map { .int(Int($0.components.seconds)) } ?? .null,
                                ])
                            }))
                } else {
                    for namespace in namespaces {
                        let last = namespace.lastWrite.map { ISO8601.format($0, fractionDigits: 3) } ?? "-"
                        let history = namespace.historyRetention.map(format) ?? "-"
                        Terminal.printData("\(Terminal.field(namespace.name))\t\(namespace.values)\t\(last)\t\(history)")
                    }
                }
            }
        } catch {
            throw ToolError(error)
        }
        return 0
    }

    /// `90d`, `12h`, `30m`, `45s`.
    static func duration(_ text: String, option: String, _ context: ToolContext) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let seconds = units[unit], let count = Int64(text.dropLast()), count >= 0 else {
            throw ToolError.usage("--\(option) takes a duration such as 90d, 12h, 30m or 45s, not \(ValueText.quoted(text))", context.usage)
        }
        return .seconds(count * seconds)
    }

    /// A retention as `duration` reads it: the largest unit that divides it.
    static func format(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}
