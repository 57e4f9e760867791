import Foundation
internal import PrefsJSON

/// The JSON store file: one sorted, indented, hand-editable document.
///
/// ```json
/// {
///   "declared": {
///     "launchCount": {"initial": 0, "type": "int"},
///     "launches": {"formerNames": ["launchCounter"], "initial": 0, "type": "int"}
///   },
///   "format": "prefs",
///   "formatVersion": 1,
///   "values": {
///     "launchCount": {"type": "int", "value": 3}
///   }
/// }
/// ```
/// A value written by hand without its type (`"launchCount": 3`) is read with the type its JSON implies.
/// Members this release does not know are kept as found.
struct JSONStoreDocument: Sendable, Hashable {
    static let formatName = "prefs"
    static let formatVersion = 1

    var values: [String: StoredValue] = [:]
    var declarations: [String: KeyDeclaration] = [:]
    /// Top-level members written by a newer release or by hand, kept on rewrite.
    var unknownMembers: [String: JSON] = [:]

    init() {}

    /// Reads a store document; every error names `path` and, for bad JSON, the line and column.
    init(data: Data, path: String) throws(PrefsError) {
        guard !data.isEmpty else {
            throw .corruptStore(path: path, reason: "the file is empty; a Prefs JSON store is an object with \"formatVersion\" and \"values\"")
        }
        let root: JSON
        do {
            root = try JSON.parse(data)
        } catch {
            throw .corruptStore(path: path, reason: "invalid JSON at \(error.location.line):\(error.location.column): \(error.message)")
        }
        guard case .object(var members) = root else {
            throw .corruptStore(path: path, reason: "expected a JSON object at the top level, found \(root.kindName)")
        }
        guard let versionMember = members.removeValue(forKey: "formatVersion") else {
            throw .corruptStore(path: path, reason: "missing \"formatVersion\": this JSON file is not a Prefs store")
        }
        guard case .int(let version) = versionMember, version >= 1 else {
            throw .corruptStore(path: path, reason: "$.formatVersion: expected a positive integer, found \(versionMember.serialized())")
        }
        guard version <= Self.formatVersion else {
            throw .unsupportedFormatVersion(path: path, found: version, supported: Self.formatVersion)
        }
        members.removeValue(forKey: "format")
        if let valuesMember = members.removeValue(forKey: "values") {
            guard case .object(let entries) = valuesMember else {
                throw .corruptStore(path: path, reason: "$.values: expected an object, found \(valuesMember.kindName)")
            }
            values.reserveCapacity(entries.count)
            for (key, entry) in entries {
                values[key] = Self.storedValue(from: entry)
            }
        }
        if let declaredMember = members.removeValue(forKey: "declared") {
            guard case .object(let entries) = declaredMember else {
                throw .corruptStore(path: path, reason: "$.declared: expected an object, found \(declaredMember.kindName)")
            }
            for (key, entry) in entries {
                guard case .string(let typeName)? = entry["type"], let type = ValueType(typeName) else {
                    var problem = "expected a type name such as \"int\""
                    if case .string(let typeName)? = entry["type"], let limit = ValueType.limitProblem(typeName) { problem += ", found \(limit)" }
                    throw .corruptStore(path: path, reason: "$.declared\(JSONPath.member(key)).type: \(problem)")
                }
                var formerNames: [String] = []
                if let member = entry["formerNames"] {
                    guard case .array(let names) = member else {
                        throw .corruptStore(
                            path: path, reason: "$.declared\(JSONPath.member(key)).formerNames: expected an array of key names, found \(member.kindName)")
                    }
                    for (index, name) in names.enumerated() {
                        guard case .string(let text) = name else {
                            throw .corruptStore(
                                path: path, reason: "$.declared\(JSONPath.member(key)).formerNames[\(index)]: expected a key name, found \(name.kindName)")
                        }
                        formerNames.append(text)
                    }
                }
                declarations[key] = KeyDeclaration(type: type, initial: entry["initial"], formerNames: formerNames)
            }
        }
        unknownMembers = members
    }

    /// A tagged entry `{"type": "int", "value": 3}`, or a bare hand-written value.
    ///
    /// A tag whose type name is over ``ValueType``'s limits (too long, nested too deeply) keeps its value under that
    /// name, as a type this release does not know: written back as found, and reported by an integrity check.
    static func storedValue(from entry: JSON) -> StoredValue {
        if case .object(let members) = entry, members.count == 2,
            case .string(let typeName)? = members["type"], let value = members["value"]
        {
            if let type = ValueType(typeName) { return StoredValue(type: type, json: value) }
            if ValueType.limitProblem(typeName) != nil { return StoredValue(type: .other(typeName), json: value) }
        }
        return StoredValue(type: .inferred(from: entry), json: entry)
    }

    /// Applies changes in place (one access to `self`, so a class holding the document is not accessed twice at once).
    mutating func apply(_ changes: Changeset) {
        changes.apply(to: &values, declarations: &declarations)
    }

    /// The document as pretty, sorted JSON with a trailing newline.
    func encoded() -> Data {
        var root = unknownMembers
        root["format"] = .string(Self.formatName)
        root["formatVersion"] = .int(Self.formatVersion)
        root["values"] = .object(values.mapValues { .object(["type": .string($0.type.description), "value": $0.json]) })
        root["declared"] = .object(
            declarations.mapValues { declaration in
                var members: [String: JSON] = ["type": .string(declaration.type.description)]
                if let initial = declaration.initial { members["initial"] = initial }
                if !declaration.formerNames.isEmpty { members["formerNames"] = .array(declaration.formerNames.map(JSON.string)) }
                return .object(members)
            })
        var data = JSON.object(root).serializedData(.pretty)
        data.append(0x0A)
        return data
    }
}

extension JSONPath {
    /// The path text of one object member under a parent path, e.g. `.launchCount` or `["odd key"]`.
    static func member(_ key: String) -> String {
        let path = JSONPath([.key(key)]).description
        return String(path.dropFirst())  // drop "$"
    }
}
