import Foundation
internal import PrefsJSON

/// The type of a stored value, as recorded beside it in every backend.
///
/// Its text form is what a reader sees in the JSON file, in the `sqlite3` shell and in `prefs-tool list`:
/// `bool`, `int`, `uint` (`UInt`, `UInt64`: a JSON integer, or a decimal string above `Int.max`), `double`, `string`,
/// `date`, `data`, `url`, `json` (any `Codable` value),
/// `[int]` for arrays and `[string: date]` for string-keyed dictionaries.
///
/// ```swift
/// ValueType("[string: date]")   // .dictionary(.date)
/// ValueType.array(.int).description   // "[int]"
/// ```
public indirect enum ValueType: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    case bool, int, uint, double, string, date, data, url
    /// A `Codable` value stored as its JSON document.
    case json
    case array(ValueType)
    case dictionary(ValueType)
    /// A type this version of Prefs does not know (written by a newer release or by hand). Kept as found.
    case other(String)

    public var description: String {
        switch self {
        case .array(let element): "[\(element)]"
        case .dictionary(let value): "[string: \(value)]"
        case .other(let name): name
        case .bool, .int, .uint, .double, .string, .date, .data, .url, .json: staticName?.description ?? ""
        }
    }

    /// A scalar type's name, as ``description`` gives it, as a static string (which SQLite binds without a copy);
    /// nil for arrays, dictionaries and other types. The one place the scalar names are spelled.
    var staticName: StaticString? {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .uint: "uint"
        case .double: "double"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .url: "url"
        case .json: "json"
        case .array, .dictionary, .other: nil
        }
    }

    /// The most levels of `[…]` and `[string: …]` a type name may nest: ``Prefs/maximumValueDepth`` and a little room.
    /// A deeper name (written by hand or by another program) is not a type name; nothing walks it recursively.
    static let maximumDescriptionDepth = Prefs.maximumValueDepth + 2

    /// The longest type name, in UTF-8 bytes: room for ``maximumDescriptionDepth`` levels of `[string: …]`.
    static let maximumDescriptionBytes = 2048

    /// Parses the text form. Unknown names become `.other`; text that is not a type name at all is nil, and so is
    /// text longer than 2,048 bytes or nesting `[…]` more than 130 levels.
    public init?(_ description: String) {
        guard case .type(let type) = Self.parse(description) else { return nil }
        self = type
    }

    /// Why `description` is refused for being too long or too deeply nested; nil when it is within the limits
    /// (a type name, or text that is not one for another reason).
    static func limitProblem(_ description: String) -> String? {
        switch parse(description) {
        case .tooLong: "a type name longer than \(maximumDescriptionBytes) bytes"
        case .tooDeep: "a type name nested more than \(maximumDescriptionDepth) levels deep"
        case .type, .invalid: nil
        }
    }

    private enum Parsed {
        case type(ValueType)
        case invalid, tooLong, tooDeep
    }

    /// One pass from the outside in: each `[…]` or `[string: …]` is noted and stripped, then the innermost name is
    /// read and the notes applied from the inside out. No recursion, and the work is bounded by the limits.
    private static func parse(_ description: String) -> Parsed {
        if let type = scalar(named: description[...]) { return .type(type) }  // the exact names, without trimming (this runs for every row read)
        if let element = scalarArrayElement(description) { return .type(.array(element)) }  // `[string]`, `[int]`: as the stores write them
        guard description.utf8.count <= maximumDescriptionBytes else { return .tooLong }
        var isDictionary: [Bool] = []  // outermost first
        var text = trimmed(description[...])
        var type: ValueType
        while true {
            guard !text.isEmpty else { return .invalid }
            if let scalar = scalar(named: text) {
                type = scalar
                break
            }
            guard text.hasPrefix("["), text.hasSuffix("]") else {
                guard text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }) else { return .invalid }
                type = .other(String(text))
                break
            }
            guard isDictionary.count < maximumDescriptionDepth else { return .tooDeep }
            let inner = text.dropFirst().dropLast()
            // A dictionary when the text before the first colon is `string`; `[[string: int]]` is an array of them.
            if let colon = inner.firstIndex(of: ":"), trimmed(inner[..<colon]) == "string" {
                isDictionary.append(true)
                text = trimmed(inner[inner.index(after: colon)...])
            } else {
                isDictionary.append(false)
                text = trimmed(inner)
            }
        }
        for dictionary in isDictionary.reversed() {
            type = dictionary ? .dictionary(type) : .array(type)
        }
        return .type(type)
    }

    /// The element type of `[NAME]` spelled exactly (no spaces), NAME a scalar's: what the loop below reads it as, without
    /// its trimming and arrays. Cut on the brackets' bytes, so that `[\u{301}int]` (a bracket with a combining accent) is
    /// not taken for `[int]`.
    private static func scalarArrayElement(_ description: String) -> ValueType? {
        let utf8 = description.utf8
        guard utf8.count >= 5, utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]") else { return nil }
        return scalar(named: description[utf8.index(after: utf8.startIndex)..<utf8.index(before: utf8.endIndex)])
    }

    /// The scalar type `name` spells exactly, compared on its UTF-8 bytes: this runs for every row and entry a store
    /// reads, and a `switch` over `Substring` patterns builds a `String` for each case it tries.
    private static func scalar(named name: Substring) -> ValueType? {
        if let found = name.utf8.withContiguousStorageIfAvailable({ scalar(utf8: UnsafeRawBufferPointer($0)) }) { return found }
        var copy = String(name)  // not contiguous (a bridged string): its bytes in a string of its own
        return copy.withUTF8 { scalar(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// The scalar type whose name is exactly `bytes` (as the stores write it: `int`, `string`, …), or nil. The bytes
    /// are read as one little-endian integer and compared with each name's: a database row's type column is looked
    /// up without a `String` made of it (some 270 instructions a comparison through `UTF8View`s, for every row read).
    ///
    /// ```swift
    /// "int".utf8.withContiguousStorageIfAvailable { ValueType.scalar(utf8: UnsafeRawBufferPointer($0)) }  // .int
    /// ```
    package static func scalar(utf8 bytes: UnsafeRawBufferPointer) -> ValueType? {
        guard bytes.count == 3 || bytes.count == 4 || bytes.count == 6 else { return nil }
        var word: UInt64 = 0
        for (index, byte) in bytes.enumerated() { word |= UInt64(byte) &<< UInt64(8 &* index) }
        switch (bytes.count, word) {
        case (3, 0x74_6E69): return .int  // "int", its first byte lowest
        case (3, 0x6C_7275): return .url
        case (4, 0x6C6F_6F62): return .bool
        case (4, 0x6E6F_736A): return .json
        case (4, 0x6574_6164): return .date
        case (4, 0x6174_6164): return .data
        case (4, 0x746E_6975): return .uint
        case (6, 0x676E_6972_7473): return .string
        case (6, 0x656C_6275_6F64): return .double
        default: return nil
        }
    }

    /// `text` without the spaces and tabs around it, as `trimmingCharacters(in: .whitespaces)` but without a copy.
    /// ASCII is decided on its byte (a space or a tab); other scalars by `CharacterSet.whitespaces`.
    private static func trimmed(_ text: Substring) -> Substring {
        func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII ? scalar == " " || scalar == "\t" : CharacterSet.whitespaces.contains(scalar)
        }
        let scalars = text.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isWhitespace(scalars[start]) { scalars.formIndex(after: &start) }
        while start < end, isWhitespace(scalars[scalars.index(before: end)]) { scalars.formIndex(before: &end) }
        return Substring(scalars[start..<end])
    }

    /// Whether the type nests `[…]` and `[string: …]` more than `limit` levels. Iterative, so any type built in code is safe.
    func nests(deeperThan limit: Int) -> Bool {
        var type = self
        var depth = 0
        while true {
            switch type {
            case .array(let inner), .dictionary(let inner):
                depth += 1
                if depth > limit { return true }
                type = inner
            default:
                return false
            }
        }
    }

    /// Whether a value stored as `stored` may be decoded as `self` without losing meaning.
    ///
    /// Exact matches always; an `int` read as `double`; a `string` read as `date`, `url` or `data` (hand-edited
    /// files write them as plain strings); anything read as `json` (a `Codable` decides), and `json` read as
    /// anything (its content decides). A `string` is never read as a number: that is a type mismatch.
    func canDecode(from stored: ValueType) -> Bool {
        switch (self, stored) {
        case _ where self == stored: true
        case (_, .json), (.json, _): true
        case (.double, .int), (.double, .uint), (.int, .uint), (.uint, .int): true  // the value decides whether it fits
        case (.date, .string), (.url, .string), (.data, .string): true
        case (.array(let mine), .array(let theirs)): mine.canDecode(from: theirs)
        case (.dictionary(let mine), .dictionary(let theirs)): mine.canDecode(from: theirs)
        default: false
        }
    }

    /// The type a hand-written JSON value implies when it carries no type tag.
    static func inferred(from json: JSON) -> ValueType {
        switch json {
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .null, .array, .object: .json
        }
    }
}
