/// The one JSON parser behind `JSON.parse` and `JSON.parseLocated`.
///
/// It reads raw UTF-8 through an unsafe pointer, never builds strings character by character, and
/// keeps open containers on explicit stacks instead of recursing, so nesting depth is limited only by
/// `maxDepth`. Values are handed to a `JSONTreeBuilder`; the parser itself knows nothing about trees. A value the
/// builder keeps as its bytes (`JSONTreeBuilder.keepsNextValue()`) is checked by `skipTree` instead, which builds nothing.
/// Error locations are computed only when an error is thrown.
public struct JSONParserCore<Builder: JSONTreeBuilder> {
    public let base: UnsafePointer<UInt8>
    /// One past the last byte.
    public let end: Int
    /// The offset of the first byte after a byte-order mark.
    public let origin: Int
    public let maxDepth: Int
    public var pos: Int
    public var builder: Builder {
        get { parts.builder }
        nonmutating _modify { yield &parts.builder }
        nonmutating set { parts.builder = newValue }
    }
    /// Reused buffer for decoding strings that contain escapes.
    public var scratch: [UInt8] {
        get { parts.scratch }
        nonmutating _modify { yield &parts.scratch }
        nonmutating set { parts.scratch = newValue }
    }
    /// Reused buffers for checking the values the builder keeps as bytes (``JSONTreeBuilder/keepsNextValue()``).
    var skipState: JSONSkipState {
        get { parts.skipState }
        nonmutating _modify { yield &parts.skipState }
        nonmutating set { parts.skipState = newValue }
    }
    /// The builder and the buffers, in a class of their own (see ``JSONParserState``). A copy of the parser shares them.
    let parts: JSONParserState<Builder>

    public init(base: UnsafePointer<UInt8>, count: Int, origin: Int, maxDepth: Int, builder: Builder) {
        self.base = base
        self.end = count
        self.origin = origin
        self.maxDepth = maxDepth
        self.pos = origin
        self.parts = JSONParserState(builder)
    }

    // MARK: - Document

    public mutating func parseDocument() throws(JSONParseError) -> Builder.Value {
        skipWhitespace()
        if pos == end { throw fail("empty document", at: pos) }
        let root = try parseTree()
        skipWhitespace()
        if pos < end {
            guard let found = describeCharacter(at: pos) else { throw fail("invalid UTF-8", at: pos) }
            throw fail("unexpected character \(found) after the document", at: pos)
        }
        return root
    }

    /// Parses one value starting at `pos` (whitespace already skipped), iteratively.
    private mutating func parseTree() throws(JSONParseError) -> Builder.Value {
        var containers: [Bool] = []  // true = object, false = array
        var afterComma = false
        valueLoop: while true {
            guard pos < end else { throw unexpected("a value", at: pos) }
            var value: Builder.Value
            switch base[pos] {
            case _ where builder.keepsNextValue():
                let start = pos
                try skipTree(depth: containers.count, afterComma: afterComma)
                value = builder.makeKept(start..<pos)
            case UInt8(ascii: "{"):
                guard containers.count < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels", at: pos) }
                builder.beginObject(builder.mark(at: pos))
                pos += 1
                skipWhitespace()
                if pos < end, base[pos] == UInt8(ascii: "}") {
                    pos += 1
                    value = builder.endObject()
                } else {
                    try parseMemberKey(afterComma: false)
                    containers.append(true)
                    afterComma = false
                    continue valueLoop
                }
            case UInt8(ascii: "["):
                guard containers.count < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels", at: pos) }
                builder.beginArray(builder.mark(at: pos))
                pos += 1
                skipWhitespace()
                if pos < end, base[pos] == UInt8(ascii: "]") {
                    pos += 1
                    value = builder.endArray()
                } else {
                    containers.append(false)
                    afterComma = false
                    continue valueLoop
                }
            case UInt8(ascii: "\""):
                let mark = builder.mark(at: pos)
                let string = try parseString()
                value = builder.makeString(string, mark)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                value = try parseLiteral()
            case UInt8(ascii: "]") where afterComma:
                throw unexpected("a value", at: pos, note: " (trailing commas are not allowed)")
            default:
                throw unexpectedValue(at: pos)
            }

            // A value is complete: attach it to the open containers, closing as many as end here.
            while let isObject = containers.last {
                if isObject { builder.endMember(value) } else { builder.appendElement(value) }
                skipWhitespace()
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if pos < end, base[pos] == UInt8(ascii: ",") {
                    pos += 1
                    skipWhitespace()
                    if isObject { try parseMemberKey(afterComma: true) }
                    afterComma = true
                    continue valueLoop
                }
                guard pos < end, base[pos] == close else {
                    throw unexpected(isObject ? "',' or '}' after object member" : "',' or ']' after array element", at: pos)
                }
                pos += 1
                containers.removeLast()
                value = isObject ? builder.endObject() : builder.endArray()
            }
            return value
        }
    }

    /// Parses `"key"` and the `:` after it, leaving `pos` at the member's value.
    private mutating func parseMemberKey(afterComma: Bool) throws(JSONParseError) {
        try expectMemberKey(afterComma: afterComma)
        let keyOffset = pos
        let keyMark = builder.mark(at: pos)
        let key = try parseString()
        guard builder.beginMember(key: key, keyMark: keyMark) else { throw duplicateKey(key, at: keyOffset) }
        try parseColon()
    }

    /// Throws unless a member's key starts at `pos`.
    @inline(__always)
    func expectMemberKey(afterComma: Bool) throws(JSONParseError) {
        guard pos < end, base[pos] == UInt8(ascii: "\"") else {
            if afterComma, pos < end, base[pos] == UInt8(ascii: "}") {
                throw unexpected("a string key", at: pos, note: " (trailing commas are not allowed)")
            }
            throw unexpected(afterComma ? "a string key" : "a string key or '}'", at: pos)
        }
    }

    /// Parses the `:` after a member's key and the whitespace around it.
    @inline(__always)
    mutating func parseColon() throws(JSONParseError) {
        skipWhitespace()
        guard pos < end, base[pos] == UInt8(ascii: ":") else { throw unexpected("':' after object key", at: pos) }
        pos += 1
        skipWhitespace()
    }

    func duplicateKey(_ key: String, at offset: Int) -> JSONParseError {
        fail("duplicate key \(JSONWriter.quoted(key))", at: offset)
    }

    // MARK: - Literals and whitespace

    private mutating func parseLiteral() throws(JSONParseError) -> Builder.Value {
        let mark = builder.mark(at: pos)
        if matches("true") {
            pos += 4
            return builder.makeBool(true, mark)
        }
        if matches("false") {
            pos += 5
            return builder.makeBool(false, mark)
        }
        if matches("null") {
            pos += 4
            return builder.makeNull(mark)
        }
        throw unexpectedValue(at: pos)
    }

    /// Whether the bytes at `pos` are `literal` followed by a byte that cannot continue a word.
    func matches(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - pos >= count else { return false }
        let bytes = literal.utf8Start
        for index in 0..<count where base[pos + index] != bytes[index] { return false }
        return pos + count == end || !isWordByte(base[pos + count])
    }

    @inline(__always)
    public mutating func skipWhitespace() {
        while pos < end {
            let byte = base[pos]
            if byte == 0x20, pos + 8 <= end {
                // A run of spaces (a pretty document's indentation): up to 8 at a time, to the first byte that is not one.
                let others = UInt64(littleEndian: UnsafeRawPointer(base + pos).loadUnaligned(as: UInt64.self)) ^ 0x2020_2020_2020_2020
                pos += others == 0 ? 8 : others.trailingZeroBitCount >> 3
                continue
            }
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            pos += 1
        }
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        byte.isASCIIWordByte
    }

    // MARK: - Errors

    /// An error at byte `offset`, with its line and column.
    public func fail(_ message: String, at offset: Int) -> JSONParseError {
        var tracker = JSONLineTracker(base: base, origin: origin)
        return JSONParseError(location: tracker.location(at: offset), message: message)
    }

    /// `expected <expected>, found <what is at offset>`, or `invalid UTF-8` if the bytes there are not UTF-8.
    public func unexpected(_ expected: String, at offset: Int, note: String = "") -> JSONParseError {
        guard offset < end else { return fail("expected \(expected), found end of input\(note)", at: end) }
        guard let found = describeCharacter(at: offset) else { return fail("invalid UTF-8", at: offset) }
        return fail("expected \(expected), found \(found)\(note)", at: offset)
    }

    /// Like `unexpected("a value", …)`, but shows a whole word such as `'undefined'` or `'tru'`.
    func unexpectedValue(at offset: Int) -> JSONParseError {
        guard offset < end, isWordByte(base[offset]) else { return unexpected("a value", at: offset) }
        var wordEnd = offset
        while wordEnd < end, wordEnd - offset < 32, isWordByte(base[wordEnd]) { wordEnd += 1 }
        let word = String(decoding: UnsafeBufferPointer(start: base + offset, count: wordEnd - offset), as: UTF8.self)
        let ellipsis = wordEnd < end && isWordByte(base[wordEnd]) ? "…" : ""
        return fail("expected a value, found '\(word)\(ellipsis)'", at: offset)
    }

    /// The character at `offset` as shown in messages (`'x'` or `U+0007`), or nil if it is not valid UTF-8.
    public func describeCharacter(at offset: Int) -> String? {
        guard let length = scalarLength(at: offset) else { return nil }
        var value = UInt32(base[offset])
        if length > 1 {
            value &= 0xFF >> (length + 1)
            for index in 1..<length { value = value << 6 | UInt32(base[offset + index] & 0x3F) }
        }
        guard let scalar = Unicode.Scalar(value) else { return nil }
        return JSONParserCharacters.isPrintable(scalar) ? "'\(Character(scalar))'" : JSONParserCharacters.name(value)
    }
}

/// Character naming shared by parser messages.
public enum JSONParserCharacters {
    /// `U+000A`-style name of a code point.
    public static func name(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Whether a scalar can be shown as itself in a message.
    public static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator,
            .nonspacingMark, .enclosingMark:
            false
        case .spaceSeparator:
            scalar == " "
        default:
            true
        }
    }
}

extension UInt8 {
    /// An ASCII letter, digit or underscore: a byte of a bare word in an error message or of an identifier in a path.
    public var isASCIIWordByte: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// What a parser holds besides its position: the builder and the reused buffers. Kept out of `JSONParserCore` so that
/// the parser itself is a few integers and one reference: destroying a `JSONParserCore<SomeBuilder>` whose fields
/// are many arrays went through its value witness table, whose metadata a new process instantiated from its mangled
/// name, and that looked up the `SomeBuilder: JSONTreeBuilder` conformance by scanning every conformance record of
/// the process (some 270 k instructions, the first parse with each builder). This class has no requirement on
/// `Builder`, so its metadata needs no conformance, and a parse keeps it on the stack. Its properties are accessed
/// only through the parser that made it, one access at a time: no dynamic exclusivity checks.
final class JSONParserState<Builder> {
    @exclusivity(unchecked) var builder: Builder
    @exclusivity(unchecked) var scratch: [UInt8] = []
    @exclusivity(unchecked) var skipState = JSONSkipState()
    init(_ builder: Builder) { self.builder = builder }
}
