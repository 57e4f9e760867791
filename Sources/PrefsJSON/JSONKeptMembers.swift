import Foundation

// MARK: - Parsing with kept members

extension JSON {
    /// What ``parse(_:keepingMembersOf:)`` returns: the document's tree, and the members it kept as bytes.
    public struct KeptMembers: Sendable {
        /// The document, without the member whose members were kept (when it was an object).
        public var root: JSON
        /// The members of the root object's member, by key: the byte range of each member's value in the input
        /// (offsets from its first byte). Nil when the root has no such member or it is not an object (then it is in
        /// ``root``).
        public var kept: [String: Range<Int>]?
    }

    /// Parses a document as ``parse(_:options:)`` does, with its default options (every byte checked: whatever it
    /// rejects, this rejects with the same error at the same place), but keeps the members of the root object's
    /// member `name` as the byte ranges of their values instead of building them: for a file of many entries of which
    /// a reader wants a few. Parse a kept value's bytes when it is wanted; they parse as they would in place.
    ///
    /// ```swift
    /// let parsed = try JSON.parse(data, keepingMembersOf: "values")   // {"format": …, "values": {"a": [1, 2]}}
    /// let range = parsed.kept?["a"]                                     // the bytes of [1, 2]
    /// ```
    public static func parse(_ data: Data, keepingMembersOf name: String) throws(JSONParseError) -> KeptMembers {
        let result = data.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> (JSON, JSONKeptMembersBuilder) in
                try JSONParserCore<JSONKeptMembersBuilder>.parseKeepingBuilder(raw.assumingMemoryBound(to: UInt8.self), options: JSONParseOptions()) {
                    _, _ in JSONKeptMembersBuilder(name: name)
                }
            }
        }
        let (root, builder) = try result.get()
        guard let kept = builder.kept, case .object(var members) = root else { return KeptMembers(root: root, kept: nil) }
        members.removeValue(forKey: name)
        return KeptMembers(root: .object(members), kept: kept)
    }
}

/// Builds the tree of a document except the members of one member of its root object, whose values the parser checks
/// and keeps as byte ranges (``JSONTreeBuilder/keepsNextValue()``). Duplicate keys among them are refused as their
/// key is read, as `JSONPlainBuilder` refuses any other; while the keys come in ascending order, as this library
/// writes them, that takes one comparison with the key before.
struct JSONKeptMembersBuilder: JSONTreeBuilder {
    /// The root member whose members are kept.
    private let name: String
    /// The tree of everything else (the kept member stands in it as an empty object).
    private var tree = JSONPlainBuilder(duplicateKeys: .reject)
    /// How many containers the tree has open (a kept value opens none).
    private var depth = 0
    private var rootIsObject = false
    /// Whether the root's member being read is `name`.
    private var inNamedMember = false
    /// Whether the innermost open container is the root's member `name`, an object.
    private var inKeptObject = false
    /// Whether the root has a member `name` that is an object.
    private var foundKeptObject = false
    /// The kept members' keys and the ranges of their values, in the order read.
    private var keys: [String] = []
    private var ranges: [Range<Int>] = []
    /// Whether the keys read so far are ASCII, each after the one before by its bytes: then they all differ (as
    /// strings too, which compare ASCII by its bytes), with no set to ask.
    private var keysAscend = true
    /// The keys read so far, once they do not ascend.
    private var keySet: Set<String> = []

    init(name: String) {
        self.name = name
    }

    /// The kept members' ranges by key; nil when the root has no member `name` that is an object.
    var kept: [String: Range<Int>]? {
        guard foundKeptObject else { return nil }
        var kept = [String: Range<Int>](minimumCapacity: keys.count)  // one hash per key, no table grown
        for (key, range) in zip(keys, ranges) { kept[key] = range }
        return kept
    }

    /// Adds a kept member's key; false when an earlier member has it.
    private mutating func insertKey(_ key: String) -> Bool {
        if keysAscend {
            if Self.isASCII(key, after: keys.last) {
                keys.append(key)
                return true
            }
            keysAscend = false
            keySet = Set(keys)
        }
        guard keySet.insert(key).inserted else { return false }
        keys.append(key)
        return true
    }

    /// Whether `key` is ASCII and sorts after `previous` (when there is one) by its bytes.
    private static func isASCII(_ key: String, after previous: String?) -> Bool {
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { $0 < 0x80 }
        }
        guard ascii == true else { return false }
        guard let previous else { return true }
        return JSON.keyPrecedes(previous, key)
    }

    @inline(__always) func mark(at offset: Int) {}

    @inline(__always) func makeNull(_ mark: Void) -> JSON { .null }
    @inline(__always) func makeBool(_ value: Bool, _ mark: Void) -> JSON { .bool(value) }
    @inline(__always) func makeInt(_ value: Int, _ mark: Void) -> JSON { .int(value) }
    @inline(__always) func makeDouble(_ value: Double, _ mark: Void) -> JSON { .double(value) }
    @inline(__always) func makeString(_ value: String, _ mark: Void) -> JSON { .string(value) }

    mutating func beginArray(_ mark: Void) {
        depth += 1
        tree.beginArray(mark)
    }

    mutating func appendElement(_ value: JSON) {
        tree.appendElement(value)
    }

    mutating func endArray() -> JSON {
        depth -= 1
        return tree.endArray()
    }

    mutating func beginObject(_ mark: Void) {
        if depth == 1, inNamedMember {
            inKeptObject = true
            foundKeptObject = true
        } else {
            if depth == 0 { rootIsObject = true }
            tree.beginObject(mark)
        }
        depth += 1
    }

    mutating func beginMember(key: String, keyMark: Void) -> Bool {
        if inKeptObject { return insertKey(key) }
        if depth == 1, rootIsObject { inNamedMember = key == name }
        return tree.beginMember(key: key, keyMark: keyMark)
    }

    @inline(__always) func keepsNextValue() -> Bool { inKeptObject }

    mutating func makeKept(_ bytes: Range<Int>) -> JSON {
        ranges.append(bytes)  // the value of the member begun last: `keys` and `ranges` stay aligned
        return .null  // stands for the kept value, which endMember drops
    }

    mutating func endMember(_ value: JSON) {
        if inKeptObject { return }
        if depth == 1 { inNamedMember = false }
        tree.endMember(value)
    }

    mutating func endObject() -> JSON {
        depth -= 1
        if inKeptObject {
            inKeptObject = false
            return .object([:])  // stands for the member, whose members are in `keys` and `ranges`
        }
        return tree.endObject()
    }
}
