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
///   "formatVersion": 2,
///   "journalGeneration": "9f2c4e7a01b3d586",
///   "values": {
///     "launchCount": {"type": "int", "value": 3}
///   }
/// }
/// ```
/// A value written by hand without its type (`"launchCount": 3`) is read with the type its JSON implies.
/// Members this release does not know are kept as found.
///
/// Two format versions, each a promise about what a reader may conclude from the file alone:
/// - **1**, what release 0.1 reads and writes: the file holds the whole store (a journal beside it is never applied),
///   in 0.1's vocabulary (no `uint` type, no `formerNames` in `"declared"`). This release writes it for a store opened
///   with `formatVersion: 1`, and keeps writing a format-1 file as format 1 unless asked to upgrade it: it then says
///   `uint` values as `int`, and keeps the declarations 0.1 cannot say in a top-level `"declaredInFull"` member, which
///   0.1 keeps as found when it rewrites the file (see ``formatOneDocument()``).
/// - **2**, from release 0.2: the `uint` type and `formerNames`, and a journal (`FILE.journal`, see ``JSONJournal``)
///   that continues the snapshot whose `"journalGeneration"` it names. Release 0.1 refuses it
///   (``PrefsError/unsupportedFormatVersion(path:found:supported:)``) and changes nothing.
struct JSONStoreDocument: Sendable, Hashable {
    static let formatName = "prefs"
    /// The newest format this release reads and writes.
    static let formatVersion = 2
    /// The format written by release 0.1, which never applies a journal.
    static let journallessFormatVersion = 1
    /// The top-level member of a format-1 file holding the declarations format 1 cannot say (see ``formatOneDocument()``).
    static let declaredInFullMember = "declaredInFull"

    /// The format version of the file read; the newest for a new document.
    var formatVersion = JSONStoreDocument.formatVersion
    /// The values by key, each decoded when first read (see ``Entries``).
    var values = Values()
    /// The key declarations by key, each checked when the file is read and decoded when first read.
    var declarations = Declarations()
    /// Top-level members written by a newer release or by hand, kept on rewrite.
    var unknownMembers: [String: JSON] = [:]

    init() {}

    /// Reads a store document; every error names `path` and, for bad JSON, the line and column. The whole file is
    /// checked, but its values and declarations are decoded only when read (see ``Entries``).
    init(data: Data, path: String) throws(PrefsError) {
        guard !data.isEmpty else {
            throw .corruptStore(path: path, reason: "the file is empty; a Prefs JSON store is an object with \"formatVersion\" and \"values\"")
        }
        let parsed: JSON.KeptMembers
        do {
            parsed = try JSON.parse(data, keepingMembersOf: ["values", "declared"])
        } catch {
            throw .corruptStore(path: path, reason: "invalid JSON at \(error.location.line):\(error.location.column): \(error.message)")
        }
        guard case .object(var members) = parsed.root else {
            throw .corruptStore(path: path, reason: "expected a JSON object at the top level, found \(parsed.root.kindName)")
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
        formatVersion = version
        members.removeValue(forKey: "format")
        if let entries = parsed.kept["values"] {
            values = Values(entries, in: data)
        } else if let valuesMember = members.removeValue(forKey: "values") {
            throw .corruptStore(path: path, reason: "$.values: expected an object, found \(valuesMember.kindName)")
        }
        if let entries = parsed.kept["declared"] {
            try Self.checkDeclarations(entries, in: data, named: "declared", path: path)
            declarations = Declarations(entries, in: data)
        } else if let declaredMember = members.removeValue(forKey: "declared") {
            declarations = Declarations(try Self.declarations(from: declaredMember, named: "declared", path: path))  // throws: not an object
        }
        if version == Self.journallessFormatVersion, let inFull = members.removeValue(forKey: Self.declaredInFullMember) {
            // A declaration as this release wrote it, unless a release that does not know the member (0.1) has
            // declared the key again since: then the plain declaration no longer matches it, and is the newer one.
            for (key, full) in try Self.declarations(from: inFull, named: Self.declaredInFullMember, path: path)
            where declarations[key] == full.formatOneForm {
                declarations[key] = full
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
        values.apply(changes.values)
        declarations.apply(removing: changes.removedDeclarations, setting: changes.declarations)
    }

    /// The document as pretty, sorted JSON with a trailing newline, in its ``formatVersion`` (format 1 through
    /// ``formatOneDocument()``).
    func encoded() -> Data {
        if formatVersion == Self.journallessFormatVersion { return formatOneDocument().encodedAsIs() }
        return encodedAsIs()
    }

    /// The text `JSON.object(root).serializedData(.pretty)` would write for the whole document, written entry by entry:
    /// the `"values"` and `"declared"` objects are never built as trees (at 100k keys, those trees and their tables
    /// were most of a compaction's peak memory: 176 MB of heap at 100k keys, now 107 MB). Each entry is decoded,
    /// written and let go in turn, for some 17% more instructions than serializing the tree took (callgrind, 100k keys).
    private func encodedAsIs() -> Data {
        var root = unknownMembers
        root["format"] = .string(Self.formatName)
        root["formatVersion"] = .int(formatVersion)
        root["values"] = nil
        root["declared"] = nil
        let rootNames = (Array(root.keys) + ["values", "declared"]).sorted(by: JSON.keyPrecedes)
        var writer = JSONWriter(indentWidth: JSONFormat.pretty.indentWidth)
        writer.writeObject(count: rootNames.count, depth: 0, key: { rootNames[$0] }) { writer, index in
            switch rootNames[index] {
            case "values":
                Self.write(values, into: &writer, entry: Self.writeValueEntry)
            case "declared":
                Self.write(declarations, into: &writer, entry: Self.writeDeclarationEntry)
            case let name:
                writer.write(root[name] ?? .null, depth: 1)
            }
        }
        writer.appendRaw(CollectionOfOne(0x0A))
        return Data(writer.takeOutput())
    }

    /// The `"values"` or `"declared"` object, a member of the document's root: each entry in key order, written at
    /// depth 2 by `entry`.
    private static func write<Element: JSONStoreEntry>(
        _ entries: Entries<Element>, into writer: inout JSONWriter, entry: (inout JSONWriter, Element) -> Void
    ) {
        let order = entries.inKeyOrder()
        writer.writeObject(count: order.count, depth: 1, key: { order[$0].key }) { writer, index in
            entry(&writer, entries.element(at: order[index].place))
        }
    }

    /// A value's entry, `{"type": "…", "value": …}`, as `write(.object(…), depth: 2)` writes it, without the object's
    /// table (a `Dictionary` made and sorted for every entry was most of a compaction's instructions).
    private static func writeValueEntry(_ writer: inout JSONWriter, _ value: StoredValue) {
        writer.writeObject(count: 2, depth: 2, key: { $0 == 0 ? "type" : "value" }) { writer, member in
            if member == 0 { writer.writeString(value.type.description) } else { writer.write(value.json, depth: 3) }
        }
    }

    /// A declaration's entry, as ``KeyDeclaration/json`` is written at depth 2, without its tree: its members in key
    /// order, `formerNames` and `initial` when it has them, then `type`.
    private static func writeDeclarationEntry(_ writer: inout JSONWriter, _ declaration: KeyDeclaration) {
        let hasFormerNames = !declaration.formerNames.isEmpty
        let hasInitial = declaration.initial != nil
        // Member i of those present, as 0 (formerNames), 1 (initial) or 2 (type).
        func member(_ index: Int) -> Int {
            var member = hasFormerNames ? index : index + 1
            if !hasInitial, member >= 1 { member += 1 }
            return member
        }
        let count = 1 + (hasFormerNames ? 1 : 0) + (hasInitial ? 1 : 0)
        func name(_ member: Int) -> String {
            switch member {
            case 0: "formerNames"
            case 1: "initial"
            default: "type"
            }
        }
        writer.writeObject(count: count, depth: 2, key: { name(member($0)) }) { writer, index in
            switch member(index) {
            case 0: writer.write(.array(declaration.formerNames.map(JSON.string)), depth: 3)
            case 1: writer.write(declaration.initial ?? .null, depth: 3)
            default: writer.writeString(declaration.type.description)
            }
        }
    }
}

// MARK: - Format 1

extension JSONStoreDocument {
    /// This document as release 0.1 reads it exactly, and rewrites it without losing anything: `uint` values that fit
    /// `Int` as `int` (this release reads them back into any unsigned type they fit), and each declaration 0.1 cannot
    /// say (a `uint` type, `formerNames`) in 0.1's terms under `"declared"` and in full under `"declaredInFull"`, a
    /// member 0.1 keeps as found. No journal generation: a format-1 file has no journal. A value format 1 cannot hold
    /// (a `uint` above `Int.max`, see ``formatOneProblem()``) is kept as it is.
    func formatOneDocument() -> JSONStoreDocument {
        var document = self
        document.formatVersion = Self.journallessFormatVersion
        document.unknownMembers[JSONJournal.generationMember] = nil
        document.unknownMembers[Self.declaredInFullMember] = nil
        for (key, value) in values.decoded() {
            if let form = value.formatOneForm, form != value { document.values[key] = form }
        }
        var inFull: [String: JSON] = [:]
        for (key, declaration) in declarations.decoded() where declaration.formatOneForm != declaration {
            document.declarations[key] = declaration.formatOneForm
            inFull[key] = declaration.json
        }
        if !inFull.isEmpty { document.unknownMembers[Self.declaredInFullMember] = .object(inFull) }
        return document
    }

    /// This format-1 document as a reader finds it in the file: values in format 1's vocabulary, declarations in
    /// full (from `"declaredInFull"`).
    func asReadBack() -> JSONStoreDocument {
        var document = formatOneDocument()
        document.declarations = declarations
        document.unknownMembers[Self.declaredInFullMember] = nil
        return document
    }

    /// The first value of `keys` (by name) that format 1 cannot hold, and why; nil when ``formatOneDocument()`` says
    /// them all.
    func formatOneProblem(among keys: some Collection<String>) -> (key: String, reason: String)? {
        for key in keys.sorted() {
            guard let value = values[key], value.formatOneForm == nil else { continue }
            return (
                key,
                "a \(value.type) value above \(Int.max) cannot be written in format 1 of the JSON store (what release 0.1 reads); "
                    + "open the store with formatVersion: 2"
            )
        }
        return nil
    }
}

extension StoredValue {
    /// The value in format 1's vocabulary: `uint` as `int` (also in arrays and dictionaries); nil for a `uint` above
    /// `Int.max`, which format 1 cannot hold. Other values are their own form.
    var formatOneForm: StoredValue? {
        guard type.mentionsUnsigned else { return self }
        guard let json = Self.formatOneJSON(json, type: type) else { return nil }
        return StoredValue(type: type.formatOneForm, json: json)
    }

    private static func formatOneJSON(_ json: JSON, type: ValueType) -> JSON? {
        switch (type, json) {
        case (.uint, .int): return json
        case (.uint, _): return nil  // a decimal string: above Int.max
        case (.array(let elementType), .array(let elements)):
            var converted: [JSON] = []
            converted.reserveCapacity(elements.count)
            for element in elements {
                guard let form = formatOneJSON(element, type: elementType) else { return nil }
                converted.append(form)
            }
            return .array(converted)
        case (.dictionary(let valueType), .object(let members)):
            var converted: [String: JSON] = [:]
            for (key, member) in members {
                guard let form = formatOneJSON(member, type: valueType) else { return nil }
                converted[key] = form
            }
            return .object(converted)
        default: return json  // a shape the type does not describe: kept as found
        }
    }
}

extension ValueType {
    /// Whether the type is or holds `uint`, which release 0.1 does not know.
    var mentionsUnsigned: Bool {
        switch self {
        case .uint: true
        case .array(let element), .dictionary(let element): element.mentionsUnsigned
        default: false
        }
    }

    /// The type in format 1's vocabulary: `uint` as `int`.
    var formatOneForm: ValueType {
        switch self {
        case .uint: .int
        case .array(let element): .array(element.formatOneForm)
        case .dictionary(let element): .dictionary(element.formatOneForm)
        default: self
        }
    }
}

extension KeyDeclaration {
    /// The declaration in format 1's vocabulary: a `uint` type as `int`, without former names.
    var formatOneForm: KeyDeclaration {
        KeyDeclaration(type: type.formatOneForm, initial: initial)
    }

    /// The declaration's entry in a store document: `{"formerNames": […], "initial": …, "type": "…"}`.
    var json: JSON {
        var members: [String: JSON] = ["type": .string(type.description)]
        if let initial { members["initial"] = initial }
        if !formerNames.isEmpty { members["formerNames"] = .array(formerNames.map(JSON.string)) }
        return .object(members)
    }
}

extension JSONPath {
    /// The path text of one object member under a parent path, e.g. `.launchCount` or `["odd key"]`.
    static func member(_ key: String) -> String {
        let path = JSONPath([.key(key)]).description
        return String(path.dropFirst())  // drop "$"
    }
}
