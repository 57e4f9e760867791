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
              second.isNumber || second == "." else { return false }
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
            let hint = Suggestion.nearest(to: first, in: spec.actionNames).map { "; did you mean '\($0)'?" } ?? ""
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
                let hint = Suggestion.nearest(to: "--" + name, in: known).map { "; did you mean '\($0)'?" } ?? ""
                throw .usage("unknown option '--\(name)' for '\(spec.name)'\(hint)", usageLine)
            }
        }
        if parsed.flags.contains("help") { return parsed }
        if !spec.positionals.contains(parsed.positionals.count) {
            let message = parsed.positionals.count < spec.positionals.lowerBound
                ? "missing argument" : "unexpected argument '\(parsed.positionals[spec.positionals.upperBound])'"
            throw .usage(message, usageLine)
        }
        return parsed
    }

    /// `word` as it would be typed in a POSIX shell: as is when it holds no special character, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "-_./:=@%+,".unicodeScalars.contains($0)
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

/// "Did you mean": the closest candidate by edit distance, when it is close enough to be a typo.
enum Suggestion {
    static func nearest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = candidates.map { ($0, distance(lowered, $0.lowercased())) }
        // A word that starts another, or that another starts (integer → int, --stor → --store), whatever the distance.
        let prefixed = scored.filter { candidate, _ in
            let other = candidate.lowercased().drop { $0 == "-" }, plain = lowered.drop { $0 == "-" }
            return min(other.count, plain.count) >= 3 && (other.hasPrefix(plain) || plain.hasPrefix(other))
        }
        if let best = prefixed.min(by: { $0.1 < $1.1 }) { return best.0 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    /// The name `name` was most likely meant to be, when it looks like a typo of one of `names`: the same but for
    /// case, or one edit away (two for names of ten characters or more). Stricter than ``nearest(to:in:)``, since
    /// it warns about names that may well be meant: a name shorter than four characters, or one that differs only
    /// in its digits (`item1`, `item2`), is never a typo.
    static func likelyTypo(of name: String, among names: [String]) -> String? {
        let lowered = name.lowercased()
        let allowed = name.count >= 10 ? 2 : 1
        let withoutDigits = lowered.filter { !$0.isNumber }
        var best: (name: String, distance: Int)?
        for candidate in Set(names).sorted() where candidate != name {
            let other = candidate.lowercased()
            if other == lowered { return candidate }
            guard name.count >= 4, candidate.count >= 4, other.filter({ !$0.isNumber }) != withoutDigits else { continue }
            let distance = distance(lowered, other)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as one edit
    /// (optimal string alignment), so `cuont` is one edit from `count`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
