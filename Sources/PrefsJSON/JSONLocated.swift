import Foundation

// MARK: - LocatedJSON

/// A JSON value with the source location of every value and every object key, for error messages.
///
/// Objects keep their members in source order, each with its key's location, and keep duplicate keys
/// (every occurrence), so a linter can report them. `json` drops the locations (the last occurrence of a
/// duplicate key wins).
///
/// ```swift
/// let document = try JSON.parseLocated(data)
/// if let version = document[JSONPath.root / "appVersions" / 2], case .string = version.value {
///     print("\(version.location): appVersions[2] is a string")   // 4:9: appVersions[2] is a string
/// }
/// ```
public struct LocatedJSON: Sendable, Hashable {
    /// Where the value starts (its first character: `{`, `[`, `"`, a digit, `-`, `t`, `f` or `n`).
    public var location: SourceLocation
    /// The value, with located children.
    public var value: Value

    /// The value of a `LocatedJSON`: the cases of `JSON`, with located children and ordered members.
    ///
    /// ```swift
    /// switch node.value {
    /// case .object(let members): print(members.map(\.key))
    /// default: break
    /// }
    /// ```
    public enum Value: Sendable, Hashable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// An integer literal (within the `Int64` range).
        case int(Int)
        /// A number with a fraction or an exponent.
        case double(Double)
        /// A string, unescaped.
        case string(String)
        /// Elements in source order.
        case array([LocatedJSON])
        /// Members in source order; duplicate keys appear once per occurrence.
        case object([Member])
    }

    /// One `"key": value` pair of an object, with the location of the key's opening quote.
    ///
    /// ```swift
    /// for member in members { print("\(member.keyLocation): \(member.key)") }
    /// ```
    public struct Member: Sendable, Hashable {
        /// The decoded key.
        public var key: String
        /// Where the key's opening quote is.
        public var keyLocation: SourceLocation
        /// The member's value.
        public var value: LocatedJSON

        /// Creates a member.
        ///
        /// ```swift
        /// let member = LocatedJSON.Member(key: "id", keyLocation: location, value: node)
        /// ```
        public init(key: String, keyLocation: SourceLocation, value: LocatedJSON) {
            self.key = key
            self.keyLocation = keyLocation
            self.value = value
        }
    }

    /// An object key that occurs more than once, with the location of every occurrence.
    ///
    /// ```swift
    /// for duplicate in document.duplicateKeys() {
    ///     print("\(duplicate.locations[1]): duplicate key \(duplicate.key) in \(duplicate.objectPath)")
    /// }
    /// ```
    public struct DuplicateKey: Sendable, Hashable {
        /// The path of the object that contains the key.
        public var objectPath: JSONPath
        /// The repeated key.
        public var key: String
        /// The key's locations, in source order (at least two).
        public var locations: [SourceLocation]
    }

    /// Creates a located value.
    ///
    /// ```swift
    /// let node = LocatedJSON(location: SourceLocation(line: 1, column: 1, offset: 0), value: .null)
    /// ```
    public init(location: SourceLocation, value: Value) {
        self.location = location
        self.value = value
    }
}

// MARK: - Access

extension LocatedJSON {
    /// The plain value without locations; for duplicate keys the last occurrence wins.
    ///
    /// ```swift
    /// try JSON.parseLocated(#"{"a":1,"a":2}"#).json   // {"a": 2}
    /// ```
    public var json: JSON {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .int(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .array(let elements): .array(elements.map(\.json))
        case .object(let members):
            .object(Dictionary(members.lazy.map { ($0.key, $0.value.json) }, uniquingKeysWith: { _, last in last }))
        }
    }

    /// The JSON kind, as in `JSON.kindName`: "object", "array", "string", "integer", "number", "boolean", "null".
    ///
    /// ```swift
    /// print("\(node.location): expected a string, found \(node.kindName)")
    /// ```
    public var kindName: String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The members of an object in source order, or nil if this is not an object.
    ///
    /// ```swift
    /// let keys = document.members?.map(\.key) ?? []
    /// ```
    public var members: [Member]? {
        if case .object(let members) = value { return members }
        return nil
    }

    /// The last member named `key` of an object, or nil.
    ///
    /// ```swift
    /// document["title"]?.location   // 3:12
    /// ```
    public subscript(key: String) -> LocatedJSON? {
        guard case .object(let members) = value else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The element at `index` of an array, or nil.
    ///
    /// ```swift
    /// document["items"]?[0]?.json   // the first item
    /// ```
    public subscript(index: Int) -> LocatedJSON? {
        guard case .array(let elements) = value, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The value at `path` below this one, or nil.
    ///
    /// ```swift
    /// document[JSONPath.root / "appVersions" / 2]?.location
    /// ```
    public subscript(path: JSONPath) -> LocatedJSON? {
        var node = self
        for component in path.components {
            let next: LocatedJSON?
            switch component {
            case .key(let key): next = node[key]
            case .index(let index): next = node[index]
            }
            guard let next else { return nil }
            node = next
        }
        return node
    }

    /// Visits this value and every value inside it in source order (parents before children), with paths.
    /// Every occurrence of a duplicate key is visited.
    ///
    /// ```swift
    /// try document.walk { path, node in
    ///     if case .null = node.value { print("\(node.location): \(path) is null") }
    /// }
    /// ```
    public func walk(_ visit: (JSONPath, LocatedJSON) throws -> Void) rethrows {
        try walk(path: .root, visit)
    }

    private func walk(path: JSONPath, _ visit: (JSONPath, LocatedJSON) throws -> Void) rethrows {
        try visit(path, self)
        switch value {
        case .array(let elements):
            for (index, element) in elements.enumerated() { try element.walk(path: path / index, visit) }
        case .object(let members):
            for member in members { try member.value.walk(path: path / member.key, visit) }
        default:
            break
        }
    }

    /// Every key that occurs more than once in one object, anywhere in this value, in source order
    /// of the first occurrence.
    ///
    /// ```swift
    /// try JSON.parseLocated(#"{"id":1,"id":2}"#).duplicateKeys().first?.locations   // [1:2, 1:9]
    /// ```
    public func duplicateKeys() -> [DuplicateKey] {
        var found: [DuplicateKey] = []
        walk { path, node in
            guard case .object(let members) = node.value, members.count > 1 else { return }
            var occurrences: [String: [SourceLocation]] = [:]
            for member in members { occurrences[member.key, default: []].append(member.keyLocation) }
            for member in members {
                guard let locations = occurrences[member.key], locations.count > 1,
                    locations[0] == member.keyLocation
                else { continue }
                found.append(DuplicateKey(objectPath: path, key: member.key, locations: locations))
            }
        }
        return found
    }
}

// MARK: - Parsing

extension JSON {
    /// Parses a JSON document keeping the location of every value and key (for linters).
    ///
    /// Same rules and errors as `parse(_: Data, options:)`, except that `options.duplicateKeys` is ignored:
    /// duplicate keys are kept. Throws only `JSONParseError`.
    ///
    /// ```swift
    /// let document = try JSON.parseLocated(data)
    /// document["title"]?.location   // 2:12
    /// ```
    public static func parseLocated(_ data: Data, options: JSONParseOptions = .init()) throws(JSONParseError) -> LocatedJSON {
        try data.withUnsafeBytes { raw in
            parseLocatedResult(raw.assumingMemoryBound(to: UInt8.self), options: options)
        }.get()
    }

    /// Parses a located JSON document from UTF-8 bytes in any collection; see `parseLocated(_: Data, options:)`.
    ///
    /// ```swift
    /// let document = try JSON.parseLocated(Array(#"[1, 2]"#.utf8))
    /// ```
    public static func parseLocated(_ bytes: some Collection<UInt8>, options: JSONParseOptions = .init()) throws(JSONParseError) -> LocatedJSON {
        try withContiguousBytes(bytes) { parseLocatedResult($0, options: options) }.get()
    }

    /// Parses a located JSON document from text; see `parseLocated(_: Data, options:)`.
    ///
    /// ```swift
    /// let document = try JSON.parseLocated("{\n  \"a\": 1\n}")
    /// document["a"]?.location   // 2:8
    /// ```
    public static func parseLocated(_ text: String, options: JSONParseOptions = .init()) throws(JSONParseError) -> LocatedJSON {
        var text = text
        return try text.withUTF8 { parseLocatedResult($0, options: options) }.get()
    }

    private static func parseLocatedResult(_ bytes: UnsafeBufferPointer<UInt8>, options: JSONParseOptions) -> Result<LocatedJSON, JSONParseError> {
        Result { () throws(JSONParseError) -> LocatedJSON in
            try JSONParserCore<JSONLocatedBuilder>.parse(bytes, options: options) { base, origin in
                JSONLocatedBuilder(tracker: JSONLineTracker(base: base, origin: origin))
            }
        }
    }
}

// MARK: - Builder

/// Builds `LocatedJSON`, keeping every member; locations come from an incremental line tracker.
public struct JSONLocatedBuilder: JSONTreeBuilder {
    public var tracker: JSONLineTracker
    private var arrays: [[LocatedJSON]] = []
    private var arrayLocations: [SourceLocation] = []
    private var objects: [[LocatedJSON.Member]] = []
    private var objectLocations: [SourceLocation] = []
    private var keys: [(String, SourceLocation)] = []

    public init(tracker: JSONLineTracker) {
        self.tracker = tracker
    }

    public mutating func mark(at offset: Int) -> SourceLocation { tracker.location(at: offset) }

    public func makeNull(_ mark: SourceLocation) -> LocatedJSON { LocatedJSON(location: mark, value: .null) }
    public func makeBool(_ value: Bool, _ mark: SourceLocation) -> LocatedJSON { LocatedJSON(location: mark, value: .bool(value)) }
    public func makeInt(_ value: Int, _ mark: SourceLocation) -> LocatedJSON { LocatedJSON(location: mark, value: .int(value)) }
    public func makeDouble(_ value: Double, _ mark: SourceLocation) -> LocatedJSON { LocatedJSON(location: mark, value: .double(value)) }
    public func makeString(_ value: String, _ mark: SourceLocation) -> LocatedJSON { LocatedJSON(location: mark, value: .string(value)) }

    public mutating func beginArray(_ mark: SourceLocation) {
        arrays.append([])
        arrayLocations.append(mark)
    }

    public mutating func appendElement(_ value: LocatedJSON) {
        arrays[arrays.count - 1].append(value)
    }

    public mutating func endArray() -> LocatedJSON {
        LocatedJSON(location: arrayLocations.removeLast(), value: .array(arrays.removeLast()))
    }

    public mutating func beginObject(_ mark: SourceLocation) {
        objects.append([])
        objectLocations.append(mark)
    }

    public mutating func beginMember(key: String, keyMark: SourceLocation) -> Bool {
        keys.append((key, keyMark))
        return true
    }

    public mutating func endMember(_ value: LocatedJSON) {
        let (key, keyLocation) = keys.removeLast()
        objects[objects.count - 1].append(LocatedJSON.Member(key: key, keyLocation: keyLocation, value: value))
    }

    public mutating func endObject() -> LocatedJSON {
        LocatedJSON(location: objectLocations.removeLast(), value: .object(objects.removeLast()))
    }
}
