import Foundation

/// Every stored value with its type, as one JSON document: what `prefs-tool export` writes and `import` reads.
///
/// The document has the JSON store's format, so an export is itself a valid JSON store:
/// ```swift
/// let data = try StoreArchive.export(prefs)
/// let values = try StoreArchive.decode(data, source: "backup.json")   // validated: names, types, shapes
/// ```
public enum StoreArchive {
    /// The archive of `values` (pretty, sorted keys, trailing newline).
    public static func encode(_ values: [String: StoredValue]) -> Data {
        var document = JSONStoreDocument()
        document.values = values
        return document.encoded()
    }

    /// The archive of every value stored in `prefs`. Throws, writing nothing, when a value could not be read back
    /// by ``decode(_:source:)`` (see ``validate(_:source:)``): an export is only as good as its import.
    public static func export(_ prefs: Prefs) throws -> Data {
        let values = try prefs.snapshot()
        try validate(values, source: prefs.storage.path ?? prefs.storage.description)
        return encode(values)
    }

    /// Reads an archive and checks every entry (``validate(_:source:)``).
    public static func decode(_ data: Data, source: String) throws(PrefsError) -> [String: StoredValue] {
        let document = try JSONStoreDocument(data: data, path: source)
        try validate(document.values, source: source)
        return document.values
    }

    /// Checks every entry: a valid key name, a known type, a value of that type's shape. Throws
    /// ``PrefsError/corruptStore(path:reason:)`` naming `source`, the entry's JSON path and the first problem.
    public static func validate(_ values: [String: StoredValue], source: String) throws(PrefsError) {
        for key in values.keys.sorted() {
            guard let value = values[key] else { continue }
            if let problem = KeyName.problem(with: key) {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)): \(problem)")
            }
            if case .other(let name) = value.type {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)).type: unknown type \"\(name)\"")
            }
            if let problem = value.shapeProblem() {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)).value: \(problem)")
            }
        }
    }
}
