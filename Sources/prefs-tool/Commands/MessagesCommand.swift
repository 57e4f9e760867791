import DialogGate
import Foundation
import Prefs

/// `messages device-id`, `messages force ID`: QA's handles on an installation's remote messages.
enum MessagesCommand {
    static let deviceIdUsage = "prefs-tool [--store PATH | --app ID] messages device-id"
    static let forceUsage = "prefs-tool [--store PATH | --app ID] messages force ID [--key NAME]"

    static let command = Command(
        spec: CommandSpec(
            name: "messages", summary: "Print the id a feed's testDevices lists, or force a message.",
            usage: "\(deviceIdUsage)\n       \(forceUsage)",
            help: """
                device-id: the installation id the app's MessageCenter uses for rollouts and for a message's "testDevices"
                  (dialoggate.installationId): put it in a feed to show a message to this installation only. A store without
                  one gets one now (as the app's first refresh would create it), said on stderr.
                force: the next refresh of a MessageCenter on the store shows message ID whatever its targeting (its id,
                  versions, dates, conditions, caps), once: a one-shot override under KEY.forced (KEY is the center's
                  lastMessageIdKey, "lastMessageId" by default), which that refresh removes. The message must be in the
                  feed for the app. In a QA build the app can do the same at launch with -DialogGateForceMessage ID.
                """,
            actions: [
                CommandSpec(name: "messages device-id", summary: "", usage: deviceIdUsage, help: ""),
                CommandSpec(name: "messages force", summary: "", usage: forceUsage, help: "", options: ["key"], positionals: 1...1),
            ])
    ) { arguments, context in
        switch arguments.action {
        case "force":
            guard let id = Int(arguments.positionals[0]), id > 0 else {
                throw ToolError.usage("\(ValueText.quoted(arguments.positionals[0])) is not a message id (a positive integer)", context.usage)
            }
            let key = arguments.option("key") ?? "lastMessageId"
            guard KeyName.problem(with: key + ".forced") == nil else {
                throw ToolError.usage("--key \(ValueText.quoted(key)) is not a key name", context.usage)
            }
            let prefs = try context.store.open(checked: true)
            try prefs.set(id, for: MessageCenter.forcedKey(lastMessageIdKey: key))
            try prefs.flush()
            Terminal.note("the next refresh of the app's MessageCenter shows message \(id), once")
            return 0
        default:
            let prefs = try context.store.open(checked: true)
            let existed = prefs[MessageCenter.installationIdKey].map { !$0.isEmpty } ?? false
            let id = try MessageCenter.storedInstallationId(prefs)
            try prefs.flush()
            if !existed { Terminal.note("created: the app's MessageCenter uses it from now on") }
            Terminal.printData(id)
            return 0
        }
    }
}
