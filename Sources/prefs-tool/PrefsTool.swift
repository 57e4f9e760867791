import Foundation
import Prefs
import PrefsJSON

/// What every command gets: the environment and the store it works on.
struct ToolContext {
    var environment: [String: String]
    var options: GlobalOptions
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
    static let version = Release.version

    static let commands: [Command] =
        StoreCommands.all + [StoresCommand.command] + TransferCommands.all + [
            WatchCommand.command, CheckCommand.command, DialogsCommand.command, FeedCommand.command, MessagesCommand.command,
            DemoCommand.command,
            NamespacesCommand.command, SyncCommand.command,
        ]

    static var usage: String { "usage: prefs-tool [--store PATH | --app ID] COMMAND [ARGUMENTS…]" }

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
        let options = try extractGlobalOptions(&arguments)
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
            let candidates =
                first.hasPrefix("-") ? ["--store", "--app", "--namespace", "--create-dirs", "--help", "--version"] : commands.map(\.spec.name) + ["help"]
            let hint =
                (synonyms[first] ?? synonyms[first.lowercased()]).map { "; did you mean \($0)" }
                ?? KeyName.nearest(to: first, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
            let what = first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown command '\(first)'"
            throw ToolError.usage("\(what)\(hint)", usage + "\n(see 'prefs-tool help')")
        }
        let parsed = try ArgumentParser.parseCommand(Array(arguments.dropFirst()), for: command.spec)
        if parsed.flag("help") {
            Terminal.print(helpText(for: command.spec))
            return 0
        }
        let context = ToolContext(
            environment: environment,
            options: options,
            store: try StoreLocator(options, environment: environment, requiresNamespace: command.spec.name != NamespacesCommand.command.spec.name),
            interactive: isatty(STDIN_FILENO) == 1,
            usage: "usage: \((parsed.action.flatMap(command.spec.action) ?? command.spec).usage)"
        )
        return try await command.run(parsed, context)
    }

    /// The words of `defaults`, `git config` and neighbouring tools, and what prefs-tool calls them.
    static let synonyms: [String: String] = [
        "read": "'get'? ('defaults read DOMAIN KEY' is 'prefs-tool --app DOMAIN get KEY'; without KEY, 'list')",
        "write": "'set'? ('defaults write DOMAIN KEY VALUE' is 'prefs-tool --app DOMAIN set KEY VALUE')",
        "delete": "'reset'? (it removes stored values; 'reset --all' removes them all)",
        "rm": "'reset'? (it removes stored values; 'reset --all' removes them all)",
        "remove": "'reset'? (it removes stored values; 'reset --all' removes them all)",
        "unset": "'reset'? (it removes stored values; 'reset --all' removes them all)",
        "domains": "'stores'? (the stores in the default location, by bundle identifier)",
        "ls": "'list'?", "show": "'list'?", "dump": "'export'?", "restore": "'import'?", "verify": "'check'?",
        "lint": "'feed lint'?", "explain": "'feed explain'?", "fetch": "'feed fetch'?",
        "version": "'--version'?", "-v": "'--version'?", "-V": "'--version'?",
    ]

    /// Takes the global options (`--store PATH`, `--app ID`, `--create-dirs`; `--opt=value` too) out of the
    /// arguments, wherever they stand before `--`.
    private static func extractGlobalOptions(_ arguments: inout [String]) throws(ToolError) -> GlobalOptions {
        var options = GlobalOptions()
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == "--create-dirs" {
                options.createDirectories = true
                arguments.remove(at: index)
                continue
            }
            guard let name = ["store", "app", "namespace"].first(where: { argument == "--" + $0 || argument.hasPrefix("--\($0)=") }) else {
                index += 1
                continue
            }
            let value: String
            if argument == "--" + name {
                guard index + 1 < arguments.count else { throw .usage("option '--\(name)' needs a value", usage) }
                value = arguments[index + 1]
                arguments.removeSubrange(index...index + 1)
            } else {
                value = String(argument.dropFirst("--\(name)=".count))
                arguments.remove(at: index)
            }
            switch name {
            case "store": options.store = value
            case "app": options.app = value
            default: options.namespace = value
            }
        }
        // `--store "$UNSET"` must not fall back to the default store: that would write to the real one.
        if options.store?.isEmpty == true { throw .usage("option '--store' needs a path, not an empty value", usage) }
        if options.namespace?.isEmpty == true { throw .usage("option '--namespace' needs a name, not an empty value", usage) }
        if let app = options.app {
            guard !app.isEmpty, !app.contains("/"), app != ".", app != "..", !app.hasPrefix("-") else {
                throw .usage("option '--app' needs a bundle identifier such as com.example.app, not \(ValueText.quoted(app))", usage)
            }
            if options.store != nil { throw .usage("give --store or --app, not both", usage) }
        }
        return options
    }

    private static func help(_ arguments: [String]) throws -> Int32 {
        guard let name = arguments.first, name != "help" else {
            Terminal.print(overview)
            return 0
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            let hint = KeyName.nearest(to: name, in: commands.map(\.spec.name)).map { "; did you mean '\($0)'?" } ?? ""
            throw ToolError.usage("no help for unknown command '\(name)'\(hint)", usage)
        }
        Terminal.print(helpText(for: command.spec))
        return 0
    }

    static func helpText(for spec: CommandSpec) -> String {
        wrapped("usage: \(spec.usage)\n\n\(spec.summary)\n\n\(spec.help)")
    }

    /// Help text fitted to `width` columns. Lines are gathered into paragraphs and each is filled again: an item
    /// (a line starting with an option, `WORD:`, `usage:` or `prefs-tool`) starts a paragraph whose later lines are
    /// indented two more spaces; another line, indented at least as much, continues the paragraph before it; an
    /// empty line ends it. Text that already fits is kept as written only where it is one line.
    static func wrapped(_ text: String, width: Int = 80) -> String {
        var output: [String] = []
        var paragraph: (indent: Int, hanging: Int, words: [Substring])?
        func flush() {
            guard let current = paragraph else { return }
            var line = String(repeating: " ", count: current.indent)
            var lineHasWords = false
            for word in current.words {
                if lineHasWords, line.count + 1 + word.count > width {
                    output.append(line)
                    line = String(repeating: " ", count: current.hanging)
                    lineHasWords = false
                }
                line += (lineHasWords ? " " : "") + word
                lineHasWords = true
            }
            output.append(line)
            paragraph = nil
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            let content = line.dropFirst(indent)
            guard !content.isEmpty else {
                flush()
                output.append("")
                continue
            }
            let words = content.split(separator: " ")
            let first = words.first ?? ""
            let startsItem =
                first.hasPrefix("-") || first == "usage:" || first == "prefs-tool"
                || (first.hasSuffix(":") && first.dropLast().allSatisfy { $0.isLetter || $0 == "-" })
            if let current = paragraph, !startsItem, indent >= current.indent {
                paragraph?.words += words
            } else {
                flush()
                paragraph = (indent, startsItem ? indent + 2 : indent, words)
            }
        }
        flush()
        return output.joined(separator: "\n")
    }

    static var overview: String {
        let width = commands.map(\.spec.name.count).max() ?? 0
        let lines = commands.map { "  \($0.spec.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\($0.spec.summary)" }
        return """
            prefs-tool: inspect and reset Prefs stores, DialogGate dialogs and feeds.

            \(usage)

            The store: --store PATH, or --app ID for an app's store in the default
            location (as defaults' domains; 'prefs-tool stores' lists them), else
            $PREFS_STORE, else the default store:
              \(defaultStoreDescription)
            A .json path is a JSON store; .sqlite, .sqlite3 and .db are SQLite; other
            files are recognized by content. A new store is created where its folder
            exists; --create-dirs creates missing folders too. A postgresql:// URL (or
            libpq's key=value pairs: 'host=db dbname=prefs') is a PostgreSQL store, one
            namespace of it: --namespace NAME (or $PREFS_NAMESPACE). Its password is
            never shown, but any process can read a command line: give the store in
            $PREFS_STORE, and the password in ~/.pgpass (or PGPASSFILE).

            Commands:
            \(lines.joined(separator: "\n"))

            Options: --store PATH, --app ID, --namespace NAME, --create-dirs, -h/--help,
            --version.
            '--' ends options. Exit codes: 0 success, 1 not found (or a difference,
            or no message selected), 64 usage error, 65 bad data, 74 I/O or network.
            See 'prefs-tool help COMMAND'.
            """
    }
}
