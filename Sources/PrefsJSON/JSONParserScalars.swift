// MARK: - Strings

extension JSONParserCore {
    /// Parses the string whose opening quote is at `pos`; leaves `pos` after the closing quote.
    ///
    /// Fast path: scan 8 bytes at a time for `"`, `\`, control bytes and non-ASCII; a string without
    /// escapes becomes a `String` straight from the input bytes.
    public mutating func parseString() throws(JSONParseError) -> String {
        let start = pos + 1
        var index = start
        while true {
            index = firstByteNeedingAttention(from: index)
            guard index < end else { throw unterminatedString() }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                pos = index + 1
                return String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(contentStart: start, firstEscape: index) }
            if byte < 0x20 { throw controlCharacter(at: index) }
            if byte < 0x80 {
                index += 1
            } else {
                guard let length = scalarLength(at: index) else { throw fail("invalid UTF-8", at: index) }
                index += length
            }
        }
    }

    /// Checks the string whose opening quote is at `pos` as ``parseString()`` reads it (the same errors at the same
    /// places) without making it; leaves `pos` after the closing quote. Returns whether it is plain: ASCII without an
    /// escape, so that its bytes are its characters.
    @discardableResult
    mutating func skipString() throws(JSONParseError) -> Bool {
        var plain = true
        var index = pos + 1
        while true {
            index = firstByteNeedingAttention(from: index)
            guard index < end else { throw unterminatedString() }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                pos = index + 1
                return plain
            }
            if byte == UInt8(ascii: "\\") {
                plain = false
                scratch.removeAll(keepingCapacity: true)
                index = try decodeEscape(at: index)  // checked as parsed; what it decodes is dropped
            } else if byte < 0x20 {
                throw controlCharacter(at: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                plain = false
                guard let length = scalarLength(at: index) else { throw fail("invalid UTF-8", at: index) }
                index += length
            }
        }
    }

    /// The index of the first byte from `index` on that may need attention in a string (`"`, `\`, below 0x20 or
    /// above 0x7F), looking 8 bytes at a time; at most 7 bytes before `end` when none does before them.
    @inline(__always)
    private func firstByteNeedingAttention(from index: Int) -> Int {
        var index = index
        while index + 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let flags = Self.attentionFlags(word)
            if flags != 0 { return index + flags.trailingZeroBitCount >> 3 }
            index += 8
        }
        return index
    }

    /// The high bit of each byte of `word` (the first in memory lowest) that is `"`, `\`, below 0x20 or above 0x7F.
    /// Bytes after the first flagged one may be flagged wrongly (a borrow), never the first: it is exact.
    @inline(__always)
    private static func attentionFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highs
    }

    /// The slow path for strings with escapes: decodes into `scratch`, copying unescaped runs in bulk.
    private mutating func parseEscapedString(contentStart: Int, firstEscape: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = contentStart
        var index = firstEscape
        while index < end {
            let byte = base[index]
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                if byte < 0x80 {
                    index += 1
                } else {
                    guard let length = scalarLength(at: index) else { throw fail("invalid UTF-8", at: index) }
                    index += length
                }
                continue
            }
            scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index - runStart))
            if byte == UInt8(ascii: "\"") {
                pos = index + 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 { throw controlCharacter(at: index) }
            index = try decodeEscape(at: index)
            runStart = index
        }
        throw unterminatedString()
    }

    /// Decodes the escape whose backslash is at `index` into `scratch`; returns the index after it.
    private mutating func decodeEscape(at index: Int) throws(JSONParseError) -> Int {
        guard index + 1 < end else { throw unterminatedString() }
        let replacement: UInt8
        switch base[index + 1] {
        case UInt8(ascii: "\""): replacement = 0x22
        case UInt8(ascii: "\\"): replacement = 0x5C
        case UInt8(ascii: "/"): replacement = 0x2F
        case UInt8(ascii: "b"): replacement = 0x08
        case UInt8(ascii: "f"): replacement = 0x0C
        case UInt8(ascii: "n"): replacement = 0x0A
        case UInt8(ascii: "r"): replacement = 0x0D
        case UInt8(ascii: "t"): replacement = 0x09
        case UInt8(ascii: "u"):
            return try decodeUnicodeEscape(at: index)
        default:
            throw unexpected(#"one of " \ / b f n r t u after '\'"#, at: index + 1)
        }
        scratch.append(replacement)
        return index + 2
    }

    /// Decodes `\uXXXX` (or a `\uD83D\uDE00` surrogate pair) at `index` into `scratch`.
    private mutating func decodeUnicodeEscape(at index: Int) throws(JSONParseError) -> Int {
        let unit = try hexQuad(at: index + 2)
        var scalar = unit
        var next = index + 6
        switch unit {
        case 0xD800..<0xDC00:
            if next + 1 < end, base[next] == UInt8(ascii: "\\"), base[next + 1] == UInt8(ascii: "u") {
                let low = try hexQuad(at: next + 2)
                if (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + (unit - 0xD800) << 10 + (low - 0xDC00)
                    next += 6
                    break
                }
            }
            throw loneSurrogate(at: index)
        case 0xDC00..<0xE000:
            throw loneSurrogate(at: index)
        default:
            break
        }
        appendUTF8(scalar)
        return next
    }

    /// The value of the four hex digits at `index`.
    private func hexQuad(at index: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for position in index..<index + 4 {
            guard position < end else { throw unexpected("4 hex digits after '\\u'", at: position) }
            let byte = base[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw unexpected("4 hex digits after '\\u'", at: position)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    private func unterminatedString() -> JSONParseError {
        fail("expected '\"' to close the string, found end of input", at: end)
    }

    private func controlCharacter(at index: Int) -> JSONParseError {
        fail("control character \(JSONParserCharacters.name(UInt32(base[index]))) in string must be escaped", at: index)
    }

    private func loneSurrogate(at index: Int) -> JSONParseError {
        let escape = String(decoding: UnsafeBufferPointer(start: base + index, count: 6), as: UTF8.self)
        return fail("lone surrogate \(escape) in string", at: index)
    }

    // MARK: - UTF-8

    /// The length of the well-formed UTF-8 sequence starting at `index` (< `end`), or nil.
    /// Rejects overlong forms, surrogates and code points above U+10FFFF.
    public func scalarLength(at index: Int) -> Int? {
        let lead = base[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return nil
        }
        guard end - index >= length else { return nil }
        let second = base[index + 1]
        guard second >= low, second <= high else { return nil }
        for offset in 2..<length where base[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}

// MARK: - Numbers

/// Exact powers of ten for the fast double path (10^22 is the largest exactly representable).
private let jsonPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

extension JSONParserCore {
    /// Parses the number starting at `pos`.
    ///
    /// An integer literal must fit `Int64`. Other numbers use Clinger's fast path (at most 19 digits with
    /// a significand below 2^53 and a power of ten up to 10^22, one correctly rounded operation) and
    /// otherwise the standard library's correctly rounded `Double(String)`.
    public mutating func parseNumber() throws(JSONParseError) -> Builder.Value {
        let mark = builder.mark(at: pos)
        switch try scanNumber() {
        case .int(let value): return builder.makeInt(value, mark)
        case .double(let value): return builder.makeDouble(value, mark)
        }
    }

    /// A number's value: an integer literal's, or a double's.
    enum Number {
        case int(Int)
        case double(Double)
    }

    /// Reads the number starting at `pos` (see ``parseNumber()``); leaves `pos` after it.
    @inline(__always)
    mutating func scanNumber() throws(JSONParseError) -> Number {
        let start = pos
        var index = pos
        let negative = base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < end, isDigit(base[index]) else { throw unexpected("a digit after '-'", at: index) }

        var significand: UInt64 = 0
        var digitCount = 0
        var fractionDigits = 0
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if index < end, isDigit(base[index]) { throw fail("leading zeros are not allowed in numbers", at: start) }
        } else {
            while index < end, isDigit(base[index]) {
                significand = significand &* 10 &+ UInt64(base[index] &- UInt8(ascii: "0"))
                digitCount += 1
                index += 1
            }
        }
        var isInteger = true
        if index < end, base[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < end, isDigit(base[index]) else { throw unexpected("a digit after the decimal point", at: index) }
            while index < end, isDigit(base[index]) {
                if digitCount > 0 || base[index] != UInt8(ascii: "0") {
                    significand = significand &* 10 &+ UInt64(base[index] &- UInt8(ascii: "0"))
                    digitCount += 1
                }
                fractionDigits += 1
                index += 1
            }
        }
        var exponent = 0
        if index < end, base[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            var exponentNegative = false
            if index < end, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") {
                exponentNegative = base[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < end, isDigit(base[index]) else { throw unexpected("a digit in the exponent", at: index) }
            while index < end, isDigit(base[index]) {
                exponent = min(exponent * 10 + Int(base[index] &- UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        pos = index

        if isInteger {
            // Digits were accumulated with wrapping arithmetic; 19 digits always fit in UInt64.
            let limit: UInt64 = negative ? 1 << 63 : UInt64(Int64.max)
            guard digitCount <= 19, significand <= limit else { throw outOfRange(from: start, to: index) }
            return .int(negative ? Int(truncatingIfNeeded: 0 &- significand) : Int(significand))
        }
        let power = exponent - fractionDigits
        if digitCount <= 19, significand <= 1 << 53, (-22...22).contains(power) {
            var value = Double(significand)
            value = power < 0 ? value / jsonPowersOfTen[-power] : value * jsonPowersOfTen[power]
            return .double(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw outOfRange(from: start, to: index) }
        return .double(value)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    private func outOfRange(from start: Int, to stop: Int) -> JSONParseError {
        let shown = min(stop - start, 40)
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: shown), as: UTF8.self)
        var error = fail("number \(text)\(stop - start > shown ? "…" : "") is out of range", at: start)
        error.outOfRangeNumber = start..<stop
        return error
    }
}
