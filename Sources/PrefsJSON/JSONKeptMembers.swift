import Foundation

// MARK: - Parsing with kept members

extension JSON {
    /// What ``parse(_:keepingMembersOf:)`` returns: the document's tree, and the members it kept as bytes.
    public struct KeptMembers: Sendable {
        /// The document, without the members whose members were kept (those that were objects).
        public var root: JSON
        /// For each named member of the root that is an object, its members by key: the byte range of each member's
        /// value in the input (offsets from its first byte). A name the root has no object under is absent (what the
        /// root has under it, if anything, is in ``root``).
        public var kept: [String: [String: Range<Int>]]
    }

    /// Parses a document as ``parse(_:options:)`` does, with its default options (every byte checked: whatever it
    /// rejects, this rejects with the same error at the same place), but keeps the members of the root object's
    /// members `names` as the byte ranges of their values instead of building them: for a file of many entries of
    /// which a reader wants a few. Parse a kept value's bytes when it is wanted; they parse as they would in place.
    ///
    /// ```swift
    /// let parsed = try JSON.parse(data, keepingMembersOf: ["values"])   // {"format": …, "values": {"a": [1, 2]}}
    /// let range = parsed.kept["values"]?["a"]                             // the bytes of [1, 2]
    /// ```
    public static func parse(_ data: Data, keepingMembersOf names: Set<String>) throws(JSONParseError) -> KeptMembers {
        let result = data.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> (JSON, JSONKeptMembersBuilder) in
                try JSONParserCore<JSONKeptMembersBuilder>.parseKeepingBuilder(raw.assumingMemoryBound(to: UInt8.self), options: JSONParseOptions()) {
                    _, _ in JSONKeptMembersBuilder(names: names)
                }
            }
        }
        let (root, builder) = try result.get()
        guard !builder.kept.isEmpty, case .object(var members) = root else { return KeptMembers(root: root, kept: [:]) }
        for name in builder.kept.keys { members.removeValue(forKey: name) }
        return KeptMembers(root: .object(members), kept: builder.kept)
    }

    /// Calls `body` with each member of the object in `text`, in order: the bytes of its key between the quotes (escapes
    /// as written) and of its value, as ranges of `text`; stops when `body` returns false. For text known to be JSON (a
    /// value ``parse(_:keepingMembersOf:)`` kept): it walks the object without checking it (text that is not JSON gets
    /// some members, never a crash). Returns false, calling nothing, when the text is not an object.
    ///
    /// ```swift
    /// JSON.forEachMember(ofObjectText: bytes) { key, value in … ; return true }   // {"type": "int", "initial": [1]}
    /// ```
    @discardableResult
    public static func forEachMember(
        ofObjectText text: UnsafeBufferPointer<UInt8>, _ body: (_ key: Range<Int>, _ value: Range<Int>) -> Bool
    ) -> Bool {
        var index = skippingSpace(text, from: 0)
        guard index < text.count, text[index] == UInt8(ascii: "{") else { return false }
        index = skippingSpace(text, from: index + 1)
        while index < text.count, text[index] == UInt8(ascii: "\"") {
            let keyEnd = endOfString(text, from: index)
            let key = index + 1..<max(index + 1, keyEnd - 1)
            index = skippingSpace(text, from: keyEnd)
            guard index < text.count, text[index] == UInt8(ascii: ":") else { break }
            index = skippingSpace(text, from: index + 1)
            let valueEnd = endOfValue(text, from: index)
            guard index < valueEnd, body(key, index..<valueEnd) else { return true }
            index = skippingSpace(text, from: valueEnd)
            guard index < text.count, text[index] == UInt8(ascii: ",") else { break }
            index = skippingSpace(text, from: index + 1)
        }
        return true
    }

    private static func skippingSpace(_ text: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index
        while index < text.count, text[index] == 0x20 || text[index] == 0x0A || text[index] == 0x0D || text[index] == 0x09 { index += 1 }
        return index
    }

    /// The index after the string whose opening quote is at `index`.
    private static func endOfString(_ text: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index + 1
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return text.count
    }

    /// The index after the value starting at `index`.
    private static func endOfValue(_ text: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index
        var depth = 0
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\""):
                index = endOfString(text, from: index)
                if depth == 0 { return index }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return index }  // the end of the object holding a scalar
                depth -= 1
                if depth == 0 { return index + 1 }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 { return index }
            default:
                break
            }
            index += 1
        }
        return index
    }
}

/// Builds the tree of a document except the members of some members of its root object, whose values the parser
/// checks and keeps as byte ranges (``JSONTreeBuilder/keepsNextValue()``). Duplicate keys among them are refused as
/// their key is read, as `JSONPlainBuilder` refuses any other; while the keys come in ascending order, as this library
/// writes them, that takes one comparison with the key before.
struct JSONKeptMembersBuilder: JSONTreeBuilder {
    /// The root members whose members are kept.
    private let names: Set<String>
    /// The tree of everything else (a kept member stands in it as an empty object).
    private var tree = JSONPlainBuilder(duplicateKeys: .reject)
    /// How many containers the tree has open (a kept value opens none).
    private var depth = 0
    private var rootIsObject = false
    /// The root's member being read, when it is one of `names`.
    private var namedMember: String?
    /// Whether the innermost open container is the root's member `namedMember`, an object.
    private var inKeptObject = false
    /// The members kept so far, by the name of the root member holding them.
    private(set) var kept: [String: [String: Range<Int>]] = [:]
    /// The keys of the object being kept and the ranges of their values, in the order read.
    private var keys: [String] = []
    private var ranges: [Range<Int>] = []
    /// Whether the keys read so far are ASCII, each after the one before by its bytes: then they all differ (as
    /// strings too, which compare ASCII by its bytes), with no set to ask.
    private var keysAscend = true
    /// The keys read so far, once they do not ascend.
    private var keySet: Set<String> = []

    init(names: Set<String>) {
        self.names = names
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
        if depth == 1, namedMember != nil {
            inKeptObject = true
        } else {
            if depth == 0 { rootIsObject = true }
            tree.beginObject(mark)
        }
        depth += 1
    }

    mutating func beginMember(key: String, keyMark: Void) -> Bool {
        if inKeptObject { return insertKey(key) }
        if depth == 1, rootIsObject { namedMember = names.contains(key) ? key : nil }
        return tree.beginMember(key: key, keyMark: keyMark)
    }

    @inline(__always) func keepsNextValue() -> Bool { inKeptObject }

    mutating func makeKept(_ bytes: Range<Int>) -> JSON {
        ranges.append(bytes)  // the value of the member begun last: `keys` and `ranges` stay aligned
        return .null  // stands for the kept value, which endMember drops
    }

    mutating func endMember(_ value: JSON) {
        if inKeptObject { return }
        if depth == 1 { namedMember = nil }
        tree.endMember(value)
    }

    mutating func endObject() -> JSON {
        depth -= 1
        guard inKeptObject, let name = namedMember else { return tree.endObject() }
        inKeptObject = false
        var members = [String: Range<Int>](minimumCapacity: keys.count)  // one hash per key, no table grown
        for (key, range) in zip(keys, ranges) { members[key] = range }
        kept[name] = members
        keys.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        keysAscend = true
        keySet = []
        return .object([:])  // stands for the member, whose members are in `kept`
    }
}
