import BenchSQLite
import Foundation

// The floor of the held-out launch probe (issue 44): sqlite3 reading the same 20 rows as the store, each value made
// typed the way a careful engineer writing against sqlite3's C API would, without Foundation's decoders: an integer or
// a Bool from sqlite3_column_int64, a Double from sqlite3_column_double, a String from the text's bytes, a Date from
// its ISO-8601 text by fixed offsets and the civil-calendar arithmetic, and the JSON of the arrays and of the struct
// scanned once, in place, from sqlite3's buffer (numbers through strtod / strtoll, strings sliced when they hold no
// escape).

extension LaunchStore {
    /// The 20 values read with sqlite3 and converted without Foundation's JSONDecoder or date parsing.
    static func readTyped(path: String, indices: [Int]) throws -> [Value] {
        try rawRows(path: path, indices: indices) { statement, index in
            let key = "k\(index)"
            switch value(index) {
            case .bool: return .bool(sqlite3_column_int64(statement, 1) != 0)
            case .int: return .int(Int(sqlite3_column_int64(statement, 1)))
            case .double: return .double(sqlite3_column_double(statement, 1))
            case .string: return .string(try RawText(statement, key: key).whole)
            case .date: return .date(try RawText(statement, key: key).date())
            case .strings:
                var text = try RawText(statement, key: key)
                return .strings(try text.document { try $0.array { try $0.string() } })
            case .ints:
                var text = try RawText(statement, key: key)
                return .ints(try text.document { try $0.array { try $0.int() } })
            case .window:
                var text = try RawText(statement, key: key)
                return .window(try text.document { try $0.window() })
            }
        }
    }
}

/// The bytes of the current row's text column, scanned in place (sqlite3's buffer, valid until the next step or
/// reset, and NUL-terminated as strtod needs).
struct RawText {
    let base: UnsafePointer<UInt8>
    let count: Int
    let key: String
    var at = 0

    init(_ statement: OpaquePointer, key: String) throws {
        guard let text = sqlite3_column_text(statement, 1) else { throw BenchError("raw sqlite3: \(key) holds no text") }
        base = text
        count = Int(sqlite3_column_bytes(statement, 1))
        self.key = key
    }

    var whole: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    func failure(_ expected: String) -> BenchError { BenchError("raw sqlite3: \(key) at byte \(at): expected \(expected)") }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (what the store writes) as a Date.
    func date() throws -> Date {
        func digits(_ offset: Int, _ length: Int) throws -> Int64 {
            var value: Int64 = 0
            for position in offset..<offset + length {
                let digit = position < count ? Int64(base[position]) - 48 : -1
                guard (0...9).contains(digit) else { throw failure("an ISO-8601 date, found \(whole)") }
                value = value * 10 + digit
            }
            return value
        }
        let (year, month, day) = (try digits(0, 4), try digits(5, 2), try digits(8, 2))
        let (hour, minute, second) = (try digits(11, 2), try digits(14, 2), try digits(17, 2))
        var fraction = 0.0
        if count > 20, base[19] == UInt8(ascii: ".") {
            fraction = strtod(UnsafeRawPointer(base + 19).assumingMemoryBound(to: CChar.self), nil)
        }
        guard count >= 20, base[count - 1] == UInt8(ascii: "Z") else { throw failure("an ISO-8601 date in UTC, found \(whole)") }
        // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - 978_307_200
        return Date(timeIntervalSinceReferenceDate: Double(seconds) + fraction)
    }

    // MARK: JSON, scanned once

    /// The one JSON value `read` scans, with nothing but white space after it.
    mutating func document<T>(_ read: (inout RawText) throws -> T) throws -> T {
        let value = try read(&self)
        skipSpace()
        guard at == count else { throw failure("the end of the text") }
        return value
    }

    mutating func skipSpace() {
        while at < count, base[at] == 0x20 || base[at] == 0x0A || base[at] == 0x0D || base[at] == 0x09 { at += 1 }
    }

    /// Whether the next byte (after white space) is `byte`; consumes it if so.
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard at < count, base[at] == byte else { return false }
        at += 1
        return true
    }

    mutating func expect(_ byte: UInt8) throws {
        guard take(byte) else { throw failure("\"\(Character(Unicode.Scalar(byte)))\"") }
    }

    mutating func array<T>(_ element: (inout RawText) throws -> T) throws -> [T] {
        try expect(UInt8(ascii: "["))
        var result: [T] = []
        if take(UInt8(ascii: "]")) { return result }
        repeat { result.append(try element(&self)) } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return result
    }

    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = at
        while at < count, base[at] != UInt8(ascii: "\""), base[at] != UInt8(ascii: "\\") { at += 1 }
        guard at < count else { throw failure("a closing quote") }
        if base[at] == UInt8(ascii: "\"") {
            defer { at += 1 }
            return String(decoding: UnsafeBufferPointer(start: base + start, count: at - start), as: UTF8.self)
        }
        var bytes = Array(UnsafeBufferPointer(start: base + start, count: at - start))
        while at < count {
            let byte = base[at]
            at += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: bytes, as: UTF8.self) }
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard at < count else { break }
            let escape = base[at]
            at += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), at + 1 < count, base[at] == UInt8(ascii: "\\"), base[at + 1] == UInt8(ascii: "u") {
                    at += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("a low surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                bytes.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: throw failure("an escape")
            }
        }
        throw failure("a closing quote")
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard at < count, let digit = Character(Unicode.Scalar(base[at])).hexDigitValue else { throw failure("4 hex digits") }
            value = value * 16 + UInt32(digit)
            at += 1
        }
        return value
    }

    /// The C string at the cursor, for strtod and strtoll (sqlite3's text ends with a NUL).
    private var cursor: UnsafePointer<CChar> { UnsafeRawPointer(base + at).assumingMemoryBound(to: CChar.self) }

    mutating func double() throws -> Double {
        skipSpace()
        let start = cursor
        var end: UnsafeMutablePointer<CChar>?
        let value = strtod(start, &end)
        guard let end, UnsafePointer(end) > start, value.isFinite else { throw failure("a number") }
        at += UnsafePointer(end) - start
        return value
    }

    mutating func int() throws -> Int {
        skipSpace()
        let start = cursor
        var end: UnsafeMutablePointer<CChar>?
        let value = strtoll(start, &end, 10)
        guard let end, UnsafePointer(end) > start else { throw failure("an integer") }
        at += UnsafePointer(end) - start
        guard at == count || !".eE".utf8.contains(base[at]) else { throw failure("an integer") }
        return Int(value)
    }

    mutating func bool() throws -> Bool {
        skipSpace()
        for (word, value) in [("true", true), ("false", false)] where count - at >= word.utf8.count {
            if word.utf8.elementsEqual(UnsafeBufferPointer(start: base + at, count: word.utf8.count)) {
                at += word.utf8.count
                return value
            }
        }
        throw failure("true or false")
    }

    /// The struct's JSON object, its members in any order, each required.
    mutating func window() throws -> LaunchWindow {
        try expect(UInt8(ascii: "{"))
        var title: String?, pinned: Bool?, tabs: [String]?
        var x: Double?, y: Double?, width: Int?, height: Int?
        if !take(UInt8(ascii: "}")) {
            repeat {
                let name = try string()
                try expect(UInt8(ascii: ":"))
                switch name {
                case "title": title = try string()
                case "x": x = try double()
                case "y": y = try double()
                case "width": width = try int()
                case "height": height = try int()
                case "pinned": pinned = try bool()
                case "tabs": tabs = try array { try $0.string() }
                default: throw failure("a member of LaunchWindow, found \(name)")
                }
            } while take(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
        }
        guard let title, let x, let y, let width, let height, let pinned, let tabs else { throw failure("every member of LaunchWindow") }
        return LaunchWindow(title: title, x: x, y: y, width: width, height: height, pinned: pinned, tabs: tabs)
    }
}
