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

    /// The archive of every value stored in `prefs`.
    public static func export(_ prefs: Prefs) throws -> Data {
        encode(try prefs.snapshot())
    }

    /// Reads an archive and checks every entry: a valid key name, a known type, a value of that type's shape.
    /// Throws ``PrefsError/corruptStore(path:reason:)`` naming `source` and the first problem.
    public static func decode(_ data: Data, source: String) throws(PrefsError) -> [String: StoredValue] {
        let document = try JSONStoreDocument(data: data, path: source)
        for key in document.values.keys.sorted() {
            guard let value = document.values[key] else { continue }
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
        return document.values
    }
}
