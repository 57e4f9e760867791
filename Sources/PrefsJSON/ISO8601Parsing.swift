import Foundation

// MARK: - Errors

extension ISO8601 {
    /// Why a timestamp could not be parsed.
    ///
    /// ```swift
    /// do { _ = try ISO8601.parse("2026-13-01T00:00:00Z") }
    /// catch { print(error) }   // month 13 is out of range
    /// ```
    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A valid date and time without `Z` or an offset; its instant is unknown.
        case missingTimeZone
        /// Anything else; `reason` says what is wrong, e.g. `month 13 is out of range`.
        case invalid(reason: String)

        /// A sentence-fragment explanation, e.g. `day 30 is out of range for 2023-02`.
        public var description: String {
            switch self {
            case .missingTimeZone: "date-time has no time zone designator (expected 'Z' or an offset such as +01:00)"
            case .invalid(let reason): reason
            }
        }
    }
}

// MARK: - Parsing

extension ISO8601 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)` into the nearest `Date` (exact for text from `format`).
    ///
    /// Also accepts `t` and `z` in lowercase, a space instead of `T`, any number of fraction digits, and
    /// expanded years (`+010000`, `-000001`). A date-time without a zone designator throws
    /// `.missingTimeZone`; `YYYY-MM-DD` alone is midnight UTC when `allowDateOnly` is true.
    /// Leap seconds (`:60`) are rejected.
    ///
    /// ```swift
    /// try ISO8601.parse("2026-11-29T20:13:21+01:00")            // 2026-11-29T19:13:21Z
    /// try ISO8601.parse("2026-11-29", allowDateOnly: true)      // 2026-11-29T00:00:00Z
    /// try ISO8601.parse("2026-11-29T19:13:21")                  // throws .missingTimeZone
    /// ```
    public static func parse(_ text: some StringProtocol, allowDateOnly: Bool = false) throws(ParseError) -> Date {
        var scanner = ISO8601Scanner(Array(text.utf8))
        return try scanner.parse(allowDateOnly: allowDateOnly)
    }
}

/// Reads a timestamp left to right; every failure says what was expected and what was found.
public struct ISO8601Scanner {
    private let bytes: [UInt8]
    private var index = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public mutating func parse(allowDateOnly: Bool) throws(ISO8601.ParseError) -> Date {
        // Date
        var year: Int64
        if let sign = peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            index += 1
            let digitCount = countDigits()
            guard (4...12).contains(digitCount) else { throw failure("4 to 12 digits for an expanded year") }
            year = number(digitCount)
            if sign == UInt8(ascii: "-") { year = -year }
        } else {
            year = try digits(4, "a 4-digit year")
        }
        try expect(UInt8(ascii: "-"), "'-' after the year")
        let month = try digits(2, "a 2-digit month")
        guard (1...12).contains(month) else { throw invalid("month \(month) is out of range") }
        try expect(UInt8(ascii: "-"), "'-' after the month")
        let day = try digits(2, "a 2-digit day")
        guard day >= 1, day <= ISO8601.daysInMonth(month, year: year) else {
            throw invalid("day \(day) is out of range for \(year)-\(month < 10 ? "0" : "")\(month)")
        }
        let days = ISO8601.days(fromCivil: year, month, day)

        if index == bytes.count {
            guard allowDateOnly else { throw failure("'T' and a time after the date") }
            return try date(days: days, secondOfDay: 0, offset: 0, fraction: [])
        }
        guard let separator = peek, separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " ") else {
            throw failure("'T' after the date")
        }
        index += 1

        // Time
        let hour = try digits(2, "a 2-digit hour")
        guard hour <= 23 else { throw invalid("hour \(hour) is out of range") }
        try expect(UInt8(ascii: ":"), "':' after the hour")
        let minute = try digits(2, "2-digit minutes")
        guard minute <= 59 else { throw invalid("minute \(minute) is out of range") }
        try expect(UInt8(ascii: ":"), "':' after the minutes")
        let second = try digits(2, "2-digit seconds")
        guard second <= 59 else {
            throw invalid("second \(second) is out of range" + (second == 60 ? " (leap seconds are not supported)" : ""))
        }
        var fraction: ArraySlice<UInt8> = []
        if peek == UInt8(ascii: ".") {
            index += 1
            let count = countDigits()
            guard count > 0 else { throw failure("a digit after '.'") }
            fraction = bytes[index..<index + count]
            index += count
        }

        // Zone
        var offset: Int64 = 0
        switch peek {
        case nil:
            throw .missingTimeZone
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let negative = peek == UInt8(ascii: "-")
            index += 1
            let offsetHours = try digits(2, "a 2-digit offset hour", moreAllowed: true)
            guard offsetHours <= 23 else { throw invalid("time zone offset hour \(offsetHours) is out of range") }
            if peek == UInt8(ascii: ":") { index += 1 }
            let offsetMinutes = try digits(2, "2-digit offset minutes")
            guard offsetMinutes <= 59 else { throw invalid("time zone offset minute \(offsetMinutes) is out of range") }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (negative ? -1 : 1)
        default:
            throw failure(fraction.isEmpty ? "'.', 'Z' or an offset after the seconds" : "'Z' or an offset after the fraction")
        }
        guard index == bytes.count else { throw failure("end of text after the time zone") }
        return try date(days: days, secondOfDay: hour * 3600 + minute * 60 + second, offset: offset, fraction: fraction)
    }

    /// The instant `days` + `secondOfDay` − `offset` + `0.fraction`, correctly rounded from the exact decimal.
    private func date(days: Int64, secondOfDay: Int64, offset: Int64, fraction: ArraySlice<UInt8>) throws(ISO8601.ParseError) -> Date {
        // Bounding |days| a little above 2^62 seconds keeps every step below within Int64;
        // the exact range check is on the result.
        guard days.magnitude < UInt64(ISO8601.limit) / 86_400 + 20_000 else { throw outOfRange() }
        let seconds = days * 86_400 + secondOfDay - offset - ISO8601.referenceOffset
        var digits = Array(fraction)
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let interval: Double
        if digits.isEmpty {
            interval = Double(seconds)
        } else if seconds >= 0 {
            interval = Double("\(seconds).\(String(decoding: digits, as: UTF8.self))") ?? .nan
        } else {
            // seconds + 0.d = -((-seconds - 1) + (1 - 0.d))
            let complement = String(decoding: ISO8601.complement(digits), as: UTF8.self)
            interval = Double("-\(-seconds - 1).\(complement)") ?? .nan
        }
        guard interval.isFinite, abs(interval) < ISO8601.limit else { throw outOfRange() }
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    // MARK: - Scanning helpers

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func countDigits() -> Int {
        var end = index
        while end < bytes.count, bytes[end] &- UInt8(ascii: "0") < 10 { end += 1 }
        return end - index
    }

    /// The value of the next `count` digits (which the caller has counted), consuming them.
    private mutating func number(_ count: Int) -> Int64 {
        var value: Int64 = 0
        for _ in 0..<count {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        return value
    }

    /// Exactly `count` digits, not followed by another digit unless `moreAllowed`.
    private mutating func digits(_ count: Int, _ what: String, moreAllowed: Bool = false) throws(ISO8601.ParseError) -> Int64 {
        let available = countDigits()
        guard available == count || (moreAllowed && available > count) else {
            if available > count { throw invalid("expected \(what), found \(available) digits") }
            index += available
            throw failure(what)
        }
        return number(count)
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(ISO8601.ParseError) {
        guard peek == byte else { throw failure(what) }
        index += 1
    }

    /// `expected <what>, found <the character at index>`.
    private func failure(_ what: String) -> ISO8601.ParseError {
        guard index < bytes.count else { return invalid("expected \(what), found end of text") }
        var end = index + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let found = String(decoding: bytes[index..<end], as: UTF8.self)
        if let scalar = found.unicodeScalars.first, found.unicodeScalars.count == 1, JSONParserCharacters.isPrintable(scalar) {
            return invalid("expected \(what), found '\(found)'")
        }
        return invalid("expected \(what), found \(found.unicodeScalars.first.map { JSONParserCharacters.name($0.value) } ?? "invalid text")")
    }

    private func invalid(_ reason: String) -> ISO8601.ParseError {
        .invalid(reason: reason)
    }

    private func outOfRange() -> ISO8601.ParseError {
        invalid("date is out of range (more than 2^62 seconds from 2001-01-01)")
    }
}
