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
        let utf8 = name.utf8
        switch utf8.count {
        case 3:
            if utf8.elementsEqual("int".utf8) { return .int }
            if utf8.elementsEqual("url".utf8) { return .url }
        case 4:
            if utf8.elementsEqual("bool".utf8) { return .bool }
            if utf8.elementsEqual("json".utf8) { return .json }
            if utf8.elementsEqual("date".utf8) { return .date }
            if utf8.elementsEqual("data".utf8) { return .data }
            if utf8.elementsEqual("uint".utf8) { return .uint }
        case 6:
            if utf8.elementsEqual("string".utf8) { return .string }
            if utf8.elementsEqual("double".utf8) { return .double }
        default: break
        }
        return nil
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
