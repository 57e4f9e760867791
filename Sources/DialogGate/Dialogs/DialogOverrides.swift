import Foundation

/// QA switches in the spirit of TipKit's testing options: show every dialog, hide every dialog, or force some
/// ids, without touching stored state.
///
/// Set them through the API (``DialogGate/overrides``) or, in a build that opts in, the environment variable
/// `DIALOGGATE_OVERRIDE`: `show-all`, `hide-all` (in any case), or `force=welcome,rate-app` (forced ids show even under
/// `hide-all`), parts separated by `;`. An id holding `,`, `;`, `"` or white space at either end is written in double
/// quotes, with `\"` and `\\` inside: `force="msg:Hello, world"`. A gate reads the environment only when the app
/// passes it, so a release build is not steered by whoever launches it:
///
/// ```swift
/// #if DEBUG
/// let overrides = DialogOverrides.fromEnvironment().overrides   // DIALOGGATE_OVERRIDE=show-all ./MyApp
/// #else
/// let overrides = DialogOverrides()
/// #endif
/// let gate = DialogGate(prefs: prefs, overrides: overrides)
/// ```
public struct DialogOverrides: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable, CustomStringConvertible {
        case none, showAll = "show-all", hideAll = "hide-all"
        public var description: String { rawValue }
    }

    public var mode: Mode
    /// Ids presented whatever their state.
    public var forced: Set<String>

    public init(mode: Mode = .none, forced: Set<String> = []) {
        self.mode = mode
        self.forced = forced
    }

    public static let environmentVariable = "DIALOGGATE_OVERRIDE"

    /// Reads `DIALOGGATE_OVERRIDE`; an unrecognised value is ignored and returned as `unrecognized`.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (overrides: DialogOverrides, unrecognized: String?) {
        guard let raw = environment[environmentVariable]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            return (DialogOverrides(), nil)
        }
        var overrides = DialogOverrides()
        var unrecognized: [String] = []
        for part in split(raw, at: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            if let mode = Mode(rawValue: part.lowercased()), mode != .none {
                overrides.mode = mode
            } else if part.lowercased().hasPrefix("force=") {
                let ids = split(String(part.dropFirst(6)), at: ",").map(unquoted)
                overrides.forced.formUnion(ids.filter { !$0.isEmpty })
            } else {
                unrecognized.append(part)
            }
        }
        return (overrides, unrecognized.isEmpty ? nil : unrecognized.joined(separator: ";"))
    }

    /// `text` split at `separator` outside double quotes (the quotes are kept).
    private static func split(_ text: String, at separator: Character) -> [String] {
        var parts: [String] = [], current = "", quoted = false, escaped = false
        for character in text {
            if escaped { escaped = false } else if quoted && character == "\\" { escaped = true } else if character == "\"" { quoted.toggle() }
            if character == separator && !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    /// An id as written: trimmed, or, in double quotes, exactly what they hold with `\"` and `\\` unescaped.
    private static func unquoted(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 2, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") else { return trimmed }
        var id = "", escaped = false
        for character in trimmed.dropFirst().dropLast() {
            if !escaped && character == "\\" { escaped = true; continue }
            id.append(character)
            escaped = false
        }
        return id
    }
}
