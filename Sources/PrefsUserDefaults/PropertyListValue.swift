import Foundation
import Prefs
internal import PrefsJSON

/// Maps UserDefaults' property-list values (`Any`) to `StoredValue` and back.
///
/// | property-list value | stored type |
/// | --- | --- |
/// | `Bool`, a boolean `NSNumber` | `bool` |
/// | `Int` and the other integer types, an integer `NSNumber` | `int` (beyond `Int`: `double` when a double holds it exactly) |
/// | `Float`, `Double`, a floating-point `NSNumber` | `double` (a `Float` by its shortest decimal form: `Float(0.1)` is `0.1`) |
/// | `String`, `Date`, `Data`, `URL` | `string`, `date`, `data`, `url` (the whole URL) |
/// | an array or string-keyed dictionary whose elements all have one type `T` | `[T]`, `[string: T]` |
/// | any other array or dictionary (mixed, empty, or holding mixed ones) | `json`, tagged as below |
///
/// In the `json` form, values that plain JSON would lose are tagged as one-member objects:
/// `{"$date": "2024-05-01T12:00:00Z"}`, `{"$data": "AQID"}` (base64), `{"$url": "https://example.com"}`, and
/// `{"$double": "nan"}` (also `"inf"`, `"-inf"`). Booleans, integers, finite doubles (written with a `.` or `e`),
/// strings, arrays and dictionaries are plain JSON. A dictionary that itself has exactly one member named like
/// a tag is wrapped as `{"$dict": {…}}`, so every value reads back as it was written.
///
/// ```swift
/// let stored = try PropertyListValue.encode([1, "two", Date()] as [Any])   // type json
/// let back = try PropertyListValue.decode(stored) as? [Any]               // [1, "two", Date]
/// ```
public enum PropertyListValue {
    /// A value with no property-list form (a custom struct, `NSNull`, `nil` inside an array, a dictionary
    /// with non-string keys, an integer no stored type holds exactly), and where it sits in the value.
    ///
    /// ```swift
    /// do { _ = try PropertyListValue.encode(["size": CGSize.zero]) }
    /// catch { print(error) }   // at $.size: CGSize is not a property-list type …
    /// ```
    public struct Unsupported: Error, Sendable, Hashable, CustomStringConvertible {
        /// Where the unsupported part sits, as a JSON path: `$` for the value itself, `$.size`, `$.sizes[2]`.
        public var path: String { location.description }
        /// What it is and why it cannot be stored.
        public var reason: String
        let location: JSONPath

        init(path: JSONPath = .root, reason: String) {
            self.location = path
            self.reason = reason
        }

        /// `reason`, preceded by `at PATH:` for a part inside an array or dictionary.
        public var description: String {
            location.components.isEmpty ? reason : "at \(location): \(reason)"
        }
    }

    /// The names of the tags of the `json` form.
    static let tags: Set<String> = ["$date", "$data", "$url", "$double", "$dict"]

    // MARK: - Encoding

    /// The stored form of a property-list value; throws `Unsupported` for anything else.
    ///
    /// ```swift
    /// try PropertyListValue.encode(true)           // bool true
    /// try PropertyListValue.encode(["a", "b"])     // [string] ["a","b"]
    /// ```
    public static func encode(_ value: Any) throws(Unsupported) -> StoredValue {
        try encode(value, at: .root)
    }

    static func encode(_ value: Any, at path: JSONPath) throws(Unsupported) -> StoredValue {
        // NSNumber first: Swift's casts would let `NSNumber(value: 1)` pass as `Bool` and `Double` alike.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return try encode(number, at: path)
        }
        switch value {
        case let bool as Bool:
            return StoredValue(type: .bool, json: .bool(bool))
        case let integer as any BinaryInteger:
            if let int = Int(exactly: integer) { return StoredValue(type: .int, json: .int(int)) }
            if let double = Double(exactly: integer) { return double.storedValue() }
            throw Unsupported(path: path, reason: "integer \(integer) is outside Int's range and no double holds it exactly")
        case let float as Float:
            return floatDouble(float).storedValue()
        case let double as Double:
            return double.storedValue()
        case let floating as any BinaryFloatingPoint:
            return Double(floating).storedValue()
        case let string as String:
            return StoredValue(type: .string, json: .string(string))
        case let date as Date:
            return try encode(date, at: path)
        case let data as Data:
            return data.storedValue()
        case let url as URL:
            return url.storedValue()
        case let array as [Any]:
            var elements: [StoredValue] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                elements.append(try encode(element, at: path / index))
            }
            return collection(
                elements.map(\.type), as: ValueType.array,
                plain: { .array(elements.map(\.json)) }, tagged: { .array(elements.map(tagged)) }
            )
        case let dictionary as [String: Any]:
            var members: [String: StoredValue] = [:]
            members.reserveCapacity(dictionary.count)
            for key in dictionary.keys.sorted() {  // sorted: the first unsupported member reported is always the same
                guard let member = dictionary[key] else { continue }
                members[key] = try encode(member, at: path / key)
            }
            return collection(
                members.values.map(\.type), as: ValueType.dictionary,
                plain: { .object(members.mapValues(\.json)) }, tagged: { escaped(members.mapValues(tagged)) }
            )
        case let dictionary as [AnyHashable: Any]:
            let keyType = dictionary.keys.first { !($0.base is String) }.map { "\(type(of: $0.base))" } ?? "non-string"
            throw Unsupported(path: path, reason: "a dictionary with \(keyType) keys is not a property-list type; keys must be strings")
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else {
                    throw Unsupported(path: path, reason: "nil has no property-list form")
                }
                return try encode(wrapped, at: path)
            }
            throw Unsupported(
                path: path,
                reason:
                    "\(type(of: value)) is not a property-list type (Bool, numbers, String, Date, Data, URL, and arrays and string-keyed dictionaries of them)"
            )
        }
    }

    /// A `[T]` or `[string: T]` when every element has the same type `T` and `T` holds no `json`; else `json`.
    private static func collection(
        _ types: [ValueType],
        as kind: (ValueType) -> ValueType,
        plain: () -> JSON,
        tagged: () -> JSON
    ) -> StoredValue {
        if let first = types.first, !first.containsJSON, types.allSatisfy({ $0 == first }) {
            return StoredValue(type: kind(first), json: plain())
        }
        return StoredValue(type: .json, json: tagged())
    }

    private static func encode(_ number: NSNumber, at path: JSONPath) throws(Unsupported) -> StoredValue {
        if isBoolean(number) { return StoredValue(type: .bool, json: .bool(number.boolValue)) }
        switch String(cString: number.objCType) {
        case "f":
            return floatDouble(number.floatValue).storedValue()
        case "d":
            return number.doubleValue.storedValue()
        case "C", "S", "I", "L", "Q":
            return try encode(number.uint64Value, at: path)
        default:
            return try encode(number.int64Value, at: path)
        }
    }

    private static func encode(_ date: Date, at path: JSONPath) throws(Unsupported) -> StoredValue {
        let text = ISO8601.format(date)
        do {
            _ = try ISO8601.parse(text, allowDateOnly: false)
        } catch {
            throw Unsupported(path: path, reason: "date \(date.timeIntervalSinceReferenceDate) s after 2001 is outside the range of ISO-8601 dates")
        }
        return StoredValue(type: .date, json: .string(text))
    }

    /// The class of `NSNumber(value: true)` (`__NSCFBoolean` on every platform); plain numbers are other classes.
    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    /// Whether `number` is a boolean (a CFBoolean) rather than the integer 0 or 1.
    static func isBoolean(_ number: NSNumber) -> Bool {
        if ObjectIdentifier(type(of: number)) == booleanClass { return true }
        #if canImport(Darwin)
        return false  // on Apple platforms "c" is also an Int8; only the class tells a boolean
        #else
        return String(cString: number.objCType) == "c"  // swift-corelibs-foundation: only booleans report "c"
        #endif
    }

    /// A `Float` as the double it converts to exactly, as Apple's `UserDefaults` keeps it: `double(forKey:)` of
    /// `Float(12.34)` is `12.34000015258789`, and `string(forKey:)` is still `"12.34"` (see `numberText`).
    static func floatDouble(_ float: Float) -> Double {
        Double(float)
    }

    // MARK: - The tagged JSON form

    /// The value in the `json` form: plain JSON where that keeps the type, tagged objects where it would not.
    static func tagged(_ stored: StoredValue) -> JSON {
        switch (stored.type, stored.json) {
        case (.double, .string(let text)): return .object(["$double": .string(text)])
        case (.date, let json): return .object(["$date": json])
        case (.data, let json): return .object(["$data": json])
        case (.url, let json): return .object(["$url": json])
        case (.array(let element), .array(let items)):
            return .array(items.map { tagged(StoredValue(type: element, json: $0)) })
        case (.dictionary(let value), .object(let members)):
            return escaped(members.mapValues { tagged(StoredValue(type: value, json: $0)) })
        default: return stored.json
        }
    }

    /// A dictionary in the `json` form, wrapped in `$dict` when it would otherwise read as a tag.
    private static func escaped(_ members: [String: JSON]) -> JSON {
        if members.count == 1, let key = members.keys.first, tags.contains(key) {
            return .object(["$dict": .object(members)])
        }
        return .object(members)
    }
}

extension ValueType {
    /// Whether this type is `json` or holds `json` elements.
    var containsJSON: Bool {
        switch self {
        case .json: true
        case .array(let element), .dictionary(let element): element.containsJSON
        default: false
        }
    }
}
