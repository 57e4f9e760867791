import Foundation

// MARK: - Options

/// Limits and policies for `JSON.parse` and `JSON.parseLocated`.
///
/// ```swift
/// var options = JSONParseOptions(maxBytes: 1 << 20)
/// options.duplicateKeys = .lastWins
/// let value = try JSON.parse(data, options: options)
/// ```
public struct JSONParseOptions: Sendable, Hashable {
    /// The deepest allowed nesting of arrays and objects; a deeper document fails with
    /// `nesting deeper than N levels`. The parser does not recurse, so any value is safe.
    ///
    /// ```swift
    /// let shallow = JSONParseOptions(maxDepth: 8)
    /// ```
    public var maxDepth: Int = 256

    /// The largest accepted input in bytes (including a byte-order mark), checked before parsing; nil means no limit.
    ///
    /// ```swift
    /// let capped = JSONParseOptions(maxBytes: 1_048_576)   // "document is larger than 1048576 bytes"
    /// ```
    public var maxBytes: Int? = nil

    /// What to do when an object has the same key twice. `parseLocated` ignores this and keeps every occurrence.
    ///
    /// ```swift
    /// let lenient = JSONParseOptions(duplicateKeys: .lastWins)
    /// ```
    public var duplicateKeys: DuplicateKeyPolicy = .reject

    /// How `JSON.parse` treats a key that appears twice in one object.
    ///
    /// Keys are compared as Swift strings, i.e. by canonical equivalence (`"é"` precomposed and
    /// decomposed are the same key).
    ///
    /// ```swift
    /// try JSON.parse(#"{"a":1,"a":2}"#, options: .init(duplicateKeys: .lastWins))   // {"a": 2}
    /// ```
    public enum DuplicateKeyPolicy: Sendable, Hashable {
        /// Fail with `duplicate key "k"` at the second occurrence of the key.
        case reject
        /// Keep the value of the last occurrence.
        case lastWins
    }

    /// Creates options; the defaults are strict (depth 256, no size limit, duplicate keys rejected).
    ///
    /// ```swift
    /// let options = JSONParseOptions(maxDepth: 64, maxBytes: 65_536, duplicateKeys: .reject)
    /// ```
    public init(maxDepth: Int = 256, maxBytes: Int? = nil, duplicateKeys: DuplicateKeyPolicy = .reject) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
        self.duplicateKeys = duplicateKeys
    }
}

// MARK: - Parsing

extension JSON {
    /// Parses a strict RFC 8259 JSON document from UTF-8 bytes.
    ///
    /// A leading UTF-8 byte-order mark is skipped, surrounding whitespace is allowed. Integer literals
    /// become `.int` (a literal outside the `Int64` range is an error, never a rounded double); literals
    /// with a fraction or exponent become `.double`, correctly rounded. Throws only `JSONParseError`.
    ///
    /// ```swift
    /// let value = try JSON.parse(Data(#"{"id": 7, "ratio": 0.5}"#.utf8))
    /// value["id"]      // .int(7)
    /// ```
    public static func parse(_ data: Data, options: JSONParseOptions = .init()) throws(JSONParseError) -> JSON {
        let result = data.withUnsafeBytes { raw in
            parseResult(raw.assumingMemoryBound(to: UInt8.self), options: options)
        }
        return try result.get()
    }

    /// Parses a JSON document from UTF-8 bytes in any collection (`[UInt8]`, `ArraySlice<UInt8>`, ...).
    ///
    /// Same rules as `parse(_: Data, options:)`. Throws only `JSONParseError`.
    ///
    /// ```swift
    /// let value = try JSON.parse(Array("[1, 2]".utf8))   // .array([.int(1), .int(2)])
    /// ```
    public static func parse(_ bytes: some Collection<UInt8>, options: JSONParseOptions = .init()) throws(JSONParseError) -> JSON {
        try withContiguousBytes(bytes) { parseResult($0, options: options) }.get()
    }

    /// Parses a JSON document from text.
    ///
    /// Same rules as `parse(_: Data, options:)`; a leading U+FEFF is skipped. Throws only `JSONParseError`.
    ///
    /// ```swift
    /// let value = try JSON.parse(#"{"title": "Hi"}"#)
    /// value["title"]   // .string("Hi")
    /// ```
    public static func parse(_ text: String, options: JSONParseOptions = .init()) throws(JSONParseError) -> JSON {
        var text = text
        return try text.withUTF8 { parseResult($0, options: options) }.get()
    }

    private static func parseResult(_ bytes: UnsafeBufferPointer<UInt8>, options: JSONParseOptions) -> Result<JSON, JSONParseError> {
        Result { () throws(JSONParseError) -> JSON in
            try JSONParserCore<JSONPlainBuilder>.parse(bytes, options: options) { _, _ in
                JSONPlainBuilder(duplicateKeys: options.duplicateKeys)
            }
        }
    }

    /// Runs `body` over the bytes of `bytes`, copying them only if they are not contiguous.
    public static func withContiguousBytes<R>(_ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = bytes.withContiguousStorageIfAvailable(body) { return result }
        return Array(bytes).withUnsafeBufferPointer(body)
    }
}

// MARK: - Entry point shared by parse and parseLocated

extension JSONParserCore {
    /// Applies the size limit, skips a byte-order mark and parses one document with the builder that
    /// `makeBuilder(base, origin)` returns (`origin` is the offset after the byte-order mark).
    public static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>,
        options: JSONParseOptions,
        makeBuilder: (UnsafePointer<UInt8>?, Int) -> Builder
    ) throws(JSONParseError) -> Builder.Value {
        try parseKeepingBuilder(bytes, options: options, makeBuilder: makeBuilder).value
    }

    /// ``parse(_:options:makeBuilder:)``, also returning the builder as the parse left it, for a builder that gathers
    /// more than the tree it returns (the byte ranges of the values it keeps, see ``JSONTreeBuilder/keepsNextValue()``).
    public static func parseKeepingBuilder(
        _ bytes: UnsafeBufferPointer<UInt8>,
        options: JSONParseOptions,
        makeBuilder: (UnsafePointer<UInt8>?, Int) -> Builder
    ) throws(JSONParseError) -> (value: Builder.Value, builder: Builder) {
        let origin = hasByteOrderMark(bytes) ? 3 : 0
        if let maxBytes = options.maxBytes, bytes.count > maxBytes {
            throw JSONParseError(
                location: SourceLocation(line: 1, column: 1, offset: 0),
                message: "document is larger than \(maxBytes) bytes"
            )
        }
        guard let base = bytes.baseAddress, bytes.count > origin else {
            throw JSONParseError(location: SourceLocation(line: 1, column: 1, offset: origin), message: "empty document")
        }
        var core = JSONParserCore(
            base: base,
            count: bytes.count,
            origin: origin,
            maxDepth: options.maxDepth,
            builder: makeBuilder(base, origin)
        )
        let value = try core.parseDocument()
        return (value, core.builder)
    }

    private static func hasByteOrderMark(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    }
}
