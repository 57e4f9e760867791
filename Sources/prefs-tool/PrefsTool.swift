import Foundation
import Prefs

/// What every command gets: the environment and the store it works on.
struct ToolContext {
    var environment: [String: String]
    var store: StoreLocator
    /// Whether stdin is a terminal (the demo asks nothing otherwise).
    var interactive: Bool
    /// The running command's usage line, for usage errors.
    var usage: String
}

/// A command: its spec (for parsing and help) and what it does. Returns the exit code.
struct Command: Sendable {
    var spec: CommandSpec
    var run: @Sendable (ParsedArguments, ToolContext) async throws -> Int32
}

enum PrefsTool {
    static let version = "0.1.0"

    static let commands: [Command] = StoreCommands.all + TransferCommands.all + [WatchCommand.command, CheckCommand.command, DialogsCommand.command, FeedCommand.command, DemoCommand.command]

    static var usage: String { "usage: prefs-tool [--store PATH] COMMAND [ARGUMENTS…]" }

    /// The default store's path for the help text, or why there is none (no absolute home directory).
    static var defaultStoreDescription: String {
        do { return try Prefs.Storage.defaultURL(identifier: "default").path } catch { return "none: \(error)" }
    }

    /// Runs the tool; returns the exit code.
    static func run(_ arguments: [String], environment: [String: String]) async -> Int32 {
        do {
            return try await dispatch(arguments, environment: environment)
        } catch {
            let failure = ToolError(error)
            Terminal.error(failure.message)
            if let usage = failure.usage { Terminal.note(usage) }
            return failure.code.rawValue
        }
    }

    private static func dispatch(_ arguments: [String], environment: [String: String]) async throws -> Int32 {
        var arguments = arguments
        let storePath = try extractStoreOption(&arguments)
        if arguments.first == "--" { arguments.removeFirst() }  // `prefs-tool --store S -- list`: options end before the command
        guard let first = arguments.first else {
            Terminal.note(overview)
            return ToolError.Code.usage.rawValue
        }
        switch first {
        case "-h", "--help":
            Terminal.print(overview)
            return 0
        case "--version":
            Terminal.print("prefs-tool \(version)")
            return 0
        case "help":
            return try help(Array(arguments.dropFirst()))
        default:
            break
        }
        guard let command = commands.first(where: { $0.spec.name == first }) else {
            let candidates = first.hasPrefix("-") ? ["--store", "--help", "--version"] : commands.map(\.spec.name) + ["help"]
            let hint = Suggestion.nearest(to: first, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
            let what = first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown command '\(first)'"
            throw ToolError.usage("\(what)\(hint)", usage + "\n(see 'prefs-tool help')")
        }
        let parsed = try ArgumentParser.parse(Array(arguments.dropFirst()), for: command.spec)
        if parsed.flag("help") {
            Terminal.print(helpText(for: command.spec))
            return 0
        }
        let context = ToolContext(
            environment: environment,
            store: try StoreLocator(option: storePath, environment: environment),
            interactive: isatty(STDIN_FILENO) == 1,
            usage: "usage: \(command.spec.usage)"
        )
        return try await command.run(parsed, context)
    }

    /// Takes `--store PATH` / `--store=PATH` out of the arguments, wherever it stands before `--`.
    private static func extractStoreOption(_ arguments: inout [String]) throws(ToolError) -> String? {
        var path: String?
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == "--store" {
                guard index + 1 < arguments.count else { throw .usage("option '--store' needs a value", usage) }
                path = arguments[index + 1]
                arguments.removeSubrange(index...index + 1)
            } else if argument.hasPrefix("--store=") {
                path = String(argument.dropFirst("--store=".count))
                arguments.remove(at: index)
            } else {
                index += 1
            }
        }
        // `--store "$UNSET"` must not fall back to the default store: that would write to the real one.
        if path?.isEmpty == true { throw .usage("option '--store' needs a path, not an empty value", usage) }
        return path
    }

    private static func help(_ arguments: [String]) throws -> Int32 {
        guard let name = arguments.first, name != "help" else {
            Terminal.print(overview)
            return 0
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            let hint = Suggestion.nearest(to: name, in: commands.map(\.spec.name)).map { "; did you mean '\($0)'?" } ?? ""
            throw ToolError.usage("no help for unknown command '\(name)'\(hint)", usage)
        }
        Terminal.print(helpText(for: command.spec))
        return 0
    }

    static func helpText(for spec: CommandSpec) -> String {
        "usage: \(spec.usage)\n\n\(spec.summary)\n\n\(spec.help)"
    }

    static var overview: String {
        let width = commands.map(\.spec.name.count).max() ?? 0
        let lines = commands.map { "  \($0.spec.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\($0.spec.summary)" }
        return """
            prefs-tool: inspect and reset Prefs stores, DialogGate dialogs and remote-message feeds.

            \(usage)

            The store: --store PATH, else $PREFS_STORE, else \(defaultStoreDescription).
            A .json path is a JSON store; .sqlite, .sqlite3 and .db are SQLite; other files are recognized by content.

            Commands:
            \(lines.joined(separator: "\n"))

            Options: --store PATH, -h/--help, --version. '--' ends options.
            Exit codes: 0 success, 1 key not found, 64 usage error, 65 bad data, 74 I/O or network error.
            See 'prefs-tool help COMMAND'.
            """
    }
}
