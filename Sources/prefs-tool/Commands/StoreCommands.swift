import Foundation
import Prefs
import PrefsJSON

/// `list`, `get`, `set`, `reset`: the store's keys and values.
enum StoreCommands {
    static let all = [list, get, set, reset]

    static let list = Command(
        spec: CommandSpec(
            name: "list", summary: "List stored and declared keys, all or those matching patterns.",
            usage: "prefs-tool [--store PATH] list [PATTERN…] [--json] [--arguments ARGS]",
            help: """
                In a pipe: one line per key, KEY<TAB>TYPE<TAB>VALUE, with a fourth field "(initial)" for keys that hold
                no stored value. A backslash, newline, carriage return or tab inside a field is written \\\\, \\n, \\r
                or \\t, so every line is one key. On a terminal: aligned columns, values cut to the width with "…"
                (COLUMNS sets the width), newlines shown as \\n and other control characters escaped.
                PATTERN: shell wildcards (*, ?, [...]) matched against the whole key, as in list 'dialog*'; several
                patterns list the keys matching any of them. No key matching exits 1.
                --arguments ARGS: list what an app launched with ARGS reads, such as '-launchCount 5 -flag YES' (split as
                a shell splits it): a key that a -NAME VALUE pair names shows the argument's value, read as its type, with
                "(argument)" as the fourth field; an argument the key's type cannot read is ignored, with a warning.
                --json prints one object: {"KEY": {"type", "value", "initial", "stored", "source"}}, value and initial in
                their JSON form, source "argument", "stored" or "initial": where the value comes from.
                """,
            options: ["arguments"], flags: ["json"], positionals: 0...Int.max)
    ) { arguments, context in
        let launch = try arguments.option("arguments").map(LaunchArgumentsOption.init)
        let prefs = try context.store.open()
        let stored = try prefs.snapshot()
        let declared = try prefs.declaredKeys()
        var fromArguments: [String: StoredValue] = [:]
        for name in (launch?.values.keys).map(Array.init) ?? [] {
            fromArguments[name] = launch?.value(forKey: name, type: declared[name]?.type ?? stored[name]?.type)
        }
        let patterns = arguments.positionals
        let all = Set(stored.keys).union(declared.keys).union(fromArguments.keys)
        let names = all.filter { name in patterns.isEmpty || patterns.contains { fnmatch($0, name, 0) == 0 } }.sorted()
        if names.isEmpty, !patterns.isEmpty {
            let hint =
                patterns.count == 1 ? KeyName.nearest(to: patterns[0], in: Array(all)).map { "; did you mean \(ValueText.quoted($0))?" } ?? "" : ""
            throw ToolError(code: .notFound, message: "no key matches \(patterns.map(ValueText.quoted).joined(separator: " or "))\(hint)")
        }
        if arguments.flag("json") {
            var object: [String: JSON] = [:]
            for name in names {
                let value = fromArguments[name] ?? stored[name] ?? declared[name]?.initialValue
                let source = fromArguments[name] != nil ? "argument" : stored[name] != nil ? "stored" : "initial"
                object[name] = .object([
                    "type": .string((fromArguments[name]?.type ?? stored[name]?.type ?? declared[name]?.type)?.description ?? "unknown"),
                    "value": value?.json ?? .null,
                    "initial": declared[name]?.initial ?? .null,
                    "stored": .bool(stored[name] != nil),
                    "source": .string(source),
                ])
            }
            Output.json(.object(object))
        } else {
            var table = KeyTable()
            for name in names {
                if let value = fromArguments[name] {
                    table.rows.append(.init(fields: [name, value.type.description], value: ValueText.plain(value), note: "(argument)"))
                } else if let value = stored[name] {
                    table.rows.append(.init(fields: [name, value.type.description], value: ValueText.plain(value)))
                } else if let declaration = declared[name] {
                    let initial = declaration.initialValue.map { ValueText.plain($0) } ?? "null"
                    table.rows.append(.init(fields: [name, declaration.type.description], value: initial, note: "(initial)"))
                }
            }
            table.print(environment: context.environment)
        }
        return 0
    }

    static let get = Command(
        spec: CommandSpec(
            name: "get", summary: "Print one key's value (stored, else its declared initial value).",
            usage: "prefs-tool [--store PATH] get KEY [--json] [--arguments ARGS]",
            help: """
                Plain text: true/false, numbers as written, dates as ISO-8601, URLs whole, strings raw, collections as JSON.
                --json prints the value's JSON form alone. A key with no stored value and no declared initial value exits 1.
                --arguments ARGS: print what an app launched with ARGS reads, such as '-launchCount 5' (split as a shell
                splits it): the argument's value, read as the key's type, when a -NAME VALUE pair names the key, with a
                note on standard error saying so and what is stored; an argument the key's type cannot read is ignored,
                with a warning.
                """,
            options: ["arguments"], flags: ["json"], positionals: 1...1)
    ) { arguments, context in
        let name = arguments.positionals[0]
        let launch = try arguments.option("arguments").map(LaunchArgumentsOption.init)
        let prefs = try context.store.open()
        let declaration = try prefs.declaredKeys()[name]
        let stored = try prefs.storedValue(forKey: name)
        let argument = launch?.value(forKey: name, type: declaration?.type ?? stored?.type)
        if argument != nil {
            let beneath = stored.map { "stored: \(ValueText.plain($0, forReading: true))" } ?? "nothing stored"
            Terminal.note("prefs-tool: \(name): from the launch argument, for that launch only (\(beneath))")
        }
        guard let value = argument ?? stored ?? declaration?.initialValue else {
            if let declaration {
                throw ToolError(
                    code: .notFound,
                    message: "key \(ValueText.quoted(name)) has no value: nothing is stored, and its declared initial value (\(declaration.type)) is nil")
            }
            throw ToolError(code: .notFound, message: "key \(ValueText.quoted(name)) not found\(try suggestion(for: name, in: prefs))")
        }
        if arguments.flag("json") {
            Output.json(value.json)
        } else {
            Terminal.printData(ValueText.plain(value))
        }
        return 0
    }

    static let set = Command(
        spec: CommandSpec(
            name: "set", summary: "Write one key's value (creates a missing store, mode 0600).",
            usage: "prefs-tool [--store PATH] set KEY VALUE [--type TYPE]",
            help: """
                The type comes from the key's declaration when the app declared it, else from --type, else from the
                value already stored (a key keeps its type), else it is inferred: true/false, an integer, a decimal
                number, otherwise a string. A number is inferred only when it prints back exactly as written, so 007,
                +5 and 1.10 stay strings. TYPE is any type 'list' prints: bool, int, uint, double, string, date, data,
                url, json, [T] or [string: T] ('[int]', '[string: date]'); --type is how a stored key changes type.
                A value that does not parse as its type exits 65 and writes nothing. A new key whose name is close to a
                stored or declared one is written with a warning naming that key. A negative number is a VALUE as it is
                (set n -5); any other VALUE that starts with '-' goes after '--': prefs-tool set s -- -x.
                """,
            options: ["type"], positionals: 2...2)
    ) { arguments, context in
        let (name, text) = (arguments.positionals[0], arguments.positionals[1])
        if let problem = KeyName.problem(with: name) { throw ToolError.data("invalid key name \(ValueText.quoted(name)): \(problem)") }
        var requested: ValueType?
        if let typeName = arguments.option("type") {
            guard let type = ValueText.type(named: typeName) else {
                let hint = KeyName.nearest(to: typeName, in: ValueText.typeNames).map { "; did you mean '\($0)'?" } ?? ""
                throw ToolError.usage(
                    "unknown type '\(typeName)'\(hint) (types: \(ValueText.typeNames.joined(separator: ", ")), [T], [string: T])", context.usage)
            }
            requested = type
        }
        let prefs = try context.store.open(create: true, checked: true)
        let declarations = try prefs.declaredKeys()
        let declared = declarations[name]?.type
        if let declared, let requested, requested != declared, !(requested == .json && declared.isCollection) {
            throw ToolError.data("key \(ValueText.quoted(name)) is declared as \(declared), not \(requested)")
        }
        // Read and written in one transaction, so the type kept is the type stored at the moment of the write.
        let created = try prefs.transaction { transaction throws -> Bool in
            let stored = try transaction.storedValue(forKey: name)
            let value: StoredValue
            if let type = declared ?? requested {
                value = try ValueText.parse(text, as: type)
            } else if let stored {
                do {
                    value = try ValueText.parse(text, as: stored.type)
                } catch {
                    let other = ValueText.infer(text).type
                    let hint = other == stored.type ? "" : " (to store \(article(other)) instead, give --type \(ArgumentParser.shellQuoted(other.description)))"
                    throw ToolError.data("\(ToolError(error).message); key \(ValueText.quoted(name)) holds \(article(stored.type))\(hint)")
                }
            } else {
                value = ValueText.infer(text)
            }
            try transaction.setStoredValue(value, forKey: name)
            return stored == nil
        }
        if created, declared == nil {
            let stored = try prefs.snapshot().keys.filter { $0 != name }
            if let near = KeyName.likelyTypo(of: name, among: stored + Array(declarations.keys)) {
                Terminal.warning(
                    "\(ValueText.quoted(name)) is a new key; did you mean \(ValueText.quoted(near))? (prefs-tool reset \(ArgumentParser.shellQuoted(name)) removes it)"
                )
            }
        }
        return 0
    }

    /// "an int", "a string", "a [string: date]": a type named in a sentence.
    static func article(_ type: ValueType) -> String {
        let name = type.description
        return (["a", "e", "i", "o", "u"].contains(name.prefix(1)) ? "an " : "a ") + name
    }

    static let reset = Command(
        spec: CommandSpec(
            name: "reset", summary: "Remove stored values so keys read their initial values again.",
            usage: "prefs-tool [--store PATH] reset KEY… | --all",
            help: """
                prefs-tool reset lastMessageId   makes the app show its latest remote message again.
                --all removes every stored value. Exits 0 when the keys hold no stored value afterwards, whether or not
                they held one before (as 'dialogs reset' does); a key that is neither stored nor declared is named on
                stderr, with the nearest known key.
                """,
            flags: ["all"], positionals: 0...Int.max)
    ) { arguments, context in
        let usage = context.usage
        if arguments.flag("all") {
            guard arguments.positionals.isEmpty else { throw ToolError.usage("give keys or --all, not both", usage) }
            try context.store.open(checked: true).resetAll()
            return 0
        }
        guard !arguments.positionals.isEmpty else { throw ToolError.usage("missing KEY (or --all)", usage) }
        let prefs = try context.store.open(checked: true)
        let stored = try prefs.snapshot()
        let declared = try prefs.declaredKeys()
        var unknown: [String] = []
        var removals: [String: StoredValue?] = [:]
        for name in arguments.positionals {
            // A declared key is reset even when nothing is stored under its name: its former names may hold its value.
            if stored[name] != nil || declared[name] != nil { removals[name] = .some(nil) }
            if stored[name] == nil && declared[name] == nil { unknown.append(name) }
        }
        try prefs.setStoredValues(removals)
        for name in unknown {
            Terminal.warning("key \(ValueText.quoted(name)) is neither stored nor declared: nothing to reset\(try suggestion(for: name, in: prefs))")
        }
        return 0
    }

    /// "; did you mean 'X'?" for a key name close to a stored or declared one.
    static func suggestion(for name: String, in prefs: Prefs) throws -> String {
        let names = Array(try prefs.snapshot().keys) + Array(try prefs.declaredKeys().keys)
        return KeyName.nearest(to: name, in: names).map { "; did you mean \(ValueText.quoted($0))?" } ?? ""
    }
}

/// Writing JSON documents to stdout: sorted keys, a trailing newline, control characters escaped by the serializer
/// (and, on a terminal, every character ``Terminal/isUnsafeOnTerminal(_:)`` names).
enum Output {
    static func json(_ value: JSON) {
        Terminal.printJSON(value.serialized(.pretty))
    }
}

extension ValueType {
    /// Whether the type is, or holds, a type only a newer release knows (`.other`).
    var containsUnknownType: Bool {
        var type = self
        while true {
            switch type {
            case .array(let inner), .dictionary(let inner): type = inner
            case .other: return true
            default: return false
            }
        }
    }

    var isCollection: Bool {
        switch self {
        case .array, .dictionary, .json: true
        default: false
        }
    }
}
