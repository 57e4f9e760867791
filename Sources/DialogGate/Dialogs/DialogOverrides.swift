import Foundation

/// QA switches in the spirit of TipKit's testing options: show every dialog, hide every dialog, or force some
/// ids, without touching stored state.
///
/// Set them through the API (``DialogGate/overrides``) or the environment variable `DIALOGGATE_OVERRIDE`:
/// `show-all`, `hide-all`, or `force=welcome,rate-app` (forced ids show even under `hide-all`).
/// ```sh
/// DIALOGGATE_OVERRIDE=show-all ./MyApp
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

    /// Reads `DIALOGGATE_OVERRIDE`; an unrecognised value is ignored and returned as the second element.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> (DialogOverrides, unrecognized: String?) {
        guard let raw = environment[environmentVariable]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            return (DialogOverrides(), nil)
        }
        var overrides = DialogOverrides()
        var unrecognized: [String] = []
        for part in raw.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if let mode = Mode(rawValue: part), mode != .none {
                overrides.mode = mode
            } else if part.hasPrefix("force=") {
                overrides.forced.formUnion(part.dropFirst(6).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            } else {
                unrecognized.append(part)
            }
        }
        return (overrides, unrecognized.isEmpty ? nil : unrecognized.joined(separator: ";"))
    }
}
