import CLibPQ
import Foundation
import Prefs
import PrefsJSON

/// Rows as values: keys in the spelling they are stored under, a row's type and JSON text as a ``StoredValue``, and
/// the array literals the statements take.
extension PostgreSQLBackend {
    /// The spelling a key is stored under: Unicode NFC, as the SQLite store writes it.
    static func canonicalName(_ key: String) -> String {
        // The bytes in one loop where the string holds them contiguously (a native string: every key but a bridged one).
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } } ?? key.utf8.allSatisfy { $0 < 0x80 }
        return ascii ? key : key.precomposedStringWithCanonicalMapping
    }

    /// A row's value from its type name and JSON text, as every read made it before reading libpq's bytes
    /// (``storedValue(_:row:typeColumn:valueColumn:)``), which must read what this reads.
    package static func storedValue(type typeName: String, text: String) -> StoredValue {
        let type = ValueType(typeName) ?? .other(typeName)
        if type == .json { return StoredValue(type: type, uncheckedJSONText: text) }  // a Codable's text, decoded once when read
        // Unparseable text is kept as a string, and reading it reports a mismatch (as the SQLite store does).
        let json = (try? JSON.parse(text)) ?? .string(text)
        return StoredValue(type: type, json: json)
    }

    static func declaration(type typeName: String?, initial: String?) -> KeyDeclaration? {
        guard let typeName, let type = ValueType(typeName) else { return nil }
        return KeyDeclaration(type: type, initial: initial.flatMap { try? JSON.parse($0) })
    }

    /// A PostgreSQL array literal of text elements: `{"a","b\"c",NULL}` (nil is NULL).
    static func arrayLiteral(_ elements: [String?]) -> String {
        var result = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { result += "," }
            guard let element else {
                result += "NULL"
                continue
            }
            result += "\""
            if element.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                for character in element.unicodeScalars {
                    if character == "\"" || character == "\\" { result += "\\" }
                    result.unicodeScalars.append(character)
                }
            } else {
                result += element  // nothing to escape: appended whole
            }
            result += "\""
        }
        return result + "}"
    }

    /// The value in `valueColumn` of `row` (not NULL), of the type named in `typeColumn` (NULL: none), read from
    /// libpq's bytes: what ``storedValue(type:text:)`` makes of their text, with no `String` made of a scalar type's
    /// name nor of an `int`'s or a `bool`'s value (a read of one key spent a tenth of its instructions making and
    /// parsing them).
    static func storedValue(_ result: OpaquePointer, row: Int32, typeColumn: Int32, valueColumn: Int32) -> StoredValue {
        func bytes(_ column: Int32) -> UnsafeRawBufferPointer {
            guard PQgetisnull(result, row, column) == 0, let start = PQgetvalue(result, row, column) else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: start, count: Int(PQgetlength(result, row, column)))
        }
        let (typeName, text) = (bytes(typeColumn), bytes(valueColumn))
        switch ValueType.scalar(utf8: typeName) {
        case .int?:
            if let json = canonicalInteger(text) { return StoredValue(type: .int, json: json) }
        case .bool?:
            if text.elementsEqual("true".utf8) { return StoredValue(type: .bool, json: .bool(true)) }
            if text.elementsEqual("false".utf8) { return StoredValue(type: .bool, json: .bool(false)) }
        default:
            break
        }
        return storedValue(type: String(decoding: typeName, as: UTF8.self), text: String(decoding: text, as: UTF8.self))
    }

    /// `text` as the JSON integer it spells as JSON writes integers (an optional minus, then digits with no leading
    /// zero), within 64 bits: what `JSON.parse` reads it as. Nil for anything else, which goes through the parser.
    private static func canonicalInteger(_ text: UnsafeRawBufferPointer) -> JSON? {
        let digits = text.first == UInt8(ascii: "-") ? UnsafeRawBufferPointer(rebasing: text.dropFirst()) : text
        guard let first = digits.first, first != UInt8(ascii: "0") || digits.count == 1, let number = WrittenRows.integer(text) else { return nil }
        return .int(Int(number))
    }
}
