internal import PrefsJSON

extension StoredValue {
    /// A value from the two texts a backend keeps for it, ``type`` (its ``ValueType/description``) and
    /// ``jsonText``, checked: the text must be JSON, and JSON of the type's shape (an `int` an integer, a `date` an
    /// ISO-8601 string, a `[string: int]` an object of integers; a `json` value, or a type this release does not know,
    /// any JSON).
    ///
    /// ```swift
    /// let stored = try StoredValue(42)
    /// let row = (type: stored.type.description, text: stored.jsonText)   // what a backend writes: "int", "42"
    /// let back = try StoredValue(type: ValueType(row.type) ?? .other(row.type), jsonText: row.text)   // == stored
    /// ```
    ///
    /// Throws a ``ValueMismatch`` saying what is wrong (`not JSON: 1:1: …`, `expected an integer, found string`); a
    /// backend may throw it on from ``Prefs/Backend/value(forKey:)``, and the store reports it as
    /// ``PrefsError/typeMismatch(key:_:)`` for that key.
    public init(type: ValueType, jsonText text: String) throws(ValueMismatch) {
        let json: JSON
        do {
            json = try JSON.parse(text)
        } catch {
            throw ValueMismatch(stored: StoredValue(type: type, uncheckedJSONText: text), expected: type, reason: "not JSON: \(error)")
        }
        // A Codable's text is kept as it is, for JSONDecoder; other values as the tree just parsed.
        self = type == .json ? StoredValue(type: type, uncheckedJSONText: text) : StoredValue(type: type, json: json)
        if let problem = shapeProblem() { throw ValueMismatch(stored: self, expected: type, reason: problem) }
    }
}
