import Foundation
import Prefs

/// `list`, `get`, `set`, `reset`: the store's keys and values.
enum StoreCommands {
    static let all = [list, get, set, reset]

    static let list = Command(spec: CommandSpec(
        name: "list", summary: "List every stored and every declared key.",
        usage: "prefs-tool [--store PATH] list [--json]",
        help: """
            Plain output: one line per key, KEY<TAB>TYPE<TAB>VALUE, with "(initial)" after keys that hold no stored value.
            --json prints one object: {"KEY": {"type", "value", "initial", "stored"}}, value and initial in their JSON form.
            """,
        flags: ["json"])
    ) { arguments, context in
        let prefs = try context.store.open()
        let stored = try prefs.snapshot()
        let declared = try prefs.declaredKeys()
        let names = Set(stored.keys).union(declared.keys).sorted()
        if arguments.flag("json") {
            var object: [String: JSON] = [:]
            for name in names {
                let value = stored[name] ?? declared[name]?.initialValue
                object[name] = .object([
                    "type": .string((stored[name]?.type ?? declared[name]?.type)?.description ?? "unknown"),
                    "value": value?.json ?? .null,
                    "initial": declared[name]?.initial ?? .null,
                    "stored": .bool(stored[name] != nil),
                ])
            }
            Output.json(.object(object))
        } else {
            for name in names {
                if let value = stored[name] {
                    Terminal.printData("\(name)\t\(value.type)\t\(ValueText.plain(value))")
                } else if let declaration = declared[name] {
                    let initial = declaration.initialValue.map(ValueText.plain) ?? "null"
                    Terminal.printData("\(name)\t\(declaration.type)\t\(initial)\t(initial)")
                }
            }
        }
        return 0
    }

    static let get = Command(spec: CommandSpec(
        name: "get", summary: "Print one key's value (stored, else its declared initial value).",
        usage: "prefs-tool [--store PATH] get KEY [--json]",
        help: """
            Plain text: true/false, numbers as written, dates as ISO-8601, URLs whole, strings raw, collections as JSON.
            --json prints the value's JSON form alone. A key with no stored value and no declared initial value exits 1.
            """,
        flags: ["json"], positionals: 1...1)
    ) { arguments, context in
        let name = arguments.positionals[0]
        let prefs = try context.store.open()
        let declaration = try prefs.declaredKeys()[name]
        guard let value = try prefs.storedValue(forKey: name) ?? declaration?.initialValue else {
            if let declaration {
                throw ToolError(code: .notFound, message: "key \(ValueText.quoted(name)) has no value: nothing is stored, and its declared initial value (\(declaration.type)) is nil")
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

    static let set = Command(spec: CommandSpec(
        name: "set", summary: "Write one key's value (creates a missing store, mode 0600).",
        usage: "prefs-tool [--store PATH] set KEY VALUE [--type bool|int|double|string|date|data|url|json]",
        help: """
            The type comes from the key's declaration when the app declared it, else from --type, else it is inferred:
            true/false, an integer, a decimal number, otherwise a string. A value that does not parse as its type exits 65
            and writes nothing. A negative number is a VALUE as it is (set n -5); any other VALUE that starts with '-'
            goes after '--': prefs-tool set s -- -x.
            """,
        options: ["type"], positionals: 2...2)
    ) { arguments, context in
        let (name, text) = (arguments.positionals[0], arguments.positionals[1])
        if let problem = KeyName.problem(with: name) { throw ToolError.data("invalid key name \(ValueText.quoted(name)): \(problem)") }
        var requested: ValueType?
        if let typeName = arguments.option("type") {
            guard ValueText.typeNames.contains(typeName), let type = ValueType(typeName) else {
                let hint = Suggestion.nearest(to: typeName, in: ValueText.typeNames).map { "; did you mean '\($0)'?" } ?? ""
                throw ToolError.usage("unknown type '\(typeName)'\(hint)", context.usage)
            }
            requested = type
        }
        let prefs = try context.store.open(create: true, checked: true)
        let declared = try prefs.declaredKeys()[name]?.type
        if let declared, let requested, requested != declared, !(requested == .json && declared.isCollection) {
            throw ToolError.data("key \(ValueText.quoted(name)) is declared as \(declared), not \(requested)")
        }
        let value = try ValueText.parse(text, as: declared ?? requested)
        try prefs.setStoredValue(value, forKey: name)
        return 0
    }

    static let reset = Command(spec: CommandSpec(
        name: "reset", summary: "Remove stored values so keys read their initial values again.",
        usage: "prefs-tool [--store PATH] reset KEY… | --all",
        help: """
            prefs-tool reset lastMessageId   makes the app show its latest remote message again.
            --all removes every stored value. A key that is neither stored nor declared is reported (exit 1); the others are reset.
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
            Terminal.error("key \(ValueText.quoted(name)) not found\(try suggestion(for: name, in: prefs))")
        }
        return unknown.isEmpty ? 0 : ToolError.Code.notFound.rawValue
    }

    /// "; did you mean 'X'?" for a key name close to a stored or declared one.
    static func suggestion(for name: String, in prefs: Prefs) throws -> String {
        let names = Array(try prefs.snapshot().keys) + Array(try prefs.declaredKeys().keys)
        return Suggestion.nearest(to: name, in: names).map { "; did you mean \(ValueText.quoted($0))?" } ?? ""
    }
}

/// Writing JSON documents to stdout: sorted keys, a trailing newline, control characters escaped by the serializer.
enum Output {
    static func json(_ value: JSON) {
        Terminal.print(value.serialized(.pretty))
    }
}

extension ValueType {
    var isCollection: Bool {
        switch self {
        case .array, .dictionary, .json: true
        default: false
        }
    }
}
