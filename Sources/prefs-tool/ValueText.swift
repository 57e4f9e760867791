import Foundation
import Prefs

/// Stored values as plain text and back.
enum ValueText {
    /// Plain text: `true`/`false`, numbers as written, dates as ISO-8601, URLs whole, strings raw,
    /// arrays, dictionaries and JSON values as compact JSON.
    static func plain(_ value: StoredValue) -> String {
        switch value.json {
        case .string(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .null: return "null"
        case .array, .object: return value.json.serialized()
        }
    }

    /// The type names `set --type` accepts.
    static let typeNames = ["bool", "int", "uint", "double", "string", "date", "data", "url", "json"]

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
            return StoredValue(type: .uint, json: number.storedJSON())
        case .double:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let number = Double(trimmed) else { throw fail("expected a number such as 0.5") }
            // Double("1e400") is +infinity: a number beyond the range is an error, as in the JSON store's loader.
            // Only nan, inf and infinity, written as such, stand for the non-finite values.
            guard number.isFinite || isNonFiniteLiteral(trimmed) else {
                throw fail("out of range (the largest double is \(Double.greatestFiniteMagnitude))")
            }
            return StoredValue(type: .double, json: number.storedJSON())
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

    static func infer(_ text: String) -> StoredValue {
        if text == "true" || text == "false" { return StoredValue(type: .bool, json: .bool(text == "true")) }
        if let number = Int(text) { return StoredValue(type: .int, json: .int(number)) }
        if text.contains("."), let number = Double(text), number.isFinite { return StoredValue(type: .double, json: .double(number)) }
        return StoredValue(type: .string, json: .string(text))
    }

    static func quoted(_ text: String) -> String { JSON.string(text).serialized() }
}
