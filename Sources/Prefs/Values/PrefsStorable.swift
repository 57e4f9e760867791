import Foundation
package import PrefsJSON

/// A type whose values a ``Prefs`` store can keep.
///
/// Bool, Int, Double, String, Date, Data and URL conform, and so do arrays and string-keyed
/// dictionaries of conforming types, and Optionals (setting `nil` removes the stored value, so the key reads its initial
/// value; ``Prefs/storeNil(for:)`` stores `nil` itself).
/// Opt your own types in with an empty conformance:
///
/// ```swift
/// enum Theme: String, PrefsStorable { case light, dark }        // stored as its raw value
/// struct Window: Codable, PrefsStorable { var width, height: Int } // stored as JSON
/// ```
public protocol PrefsStorable: Sendable {
    /// The type recorded beside the value.
    static var valueType: ValueType { get }
    /// The value in stored form. `Optional.none` is stored as null.
    func storedValue() throws -> StoredValue
    /// Reads a value from its stored form. Throws when the form does not fit the type: the error's description is
    /// the reason of the ``ValueMismatch`` that ``StoredValue/decode(_:)`` and a typed read report.
    init(storedValue: StoredValue) throws
}

extension PrefsStorable {
    /// The value's JSON form, as the stores keep it.
    package func storedJSON() throws -> JSON { try storedValue().json }
    /// Reads a value from its JSON form.
    package init(storedJSON json: JSON) throws {
        try self.init(storedValue: StoredValue(type: Self.valueType, json: json))
    }
}

// MARK: - Scalars

extension Bool: PrefsStorable {
    public static var valueType: ValueType { .bool }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .bool(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .bool(let value) = json else { throw DecodeFailure.expected("a boolean", found: json) }
        self = value
    }
}

extension Int: PrefsStorable {
    public static var valueType: ValueType { .int }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .int(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .int(let value) = json else { throw DecodeFailure.expected("an integer", found: json) }
        self = value
    }
}

extension Double: PrefsStorable {
    public static var valueType: ValueType { .double }
    public func storedValue() -> StoredValue {
        StoredValue(type: .double, json: isFinite ? .double(self) : .string(isNaN ? "nan" : (self > 0 ? "inf" : "-inf")))
    }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        switch json {
        case .double(let value): self = value
        case .int(let value): self = Double(value)
        case .string("nan"): self = .nan
        case .string("inf"): self = .infinity
        case .string("-inf"): self = -.infinity
        default: throw DecodeFailure.expected("a number", found: json)
        }
    }
}

extension String: PrefsStorable {
    public static var valueType: ValueType { .string }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let value) = json else { throw DecodeFailure.expected("a string", found: json) }
        self = value
    }
}

extension Date: PrefsStorable {
    public static var valueType: ValueType { .date }
    /// Throws `EncodingError.invalidValue` for a date outside ISO 8601's range, which could not be read back.
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: .string(try ISO8601.formatForStorage(self))) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let text) = json else { throw DecodeFailure.expected("an ISO-8601 date string", found: json) }
        do {
            self = try ISO8601.parse(text, allowDateOnly: true)
        } catch {
            throw DecodeFailure("\"\(text)\" is not an ISO-8601 date: \(error)")
        }
    }
}

extension Data: PrefsStorable {
    public static var valueType: ValueType { .data }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(base64EncodedString())) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let text) = json else { throw DecodeFailure.expected("a base64 string", found: json) }
        guard let data = Data(base64Encoded: text) else { throw DecodeFailure("the string is not valid base64") }
        self = data
    }
}

extension URL: PrefsStorable {
    public static var valueType: ValueType { .url }
    /// The whole URL (scheme, host, query, fragment), not just a file path.
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(absoluteString)) }
    /// Reads a URL string, or one written as JSON text (`"https:\/\/example.com"`, Defaults' form for URLs).
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let text) = json else { throw DecodeFailure.expected("a URL string", found: json) }
        if let url = URL(string: text) {
            self = url
        } else if case .string(let embedded)? = CodableStorage.embeddedDocument(in: storedValue), let url = URL(string: embedded) {
            self = url
        } else {
            throw DecodeFailure("\"\(text)\" is not a URL")
        }
    }
}

// MARK: - Containers

extension Array: PrefsStorable where Element: PrefsStorable {
    public static var valueType: ValueType { .array(Element.valueType) }
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: .array(try map { try $0.storedJSON() })) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .array(let elements) = json else { throw DecodeFailure.expected("an array", found: json) }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                result.append(try Element(storedJSON: element))
            } catch {
                throw DecodeFailure("element \(index): \(DecodeFailure.reason(of: error))")
            }
        }
        self = result
    }
}

/// A dictionary is stored as a JSON object (type `[string: VALUE]`). Its keys may be strings, or any storable type
/// whose stored form is a string, a number or a Boolean: `Int` and the other integers, `Double`, `Bool`, `UUID`,
/// `Date`, `URL`, and enums whose raw value is one of these. An `[Int: String]` is stored as `{"1": "one"}`.
extension Dictionary: PrefsStorable where Key: PrefsStorable, Value: PrefsStorable {
    public static var valueType: ValueType { .dictionary(Value.valueType) }
    public func storedValue() throws -> StoredValue {
        var members: [String: JSON] = [:]
        members.reserveCapacity(count)
        for (key, value) in self {
            members[try DictionaryKeyForm.name(of: key)] = try value.storedJSON()
        }
        return StoredValue(type: Self.valueType, json: .object(members))
    }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .object(let members) = json else { throw DecodeFailure.expected("an object", found: json) }
        var result: [Key: Value] = [:]
        result.reserveCapacity(members.count)
        var names: [Key: String] = [:]
        for (name, member) in members {
            let key: Key = try DictionaryKeyForm.key(named: name)
            if let other = names[key] {
                let pair = [other, name].sorted()
                throw DecodeFailure("members \"\(pair[0])\" and \"\(pair[1])\" are the same \(Key.self) key")
            }
            if Key.self != String.self { names[key] = name }
            do {
                result[key] = try Value(storedJSON: member)
            } catch {
                throw DecodeFailure("member \"\(name)\": \(DecodeFailure.reason(of: error))")
            }
        }
        self = result
    }
}

/// A dictionary key's JSON member name, and the key a member name stands for.
enum DictionaryKeyForm {
    /// The member name of `key`: its stored form when that is a string, else the text of its number or Boolean.
    static func name<Key: PrefsStorable>(of key: Key) throws -> String {
        if let key = key as? String { return key }
        switch try key.storedJSON() {
        case .string(let text): return text
        case .int(let value): return String(value)
        case .double(let value): return "\(value)"
        case .bool(let value): return value ? "true" : "false"
        case let other:
            throw EncodingError.invalidValue(
                key,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "a dictionary key must be stored as a string, a number or a Boolean; \(Key.self) is stored as \(other.kindName)"))
        }
    }

    /// The key the member name `name` stands for, read as the key type's stored form.
    static func key<Key: PrefsStorable>(named name: String) throws -> Key {
        if let name = name as? Key { return name }
        var forms: [JSON] = []
        switch Key.valueType {
        case .int, .uint: if let value = Int(name) { forms.append(.int(value)) }
        case .double: if let value = Double(name) { forms.append(.double(value)) }
        case .bool: if let value = Bool(name) { forms.append(.bool(value)) }
        default: break
        }
        forms.append(.string(name))
        var firstError: (any Error)?
        for form in forms {
            do { return try Key(storedJSON: form) } catch { firstError = firstError ?? error }
        }
        throw DecodeFailure("member name \"\(name)\" is not a \(Key.self): \(DecodeFailure.reason(of: firstError ?? DecodeFailure("no form")))")
    }
}

extension Optional: PrefsStorable where Wrapped: PrefsStorable {
    public static var valueType: ValueType { Wrapped.valueType }
    public func storedValue() throws -> StoredValue {
        switch self {
        case .none: StoredValue(type: Self.valueType, json: .null)
        case .some(let value): try value.storedValue()
        }
    }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        if case .null = json { self = .none; return }
        self = .some(try Wrapped(storedJSON: json))
    }
}

// MARK: - Enums and Codable types

extension PrefsStorable where Self: RawRepresentable, RawValue: PrefsStorable {
    public static var valueType: ValueType { RawValue.valueType }
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: try rawValue.storedJSON()) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try Self.decodeRaw(json)
    }

    static func decodeRaw(_ json: JSON) throws -> Self {
        let raw = try RawValue(storedJSON: json)
        if let value = Self(rawValue: raw) { return value }
        // Defaults stores a Codable enum as JSON text: `"\"dark\""`.
        if case .string(let text) = json, let document = try? JSON.parse(text), document != json,
            let embedded = try? RawValue(storedJSON: document), let value = Self(rawValue: embedded)
        {
            return value
        }
        throw DecodeFailure("\(json.serialized()) is not a case of \(Self.self)")
    }
}

extension PrefsStorable where Self: Codable {
    public static var valueType: ValueType { .json }
    /// The value encoded once, by `JSONEncoder` (sorted keys, exact ISO-8601 dates), and kept as that text.
    public func storedValue() throws -> StoredValue {
        StoredValue(type: Self.valueType, uncheckedJSONText: String(decoding: try CodableStorage.encoder.encode(self), as: UTF8.self))
    }
    /// Reads the JSON document, or one that UserDefaults code stored as JSON text (Defaults' Codable bridge) or as
    /// JSON data (`@AppStorage` and swift-sharing's `.appStorage` of a Codable, `set(try JSONEncoder().encode(value),
    /// forKey:)`), so existing users' settings read as they are; the next write stores the document itself.
    ///
    /// A value held as text (what a store keeps for a `Codable`) is decoded from that text directly: one decoding.
    public init(storedValue: StoredValue) throws {
        // The same value JSONDecoder gives, from the parsed tree without JSONDecoder's costs, where that is certain.
        if let value = TreeDecoding.decode(Self.self, from: storedValue) {
            self = value
            return
        }
        do {
            self = try CodableStorage.decoder.decode(Self.self, from: storedValue.jsonData)
        } catch {
            if let document = CodableStorage.embeddedDocument(in: storedValue),
                let value = try? CodableStorage.decoder.decode(Self.self, from: document.serializedData())
            {
                self = value
                return
            }
            if let error = error as? DecodingError { throw DecodeFailure(error.summary) }
            throw DecodeFailure("\(error)")
        }
    }
}

/// A `RawRepresentable` type that is also `Codable` (most `String` enums) is stored as its raw value.
extension PrefsStorable where Self: RawRepresentable & Codable, RawValue: PrefsStorable {
    public static var valueType: ValueType { RawValue.valueType }
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: try rawValue.storedJSON()) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try Self.decodeRaw(json)
    }
}

extension EncodingError {
    /// One line: what could not be encoded and at which coding path.
    var summary: String {
        switch self {
        case .invalidValue(_, let context):
            let components = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }
            return "$" + components.joined() + ": " + context.debugDescription
        @unknown default: return "\(self)"
        }
    }
}

/// The reason a value could not be encoded, for ``PrefsError/encodingFailed(key:reason:)``.
func encodingFailureReason(_ error: any Error) -> String {
    (error as? EncodingError)?.summary ?? "\(error)"
}

extension DecodingError {
    /// One line: what was wrong and at which coding path.
    var summary: String {
        func path(_ context: Context) -> String {
            let components = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }
            return "$" + components.joined()
        }
        switch self {
        case .typeMismatch(let type, let context): return "\(path(context)): expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "\(path(context)): missing \(type): \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "\(path(context)): missing key \"\(key.stringValue)\""
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}

/// The coders for `Codable` values: sorted keys, and dates as exact ISO-8601 strings so a stored
/// document stays readable (a number of seconds since 2001 is read too). A date outside ISO-8601's range
/// throws `EncodingError.invalidValue` rather than writing text that could not be read back.
enum CodableStorage {
    /// One encoder for every write: `JSONEncoder` is `Sendable`, and `encode(_:)` reads its options under its own lock.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Slashes unescaped, so URLs read as written, as the stores' own serializer writes them.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.formatForStorage(date, codingPath: encoder.codingPath))
        }
        return encoder
    }()

    /// The JSON document a string holds, as UserDefaults code wrote Codable values: JSON text, or (for a `data`
    /// value, or text that is not JSON) base64 of JSON data. Nil when it holds none.
    static func embeddedDocument(in stored: StoredValue) -> JSON? {
        guard case .string(let text) = stored.json else { return nil }
        if stored.type != .data, let document = try? JSON.parse(text) { return document }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSON.parse(data)
    }

    /// One decoder for every read (`Sendable`, as the encoder).
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSinceReferenceDate: seconds) }
            let text = try container.decode(String.self)
            do {
                return try ISO8601.parse(text, allowDateOnly: true)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an ISO-8601 date: \(error)")
            }
        }
        return decoder
    }()
}
