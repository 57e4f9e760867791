import Foundation

/// Exact ISO 8601 / RFC 3339 timestamps in UTC, without `DateFormatter`.
///
/// `format` writes exactly as many fraction digits as are needed for `parse` to give back the same
/// `Date`, bit for bit (except that `-0.0` comes back as `0.0`, an equal `Date`). Dates use the proleptic
/// Gregorian calendar. Years 0000...9999 are written with four digits, other years in the expanded form
/// with a sign and at least six digits (`-000001-12-31T00:00:00Z` is 2 BC, `+010000-01-01T00:00:00Z`).
///
/// Supported range: dates less than 2^62 seconds (about 146 billion years) from 2001-01-01. Outside it,
/// and for NaN or infinite dates, `format` returns `"+Infinity"`, `"-Infinity"` or `"NaN"`, which `parse` rejects.
///
/// ```swift
/// let text = ISO8601.format(date)            // "2026-11-29T19:13:21.123456789Z"
/// let same = try ISO8601.parse(text)         // same == date, exactly
/// ISO8601.format(date, fractionDigits: 3)    // "2026-11-29T19:13:21.123Z"
/// ```
public enum ISO8601 {
    /// Seconds between 1970-01-01 and 2001-01-01 (the `Date` reference date).
    public static let referenceOffset: Int64 = 978_307_200
    /// Dates must be less than this many seconds from the reference date.
    public static let limit: Double = 0x1p62

    // MARK: - Formatting

    /// Formats `date` in UTC as `2026-11-29T19:13:21Z`, or with the shortest fraction that makes
    /// `parse(format(date)) == date` exactly, e.g. `2026-11-29T19:13:21.123456789Z`.
    ///
    /// ```swift
    /// ISO8601.format(Date(timeIntervalSinceReferenceDate: 0))     // "2001-01-01T00:00:00Z"
    /// ISO8601.format(Date(timeIntervalSinceReferenceDate: 0.1))   // "2001-01-01T00:00:00.1Z"
    /// ```
    public static func format(_ date: Date) -> String {
        guard let (seconds, fraction) = split(date.timeIntervalSinceReferenceDate) else {
            return outOfRangeText(date.timeIntervalSinceReferenceDate)
        }
        var text = formatWholeSeconds(seconds)
        if !fraction.isEmpty {
            text.append(".")
            text.append(String(decoding: fraction, as: UTF8.self))
        }
        text.append("Z")
        return text
    }

    /// Formats `date` in UTC with exactly `fractionDigits` fraction digits (clamped to 0...9), for display.
    /// Extra digits are truncated (the time is never rounded up into the next second).
    ///
    /// ```swift
    /// ISO8601.format(Date(timeIntervalSinceReferenceDate: 1.5), fractionDigits: 3)   // "2001-01-01T00:00:01.500Z"
    /// ISO8601.format(Date(timeIntervalSinceReferenceDate: 1.5), fractionDigits: 0)   // "2001-01-01T00:00:01Z"
    /// ```
    public static func format(_ date: Date, fractionDigits: Int) -> String {
        guard let (seconds, fraction) = split(date.timeIntervalSinceReferenceDate) else {
            return outOfRangeText(date.timeIntervalSinceReferenceDate)
        }
        let count = min(max(fractionDigits, 0), 9)
        var text = formatWholeSeconds(seconds)
        if count > 0 {
            var digits = Array(fraction.prefix(count))
            digits.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count - digits.count))
            text.append(".")
            text.append(String(decoding: digits, as: UTF8.self))
        }
        text.append("Z")
        return text
    }

    /// Whether `date` is in the supported range, so that `parse(format(date))` gives it back; false for dates
    /// 2^62 seconds or more from 2001-01-01 (`format` writes `"+Infinity"` for those), NaN and infinite dates.
    ///
    /// ```swift
    /// ISO8601.canFormat(.distantFuture)                                    // true
    /// ISO8601.canFormat(Date(timeIntervalSinceReferenceDate: 1e300))       // false
    /// ```
    public static func canFormat(_ date: Date) -> Bool {
        let interval = date.timeIntervalSinceReferenceDate
        return interval.isFinite && abs(interval) < limit
    }

    /// `format(date)` for a value about to be stored: throws `EncodingError.invalidValue` for a date
    /// outside the supported range, whose text `parse` would refuse, so it is never written.
    ///
    /// ```swift
    /// try ISO8601.formatForStorage(Date(timeIntervalSinceReferenceDate: 0))   // "2001-01-01T00:00:00Z"
    /// try ISO8601.formatForStorage(Date(timeIntervalSinceReferenceDate: 1e300))   // throws
    /// ```
    public static func formatForStorage(_ date: Date, codingPath: [any CodingKey] = []) throws -> String {
        guard canFormat(date) else {
            throw EncodingError.invalidValue(
                date,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription:
                        "the date \(date.timeIntervalSinceReferenceDate) s after 2001-01-01 is outside the range of ISO-8601 dates (less than 2^62 s from 2001-01-01)"
                ))
        }
        return format(date)
    }

    private static func outOfRangeText(_ interval: Double) -> String {
        interval.isNaN ? "NaN" : interval < 0 ? "-Infinity" : "+Infinity"
    }

    /// Splits `t` into whole seconds `I = floor(t)` and the decimal digits `d` of the fraction, such that
    /// the decimal number `I + 0.d`, correctly rounded, is `t`. Nil outside the supported range.
    public static func split(_ interval: Double) -> (Int64, [UInt8])? {
        guard interval.isFinite, abs(interval) < limit else { return nil }
        let whole = interval.rounded(.down)
        let seconds = Int64(whole)
        if interval > -1, interval < 0 {
            // 1 + t may not be representable; write the complement of -t's digits instead:
            // I + 0.d = -1 + (1 - 0.s) = -0.s, which parses back to t.
            return (seconds, complement(shortestDigits(ofFraction: -interval)))
        }
        let fraction = interval - whole  // exact: the result is a multiple of ulp(t) below 1
        return (seconds, fraction == 0 ? [] : shortestDigits(ofFraction: fraction))
    }

    /// The digits after `0.` of the shortest decimal that round-trips to `fraction` (0 < fraction < 1).
    public static func shortestDigits(ofFraction fraction: Double) -> [UInt8] {
        let text = Array(fraction.description.utf8)  // "0.125", "1e-05" or "1.5e-07"
        var digits: [UInt8]
        if let e = text.firstIndex(of: UInt8(ascii: "e")) {
            let mantissa = text[..<e].filter { $0 != UInt8(ascii: ".") }
            let exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
            digits = Array(repeating: UInt8(ascii: "0"), count: max(-exponent - 1, 0)) + mantissa
        } else if let dot = text.firstIndex(of: UInt8(ascii: ".")) {
            digits = Array(text[(dot + 1)...])
        } else {
            digits = []
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return digits
    }

    /// The digits of `1 - 0.digits` (same count); `digits` must not be all zeros.
    public static func complement(_ digits: [UInt8]) -> [UInt8] {
        var result = digits
        guard let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return digits }
        for index in 0..<last { result[index] = UInt8(ascii: "9") - (digits[index] - UInt8(ascii: "0")) }
        result[last] = UInt8(ascii: "0") + 10 - (digits[last] - UInt8(ascii: "0"))
        return result
    }

    /// `YYYY-MM-DDTHH:MM:SS` for whole seconds since the reference date.
    private static func formatWholeSeconds(_ seconds: Int64) -> String {
        let sinceEpoch = seconds + referenceOffset
        let days = floorDivide(sinceEpoch, 86_400)
        let secondOfDay = sinceEpoch - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text: String
        if (0...9999).contains(year) {
            text = padded(year, 4)
        } else {
            text = (year < 0 ? "-" : "+") + padded(year.magnitude, 6)
        }
        text += "-" + padded(month, 2) + "-" + padded(day, 2)
        text += "T" + padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":" + padded(secondOfDay % 60, 2)
        return text
    }

    private static func padded(_ value: some BinaryInteger, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // MARK: - Civil calendar (Howard Hinnant's algorithms, proleptic Gregorian)

    public static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    /// Days since 1970-01-01 of the given date.
    public static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    public static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
