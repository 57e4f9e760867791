import Foundation

// MARK: - Format

/// The layout `JSON.serialized(_:)` writes. Object keys are always sorted, in both formats.
///
/// ```swift
/// let value: JSON = .object(["b": .array([]), "a": .int(1)])
/// value.serialized(.compact)   // {"a":1,"b":[]}
/// value.serialized(.pretty)    // {\n  "a": 1,\n  "b": []\n}
/// ```
public struct JSONFormat: Sendable, Hashable {
    /// Spaces per nesting level; 0 means compact.
    public let indentWidth: Int

    /// No whitespace at all: `{"a":[1,2]}`.
    ///
    /// ```swift
    /// JSON.array([.int(1), .int(2)]).serialized(.compact)   // [1,2]
    /// ```
    public static let compact = JSONFormat(indentWidth: 0)

    /// Two-space indentation, one member or element per line, `"key": value`; empty containers stay `[]` and `{}`.
    /// There is no trailing newline.
    ///
    /// ```swift
    /// JSON.object(["a": .array([.int(1)])]).serialized(.pretty)
    /// // {
    /// //   "a": [
    /// //     1
    /// //   ]
    /// // }
    /// ```
    public static let pretty = JSONFormat(indentWidth: 2)
}

// MARK: - Serializing

extension JSON {
    /// The JSON text of this value, with object keys sorted by the UTF-8 bytes of the key (deterministic output).
    ///
    /// Strings escape only `"`, `\`, control characters and U+2028/U+2029; other characters are written
    /// as themselves. Doubles use the shortest text that parses back to the same value and always contain
    /// `.` or `e` (`1.0`, `1e-05`), so they re-parse as `.double`. JSON cannot express NaN or infinity:
    /// a non-finite `.double` is written as `null`, so callers must not store non-finite numbers in `JSON`
    /// (Prefs stores them as strings).
    ///
    /// ```swift
    /// JSON.object(["b": .double(1), "a": .string("é\n")]).serialized()   // {"a":"é\n","b":1.0}
    /// ```
    public func serialized(_ format: JSONFormat = .compact) -> String {
        // The scalars a store writes most, without a writer's buffer: the same text, a small string held inline.
        switch self {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        default: return String(decoding: serializedBytes(format), as: UTF8.self)
        }
    }

    /// The JSON text of this value as UTF-8 data; see `serialized(_:)`.
    ///
    /// ```swift
    /// try JSON.object(["id": .int(1)]).serializedData(.pretty).write(to: url)
    /// ```
    public func serializedData(_ format: JSONFormat = .compact) -> Data {
        Data(serializedBytes(format))
    }

    /// The JSON text of this value as UTF-8 bytes; see `serialized(_:)`.
    ///
    /// ```swift
    /// let bytes: [UInt8] = JSON.bool(true).serializedBytes()   // Array("true".utf8)
    /// ```
    public func serializedBytes(_ format: JSONFormat = .compact) -> [UInt8] {
        var writer = JSONWriter(indentWidth: format.indentWidth)
        writer.write(self, depth: 0)
        return writer.takeOutput()
    }
}

// MARK: - Writer

/// Appends JSON text as UTF-8 bytes into one growing buffer.
///
/// The buffer is an array kept longer than the text (its tail zeros), so that an append is a copy into room already
/// there: `Array.append(contentsOf:)` took some 45 instructions for each of the twenty pieces of a journal record.
public struct JSONWriter {
    /// `buffer[0..<count]` is the text; the rest is room for more.
    private var buffer: [UInt8]
    /// The length of the text written so far.
    public private(set) var count = 0
    private let indentWidth: Int

    public init(indentWidth: Int, capacity: Int = 256) {
        self.indentWidth = indentWidth
        buffer = Array(repeating: 0, count: Swift.max(capacity, 16))
    }

    /// The text written so far (a copy; ``withOutput(_:)`` reads it in place).
    ///
    /// ```swift
    /// var writer = JSONWriter(indentWidth: 0)
    /// writer.write(.int(1), depth: 0)
    /// writer.output   // Array("1".utf8)
    /// ```
    public var output: [UInt8] { Array(buffer[0..<count]) }

    /// The room the writer holds for text, written or not: what keeping it costs.
    public var capacity: Int { buffer.count }

    /// Calls `body` with the text written so far, in place.
    ///
    /// ```swift
    /// let crc = writer.withOutput { crc32($0) }
    /// ```
    public func withOutput<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The text written so far, leaving the writer empty (no copy of the text: the buffer is cut to it).
    public mutating func takeOutput() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &buffer)
        taken.removeLast(taken.count - count)
        count = 0
        return taken
    }

    /// Appends `bytes` as they are: text the caller knows to be valid JSON where it goes.
    public mutating func appendRaw(_ bytes: some Sequence<UInt8>) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { appendBytes(UnsafeRawBufferPointer($0)) }
        if copied == nil { for byte in bytes { appendByte(byte) } }
    }

    /// Appends `bytes` as they are: text the caller knows to be valid JSON where it goes.
    public mutating func appendRaw(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { appendBytes($0) }
    }

    /// Appends `bytes` as they are: text the caller knows to be valid JSON where it goes.
    public mutating func appendRaw(_ bytes: UnsafeRawBufferPointer) {
        appendBytes(bytes)
    }

    /// Appends `text` (ASCII) as it is: text the caller knows to be valid JSON where it goes.
    public mutating func appendRaw(_ text: StaticString) {
        appendASCII(text)
    }

    /// Empties the writer, keeping its buffer for the next text.
    public mutating func removeAll() {
        count = 0
    }

    /// `text` as a JSON string literal, quotes included (used in messages and JSON paths).
    public static func quoted(_ text: String) -> String {
        var writer = JSONWriter(indentWidth: 0)
        writer.writeString(text)
        return writer.withOutput { String(decoding: $0, as: UTF8.self) }
    }

    /// Makes room for `extra` more bytes: the buffer at least doubles when it grows.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > buffer.count { grow(to: count + extra) }
    }

    /// A new buffer of at least `needed` bytes, the text copied and the rest zeroed with one `memcpy` and one `memset`
    /// (appending the zeros element by element took seconds for a megabyte in a debug build under ThreadSanitizer).
    private mutating func grow(to needed: Int) {
        let size = Swift.max(needed, 2 * buffer.count)
        let written = count
        buffer = buffer.withUnsafeBytes { old in
            [UInt8](unsafeUninitializedCapacity: size) { room, initialized in
                let start = UnsafeMutableRawPointer(room.baseAddress.unsafelyUnwrapped)
                if let source = old.baseAddress, written > 0 { start.copyMemory(from: source, byteCount: written) }
                memset(start + written, 0, size - written)
                initialized = size
            }
        }
    }

    @inline(__always)
    private mutating func appendByte(_ byte: UInt8) {
        reserve(1)
        let at = count
        buffer.withUnsafeMutableBufferPointer { $0[at] = byte }
        count = at + 1
    }

    @inline(__always)
    private mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        let at = count
        buffer.withUnsafeMutableBytes { ($0.baseAddress.unsafelyUnwrapped + at).copyMemory(from: source, byteCount: bytes.count) }
        count = at + bytes.count
    }

    public mutating func write(_ value: JSON, depth: Int) {
        switch value {
        case .null:
            appendASCII("null")
        case .bool(let flag):
            appendASCII(flag ? "true" : "false")
        case .int(let number):
            writeInt(number)
        case .double(let number):
            if number.isFinite {
                var text = number.description
                text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
            } else {
                appendASCII("null")
            }
        case .string(let text):
            writeString(text)
        case .array(let elements):
            guard !elements.isEmpty else { return appendASCII("[]") }
            appendByte(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { appendByte(UInt8(ascii: ",")) }
                newline(depth: depth + 1)
                write(element, depth: depth + 1)
            }
            newline(depth: depth)
            appendByte(UInt8(ascii: "]"))
        case .object(let members):
            let sorted = members.sorted { JSON.keyPrecedes($0.key, $1.key) }
            writeObject(count: sorted.count, depth: depth, key: { sorted[$0].key }) { writer, index in
                writer.write(sorted[index].value, depth: depth + 1)
            }
        }
    }

    /// Writes an object member by member, exactly as `write(.object(members), depth:)` writes it: `count` members,
    /// the key of member `i` given by `key(i)` (in the order `JSON.keyPrecedes` sorts them, for the same text), its
    /// value written by `value(&writer, i)` at `depth + 1`. The members never have to exist together, so a large
    /// object is written without building its tree.
    ///
    /// ```swift
    /// let sorted = counts.sorted { JSON.keyPrecedes($0.key, $1.key) }   // counts: [String: Int]
    /// writer.writeObject(count: sorted.count, depth: 0, key: { sorted[$0].key }) { writer, i in
    ///     writer.write(.int(sorted[i].value), depth: 1)
    /// }
    /// ```
    public mutating func writeObject(count: Int, depth: Int, key: (Int) -> String, value: (inout JSONWriter, Int) -> Void) {
        guard count > 0 else { return appendASCII("{}") }
        appendByte(UInt8(ascii: "{"))
        for index in 0..<count {
            if index > 0 { appendByte(UInt8(ascii: ",")) }
            newline(depth: depth + 1)
            writeString(key(index))
            appendByte(UInt8(ascii: ":"))
            if indentWidth > 0 { appendByte(UInt8(ascii: " ")) }
            value(&self, index)
        }
        newline(depth: depth)
        appendByte(UInt8(ascii: "}"))
    }

    private mutating func newline(depth: Int) {
        guard indentWidth > 0 else { return }
        appendByte(UInt8(ascii: "\n"))
        let spaces = depth * indentWidth
        reserve(spaces)
        let at = count
        buffer.withUnsafeMutableBufferPointer { $0.baseAddress.unsafelyUnwrapped.advanced(by: at).update(repeating: UInt8(ascii: " "), count: spaces) }
        count = at + spaces
    }

    private mutating func appendASCII(_ text: StaticString) {
        appendBytes(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func writeInt(_ number: Int) {
        // The digits right to left into a buffer on the stack (20 of them at most, and a sign), then one append.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = number.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if number < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            appendBytes(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes a string literal, copying runs that need no escaping in bulk.
    public mutating func writeString(_ text: String) {
        appendByte(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte != 0xE2 {
                    index += 1
                    continue
                }
                var length = 1
                if byte == 0xE2 {
                    // U+2028 and U+2029 are E2 80 A8 / E2 80 A9.
                    guard index + 2 < bytes.count, bytes[index + 1] == 0x80,
                        bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9
                    else {
                        index += 1
                        continue
                    }
                    length = 3
                }
                appendBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<index])))
                writeEscape(for: byte, next: length == 3 ? bytes[index + 2] : 0)
                index += length
                runStart = index
            }
            appendBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])))
        }
        appendByte(UInt8(ascii: "\""))
    }

    private mutating func writeEscape(for byte: UInt8, next: UInt8) {
        appendByte(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): appendByte(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): appendByte(UInt8(ascii: "\\"))
        case 0x0A: appendByte(UInt8(ascii: "n"))
        case 0x09: appendByte(UInt8(ascii: "t"))
        case 0x0D: appendByte(UInt8(ascii: "r"))
        case 0x08: appendByte(UInt8(ascii: "b"))
        case 0x0C: appendByte(UInt8(ascii: "f"))
        case 0xE2: appendASCII(next == 0xA8 ? "u2028" : "u2029")
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            appendASCII("u00")
            appendByte(hex[Int(byte >> 4)])
            appendByte(hex[Int(byte & 0x0F)])
        }
    }
}

// MARK: - Key order

extension JSON {
    /// Whether `lhs` sorts before `rhs` by their UTF-8 bytes: the order object members are written in. The same order
    /// as `lhs.utf8.lexicographicallyPrecedes(rhs.utf8)`, compared on the strings' contiguous bytes when they have them
    /// (native and small strings do), which is several times faster than the generic sequence comparison.
    public static func keyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
                let common = Swift.min(left.count, right.count)
                var index = 0
                while index < common {
                    let (a, b) = (left[index], right[index])
                    if a != b { return a < b }
                    index += 1
                }
                return left.count < right.count
            }
        }
        if let compared, let compared { return compared }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
