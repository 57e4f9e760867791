import Foundation
internal import PrefsJSON

// The value types a `UserDefaults` or Defaults user stores, beyond the scalars: every fixed-width integer, `Float`
// and `CGFloat`, `UUID`, `Set`, ranges, `Decimal`, `Locale` and `TimeZone`. Each is stored in a form a person reads
// in the JSON file, the `sqlite3` shell and `prefs-tool` under a plain type name, and reads back exactly.

// MARK: - Integers

// Each integer type states its members itself: they are `Codable` too, and the `Codable` defaults would be ambiguous.

/// Signed integers other than `Int`: stored as `int`; a stored number that does not fit the type is a mismatch
/// (reported, the initial value read), never wrapped around.
extension Int8: PrefsStorable {
    public static var valueType: ValueType { .int }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .int(Int(self))) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.signed(json)
    }
}

extension Int16: PrefsStorable {
    public static var valueType: ValueType { .int }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .int(Int(self))) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.signed(json)
    }
}

extension Int32: PrefsStorable {
    public static var valueType: ValueType { .int }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .int(Int(self))) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.signed(json)
    }
}

extension Int64: PrefsStorable {
    public static var valueType: ValueType { .int }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .int(Int(self))) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.signed(json)
    }
}

/// Unsigned integers: stored as `uint`, a JSON integer, or, above `Int.max` (only `UInt`, `UInt64`), its decimal digits
/// as a string, so `UInt64.max` is exact in every backend.
extension UInt: PrefsStorable {
    public static var valueType: ValueType { .uint }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: IntegerForm.unsigned(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.unsigned(json)
    }
}

extension UInt8: PrefsStorable {
    public static var valueType: ValueType { .uint }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: IntegerForm.unsigned(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.unsigned(json)
    }
}

extension UInt16: PrefsStorable {
    public static var valueType: ValueType { .uint }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: IntegerForm.unsigned(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.unsigned(json)
    }
}

extension UInt32: PrefsStorable {
    public static var valueType: ValueType { .uint }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: IntegerForm.unsigned(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.unsigned(json)
    }
}

extension UInt64: PrefsStorable {
    public static var valueType: ValueType { .uint }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: IntegerForm.unsigned(self)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = try IntegerForm.unsigned(json)
    }
}

/// The stored forms the integer types share.
private enum IntegerForm {
    static func signed<Integer: FixedWidthInteger & SignedInteger>(_ json: JSON) throws(DecodeFailure) -> Integer {
        guard case .int(let value) = json else { throw DecodeFailure.expected("an integer", found: json) }
        guard let exact = Integer(exactly: value) else { throw DecodeFailure.outOfRange(String(value), for: Integer.self) }
        return exact
    }

    static func unsigned<Integer: FixedWidthInteger & UnsignedInteger>(_ value: Integer) -> JSON {
        if let small = Int(exactly: value) { return .int(small) }
        return .string(String(value))
    }

    static func unsigned<Integer: FixedWidthInteger & UnsignedInteger>(_ json: JSON) throws(DecodeFailure) -> Integer {
        switch json {
        case .int(let value):
            guard let exact = Integer(exactly: value) else { throw DecodeFailure.outOfRange(String(value), for: Integer.self) }
            return exact
        case .string(let digits) where !digits.isEmpty && digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }):
            guard let exact = Integer(digits) else { throw DecodeFailure.outOfRange(digits, for: Integer.self) }
            return exact
        default:
            throw DecodeFailure.expected("an unsigned integer", found: json)
        }
    }
}

extension DecodeFailure {
    static func outOfRange<Integer: FixedWidthInteger>(_ value: String, for _: Integer.Type) -> DecodeFailure {
        DecodeFailure("\(value) does not fit \(Integer.self) (\(Integer.min)...\(Integer.max))")
    }
}

// MARK: - Floating point

/// `Float` is stored as the `double` it converts to exactly (`12.34 as Float` is `12.34000015258789`), and read back as
/// the same `Float`; NaN and the infinities as `Double` stores them.
extension Float: PrefsStorable {
    public static var valueType: ValueType { .double }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: Double(self).storedValue().json) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = Float(try Double(storedJSON: json))
    }
}

extension CGFloat: PrefsStorable {
    public static var valueType: ValueType { .double }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: Double(self).storedValue().json) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = CGFloat(try Double(storedJSON: json))
    }
}

// MARK: - Identifiers and numbers as text

/// A `UUID` as its canonical string, `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
extension UUID: PrefsStorable {
    public static var valueType: ValueType { .string }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(uuidString)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let text) = json else { throw DecodeFailure.expected("a UUID string", found: json) }
        guard let uuid = UUID(uuidString: text) else { throw DecodeFailure("\"\(text)\" is not a UUID") }
        self = uuid
    }
}

/// A `Decimal` as its exact decimal text (`"0.1"` stays 0.1, where a `double` would not).
extension Decimal: PrefsStorable {
    public static var valueType: ValueType { .string }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(description)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let text) = json else { throw DecodeFailure.expected("a decimal number string", found: json) }
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN || text == "NaN" else {
            throw DecodeFailure("\"\(text)\" is not a decimal number")
        }
        self = value
    }
}

/// A `Locale` as its identifier (`en_US`, `zh-Hant_TW`).
extension Locale: PrefsStorable {
    public static var valueType: ValueType { .string }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(identifier)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let identifier) = json else { throw DecodeFailure.expected("a locale identifier", found: json) }
        self.init(identifier: identifier)
    }
}

/// A `TimeZone` as its identifier (`Europe/Paris`); an identifier this system does not know is a mismatch.
extension TimeZone: PrefsStorable {
    public static var valueType: ValueType { .string }
    public func storedValue() -> StoredValue { StoredValue(type: Self.valueType, json: .string(identifier)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        guard case .string(let identifier) = json else { throw DecodeFailure.expected("a time zone identifier", found: json) }
        guard let zone = TimeZone(identifier: identifier) else { throw DecodeFailure("\"\(identifier)\" is not a known time zone") }
        self = zone
    }
}

// MARK: - Collections

/// A `Set` as an array, its elements in a stable order (sorted by their JSON form), so the file does not change
/// when the set does not.
extension Set: PrefsStorable where Element: PrefsStorable {
    public static var valueType: ValueType { .array(Element.valueType) }
    public func storedValue() throws -> StoredValue {
        let elements = try map { try $0.storedJSON() }
        return StoredValue(type: Self.valueType, json: .array(elements.map { ($0.serialized(), $0) }.sorted { $0.0 < $1.0 }.map(\.1)))
    }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        self = Set(try [Element](storedJSON: json))
    }
}

/// A `Range` as `{"lowerBound": …, "upperBound": …}` (type `[string: BOUND]`).
extension Range: PrefsStorable where Bound: PrefsStorable {
    public static var valueType: ValueType { .dictionary(Bound.valueType) }
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: try RangeForm.json(lowerBound, upperBound)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        let (lower, upper): (Bound, Bound) = try RangeForm.bounds(json)
        self = lower..<upper
    }
}

/// A `ClosedRange` as `{"lowerBound": …, "upperBound": …}` (type `[string: BOUND]`).
extension ClosedRange: PrefsStorable where Bound: PrefsStorable {
    public static var valueType: ValueType { .dictionary(Bound.valueType) }
    public func storedValue() throws -> StoredValue { StoredValue(type: Self.valueType, json: try RangeForm.json(lowerBound, upperBound)) }
    public init(storedValue: StoredValue) throws {
        let json = storedValue.json
        let (lower, upper): (Bound, Bound) = try RangeForm.bounds(json)
        self = lower...upper
    }
}

/// The stored form both range types share.
private enum RangeForm {
    static func json<Bound: PrefsStorable>(_ lower: Bound, _ upper: Bound) throws -> JSON {
        .object(["lowerBound": try lower.storedJSON(), "upperBound": try upper.storedJSON()])
    }

    /// Both bounds, checked to be in order (a range with them reversed cannot be made: it would trap).
    static func bounds<Bound: PrefsStorable & Comparable>(_ json: JSON) throws -> (Bound, Bound) {
        guard case .object(let members) = json, let lower = members["lowerBound"], let upper = members["upperBound"] else {
            throw DecodeFailure.expected("an object with lowerBound and upperBound", found: json)
        }
        let bounds = (try Bound(storedJSON: lower), try Bound(storedJSON: upper))
        guard bounds.0 <= bounds.1 else { throw DecodeFailure("lowerBound \(lower.serialized()) is above upperBound \(upper.serialized())") }
        return bounds
    }
}
