import Foundation
import Prefs
import PrefsJSON

/// Stored values as plain text and back.
enum ValueText {
    /// Plain text: `true`/`false`, numbers as written, dates as ISO-8601, URLs whole, strings raw,
    /// arrays, dictionaries and JSON values as compact JSON. Exact, so that what `get` prints in a pipe, given back to
    /// `set`, stores the same value (`prefs-tool set lastSync "$(prefs-tool get lastSync)"`). On a terminal
    /// (`forReading`, by default when stdout is one), timestamps (a date, or an ISO-8601 string inside a collection
    /// such as a dialog record) show at most milliseconds; `--json` and `export` keep every digit there too.
    static func plain(_ value: StoredValue, forReading: Bool = Terminal.standardOutputIsTerminal) -> String {
        switch value.json {
        case .string(let text): return value.type == .date && forReading ? toMilliseconds(text) : text
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .null: return "null"
        case .array, .object: return (forReading ? timestampsToMilliseconds(value.json) : value.json).serialized()
        }
    }

    /// An ISO-8601 timestamp with more than three fraction digits cut to three (never rounded up into the next
    /// second); any other text as it is.
    static func toMilliseconds(_ text: String) -> String {
        guard text.hasSuffix("Z"), let dot = text.lastIndex(of: "."), text.distance(from: dot, to: text.endIndex) > 5,
            text[text.index(after: dot)..<text.index(before: text.endIndex)].allSatisfy(\.isASCII),
            (try? ISO8601.parse(text)) != nil
        else { return text }
        return String(text[...text.index(dot, offsetBy: 3)]) + "Z"
    }

    private static func timestampsToMilliseconds(_ json: JSON) -> JSON {
        switch json {
        case .string(let text): .string(toMilliseconds(text))
        case .array(let elements): .array(elements.map(timestampsToMilliseconds))
        case .object(let members): .object(members.mapValues(timestampsToMilliseconds))
        case .bool, .int, .double, .null: json
        }
    }

    /// The scalar type names; `set --type` also takes every collection of them that `list` prints (`[int]`, `[string: date]`).
    static let typeNames = ["bool", "int", "uint", "double", "string", "date", "data", "url", "json"]

    /// The type `--type NAME` names: any type this release can write, spelled as `list` prints it. Nil for
    /// anything else, including a type name only a newer release knows.
    static func type(named name: String) -> ValueType? {
        guard let type = ValueType(name), !type.containsUnknownType else { return nil }
        return type
    }

    /// Parses `text` as a value of `type`, or infers one (true/false, integer, decimal, otherwise string).
    static func parse(_ text: String, as type: ValueType?) throws(ToolError) -> StoredValue {
        guard let type else { return infer(text) }
        func fail(_ reason: String) -> ToolError { .data("\(quoted(text)) is not a valid \(type): \(reason)") }
        switch type {
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return StoredValue(type: .bool, json: .bool(true))
            case "false", "no", "0": return StoredValue(type: .bool, json: .bool(false))
            default: throw fail("use true or false")
            }
        case .int:
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else { throw fail("expected an integer in \(Int.min)...\(Int.max)") }
            return StoredValue(type: .int, json: .int(number))
        case .uint:
            guard let number = UInt64(text.trimmingCharacters(in: .whitespaces)) else { throw fail("expected an integer in 0...\(UInt64.max)") }
            return number.storedValue()
        case .double:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let number = Double(trimmed) else { throw fail("expected a number such as 0.5") }
            // Double("1e400") is +infinity: a number beyond the range is an error, as in the JSON store's loader.
            // Only nan, inf and infinity, written as such, stand for the non-finite values.
            guard number.isFinite || isNonFiniteLiteral(trimmed) else {
                throw fail("out of range (the largest double is \(Double.greatestFiniteMagnitude))")
            }
            return number.storedValue()
        case .string:
            return StoredValue(type: .string, json: .string(text))
        case .date:
            do {
                return StoredValue(type: .date, json: .string(ISO8601.format(try ISO8601.parse(text, allowDateOnly: true))))
            } catch {
                throw fail("\(error); expected ISO-8601 such as 2026-11-29T10:00:00Z")
            }
        case .data:
            guard let data = Data(base64Encoded: text) else { throw fail("expected base64") }
            return StoredValue(type: .data, json: .string(data.base64EncodedString()))
        case .url:
            guard let url = URL(string: text), url.scheme != nil else { throw fail("expected an absolute URL such as https://example.com/") }
            return StoredValue(type: .url, json: .string(url.absoluteString))
        case .json, .array, .dictionary, .other:
            let json: JSON
            do { json = try JSON.parse(text) } catch { throw fail("invalid JSON at \(error.location): \(error.message)") }
            let value = StoredValue(type: type, json: json)
            if let problem = value.shapeProblem() { throw fail(problem) }
            return value
        }
    }

    /// Whether `text` spells a non-finite double itself: `nan`, `inf` or `infinity` in any case, with an optional sign.
    static func isNonFiniteLiteral(_ text: String) -> Bool {
        var word = Substring(text.lowercased())
        if word.first == "+" || word.first == "-" { word = word.dropFirst() }
        return word == "nan" || word == "inf" || word == "infinity"
    }

    /// The value `text` spells when no type is known: `true`/`false`, an integer, a decimal number, else a string.
    /// A number is inferred only when it prints back exactly as written, so no text is lost: `007`, `+5` and
    /// `1.10` stay strings.
    static func infer(_ text: String) -> StoredValue {
        if text == "true" || text == "false" { return StoredValue(type: .bool, json: .bool(text == "true")) }
        if let number = Int(text), String(number) == text { return StoredValue(type: .int, json: .int(number)) }
        if text.contains("."), let number = Double(text), number.isFinite, String(number) == text {
            return StoredValue(type: .double, json: .double(number))
        }
        return StoredValue(type: .string, json: .string(text))
    }

    static func quoted(_ text: String) -> String { JSON.string(text).serialized() }
}
