import Foundation

/// How UserDefaults reads a number or a Boolean out of a string (`"2.5kg"` is 2.5, `" 12 apples"` is 12, `"YES"` is
/// true): one home for the rule, shared by `PrefsDefaults`' getters and DialogGate's reading of the never-remind keys
/// that older code wrote.
package enum TextNumber {
    /// A string as a Boolean: `"YES"` or `"true"` in any case, after white space, or a leading number other than 0.
    package static func isTrue(_ string: String) -> Bool {
        let text = string.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if text == "yes" || text == "true" { return true }
        return numericPrefix(of: text).map { leadingDouble(String($0)) != 0 } ?? false
    }

    /// The leading `[white space][sign]digits` of `text` as an integer, saturating at `Int`'s bounds; 0 without digits.
    package static func leadingInteger(_ text: String) -> Int {
        guard let prefix = numericPrefix(of: text) else { return 0 }
        var digits = prefix.prefix { $0 != "." && $0 != "e" && $0 != "E" }
        if digits.last == "-" || digits.last == "+" || digits.isEmpty { return 0 }
        if digits.first == "+" { digits = digits.dropFirst() }
        if let value = Int(digits) { return value }
        return digits.first == "-" ? Int.min : Int.max
    }

    /// The leading decimal number of `text` (`"2.5kg"` → 2.5); 0 without one.
    package static func leadingDouble(_ text: String) -> Double {
        numericPrefix(of: text).flatMap { Double($0) } ?? 0
    }

    /// The longest prefix of `text`, after white space, of the form `[+-]digits[.digits][(e|E)[+-]digits]`
    /// with at least one digit before the exponent.
    package static func numericPrefix(of text: String) -> Substring? {
        let scalars = text.unicodeScalars
        var index = scalars.firstIndex { !CharacterSet.whitespacesAndNewlines.contains($0) } ?? scalars.endIndex
        let start = index
        func skipDigits() -> Int {
            var count = 0
            while index < scalars.endIndex, ("0"..."9").contains(scalars[index]) { index = scalars.index(after: index); count += 1 }
            return count
        }
        if index < scalars.endIndex, scalars[index] == "+" || scalars[index] == "-" { index = scalars.index(after: index) }
        var digits = skipDigits()
        if index < scalars.endIndex, scalars[index] == "." {
            index = scalars.index(after: index)
            digits += skipDigits()
        }
        guard digits > 0 else { return nil }
        var end = index
        if index < scalars.endIndex, scalars[index] == "e" || scalars[index] == "E" {
            index = scalars.index(after: index)
            if index < scalars.endIndex, scalars[index] == "+" || scalars[index] == "-" { index = scalars.index(after: index) }
            if skipDigits() > 0 { end = index }
        }
        return Substring(scalars[start..<end])
    }
}

extension StoredValue {
    /// The value as UserDefaults' `bool(forKey:)` reads it: a Boolean; a number other than 0; a string by
    /// ``TextNumber/isTrue(_:)``; anything else (data, a date, an array…) is false.
    ///
    /// ```swift
    /// StoredValue(type: .string, json: .string("YES")).isTruthy   // true
    /// ```
    package var isTruthy: Bool {
        switch type {
        case .bool: (try? Bool(storedJSON: json)) ?? false
        case .int: (try? Int(storedJSON: json)).map { $0 != 0 } ?? false
        case .uint: (try? UInt64(storedJSON: json)).map { $0 != 0 } ?? false
        case .double: (try? Double(storedJSON: json)).map { $0 != 0 } ?? false
        case .string: (try? String(storedJSON: json)).map(TextNumber.isTrue) ?? false
        // Untyped JSON (a value a tool wrote as JSON): its scalars, read as they would be under their own types.
        case .json, .other:
            switch json {
            case .bool(let bool): bool
            case .int(let int): int != 0
            case .double(let double): double != 0
            case .string(let string): TextNumber.isTrue(string)
            default: false
            }
        case .date, .data, .url, .array, .dictionary: false
        }
    }
}
