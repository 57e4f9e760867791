import Foundation
internal import PrefsJSON

/// Decodes a `Codable` value from its JSON tree (``PrefsJSON/JSON``), as ``CodableStorage/decoder`` (`JSONDecoder`)
/// would from the same text, without `JSONDecoder`'s costs per call (a scan of the text into its own map, a lookup of
/// conformances, an implementation object per decode): a store's first read of a `Codable` at launch paid more for
/// those than for the rest of its open.
///
/// It decodes only what it decodes exactly as `JSONDecoder` does, and gives up on anything else: any error (a type
/// mismatch, a missing key, a date or URL that does not parse), a number whose conversion might differ (an integer
/// read from a literal with a fraction or an exponent, a `Float` that is not exactly the `Double` parsed, a zero
/// that might be an underflow or `-0`), a `Decimal`, a super-decoder. Giving up is remembered even when the type's
/// `init(from:)` catches the error (`try?`), so a type that recovers from an error never sees an outcome that
/// `JSONDecoder` would not give: the caller decodes again with `JSONDecoder`, whose value or error is then the
/// result, exactly as before. A type whose `init(from:)` has side effects may so run them twice.
enum TreeDecoding {
    /// The value `stored` decodes to, or nil when `JSONDecoder` must decide (see ``TreeDecoding``).
    static func decode<Value: Decodable>(_: Value.Type, from stored: StoredValue) -> Value? {
        let tree: JSON
        switch stored.form {
        case .tree(let json):
            // `JSONDecoder` reads the tree's serialized text, which writes each number as the tree holds it.
            tree = json
        case .text(let text):
            guard let parsed = parse(text) else { return nil }
            tree = parsed
        }
        let state = State()
        let decoder = TreeDecoderImpl(tree, path: [], state: state)
        guard let value = try? Value(from: decoder), !state.gaveUp else { return nil }
        return value
    }

    /// The tree of `text`, or nil when the tree could read differently from the text: text that is not strict JSON
    /// (`JSONDecoder` decides what it makes of it), a byte-order mark, or a literal `-0` (an integer zero in the tree,
    /// where `JSONDecoder` reads `-0.0` as a `Double`; the bytes `-0` outside a string followed by anything but a
    /// digit, `.` or an exponent). Inside strings `-0` is text (a UUID's `…-0A3F…`, a date's `-07`): text whose strings
    /// the scan misjudges is not strict JSON, which the parser then refuses.
    static func parse(_ text: String) -> JSON? {
        var text = text
        let suspicious = text.withUTF8 { bytes -> Bool in
            guard let first = bytes.first, first != 0xEF else { return true }
            var index = 0
            var inString = false
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if inString {
                    if byte == UInt8(ascii: "\\") {
                        index += 2  // the escaped byte, a quote too, is the string's
                        continue
                    }
                    if byte == UInt8(ascii: "\"") { inString = false }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "-"), index + 1 < count, bytes[index + 1] == UInt8(ascii: "0") {
                    guard index + 2 < count else { return true }
                    switch bytes[index + 2] {
                    case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "0")...UInt8(ascii: "9"): break  // not -0, or not JSON
                    default: return true
                    }
                }
                index += 1
            }
            return false
        }
        guard !suspicious else { return nil }
        return try? JSON.parse(text)
    }

    /// Whether the decoding gave up somewhere, caught or not.
    final class State {
        var gaveUp = false

        /// Records that `JSONDecoder` must decide, and returns the error to throw.
        func giveUp() -> any Error {
            gaveUp = true
            return GaveUp()
        }
    }

    struct GaveUp: Error {}

    /// A coding key for an array element, as `JSONDecoder` names one in a coding path.
    struct IndexKey: CodingKey {
        var intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue _: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }
}

/// The decoder of one value of the tree.
private final class TreeDecoderImpl: Decoder, SingleValueDecodingContainer {
    let value: JSON
    let codingPath: [any CodingKey]
    let state: TreeDecoding.State
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSON, path: [any CodingKey], state: TreeDecoding.State) {
        self.value = value
        codingPath = path
        self.state = state
    }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw state.giveUp() }
        return KeyedDecodingContainer(KeyedTreeContainer<Key>(members: members, codingPath: codingPath, state: state))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw state.giveUp() }
        return UnkeyedTreeContainer(elements: elements, codingPath: codingPath, state: state)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool { value == .null }
    func decode(_: Bool.Type) throws -> Bool { try TreeScalars.bool(value, state) }
    func decode(_: String.Type) throws -> String { try TreeScalars.string(value, state) }
    func decode(_: Double.Type) throws -> Double { try TreeScalars.double(value, state) }
    func decode(_: Float.Type) throws -> Float { try TreeScalars.float(value, state) }
    func decode(_: Int.Type) throws -> Int { try TreeScalars.integer(value, state) }
    func decode(_: Int8.Type) throws -> Int8 { try TreeScalars.integer(value, state) }
    func decode(_: Int16.Type) throws -> Int16 { try TreeScalars.integer(value, state) }
    func decode(_: Int32.Type) throws -> Int32 { try TreeScalars.integer(value, state) }
    func decode(_: Int64.Type) throws -> Int64 { try TreeScalars.integer(value, state) }
    func decode(_: UInt.Type) throws -> UInt { try TreeScalars.integer(value, state) }
    func decode(_: UInt8.Type) throws -> UInt8 { try TreeScalars.integer(value, state) }
    func decode(_: UInt16.Type) throws -> UInt16 { try TreeScalars.integer(value, state) }
    func decode(_: UInt32.Type) throws -> UInt32 { try TreeScalars.integer(value, state) }
    func decode(_: UInt64.Type) throws -> UInt64 { try TreeScalars.integer(value, state) }
    func decode(_: Int128.Type) throws -> Int128 { throw state.giveUp() }
    func decode(_: UInt128.Type) throws -> UInt128 { throw state.giveUp() }
    func decode<T: Decodable>(_: T.Type) throws -> T { try TreeScalars.unwrap(value, as: T.self, path: codingPath, state) }
}

/// The conversions every container shares, each as `JSONDecoder` converts, or giving up.
private enum TreeScalars {
    static func bool(_ value: JSON, _ state: TreeDecoding.State) throws -> Bool {
        guard case .bool(let flag) = value else { throw state.giveUp() }
        return flag
    }

    static func string(_ value: JSON, _ state: TreeDecoding.State) throws -> String {
        guard case .string(let text) = value else { throw state.giveUp() }
        return text
    }

    /// A `Double`: an integer literal converts correctly rounded, as `JSONDecoder`'s `strtod` of its digits; a zero
    /// parsed from a literal with a fraction or exponent may be an underflow, which `JSONDecoder` refuses.
    static func double(_ value: JSON, _ state: TreeDecoding.State) throws -> Double {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number) where number != 0 && number.isFinite: return number
        default: throw state.giveUp()
        }
    }

    /// A `Float`, as `JSONDecoder` parses one from the literal (`strtof`): the `Double` parsed, rounded. The two
    /// roundings agree unless the `Double` lies exactly halfway between two floats (the literal may lie on either side:
    /// no other double is nearer it), so that case is left to `JSONDecoder`, as are overflow and underflow to zero.
    static func float(_ value: JSON, _ state: TreeDecoding.State) throws -> Float {
        let number = try double(value, state)
        let rounded = Float(number)
        guard rounded.isFinite, rounded != 0 else { throw state.giveUp() }
        if Double(rounded) != number {
            let other = Double(rounded) < number ? rounded.nextUp : rounded.nextDown
            if (Double(other) - number).magnitude == (number - Double(rounded)).magnitude { throw state.giveUp() }
        }
        return rounded
    }

    /// An integer from an integer literal that fits the type (a literal such as `1.0` or `1e2` is left to `JSONDecoder`).
    static func integer<Integer: FixedWidthInteger>(_ value: JSON, _ state: TreeDecoding.State) throws -> Integer {
        guard case .int(let number) = value, let exact = Integer(exactly: number) else { throw state.giveUp() }
        return exact
    }

    /// A `Decodable` value, with `JSONDecoder`'s special cases as ``CodableStorage/decoder`` configures them: a `Date`
    /// from seconds since 2001 or an ISO-8601 string, `Data` from base64, a `URL` from its string; `Decimal` (which
    /// `JSONDecoder` reads from the literal's digits) is left to it.
    static func unwrap<T: Decodable>(_ value: JSON, as _: T.Type, path: [any CodingKey], _ state: TreeDecoding.State) throws -> T {
        // The elements of arrays and dictionaries, without a decoder each (what their `init(from:)` would do).
        if T.self == String.self { return try string(value, state) as! T }
        if T.self == Int.self { return try integer(value, state) as Int as! T }
        if T.self == Double.self { return try double(value, state) as! T }
        if T.self == Bool.self { return try bool(value, state) as! T }
        if T.self == Date.self {
            let date: Date
            switch value {
            case .int, .double: date = Date(timeIntervalSinceReferenceDate: try double(value, state))
            case .string(let text):
                guard let parsed = try? ISO8601.parse(text, allowDateOnly: true) else { throw state.giveUp() }
                date = parsed
            default: throw state.giveUp()
            }
            return date as! T
        }
        if T.self == Data.self {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else { throw state.giveUp() }
            return data as! T
        }
        if T.self == URL.self {
            guard case .string(let text) = value, let url = URL(string: text) else { throw state.giveUp() }
            return url as! T
        }
        if T.self == Decimal.self { throw state.giveUp() }
        return try T(from: TreeDecoderImpl(value, path: path, state: state))
    }
}

private struct KeyedTreeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSON]
    let codingPath: [any CodingKey]
    let state: TreeDecoding.State

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSON {
        guard let value = members[key.stringValue] else { throw state.giveUp() }
        return value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
    func decode(_: Bool.Type, forKey key: Key) throws -> Bool { try TreeScalars.bool(member(key), state) }
    func decode(_: String.Type, forKey key: Key) throws -> String { try TreeScalars.string(member(key), state) }
    func decode(_: Double.Type, forKey key: Key) throws -> Double { try TreeScalars.double(member(key), state) }
    func decode(_: Float.Type, forKey key: Key) throws -> Float { try TreeScalars.float(member(key), state) }
    func decode(_: Int.Type, forKey key: Key) throws -> Int { try TreeScalars.integer(member(key), state) }
    func decode(_: Int8.Type, forKey key: Key) throws -> Int8 { try TreeScalars.integer(member(key), state) }
    func decode(_: Int16.Type, forKey key: Key) throws -> Int16 { try TreeScalars.integer(member(key), state) }
    func decode(_: Int32.Type, forKey key: Key) throws -> Int32 { try TreeScalars.integer(member(key), state) }
    func decode(_: Int64.Type, forKey key: Key) throws -> Int64 { try TreeScalars.integer(member(key), state) }
    func decode(_: UInt.Type, forKey key: Key) throws -> UInt { try TreeScalars.integer(member(key), state) }
    func decode(_: UInt8.Type, forKey key: Key) throws -> UInt8 { try TreeScalars.integer(member(key), state) }
    func decode(_: UInt16.Type, forKey key: Key) throws -> UInt16 { try TreeScalars.integer(member(key), state) }
    func decode(_: UInt32.Type, forKey key: Key) throws -> UInt32 { try TreeScalars.integer(member(key), state) }
    func decode(_: UInt64.Type, forKey key: Key) throws -> UInt64 { try TreeScalars.integer(member(key), state) }
    func decode(_: Int128.Type, forKey _: Key) throws -> Int128 { throw state.giveUp() }
    func decode(_: UInt128.Type, forKey _: Key) throws -> UInt128 { throw state.giveUp() }
    func decode<T: Decodable>(_: T.Type, forKey key: Key) throws -> T {
        try TreeScalars.unwrap(member(key), as: T.self, path: path(key), state)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        guard case .object(let nested) = try member(key) else { throw state.giveUp() }
        return KeyedDecodingContainer(KeyedTreeContainer<NestedKey>(members: nested, codingPath: path(key), state: state))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = try member(key) else { throw state.giveUp() }
        return UnkeyedTreeContainer(elements: elements, codingPath: path(key), state: state)
    }

    func superDecoder() throws -> any Decoder { throw state.giveUp() }
    func superDecoder(forKey _: Key) throws -> any Decoder { throw state.giveUp() }
}

private struct UnkeyedTreeContainer: UnkeyedDecodingContainer {
    let elements: [JSON]
    let codingPath: [any CodingKey]
    let state: TreeDecoding.State
    private(set) var currentIndex = 0

    init(elements: [JSON], codingPath: [any CodingKey], state: TreeDecoding.State) {
        self.elements = elements
        self.codingPath = codingPath
        self.state = state
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element, the index advanced past it once `convert` succeeded.
    private mutating func next<T>(_ convert: (JSON) throws -> T) throws -> T {
        guard currentIndex < elements.count else { throw state.giveUp() }
        let value = try convert(elements[currentIndex])
        currentIndex += 1
        return value
    }

    /// `JSONDecoder`'s `decodeIfPresent` past the end returns nil and advances; left to it.
    private mutating func nextIfPresent<T>(_ convert: (JSON) throws -> T) throws -> T? {
        guard currentIndex < elements.count else { throw state.giveUp() }
        if elements[currentIndex] == .null {
            currentIndex += 1
            return nil
        }
        return try next(convert)
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < elements.count else { throw state.giveUp() }
        guard elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_: Bool.Type) throws -> Bool { try next { [state] in try TreeScalars.bool($0, state) } }
    mutating func decode(_: String.Type) throws -> String { try next { [state] in try TreeScalars.string($0, state) } }
    mutating func decode(_: Double.Type) throws -> Double { try next { [state] in try TreeScalars.double($0, state) } }
    mutating func decode(_: Float.Type) throws -> Float { try next { [state] in try TreeScalars.float($0, state) } }
    mutating func decode(_: Int.Type) throws -> Int { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: Int8.Type) throws -> Int8 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: Int16.Type) throws -> Int16 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: Int32.Type) throws -> Int32 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: Int64.Type) throws -> Int64 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: UInt.Type) throws -> UInt { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: UInt8.Type) throws -> UInt8 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: UInt16.Type) throws -> UInt16 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: UInt32.Type) throws -> UInt32 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: UInt64.Type) throws -> UInt64 { try next { [state] in try TreeScalars.integer($0, state) } }
    mutating func decode(_: Int128.Type) throws -> Int128 { throw state.giveUp() }
    mutating func decode(_: UInt128.Type) throws -> UInt128 { throw state.giveUp() }
    mutating func decode<T: Decodable>(_: T.Type) throws -> T {
        let path = codingPath + [TreeDecoding.IndexKey(currentIndex)]
        return try next { [state] in try TreeScalars.unwrap($0, as: T.self, path: path, state) }
    }

    mutating func decodeIfPresent(_: Bool.Type) throws -> Bool? { try nextIfPresent { [state] in try TreeScalars.bool($0, state) } }
    mutating func decodeIfPresent(_: String.Type) throws -> String? { try nextIfPresent { [state] in try TreeScalars.string($0, state) } }
    mutating func decodeIfPresent(_: Double.Type) throws -> Double? { try nextIfPresent { [state] in try TreeScalars.double($0, state) } }
    mutating func decodeIfPresent(_: Float.Type) throws -> Float? { try nextIfPresent { [state] in try TreeScalars.float($0, state) } }
    mutating func decodeIfPresent(_: Int.Type) throws -> Int? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: Int8.Type) throws -> Int8? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: Int16.Type) throws -> Int16? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: Int32.Type) throws -> Int32? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: Int64.Type) throws -> Int64? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: UInt.Type) throws -> UInt? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: UInt8.Type) throws -> UInt8? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: UInt16.Type) throws -> UInt16? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: UInt32.Type) throws -> UInt32? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent(_: UInt64.Type) throws -> UInt64? { try nextIfPresent { [state] in try TreeScalars.integer($0, state) } }
    mutating func decodeIfPresent<T: Decodable>(_: T.Type) throws -> T? {
        let path = codingPath + [TreeDecoding.IndexKey(currentIndex)]
        return try nextIfPresent { [state] in try TreeScalars.unwrap($0, as: T.self, path: path, state) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath + [TreeDecoding.IndexKey(currentIndex)]
        return try next { [state] value in
            guard case .object(let members) = value else { throw state.giveUp() }
            return KeyedDecodingContainer(KeyedTreeContainer<NestedKey>(members: members, codingPath: path, state: state))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [TreeDecoding.IndexKey(currentIndex)]
        return try next { [state] value in
            guard case .array(let nested) = value else { throw state.giveUp() }
            return UnkeyedTreeContainer(elements: nested, codingPath: path, state: state)
        }
    }

    mutating func superDecoder() throws -> any Decoder { throw state.giveUp() }
}
