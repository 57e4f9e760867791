import Foundation

/// The type of a stored value, as recorded beside it in every backend.
///
/// Its text form is what a reader sees in the JSON file, in the `sqlite3` shell and in `prefs-tool list`:
/// `bool`, `int`, `double`, `string`, `date`, `data`, `url`, `json` (any `Codable` value),
/// `[int]` for arrays and `[string: date]` for string-keyed dictionaries.
///
/// ```swift
/// ValueType("[string: date]")   // .dictionary(.date)
/// ValueType.array(.int).description   // "[int]"
/// ```
public indirect enum ValueType: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    case bool, int, double, string, date, data, url
    /// A `Codable` value stored as its JSON document.
    case json
    case array(ValueType)
    case dictionary(ValueType)
    /// A type this version of Prefs does not know (written by a newer release or by hand). Kept as found.
    case other(String)

    public var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .url: "url"
        case .json: "json"
        case .array(let element): "[\(element)]"
        case .dictionary(let value): "[string: \(value)]"
        case .other(let name): name
        }
    }

    /// Parses the text form. Unknown names become `.other`; text that is not a type name at all is nil.
    public init?(_ description: String) {
        switch description {  // the exact names, without Foundation's trimming (this runs for every row read)
        case "bool": self = .bool; return
        case "int": self = .int; return
        case "double": self = .double; return
        case "string": self = .string; return
        case "date": self = .date; return
        case "data": self = .data; return
        case "url": self = .url; return
        case "json": self = .json; return
        default: break
        }
        let text = description.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        switch text {
        case "bool": self = .bool
        case "int": self = .int
        case "double": self = .double
        case "string": self = .string
        case "date": self = .date
        case "data": self = .data
        case "url": self = .url
        case "json": self = .json
        default:
            if text.hasPrefix("["), text.hasSuffix("]") {
                let inner = String(text.dropFirst().dropLast())
                if let colon = inner.firstIndex(of: ":") {
                    guard inner[..<colon].trimmingCharacters(in: .whitespaces) == "string",
                          let value = ValueType(String(inner[inner.index(after: colon)...])) else { return nil }
                    self = .dictionary(value)
                } else {
                    guard let element = ValueType(inner) else { return nil }
                    self = .array(element)
                }
            } else if text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }) {
                self = .other(text)
            } else {
                return nil
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
        case (.double, .int): true
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
