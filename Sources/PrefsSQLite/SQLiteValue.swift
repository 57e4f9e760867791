import Foundation

/// A value of one of SQLite's five storage classes (https://www.sqlite.org/datatype3.html).
///
/// Round-trip rules, all covered by tests:
/// - `.text` is bound as UTF-8 with its byte count, so strings containing NUL characters survive.
///   Invalid UTF-8 written by other programs is read back with U+FFFD replacement characters.
/// - `.blob(Data())` is stored as a zero-length BLOB, distinct from `.null`.
/// - `.real(.nan)` is stored as NULL: SQLite has no NaN (https://www.sqlite.org/floatingpoint.html)
///   and `sqlite3_bind_double` turns it into NULL, so it reads back as `.null`.
///   Infinities, subnormals and `-0.0` (read back as `0.0`, which compares equal) survive.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension SQLiteValue {
    /// `true` for `.null`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer payload, or `nil` for any other storage class.
    package var int64Value: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The floating-point payload; an `.integer` is converted, any other storage class gives `nil`.
    package var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The text payload, or `nil` for any other storage class.
    package var stringValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The blob payload, or `nil` for any other storage class.
    package var dataValue: Data? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// SQLite's name for the storage class, as returned by the SQL function `typeof()`.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }
}

extension SQLiteValue: CustomStringConvertible {
    /// A short rendering for diagnostics: blobs show their size, never their bytes.
    package var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): String(reflecting: value)
        case .blob(let value): "<\(value.count) bytes>"
        }
    }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(floatLiteral value: Double) { self = .real(value) }
    package init(stringLiteral value: String) { self = .text(value) }
}
