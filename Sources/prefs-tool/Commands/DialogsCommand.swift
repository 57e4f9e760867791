import DialogGate
import Foundation
import Prefs
import PrefsJSON

/// `dialogs [list] [--json]`, `dialogs reset ID…|--all`: DialogGate's state per dialog id.
enum DialogsCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "dialogs", summary: "List or reset DialogGate's state per dialog id.",
            usage: "prefs-tool [--store PATH] dialogs [list] [--json] | dialogs reset ID…|--all",
            help: """
                list: one line per dialog with stored state (or declared by the app, DialogGate.declare): ID, presentations,
                last answer, never-remind and snooze dates, and a never-remind key written by older code
                ("UserHasSeenMsg" = "YES") with the value it holds.
                --json prints {"ID": {"presentations", "lastPresented", "lastResponse", "lastResponseDate", "neverRemindSince", "snoozedUntil", "neverRemindKey", "neverRemindKeyValue", …}}.
                reset: forgets the dialogs' state (and the never-remind key their record names), so they show again. As
                'reset' does for keys, it exits 0 when nothing is left to show them less, whether or not something was
                stored; an ID with no stored state is named on stderr, with the nearest stored one.
                """,
            actions: [
                CommandSpec(name: "dialogs list", summary: "", usage: "prefs-tool [--store PATH] dialogs [list] [--json]", help: "", flags: ["json"]),
                CommandSpec(
                    name: "dialogs reset", summary: "", usage: "prefs-tool [--store PATH] dialogs reset ID…|--all", help: "",
                    flags: ["all"], positionals: 0...Int.max),
            ],
            defaultAction: "list")
    ) { arguments, context in
        let rest = arguments.positionals
        switch arguments.action {
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
            let gate = DialogGate(prefs: try context.store.open(), session: DialogSession(), overrides: DialogOverrides())
            let states = try gate.states()
            if arguments.flag("json") {
                var object: [String: JSON] = [:]
                for state in states {
                    var entry = try state.record.map { try $0.storedValue().json } ?? .object(["problem": .string(state.problem ?? "unreadable")])
                    if case .object(var members) = entry, let legacy = state.legacyValue {
                        members["neverRemindKeyValue"] = legacy.json
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
        return parts.joined(separator: "\t")
    }
}
