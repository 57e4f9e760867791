import Foundation
internal import PrefsJSON

// MARK: - Reading declarations

extension JSONStoreDocument {
    /// The declarations of the object `object` (`"declared"`, `"declaredInFull"`), every error naming `path` and the
    /// entry's JSON path.
    static func declarations(from object: JSON, named name: String, path: String) throws(PrefsError) -> [String: KeyDeclaration] {
        guard case .object(let entries) = object else {
            throw .corruptStore(path: path, reason: "$.\(name): expected an object, found \(object.kindName)")
        }
        var declarations: [String: KeyDeclaration] = [:]
        for (key, entry) in entries {
            declarations[key] = try declaration(from: entry, key: key, named: name, path: path)
        }
        return declarations
    }

    /// The declaration of `key` in the object `name`: `{"formerNames": […], "initial": …, "type": "…"}`. Every error
    /// names `path` and the entry's JSON path.
    static func declaration(from entry: JSON, key: String, named name: String, path: String) throws(PrefsError) -> KeyDeclaration {
        guard case .string(let typeName)? = entry["type"], let type = ValueType(typeName) else {
            var problem = "expected a type name such as \"int\""
            if case .string(let typeName)? = entry["type"], let limit = ValueType.limitProblem(typeName) { problem += ", found \(limit)" }
            throw .corruptStore(path: path, reason: "$.\(name)\(JSONPath.member(key)).type: \(problem)")
        }
        var formerNames: [String] = []
        if let member = entry["formerNames"] {
            guard case .array(let names) = member else {
                throw .corruptStore(
                    path: path, reason: "$.\(name)\(JSONPath.member(key)).formerNames: expected an array of key names, found \(member.kindName)")
            }
            for (index, former) in names.enumerated() {
                guard case .string(let text) = former else {
                    throw .corruptStore(
                        path: path, reason: "$.\(name)\(JSONPath.member(key)).formerNames[\(index)]: expected a key name, found \(former.kindName)")
                }
                formerNames.append(text)
            }
        }
        return KeyDeclaration(type: type, initial: entry["initial"], formerNames: formerNames)
    }

    /// Throws what ``declarations(from:named:path:)`` throws for the entries of the object `name`, kept as their
    /// ranges in `file` (JSON that was checked as it was parsed), without building them: an entry as this release
    /// writes it (`{"initial": …, "type": "int"}`, a type name without escapes) is checked by a look at its members and
    /// its type name (each name read once); any other is parsed and checked as a whole document's would be, the
    /// first such in the file first.
    static func checkDeclarations(_ entries: [String: Range<Int>], in file: Data, named name: String, path: String) throws(PrefsError) {
        var others: [(key: String, range: Range<Int>)] = []
        var known: [String: Bool] = [:]  // type name: whether it names a type
        file.withUnsafeBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            for (key, range) in entries {
                let text = UnsafeBufferPointer(rebasing: bytes[range])
                guard let typeName = plainTypeName(ofDeclaration: text) else {
                    others.append((key, range))
                    continue
                }
                if let isType = known[typeName] {
                    if !isType { others.append((key, range)) }
                } else {
                    let isType = ValueType(typeName) != nil
                    known[typeName] = isType
                    if !isType { others.append((key, range)) }
                }
            }
        }
        for (key, range) in others.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            let bytes = file[file.startIndex + range.lowerBound..<file.startIndex + range.upperBound]
            guard case .success(let entry) = Result(catching: { () throws(JSONParseError) -> JSON in try JSON.parse(bytes) }) else {
                continue  // unreachable: checked JSON (see Entries); nothing to say about it here
            }
            _ = try declaration(from: entry, key: key, named: name, path: path)
        }
    }

    /// The type name of a declaration whose members are `"initial"` and `"type"` alone, as this release writes them
    /// (keys and type name without escapes, in ASCII); nil for any other entry.
    private static func plainTypeName(ofDeclaration text: UnsafeBufferPointer<UInt8>) -> String? {
        var typeName: String?
        var plain = true
        let isObject = JSON.forEachMember(ofObjectText: text) { key, value in
            let key = UnsafeBufferPointer(rebasing: text[key])
            if Self.bytes(key, are: "initial") { return true }
            if Self.bytes(key, are: "type"), value.count >= 2, text[value.lowerBound] == UInt8(ascii: "\"") {
                let name = UnsafeBufferPointer(rebasing: text[value.lowerBound + 1..<value.upperBound - 1])
                if name.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\\") }) {
                    typeName = String(decoding: name, as: UTF8.self)
                    return true
                }
            }
            plain = false  // another member (formerNames), an escape, a type that is not a string: parsed whole
            return false
        }
        return isObject && plain ? typeName : nil
    }

    /// Whether `bytes` are the ASCII text `literal`.
    private static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, are literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }
}
