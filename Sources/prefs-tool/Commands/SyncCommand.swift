import Foundation
import Prefs
import PrefsJSON
import PrefsSync

/// `sync status [--json]` and `sync log`: what a store's sync engine recorded in it (PrefsSync's reserved `prefs.sync.`
/// names), read without an engine or a transport.
enum SyncCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "sync", summary: "Show the sync state a store keeps: queue, conflicts, merges.",
            usage: "prefs-tool [--store PATH] sync [status] [--json] | log",
            help: """
                Reads what PrefsSync's engine keeps in the store (under prefs.sync.); reads only.
                status: the device id, the hybrid clock, the transport's cursor, the last sync (UTC), how many keys are
                synced and how many of them are removals (tombstones), the conflicts counted, and each change not yet
                pushed: KEY<TAB>TIMESTAMP<TAB>VALUE (or (removed)). --json prints {"device", "clock", "cursor",
                "lastSync", "synced", "tombstones", "conflicts", "pending": [{"key", "timestamp", "value"}]}.
                log: the last merges, refusals and forgotten removals, oldest first, one per line.
                A store that never synced has no device: status says so and exits 0.
                """,
            actions: [
                CommandSpec(name: "sync status", summary: "", usage: "prefs-tool [--store PATH] sync [status] [--json]", help: "", flags: ["json"]),
                CommandSpec(name: "sync log", summary: "", usage: "prefs-tool [--store PATH] sync log", help: ""),
            ],
            defaultAction: "status")
    ) { arguments, context in
        let prefs = try context.store.open()
        let status: SyncStatus
        do {
            status = try SyncStatus(prefs.snapshot())
        } catch {
            throw ToolError(error)
        }
        switch arguments.action {
        case "log":
            for line in status.log { Terminal.printData(Terminal.field(line)) }
        default:
            let lastSync = status.lastSync.map { ISO8601.format($0, fractionDigits: 3) }
            if arguments.flag("json") {
                Output.json(
                    .object([
                        "device": status.device.map { .string($0) } ?? .null, "clock": status.clock.map { .string($0) } ?? .null,
                        "cursor": status.cursor.map { .string($0) } ?? .null, "lastSync": lastSync.map { .string($0) } ?? .null,
                        "synced": .int(status.synced), "tombstones": .int(status.tombstones), "conflicts": .int(status.conflicts),
                        "pending": .array(
                            status.pending.map { change in
                                .object([
                                    "key": .string(change.key), "timestamp": .string(change.timestamp.description),
                                    "value": change.value.map { .string("\($0)") } ?? .null,
                                ])
                            }),
                    ]))
            } else if let device = status.device {
                Terminal.printData("device\t\(Terminal.field(device))")
                Terminal.printData("clock\t\(status.clock ?? "-")")
                Terminal.printData("cursor\t\(Terminal.field(status.cursor ?? "-"))")
                Terminal.printData("last sync\t\(lastSync ?? "-")")
                Terminal.printData("synced\t\(status.synced) keys (\(status.tombstones) removed)")
                Terminal.printData("conflicts\t\(status.conflicts)")
                Terminal.printData("pending\t\(status.pending.count)")
                for change in status.pending {
                    Terminal.printData(
                        "\(Terminal.field(change.key))\t\(change.timestamp)\t\(change.value.map { Terminal.field("\($0)") } ?? "(removed)")")
                }
            } else {
                Terminal.note("the store never synced (no \(SyncNames.device))")
            }
        }
        return 0
    }
}
