import Foundation
internal import PrefsJSON

/// The argument domain: the `-NAME VALUE` pairs of a process's arguments, which a store reads above its stored values,
/// for that process only, and never writes (UserDefaults' `NSArgumentDomain`).
///
/// Paired and read as swift-corelibs-foundation's `UserDefaults` does (Apple's reads them alike):
/// - `-NAME` followed by an argument that does not start with `-` gives `NAME` that value, and both are used up;
///   `-NAME` followed by another `-…`, or by nothing, is no pair (so `-count -1` sets nothing), nor is `-` alone;
///   `--NAME VALUE` names `-NAME`. The last pair of a name wins.
/// - The value, trimmed of white space, is a string (`5`, `YES` and `hello` are all strings: a typed key reads them
///   by its type's rule, see ``converted(_:to:)``), unless it starts with `(`, `{`, `<`, `"` or `[` and is an OpenStep
///   property list: `"a quoted string"`, `(a, b)`, `{k = v;}`, `<0fbd77>` data. A text that does not parse as one is
///   the string it is, as UserDefaults keeps it. XML property lists are strings here too.
///
/// Values are kept in stored form, as `PropertyListValue` (PrefsUserDefaults) maps the same property list: a string is
/// `string`, data `data`, a collection of one element type `T` `[T]` or `[string: T]`, any other collection `json`
/// with data tagged `{"$data": …}`.
package enum LaunchArguments {
    /// The domain of `arguments`, the program's name left out: the values by name.
    package static func domain(_ arguments: [String]) -> [String: StoredValue] {
        var domain: [String: StoredValue] = [:]
        var index = 0
        while index + 1 < arguments.count {  // pairs only: the last argument starts none
            let current = arguments[index]
            let next = arguments[index + 1]
            if current.hasPrefix("-"), !next.hasPrefix("-") {
                let name = String(current.dropFirst())
                if !name.isEmpty { domain[name] = value(next) }
                index += 1  // the value is used up with its name
            }
            index += 1
        }
        return domain
    }

    /// The value an argument gives: an OpenStep property list when it starts like one and is one, else the string.
    package static func value(_ argument: String) -> StoredValue {
        let text = argument.trimmedOfWhitespaceAndNewlines()
        if let first = text.unicodeScalars.first, "({<\"[".unicodeScalars.contains(first) {
            do {
                return try OpenStepPropertyList.parse(text)
            } catch {
                // Not a property list: the text is the value, as UserDefaults keeps it (nothing is lost).
            }
        }
        return StoredValue(type: .string, json: .string(text))
    }

    // MARK: - Typed reads

    /// An argument's value as a key of `type` reads it, or why it cannot be read so (the key then reads as without it).
    ///
    /// A string is read by the type's rule: `bool` takes `YES`, `NO`, `true`, `false`, `1` or `0` (any case); `int`,
    /// `uint` and `double` a number as Swift writes one; `date` ISO-8601 (`2026-05-01` or with a time); `data` base64;
    /// `url` an absolute URL; `string` the text as it is; a collection or a `json` value (a `Codable`) JSON text (a
    /// `json` value that is no JSON is the JSON string: `-theme dark` for a `Codable` enum). An array or a dictionary
    /// converts element by element (`(1, 2)` for `[int]`). Any other value is given as it is, for the key's decoding to
    /// judge (a number set with `setVolatileDomain(_:forName:)`).
    package static func converted(_ value: StoredValue, to type: ValueType) throws(ValueMismatch) -> StoredValue {
        if value.type == .string || value.type == .json, case .string(let text) = value.json {
            do {
                return try parsed(text, as: type)
            } catch {
                throw ValueMismatch(stored: value, expected: type, reason: error.reason)
            }
        }
        switch (type, value.json) {
        case (.array(let element), .array(let items)):
            let itemType = Self.elementType(of: value.type)
            var converted: [JSON] = []
            converted.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                do {
                    converted.append(try Self.converted(StoredValue(type: itemType, json: item), to: element).json)
                } catch {
                    throw ValueMismatch(stored: value, expected: type, reason: "element \(index): \(error.reason)")
                }
            }
            return StoredValue(type: type, json: .array(converted))
        case (.dictionary(let element), .object(let members)):
            let memberType = Self.elementType(of: value.type)
            var converted: [String: JSON] = [:]
            for key in members.keys.sorted() {  // sorted: the member a mismatch names is always the same
                guard let member = members[key] else { continue }
                do {
                    converted[key] = try Self.converted(StoredValue(type: memberType, json: member), to: element).json
                } catch {
                    throw ValueMismatch(stored: value, expected: type, reason: "member \(PrefsError.quoted(key)): \(error.reason)")
                }
            }
            return StoredValue(type: type, json: .object(converted))
        default:
            return value
        }
    }

    /// The argument's value read as a `Value`: its stored form and the value, or why it cannot be read so.
    static func read<Value: PrefsStorable>(_ value: StoredValue, as _: Value.Type) throws(ValueMismatch) -> (stored: StoredValue, value: Value) {
        do {
            let converted = try Self.converted(value, to: Value.valueType)
            return (converted, try converted.decode(Value.self))
        } catch {
            throw ValueMismatch(stored: value, expected: Value.valueType, reason: error.reason, swiftType: StoredValue.swiftName(Value.self))
        }
    }

    /// Why a text does not read as a type.
    struct TextProblem: Error {
        var reason: String
    }

    /// `text` read by `type`'s rule (see ``converted(_:to:)``).
    private static func parsed(_ text: String, as type: ValueType) throws(TextProblem) -> StoredValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch type {
        case .bool:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return StoredValue(type: .bool, json: .bool(true))
            case "no", "false", "0": return StoredValue(type: .bool, json: .bool(false))
            default: throw TextProblem(reason: "expected YES, NO, true, false, 1 or 0")
            }
        case .int:
            guard let number = Int(trimmed) else { throw TextProblem(reason: "expected an integer in \(Int.min)...\(Int.max)") }
            return StoredValue(type: .int, json: .int(number))
        case .uint:
            guard let number = UInt64(trimmed) else { throw TextProblem(reason: "expected an integer in 0...\(UInt64.max)") }
            return number.storedValue()
        case .double:
            // Double("1e400") is +infinity: only nan, inf and infinity, written so, stand for the non-finite values.
            let word = trimmed.lowercased().drop { $0 == "+" || $0 == "-" }
            guard let number = Double(trimmed), number.isFinite || ["nan", "inf", "infinity"].contains(word) else {
                throw TextProblem(reason: "expected a number such as 0.5")
            }
            return number.storedValue()
        case .string:
            return StoredValue(type: .string, json: .string(text))
        case .date:
            do {
                return StoredValue(type: .date, json: .string(ISO8601.format(try ISO8601.parse(trimmed, allowDateOnly: true))))
            } catch {
                throw TextProblem(reason: "\(error); expected ISO-8601 such as 2026-05-01T10:00:00Z")
            }
        case .data:
            guard let data = Data(base64Encoded: trimmed) else { throw TextProblem(reason: "expected base64, or <hex> data") }
            return data.storedValue()
        case .url:
            guard let url = URL(string: trimmed), url.scheme != nil else { throw TextProblem(reason: "expected an absolute URL such as https://example.com/") }
            return url.storedValue()
        case .json:
            do {
                return StoredValue(type: .json, json: try JSON.parse(trimmed, options: JSONParseOptions(maxDepth: Prefs.maximumValueDepth)))
            } catch {
                return StoredValue(type: .json, json: .string(text))  // not JSON: the string, for a Codable that is one
            }
        case .array, .dictionary:
            let json: JSON
            do {
                json = try JSON.parse(trimmed, options: JSONParseOptions(maxDepth: Prefs.maximumValueDepth))
            } catch {
                throw TextProblem(reason: "expected JSON such as [1, 2] or an OpenStep list such as (1, 2): \(error)")
            }
            if case .string = json { throw TextProblem(reason: "expected a collection, found a string") }
            do {
                return try converted(StoredValue(type: .json, json: json), to: type)
            } catch {
                throw TextProblem(reason: error.reason)
            }
        case .other(let name):
            throw TextProblem(reason: "\(name) is a type this release does not know")
        }
    }

    /// The type of the elements of a collection of `type`: `T` for `[T]` and `[string: T]`, else `json`.
    private static func elementType(of type: ValueType) -> ValueType {
        switch type {
        case .array(let element), .dictionary(let element): element
        default: .json
        }
    }
}

/// An OpenStep (NeXTSTEP) text property list, as UserDefaults reads an argument that starts like one: strings, quoted
/// (`"…"` or `'…'`, with C escapes and `\Uxxxx`) or not (letters, digits and `_$/:.-`), `<0fbd 7777>` data, `(a, b)`
/// arrays, `{k = v;}` dictionaries, `/* … */` and `// …` comments. Nesting is limited to ``Prefs/maximumValueDepth``.
package struct OpenStepPropertyList {
    /// Why a text is not an OpenStep property list, and where (the offset in Unicode scalars).
    package struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        package var offset: Int
        package var message: String
        package var description: String { "at \(offset): \(message)" }
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0

    private init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    /// The value `text` holds, in stored form (see ``LaunchArguments``); throws when it is not one whole property list.
    package static func parse(_ text: String) throws(SyntaxError) -> StoredValue {
        var parser = OpenStepPropertyList(text)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        if parser.index < parser.scalars.count { throw parser.error("unexpected text after the value") }
        return value
    }

    private func error(_ message: String) -> SyntaxError {
        SyntaxError(offset: index, message: message)
    }

    private var current: Unicode.Scalar? {
        index < scalars.count ? scalars[index] : nil
    }

    /// Skips white space and comments.
    private mutating func skipSpace() {
        while let scalar = current {
            if scalar.properties.isWhitespace {
                index += 1
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "/" {
                while let next = current, next != "\n", next != "\r" { index += 1 }
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "*" {
                index += 2
                while index < scalars.count, !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/") { index += 1 }
                index = min(index + 2, scalars.count)
            } else {
                return
            }
        }
    }

    private mutating func value(depth: Int) throws(SyntaxError) -> StoredValue {
        skipSpace()
        guard let scalar = current else { throw error("expected a value") }
        switch scalar {
        case "(", "{":
            guard depth < Prefs.maximumValueDepth else { throw error("nested more than \(Prefs.maximumValueDepth) levels deep") }
            index += 1
            return scalar == "(" ? try array(depth: depth + 1) : try dictionary(depth: depth + 1)
        case "<":
            index += 1
            return try data()
        default:
            return StoredValue(type: .string, json: .string(try string()))
        }
    }

    private mutating func array(depth: Int) throws(SyntaxError) -> StoredValue {
        var elements: [StoredValue] = []
        while true {
            skipSpace()
            if current == ")" {
                index += 1
                return Self.collection(elements, array: true)
            }
            elements.append(try value(depth: depth))
            skipSpace()
            switch current {
            case ",": index += 1
            case ")": continue
            default: throw error("expected ',' or ')' in an array")
            }
        }
    }

    private mutating func dictionary(depth: Int) throws(SyntaxError) -> StoredValue {
        var members: [String: StoredValue] = [:]
        while true {
            skipSpace()
            if current == "}" {
                index += 1
                return Self.collection(members.keys.sorted().compactMap { members[$0] }, keys: members.keys.sorted())
            }
            let key = try string()
            skipSpace()
            guard current == "=" else { throw error("expected '=' after the key \(PrefsError.quoted(key))") }
            index += 1
            members[key] = try value(depth: depth)
            skipSpace()
            guard current == ";" else { throw error("expected ';' after the value of \(PrefsError.quoted(key))") }
            index += 1
        }
    }

    private mutating func data() throws(SyntaxError) -> StoredValue {
        var bytes: [UInt8] = []
        var high: UInt8?
        while true {
            skipSpace()
            guard let scalar = current else { throw error("expected '>' to end the data") }
            index += 1
            if scalar == ">" {
                guard high == nil else { throw error("an odd number of hex digits in the data") }
                return Data(bytes).storedValue()
            }
            guard scalar.isASCII, let digit = UInt8(String(scalar), radix: 16) else { throw error("expected a hex digit in the data") }
            if let first = high {
                bytes.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
    }

    private static func isUnquoted(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_$/:.-".unicodeScalars.contains(scalar))
    }

    private mutating func string() throws(SyntaxError) -> String {
        guard let scalar = current else { throw error("expected a string") }
        if scalar == "\"" || scalar == "'" { return try quoted(by: scalar) }
        let start = index
        while let next = current, Self.isUnquoted(next) { index += 1 }
        guard index > start else { throw error("unexpected \(PrefsError.quoted(String(scalar)))") }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[start..<index])
        return String(text)
    }

    private mutating func quoted(by quote: Unicode.Scalar) throws(SyntaxError) -> String {
        index += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = current else { throw error("a quoted string that does not end") }
            index += 1
            if scalar == quote { return String(text) }
            guard scalar == "\\" else {
                text.append(scalar)
                continue
            }
            guard let escaped = current else { throw error("a quoted string that does not end") }
            index += 1
            switch escaped {
            case "a": text.append("\u{07}")
            case "b": text.append("\u{08}")
            case "f": text.append("\u{0C}")
            case "n": text.append("\n")
            case "r": text.append("\r")
            case "t": text.append("\t")
            case "v": text.append("\u{0B}")
            case "U", "u":
                var code: UInt32 = 0
                var digits = 0
                while digits < 4, let next = current, next.isASCII, let digit = UInt32(String(next), radix: 16) {
                    code = code << 4 | digit
                    digits += 1
                    index += 1
                }
                guard digits > 0, let unicode = Unicode.Scalar(code) else { throw error("expected hex digits of a Unicode scalar after \\U") }
                text.append(unicode)
            case "0"..."7":
                var code = UInt32(escaped.value - 0x30)
                var digits = 1
                while digits < 3, let next = current, ("0"..."7").contains(next) {
                    code = code << 3 | (next.value - 0x30)
                    digits += 1
                    index += 1
                }
                guard let unicode = Unicode.Scalar(code) else { throw error("an octal escape out of range") }
                text.append(unicode)
            default:
                text.append(escaped)  // \" \' \\ and any other character stand for themselves
            }
        }
    }

    // MARK: - Stored form

    /// A collection in stored form, as `PropertyListValue` types a property list's: `[T]` (or `[string: T]` with `keys`)
    /// when every element has one type `T` holding no `json`, else `json` with data tagged.
    private static func collection(_ elements: [StoredValue], array: Bool = false, keys: [String] = []) -> StoredValue {
        let types = elements.map(\.type)
        if let first = types.first, !holdsJSON(first), types.allSatisfy({ $0 == first }) {
            return array
                ? StoredValue(type: .array(first), json: .array(elements.map(\.json)))
                : StoredValue(type: .dictionary(first), json: .object(Dictionary(uniqueKeysWithValues: zip(keys, elements.map(\.json)))))
        }
        return array
            ? StoredValue(type: .json, json: .array(elements.map(tagged)))
            : StoredValue(type: .json, json: escaped(Dictionary(uniqueKeysWithValues: zip(keys, elements.map(tagged)))))
    }

    private static func holdsJSON(_ type: ValueType) -> Bool {
        switch type {
        case .json: true
        case .array(let element), .dictionary(let element): holdsJSON(element)
        default: false
        }
    }

    /// A value inside a `json` collection: data tagged `{"$data": …}`, as `PropertyListValue` tags it.
    private static func tagged(_ value: StoredValue) -> JSON {
        switch (value.type, value.json) {
        case (.data, let json): .object(["$data": json])
        case (.array(let element), .array(let items)): .array(items.map { tagged(StoredValue(type: element, json: $0)) })
        case (.dictionary(let element), .object(let members)): escaped(members.mapValues { tagged(StoredValue(type: element, json: $0)) })
        default: value.json
        }
    }

    /// A dictionary in the `json` form, wrapped in `$dict` when its one member is named like a tag.
    private static func escaped(_ members: [String: JSON]) -> JSON {
        if members.count == 1, let key = members.keys.first, ["$date", "$data", "$url", "$double", "$dict"].contains(key) {
            return .object(["$dict": .object(members)])
        }
        return .object(members)
    }
}
