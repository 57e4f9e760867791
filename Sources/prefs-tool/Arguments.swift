import Prefs

/// What one command accepts: named options with values, flags, and positional arguments.
struct CommandSpec: Sendable {
    var name: String
    var summary: String
    /// `prefs-tool get KEY [--json]`
    var usage: String
    var help: String
    var options: [String] = []
    var flags: [String] = []
    var positionals: ClosedRange<Int> = 0...0
    /// One-letter spellings of flags: `["q": "quiet"]` reads `-q` as `--quiet`.
    var shortFlags: [Character: String] = [:]
    /// A command's actions, each with its own options (`feed lint`, `feed explain`): named `COMMAND ACTION`,
    /// chosen by the first argument.
    var actions: [CommandSpec] = []
    /// The action when the first argument is an option or missing (`dialogs` and `dialogs --json` list).
    var defaultAction: String?

    /// The action named `word`, for a command with actions.
    func action(_ word: String) -> CommandSpec? {
        actions.first { $0.name == "\(name) \(word)" }
    }

    /// The actions' last words: `lint`, `explain`, `fetch`.
    var actionNames: [String] { actions.map { String($0.name.split(separator: " ").last ?? "") } }
}

/// Arguments after parsing against a ``CommandSpec``.
struct ParsedArguments {
    /// The action's last word (`lint`), for a command with actions.
    var action: String?
    var positionals: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    func option(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A small hand-written parser: `--opt value` and `--opt=value`, flags, `-h`/`--help`, and `--` ending options.
enum ArgumentParser {
    /// `-5`, `-0.25`, `-1e3`, `-inf`: no option of the tool starts with a digit or a dot, or is named inf.
    static func isNegativeNumber(_ argument: String) -> Bool {
        if ["-inf", "-infinity"].contains(argument.lowercased()) { return true }
        guard argument.count > 1, let second = argument.dropFirst().first, second.isASCII,
            second.isNumber || second == "."
        else { return false }
        return Double(argument) != nil
    }

    /// Parses a command's arguments: for a command with actions, picks the action from the first argument and
    /// parses the rest against its spec, so an option of another action is refused (`feed lint --json`).
    static func parseCommand(_ arguments: [String], for spec: CommandSpec) throws(ToolError) -> ParsedArguments {
        guard !spec.actions.isEmpty else { return try parse(arguments, for: spec) }
        let first = arguments.first
        if first == "-h" || first == "--help" {
            var parsed = ParsedArguments()
            parsed.flags.insert("help")
            return parsed
        }
        let chosen: String
        let rest: [String]
        if let first, spec.action(first) != nil {
            (chosen, rest) = (first, Array(arguments.dropFirst()))
        } else if let name = spec.defaultAction, first == nil || first?.hasPrefix("-") == true {
            (chosen, rest) = (name, arguments)
        } else if let first {
            let hint = KeyName.nearest(to: first, in: spec.actionNames).map { "; did you mean '\($0)'?" } ?? ""
            throw .usage("unknown \(spec.name) action '\(first)'\(hint)", "usage: \(spec.usage)")
        } else {
            throw .usage("missing action (\(spec.actionNames.joined(separator: ", ")))", "usage: \(spec.usage)")
        }
        guard let action = spec.action(chosen) else { throw .usage("unknown \(spec.name) action '\(chosen)'", "usage: \(spec.usage)") }
        var parsed = try parse(rest, for: action)
        parsed.action = chosen
        return parsed
    }

    /// Parses `arguments` for `spec`. Unknown options are usage errors with a "did you mean" when one is close.
    static func parse(_ arguments: [String], for spec: CommandSpec) throws(ToolError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        let usageLine = "usage: \(spec.usage)"
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            // A negative number where a value is still expected is that value (`set n -5`), as in git config.
            if parsed.positionals.count < spec.positionals.upperBound, Self.isNegativeNumber(argument) {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                parsed.flags.insert("help")
                continue
            }
            if argument.count == 2, let letter = argument.last, let flag = spec.shortFlags[letter] {
                parsed.flags.insert(flag)
                continue
            }
            guard argument.hasPrefix("--") else {
                var message = "unknown option '\(argument)'"
                if parsed.positionals.count < spec.positionals.upperBound {
                    // Most likely a value such as -x: show the same command with '--' before it.
                    let example = ([spec.name] + parsed.positionals + ["--", argument]).map(shellQuoted).joined(separator: " ")
                    message += " (to pass a value that starts with '-', put '--' before it: \(example))"
                }
                throw .usage(message, usageLine)
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if spec.options.contains(name) {
                if let inlineValue {
                    parsed.options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw .usage("option '--\(name)' needs a value", usageLine) }
                    parsed.options[name] = arguments[index]
                    index += 1
                }
            } else if spec.flags.contains(name) {
                guard inlineValue == nil else { throw .usage("option '--\(name)' takes no value", usageLine) }
                parsed.flags.insert(name)
            } else {
                let known = (spec.options + spec.flags).map { "--" + $0 }
                let hint = KeyName.nearest(to: "--" + name, in: known).map { "; did you mean '\($0)'?" } ?? ""
                throw .usage("unknown option '--\(name)' for '\(spec.name)'\(hint)", usageLine)
            }
        }
        if parsed.flags.contains("help") { return parsed }
        if !spec.positionals.contains(parsed.positionals.count) {
            let message =
                parsed.positionals.count < spec.positionals.lowerBound
                ? "missing argument" : "unexpected argument '\(parsed.positionals[spec.positionals.upperBound])'"
            throw .usage(message, usageLine)
        }
        return parsed
    }

    /// `word` as it would be typed in a POSIX shell: as is when it holds no special character, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "-_./:=@%+,".unicodeScalars.contains($0)
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
