// MARK: - Builder protocol

/// Receives the values found by `JSONParserCore` and assembles a tree.
///
/// One parser serves both `JSON.parse` (builds `JSON`, no locations) and `JSON.parseLocated`
/// (builds `LocatedJSON`). The parser is generic over its builder, so the unlocated parse is
/// specialized with `Mark == Void` and pays nothing for locations.
///
/// The parser calls `mark(at:)` with strictly increasing offsets, and calls the container methods
/// in properly nested order: `beginArray`, any number of `appendElement`, `endArray`; `beginObject`,
/// any number of `beginMember` + `endMember` pairs, `endObject`.
public protocol JSONTreeBuilder {
    associatedtype Value
    /// Whatever the builder records about a position (Void, or a `SourceLocation`).
    associatedtype Mark

    mutating func mark(at offset: Int) -> Mark

    func makeNull(_ mark: Mark) -> Value
    func makeBool(_ value: Bool, _ mark: Mark) -> Value
    func makeInt(_ value: Int, _ mark: Mark) -> Value
    func makeDouble(_ value: Double, _ mark: Mark) -> Value
    func makeString(_ value: String, _ mark: Mark) -> Value

    mutating func beginArray(_ mark: Mark)
    mutating func appendElement(_ value: Value)
    mutating func endArray() -> Value

    mutating func beginObject(_ mark: Mark)
    /// Starts a member of the innermost object; returns false if `key` is a duplicate that must be rejected.
    mutating func beginMember(key: String, keyMark: Mark) -> Bool
    /// Finishes the member started by the last `beginMember`.
    mutating func endMember(_ value: Value)
    mutating func endObject() -> Value

    /// Whether the value starting now is kept as its bytes instead of built. The parser asks before each value; for
    /// one it keeps, it checks the bytes as strictly as it parses (the same errors at the same places, duplicate keys
    /// always rejected) without calling the builder for anything inside, then hands over their range
    /// (``makeKept(_:)``). False by default: every value is built.
    func keepsNextValue() -> Bool
    /// The value standing for a kept value: `bytes` is its range in the input (offsets from its first byte,
    /// byte-order mark included).
    mutating func makeKept(_ bytes: Range<Int>) -> Value
}

extension JSONTreeBuilder {
    @inline(__always) public func keepsNextValue() -> Bool { false }

    public mutating func makeKept(_ bytes: Range<Int>) -> Value {
        makeNull(mark(at: bytes.lowerBound))  // never asked for: no value is kept
    }
}

// MARK: - Plain builder

/// Builds plain `JSON` values, applying the duplicate-key policy.
///
/// The elements and members of all open containers live on one flat stack; closing a container moves
/// its slice into an exactly sized array or dictionary (one hash per key, no rehashing while growing).
/// Duplicate keys are found as soon as the second one is read: by comparing with the object's earlier
/// keys while the object is small, and with a set once it is large.
public struct JSONPlainBuilder: JSONTreeBuilder {
    /// Values of all open containers, innermost last.
    private var values: [JSON] = []
    /// Keys of all open objects, innermost last (aligned with `values` within each object).
    private var keys: [String] = []
    /// Per open container: where its values start.
    private var valueStarts: [Int] = []
    /// Per open object: where its keys start.
    private var keyStarts: [Int] = []
    /// Per open object: its keys as a set, filled once it has `setThreshold` keys.
    private var keySets: [Set<String>] = []
    private let rejectDuplicates: Bool
    private static var setThreshold: Int { 16 }

    public init(duplicateKeys: JSONParseOptions.DuplicateKeyPolicy) {
        rejectDuplicates = duplicateKeys == .reject
    }

    @inline(__always) public func mark(at offset: Int) {}

    @inline(__always) public func makeNull(_ mark: Void) -> JSON { .null }
    @inline(__always) public func makeBool(_ value: Bool, _ mark: Void) -> JSON { .bool(value) }
    @inline(__always) public func makeInt(_ value: Int, _ mark: Void) -> JSON { .int(value) }
    @inline(__always) public func makeDouble(_ value: Double, _ mark: Void) -> JSON { .double(value) }
    @inline(__always) public func makeString(_ value: String, _ mark: Void) -> JSON { .string(value) }

    public mutating func beginArray(_ mark: Void) {
        valueStarts.append(values.count)
    }

    public mutating func appendElement(_ value: JSON) {
        values.append(value)
    }

    public mutating func endArray() -> JSON {
        let start = valueStarts.removeLast()
        let elements = Array(values[start...])
        values.removeSubrange(start...)
        return .array(elements)
    }

    public mutating func beginObject(_ mark: Void) {
        valueStarts.append(values.count)
        keyStarts.append(keys.count)
        if rejectDuplicates { keySets.append([]) }
    }

    public mutating func beginMember(key: String, keyMark: Void) -> Bool {
        if rejectDuplicates {
            let start = keyStarts[keyStarts.count - 1]
            let count = keys.count - start
            if count < Self.setThreshold {
                for index in start..<keys.count where keys[index] == key { return false }
            } else {
                if count == Self.setThreshold { keySets[keySets.count - 1].formUnion(keys[start...]) }
                guard keySets[keySets.count - 1].insert(key).inserted else { return false }
            }
        }
        keys.append(key)
        return true
    }

    public mutating func endMember(_ value: JSON) {
        values.append(value)
    }

    public mutating func endObject() -> JSON {
        let valueStart = valueStarts.removeLast()
        let keyStart = keyStarts.removeLast()
        if rejectDuplicates { keySets.removeLast() }
        var members = [String: JSON](minimumCapacity: keys.count - keyStart)
        for (key, value) in zip(keys[keyStart...], values[valueStart...]) {
            members[key] = value  // later duplicates (lastWins) overwrite earlier ones
        }
        keys.removeSubrange(keyStart...)
        values.removeSubrange(valueStart...)
        return .object(members)
    }
}
