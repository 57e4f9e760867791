import Foundation

/// Rules for key names, checked when a key is declared, and suggestions for a mistyped name (``nearest(to:in:)``,
/// ``likelyTypo(of:among:)``).
///
/// A name is 1 to ``maximumLength`` UTF-8 bytes of printable text, measured in Unicode NFC (the form Prefs stores and
/// compares names in, so that both spellings of `é` are one key with one limit): no control characters
/// (U+0000–U+001F, U+007F–U+009F), no line or paragraph separators, no leading or trailing white space.
package enum KeyName {
    /// The longest name, in UTF-8 bytes.
    package static let maximumLength = 256

    /// Returns nil when `name` is valid, else the reason it is not.
    package static func problem(with name: String) -> String? {
        if name.isEmpty { return "a key name cannot be empty" }
        let length = name.utf8.allSatisfy({ $0 < 0x80 }) ? name.utf8.count : name.precomposedStringWithCanonicalMapping.utf8.count
        if length > maximumLength { return "a key name is at most \(maximumLength) bytes; this one is \(length)" }
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029:
                return "a key name cannot contain the control character U+\(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4))"
            default: continue
            }
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true {
            return "a key name cannot begin or end with white space"
        }
        return nil
    }

    /// Throws ``PrefsError/invalidKeyName(_:reason:)`` for an invalid name.
    package static func validate(_ name: String) throws(PrefsError) {
        if let problem = problem(with: name) { throw .invalidKeyName(name, reason: problem) }
    }

    /// The longest legacy name (``legacyProblem(with:)``), in UTF-8 bytes: as much as a value may hold.
    package static let maximumLegacyLength = 1 << 20

    /// Returns nil when `name` may name a stored value written by other code (UserDefaults, a hand edit), else the
    /// reason it may not. Such names are read and written by name (``PrefsDefaults``, a dialog's `neverRemindKey`, raw
    /// writes, archives, a key's former names) and may be anything UserDefaults accepted: white space at either end
    /// (`"Intro tip "`), control characters, the empty string. Only U+0000, which no store holds the same way (a
    /// PostgreSQL text cannot), and more than ``maximumLegacyLength`` bytes are refused. A typed key's own name follows
    /// the stricter ``problem(with:)``.
    package static func legacyProblem(with name: String) -> String? {
        if name.unicodeScalars.contains("\u{0}") { return "a key name cannot contain the character U+0000" }
        let length = name.utf8.count
        if length > maximumLegacyLength { return "a key name is at most \(maximumLegacyLength) bytes; this one is \(length)" }
        return nil
    }

    /// Throws ``PrefsError/invalidKeyName(_:reason:)`` for a name ``legacyProblem(with:)`` refuses.
    package static func validateLegacy(_ name: String) throws(PrefsError) {
        if let problem = legacyProblem(with: name) { throw .invalidKeyName(name, reason: problem) }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
