import Foundation

/// A JSON value, kept exactly as written.
///
/// Integers stay integers (`.int`, the whole `Int64` range), numbers with a fraction or an exponent are
/// `.double`, and object keys are unique. Prefs uses it for the JSON-file store, for values stored as JSON
/// in SQLite, for `prefs-tool` output and for DialogGate feeds.
///
/// ```swift
/// let value = try JSON.parse(#"{"id": 1, "title": "Hi"}"#)
/// value["id"]            // .int(1)
/// value.serialized()     // {"id":1,"title":"Hi"}
/// ```
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    /// A finite number. JSON has no NaN or infinity: the serializer writes `null` for them, so callers encode
    /// non-finite numbers another way first (Prefs stores them as the strings `"nan"`, `"inf"`, `"-inf"`).
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
}

extension JSON {
    /// The member named `key` of an object, or nil.
    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array, or nil.
    public subscript(index: Int) -> JSON? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The JSON kind, as a reader would name it in an error: "object", "array", "string", "integer", "number", "boolean", "null".
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSON {
    /// Whether arrays and objects nest more than `limit` levels deep (a scalar is 0, `[1]` is 1, `[[]]` is 2).
    ///
    /// The walk stops one level past `limit`, so it recurses at most `limit + 1` frames however deep the value is.
    ///
    /// ```swift
    /// JSON.array([.array([])]).nests(deeperThan: 1)   // true
    /// ```
    public func nests(deeperThan limit: Int) -> Bool {
        switch self {
        case .null, .bool, .int, .double, .string: false
        case .array(let elements): limit < 1 || elements.contains { $0.nests(deeperThan: limit - 1) }
        case .object(let members): limit < 1 || members.values.contains { $0.nests(deeperThan: limit - 1) }
        }
    }

    /// What a look at the bytes of JSON text tells without parsing it: how deeply it nests arrays and objects, and
    /// whether it has an integer literal long enough (19 digits or more) that it may not fit `Int` (``parse(_:options:)``
    /// refuses those). For text known to be JSON, such as `JSONEncoder`'s output: text that is not JSON gets an
    /// answer, not an error.
    ///
    /// ```swift
    /// JSON.shape(ofText: #"{"a":[1,"]"]}"#)              // depth 2: the bracket in the string is not one
    /// JSON.shape(ofText: "[18446744073709551615]").hasLongInteger   // true
    /// ```
    public static func shape(ofText text: String) -> TextShape {
        var shape = TextShape()
        var depth = 0
        var inString = false
        var escaped = false
        var digits = 0
        for byte in text.utf8 {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            if byte &- UInt8(ascii: "0") < 10 {
                digits += 1
                if digits >= 19 { shape.hasLongInteger = true }
                continue
            }
            digits = 0
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                shape.depth = max(shape.depth, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return shape
    }

    /// See ``shape(ofText:)``.
    public struct TextShape: Sendable, Hashable {
        /// The deepest nesting of arrays and objects: 0 for a scalar, 1 for `[1]`.
        public var depth = 0
        /// Whether a run of 19 or more digits appears outside strings (an integer, or the digits of a number with a
        /// fraction or an exponent, which parse as `double`): only then can the text hold an integer out of `Int`'s range.
        public var hasLongInteger = false
    }
}
