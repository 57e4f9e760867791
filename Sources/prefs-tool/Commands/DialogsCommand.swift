import DialogGate
import Foundation
import Prefs
import PrefsJSON

/// `dialogs [list] [--json] [--arguments ARGS]`, `dialogs explain ID [--json] [--arguments ARGS]`, `dialogs reset
/// ID…|--all`: DialogGate's state per dialog id.
enum DialogsCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "dialogs", summary: "List or reset DialogGate's state per dialog id.",
            usage:
                "prefs-tool [--store PATH] dialogs [list] [--json] [--arguments ARGS] | dialogs explain ID [--json] [--arguments ARGS]"
                + " | dialogs reset ID…|--all",
            help: """
                list: one line per dialog with stored state (or declared by the app, DialogGate.declare): ID, presentations,
                last answer, never-remind and snooze dates, and a never-remind key written by older code
                ("UserHasSeenMsg" = "YES") with the value it holds.
                --json prints {"ID": {"presentations", "lastPresented", "lastResponse", "lastResponseDate", "neverRemindSince", "snoozedUntil", "neverRemindKey", "neverRemindKeyValue", "neverRemindArgument", …}}.
                --arguments ARGS (list, explain): as an app launched with ARGS, such as '-UserHasSeenMsg NO' (split as a
                shell splits them): a dialog's never-remind key given there decides never remind for that launch, shown
                as "argument -UserHasSeenMsg NO: may show this launch" (or "YES: never remind"). Nothing is written.
                explain: the dialog's state, the launches recorded, and every condition of its policy (as the app's last
                decision recorded them) with its current value and whether it is met, as the app's next launch would see
                it (the app version of the last launch). A parameter the app sets in memory is not in the store: shown as
                unknown. --json prints {"id", "state", "launches", "firstLaunch", "conditions": [{"condition", "met", "current", "depth"}]}.
                reset: forgets the dialogs' state (and the never-remind key their record names), so they show again. As
                'reset' does for keys, it exits 0 when nothing is left to show them less, whether or not something was
                stored; an ID with no stored state is named on stderr, with the nearest stored one.
                """,
            actions: [
                CommandSpec(
                    name: "dialogs list", summary: "", usage: "prefs-tool [--store PATH] dialogs [list] [--json] [--arguments ARGS]", help: "",
                    options: ["arguments"], flags: ["json"]),
                CommandSpec(
                    name: "dialogs explain", summary: "", usage: "prefs-tool [--store PATH] dialogs explain ID [--json] [--arguments ARGS]", help: "",
                    options: ["arguments"], flags: ["json"], positionals: 1...1),
                CommandSpec(
                    name: "dialogs reset", summary: "", usage: "prefs-tool [--store PATH] dialogs reset ID…|--all", help: "",
                    flags: ["all"], positionals: 0...Int.max),
            ],
            defaultAction: "list")
    ) { arguments, context in
        let rest = arguments.positionals
        let launch = try arguments.option("arguments").map(LaunchArgumentsOption.init)?.words ?? []
        switch arguments.action {
        case "explain":
            let gate = DialogGate(prefs: try context.store.open(launchArguments: launch), session: DialogSession(), overrides: DialogOverrides())
            guard let (state, conditions, usage) = try gate.explanation(of: rest[0]) else {
                let known = try gate.states().map(\.id)
                let hint = KeyName.nearest(to: rest[0], in: known).map { "; did you mean \(ValueText.quoted($0))?" } ?? ""
                throw ToolError(code: .notFound, message: "no dialog \(ValueText.quoted(rest[0])) has stored state\(hint)")
            }
            let rows = conditions?.flattened ?? []
            if arguments.flag("json") {
                var object: [String: JSON] = ["id": .string(state.dialogID), "state": .string(line(for: state))]
                object["launches"] = .int(usage?.launches ?? 0)
                if let first = usage?.firstLaunch { object["firstLaunch"] = .string(ISO8601.format(first, fractionDigits: 0)) }
                object["conditions"] = .array(
                    rows.map { depth, status in
                        .object([
                            "condition": .string(status.condition.description), "current": .string(status.current),
                            "met": status.met.map(JSON.bool) ?? .null, "depth": .int(depth),
                        ])
                    })
                Output.json(.object(object))
                return 0
            }
            Terminal.printData(line(for: state))
            Terminal.printData(launchesLine(usage))
            guard conditions != nil else {
                Terminal.printData("conditions: none recorded (the app records them at a decision or with DialogGate.declare)")
                return 0
            }
            for (depth, status) in rows {
                let met = status.met.map { $0 ? "met" : "not met" } ?? "unknown"
                let isLeaf = status.heading == status.condition.description
                let shown = isLeaf ? "\(status.heading)\tnow \(status.current)" : status.heading
                Terminal.printData(String(repeating: "  ", count: depth + 1) + "\(met)\t\(shown)")
            }
            return 0
        case "reset":
            let gate = DialogGate(prefs: try context.store.open(checked: true), session: DialogSession(), overrides: DialogOverrides())
            if arguments.flag("all") {
                guard rest.isEmpty else { throw ToolError.usage("give dialog ids or --all, not both", context.usage) }
                try gate.resetAll()
                return 0
            }
            guard !rest.isEmpty else { throw ToolError.usage("missing dialog ID (or --all)", context.usage) }
            let known = Set(try gate.states().map(\.id))
            try gate.reset(rest.filter(known.contains))
            for id in rest where !known.contains(id) {
                let hint = KeyName.nearest(to: id, in: Array(known)).map { "; did you mean \(ValueText.quoted($0))?" } ?? ""
                Terminal.warning("no dialog \(ValueText.quoted(id)) has stored state: nothing to reset\(hint)")
            }
            return 0
        default:
            let gate = DialogGate(prefs: try context.store.open(launchArguments: launch), session: DialogSession(), overrides: DialogOverrides())
            let states = try gate.states()
            if arguments.flag("json") {
                var object: [String: JSON] = [:]
                for state in states {
                    var entry = try state.record.map { try $0.storedValue().json } ?? .object(["problem": .string(state.problem ?? "unreadable")])
                    if case .object(var members) = entry {
                        if let legacy = state.legacyValue { members["neverRemindKeyValue"] = legacy.json }
                        if let argument = state.neverRemindArgument { members["neverRemindArgument"] = .bool(argument) }
                        entry = .object(members)
                    }
                    object[state.id] = entry
                }
                Output.json(.object(object))
            } else {
                for state in states { Terminal.printData(line(for: state)) }
            }
            return 0
        }
    }

    /// `launches 7 (first 2026-11-30T09:00:00Z; last in "2.0")`, or that none is recorded.
    static func launchesLine(_ usage: UsageRecord?) -> String {
        guard let usage, let first = usage.firstLaunch else { return "launches: none recorded (the app calls DialogGate.recordLaunch)" }
        let version = usage.lastVersion.map { "; last in \(ValueText.quoted($0))" } ?? ""
        return "launches \(usage.launches) (first \(ISO8601.format(first, fractionDigits: 0))\(version))"
    }

    static func line(for state: DialogState) -> String {
        guard let record = state.record else { return "\(state.id)\tunreadable: \(state.problem ?? "?")" }
        var parts = ["\(state.id)", "shown \(record.presentations)"]
        if let last = record.lastPresented { parts.append("last shown \(ISO8601.format(last, fractionDigits: 0))") }
        if let response = record.lastResponse { parts.append("answered \(response)") }
        if let since = record.neverRemindSince { parts.append("never remind since \(ISO8601.format(since, fractionDigits: 0))") }
        if let until = record.snoozedUntil { parts.append("snoozed until \(ISO8601.format(until, fractionDigits: 0))") }
        if let key = record.neverRemindKey, let legacy = state.legacyValue {
            // The key older code reads: QA sees why a dialog with no answer recorded here stays hidden.
            let value = if case .string(let text) = legacy.json { ValueText.quoted(text) } else { ValueText.plain(legacy) }
            parts.append("legacy key \(ValueText.quoted(key)) = \(value)" + (state.legacyNeverRemind ? " (never remind)" : ""))
        }
        if let key = record.neverRemindKey, let argument = state.neverRemindArgument {
            // `--arguments`: the app launched so reads the key from its argument, whatever the store says.
            parts.append("argument -\(key) \(argument ? "YES: never remind" : "NO: may show") this launch")
        }
        return parts.joined(separator: "\t")
    }
}
