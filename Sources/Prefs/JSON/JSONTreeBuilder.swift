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
protocol JSONTreeBuilder {
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
}

// MARK: - Plain builder

/// Builds plain `JSON` values, applying the duplicate-key policy.
///
/// Open containers live on stacks and are mutated in place (`stack[last].append`), so building
/// is linear in the size of the document.
struct JSONPlainBuilder: JSONTreeBuilder {
    private var arrays: [[JSON]] = []
    private var objects: [[String: JSON]] = []
    private var keys: [String] = []
    private let rejectDuplicates: Bool

    init(duplicateKeys: JSONParseOptions.DuplicateKeyPolicy) {
        rejectDuplicates = duplicateKeys == .reject
    }

    @inline(__always) func mark(at offset: Int) {}

    @inline(__always) func makeNull(_ mark: Void) -> JSON { .null }
    @inline(__always) func makeBool(_ value: Bool, _ mark: Void) -> JSON { .bool(value) }
    @inline(__always) func makeInt(_ value: Int, _ mark: Void) -> JSON { .int(value) }
    @inline(__always) func makeDouble(_ value: Double, _ mark: Void) -> JSON { .double(value) }
    @inline(__always) func makeString(_ value: String, _ mark: Void) -> JSON { .string(value) }

    mutating func beginArray(_ mark: Void) {
        arrays.append([])
    }

    mutating func appendElement(_ value: JSON) {
        arrays[arrays.count - 1].append(value)
    }

    mutating func endArray() -> JSON {
        .array(arrays.removeLast())
    }

    mutating func beginObject(_ mark: Void) {
        objects.append([:])
    }

    mutating func beginMember(key: String, keyMark: Void) -> Bool {
        if rejectDuplicates, objects[objects.count - 1][key] != nil { return false }
        keys.append(key)
        return true
    }

    mutating func endMember(_ value: JSON) {
        objects[objects.count - 1][keys.removeLast()] = value
    }

    mutating func endObject() -> JSON {
        .object(objects.removeLast())
    }
}
