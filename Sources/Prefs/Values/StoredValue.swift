import Foundation
package import PrefsJSON

/// A value as a backend stores it: its ``ValueType`` and its JSON form (``jsonText``).
///
/// The JSON form is the same in every backend: `date` is an exact ISO-8601 string, `data` is base64,
/// `url` is the whole URL string, a non-finite `double` is the string `"nan"`, `"inf"` or `"-inf"`.
///
/// ```swift
/// let stored = try StoredValue(42)        // type .int, JSON 42
/// try stored.decode(Int.self)             // 42
/// ```
public struct StoredValue: Sendable, Hashable, CustomStringConvertible {
    /// The type recorded beside the value.
    public var type: ValueType
    /// The JSON form as a tree, or as the compact text it was encoded to or read as.
    package var form: Form

    /// How a value's JSON form is held. A `Codable` value is encoded once, by `JSONEncoder`, and its text is kept as it
    /// is: the size check measures it, SQLite and PostgreSQL store it, and a typed read parses it once and decodes the
    /// tree (`TreeDecoding`, or `JSONDecoder` where that must decide). Values of the other types are trees, as their
    /// conversions build them.
    package enum Form: Sendable {
        case tree(JSON)
        /// Compact JSON text: what `JSONEncoder` wrote, or what a database row holds for a `json` value. Text that is
        /// not JSON (a row written by another program) reads as the JSON string of that text, as a tree would.
        case text(String)
    }

    /// The JSON form. A value held as text is parsed on each access (tools and the JSON file store ask; typed reads
    /// of `Codable` values decode the text directly).
    package var json: JSON {
        get {
            switch form {
            case .tree(let json): json
            case .text(let text): Self.tree(of: text)
            }
        }
        set { form = .tree(newValue) }
    }

    /// A value from its type and JSON form, as a store or an archive holds it (not checked against each other:
    /// see ``shapeProblem()``).
    package init(type: ValueType, json: JSON) {
        self.type = type
        form = .tree(json)
    }

    /// A value from its type and compact JSON text, kept as text (see ``Form/text(_:)``) and not checked (see
    /// ``init(type:jsonText:)`` for a backend's text).
    package init(type: ValueType, uncheckedJSONText text: String) {
        self.type = type
        form = .text(text)
    }

    /// The tree of a value held as text; text that is not JSON is the JSON string of that text.
    private static func tree(of text: String) -> JSON {
        (try? JSON.parse(text)) ?? .string(text)  // not JSON: kept as text, and reading it as a type reports a mismatch
    }

    /// Encodes a typed value. Throws what the value's own encoding throws (a `Codable`'s `EncodingError`); a store's
    /// `set` reports that as ``PrefsError/encodingFailed(key:reason:)``, naming the key.
    ///
    /// ```swift
    /// let stored = try StoredValue(42)   // type int, jsonText "42"
    /// ```
    public init<Value: PrefsStorable>(_ value: Value) throws {
        self = try value.storedValue()
        let type = Value.valueType
        if type != .json { self.type = type }  // a `json` value (a Codable, a StoredValue) keeps the type its form names
    }

    /// Decodes the value as `Value`, or throws a ``ValueMismatch`` saying what was stored and what was expected.
    public func decode<Value: PrefsStorable>(_: Value.Type = Value.self) throws(ValueMismatch) -> Value {
        guard Value.valueType.canDecode(from: type) else {
            throw ValueMismatch(stored: self, expected: Value.valueType, reason: "stored as \(type)", swiftType: Self.swiftName(Value.self))
        }
        do {
            return try Value(storedValue: self)
        } catch {
            throw ValueMismatch(stored: self, expected: Value.valueType, reason: DecodeFailure.reason(of: error), swiftType: Self.swiftName(Value.self))
        }
    }

    /// The Swift name of `Value` for messages, or nil where it says no more than its stored type's name (`Int`, `String`).
    static func swiftName<Value: PrefsStorable>(_: Value.Type) -> String? {
        let name = String(describing: Value.self)
        return name.lowercased() == Value.valueType.description.lowercased() ? nil : name
    }

    /// The JSON form, compact, cut to `limit` characters for messages.
    public func preview(limit: Int = 120) -> String {
        let text = jsonText
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    public var description: String { "\(type) \(preview())" }

    /// The JSON form as compact text, as the stores write it (`42`, `"dark"`, `{"width":800}`).
    public var jsonText: String { json.serialized() }

    /// The JSON form as UTF-8 bytes, for `JSONDecoder`: a value held as text is given as it is.
    var jsonData: Data {
        switch form {
        case .tree(let json): json.serializedData()
        case .text(let text): Data(text.utf8)
        }
    }

    /// The compact text a backend writes for the JSON form: a value held as text is written as it is, without a tree.
    package var storageText: String {
        switch form {
        case .tree(let json): json.serialized()
        case .text(let text): text
        }
    }

    /// The stored form of an explicit `nil` (``Prefs/storeNil(for:)``): a JSON `null` of type `json`, which any type
    /// may be read from, so an optional key reads `nil` and another key its initial value.
    static let explicitNil = StoredValue(type: .json, json: .null)

    /// Whether this is an explicit `nil` (a JSON `null`, of any type).
    package var isNil: Bool {
        switch form {
        case .tree(.null): true  // a match, not `==`: no copy of the tree for every value a store writes
        case .tree: false
        case .text(let text): text == "null"
        }
    }

    /// Two stored values are equal when their types and JSON forms are: trees compared as trees, so a value held as
    /// text equals the same value held as a tree.
    public static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        guard lhs.type == rhs.type else { return false }
        if case .text(let left) = lhs.form, case .text(let right) = rhs.form, left == right { return true }
        return lhs.json == rhs.json
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(json)
    }
}

/// A stored value is itself storable: the type-erased value for settings of mixed types (Defaults' `AnySerializable`).
/// A `Key<StoredValue>` keeps a value of any storable type, recorded under that type, so typed keys, `PrefsDefaults` and
/// `prefs-tool` read it as what it is; read it back as a type with ``decode(_:)``.
///
/// ```swift
/// extension Prefs.Keys {
///     static let lastInput = Key<StoredValue?>("lastInput")
///     static let settings = Key<[String: StoredValue]>("settings", initial: [:])
/// }
/// prefs[.lastInput] = try StoredValue("hello")                 // stored as string "hello"
/// try prefs[.lastInput]?.decode(String.self)                  // "hello"
/// prefs[.settings] = ["volume": try StoredValue(0.8), "name": try StoredValue("Ada")]
/// try prefs[.settings]["volume"]?.decode(Double.self)         // 0.8
/// ```
///
/// Inside an array or a dictionary, the elements' JSON forms are stored without their types; a `StoredValue` read back
/// from one names the type its JSON form implies (`bool`, `int`, `double`, `string`; `json` for arrays and objects),
/// and ``decode(_:)`` reads it as any type that form fits (a date's ISO-8601 string as a `Date`).
extension StoredValue: PrefsStorable {
    /// `json`: a stored value records its own type (see ``init(_:)``).
    public static var valueType: ValueType { .json }
    public func storedValue() -> StoredValue { self }
    public init(storedValue: StoredValue) {
        self = storedValue
        if storedValue.type == .json {
            switch storedValue.json {
            case .bool, .int, .double, .string: type = ValueType.inferred(from: storedValue.json)
            case .null, .array, .object: break
            }
        }
    }
}

/// Why a stored value could not be read as the type a key declares.
public struct ValueMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    public var stored: StoredValue
    public var expected: ValueType
    public var reason: String
    /// The Swift type the value was read as (`Theme`, `Frame`), when a typed read failed.
    public var swiftType: String?

    public init(stored: StoredValue, expected: ValueType, reason: String, swiftType: String? = nil) {
        self.stored = stored
        self.expected = expected
        self.reason = reason
        self.swiftType = swiftType
    }

    public var description: String {
        let target = swiftType.map { "\($0) (stored form \(expected))" } ?? "\(expected)"
        return "stored \(stored.type) \(stored.preview()) cannot be read as \(target): \(reason)"
    }
}

/// The reason a JSON form does not decode as a type, as the package's ``PrefsStorable`` conformances throw it;
/// wrapped into ``ValueMismatch`` by ``StoredValue/decode(_:)``.
package struct DecodeFailure: Error, Sendable, Hashable {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }

    package static func expected(_ what: String, found json: JSON) -> DecodeFailure {
        DecodeFailure("expected \(what), found \(json.kindName)")
    }

    /// Why a value did not decode, from what ``PrefsStorable/init(storedValue:)`` threw: a `DecodeFailure`'s reason,
    /// any other error's description (a conformance outside the package may throw anything).
    package static func reason(of error: any Error) -> String {
        (error as? DecodeFailure)?.reason ?? "\(error)"
    }
}

extension StoredValue {
    /// Why the type, kept as found, is not a type name this release reads (over ``ValueType``'s limits, or malformed
    /// in a database row); nil for any type name, known or not (used by integrity checks).
    var typeProblem: String? {
        guard case .other(let name) = type, ValueType(name) != type else { return nil }
        let shown = name.count > 40 ? String(name.prefix(40)) + "…" : name
        return "type \(PrefsError.quoted(shown)) (\(name.utf8.count) bytes): \(ValueType.limitProblem(name) ?? "not a type name")"
    }

    /// Why the JSON form does not fit the type, or nil when it does (used by integrity checks).
    package func shapeProblem() -> String? {
        Self.shapeProblem(of: json, as: type)
    }

    private static func shapeProblem(of json: JSON, as type: ValueType) -> String? {
        func decodes<T: PrefsStorable>(_: T.Type) -> String? {
            do { _ = try T(storedJSON: json); return nil } catch { return "type \(type): \(DecodeFailure.reason(of: error))" }
        }
        switch type {
        case .bool: return decodes(Bool.self)
        case .int: return decodes(Int.self)
        case .uint: return decodes(UInt64.self)
        case .double: return decodes(Double.self)
        case .string: return decodes(String.self)
        case .date: return decodes(Date.self)
        case .data: return decodes(Data.self)
        case .url: return decodes(URL.self)
        case .json, .other: return nil
        case .array(let element):
            guard case .array(let elements) = json else { return "type \(type): expected an array, found \(json.kindName)" }
            for (index, item) in elements.enumerated() {
                if let problem = shapeProblem(of: item, as: element) { return "[\(index)]: \(problem)" }
            }
            return nil
        case .dictionary(let valueType):
            guard case .object(let members) = json else { return "type \(type): expected an object, found \(json.kindName)" }
            for key in members.keys.sorted() {
                if let member = members[key], let problem = shapeProblem(of: member, as: valueType) { return "\(JSONPath.member(key)): \(problem)" }
            }
            return nil
        }
    }
}
