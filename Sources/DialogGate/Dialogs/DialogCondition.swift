import Foundation
import Prefs
import PrefsSupport

/// When it is time to show a dialog: a condition on the app's usage, which DialogGate keeps in the store (launches,
/// days since the first launch, events the app donates), on parameters the app sets, or on the dialog's own recent
/// presentations. Part of a dialog's policy (``DialogPolicy/conditions``); a dialog whose conditions are unmet is not
/// presented, and its decision names each unmet condition with its current value
/// (``DialogReason/conditionUnmet(_:current:)``).
///
/// ```swift
/// let review = Dialog("review", policy: DialogPolicy(conditions: .all([
///     .launches(atLeast: 5),
///     .daysSinceFirstLaunch(atLeast: 3),
///     .event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)),
///     .parameter("isPro", equals: false),
/// ])))
/// try gate.recordLaunch()            // at every launch: counted once per session
/// try gate.donate("photoSaved")      // when the user saves a photo
/// gate.setParameter("isPro", false)  // at launch, in memory
/// ```
public struct DialogCondition: Sendable, Hashable, CustomStringConvertible {
    let kind: Kind

    indirect enum Kind: Sendable, Hashable {
        case launches(atLeast: Int)
        case daysSinceFirstLaunch(atLeast: Int)
        case daysSinceVersionFirstSeen(atLeast: Int)
        case event(String, atLeast: Int, within: Duration?)
        case parameter(String, equals: Value)
        case notInFirstSession
        case presentedFewerThan(Int, within: Duration)
        case all([DialogCondition])
        case any([DialogCondition])
        /// A condition a later release recorded in the store, which this one does not read (`prefs-tool dialogs
        /// explain` names its kind). Never made by the app.
        case unrecognized(String)
    }

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// At least `count` launches recorded with ``DialogGate/recordLaunch()`` (counting from the running version's first
    /// launch when a version reset clears the history: see ``DialogPolicy/ResetScope/history``).
    ///
    /// ```swift
    /// DialogPolicy(conditions: .launches(atLeast: 5))
    /// ```
    public static func launches(atLeast count: Int) -> DialogCondition { DialogCondition(.launches(atLeast: count)) }

    /// At least `days` whole days since the first launch recorded with ``DialogGate/recordLaunch()``. The first launch
    /// is recorded once and never moved; while the clock is behind it (set back), the days count from when that was
    /// first seen, as every wait does.
    ///
    /// ```swift
    /// DialogPolicy(conditions: .daysSinceFirstLaunch(atLeast: 3))
    /// ```
    public static func daysSinceFirstLaunch(atLeast days: Int) -> DialogCondition { DialogCondition(.daysSinceFirstLaunch(atLeast: days)) }

    /// At least `days` whole days since the running app version (``DialogGate/appVersion``) was first seen at a launch:
    /// as the policy's ``DialogPolicy/resetsOn`` counts versions when it has one (`.newRelease` counts `2.0-beta.3`
    /// and `2.0` as one), else the exact version.
    ///
    /// ```swift
    /// DialogPolicy(conditions: .daysSinceVersionFirstSeen(atLeast: 2))   // not in the first two days of an update
    /// ```
    public static func daysSinceVersionFirstSeen(atLeast days: Int) -> DialogCondition {
        DialogCondition(.daysSinceVersionFirstSeen(atLeast: days))
    }

    /// At least `count` donations of `event` (``DialogGate/donate(_:)``), in the last `window` when given. The store
    /// keeps an event's last 1,000 donation dates (a window counts at most those) and its total count.
    ///
    /// ```swift
    /// DialogCondition.event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400))   // 5 in the last 30 days
    /// ```
    public static func event(_ name: String, atLeast count: Int, within window: Duration? = nil) -> DialogCondition {
        DialogCondition(.event(name, atLeast: count, within: window))
    }

    /// The app parameter `name` equals `value` (an integer equals the same number as a double). Parameters are set at
    /// launch with ``DialogGate/setParameter(_:_:)`` (in memory) or ``DialogGate/storeParameter(_:_:)``; one that is
    /// not set meets no condition.
    ///
    /// ```swift
    /// DialogCondition.parameter("isPro", equals: false)
    /// DialogCondition.parameter("plan", equals: "team")
    /// ```
    public static func parameter(_ name: String, equals value: Value) -> DialogCondition {
        DialogCondition(.parameter(name, equals: value))
    }

    /// Not in the session (the launch) that recorded the app's first launch with ``DialogGate/recordLaunch()``, nor in
    /// one before any launch is recorded.
    ///
    /// ```swift
    /// DialogPolicy(conditions: .all([.notInFirstSession, .launches(atLeast: 3)]))
    /// ```
    public static let notInFirstSession = DialogCondition(.notInFirstSession)

    /// The dialog was presented fewer than `count` times in the last `window`, counting every presentation whatever
    /// the app versions (a version reset does not clear them): `presentedFewerThan(3, within: 365 days)` is StoreKit's
    /// "at most 3 in 365 days", `presentedFewerThan(1, within: 120 days)` "not within 120 days of the last one".
    ///
    /// ```swift
    /// DialogCondition.presentedFewerThan(3, within: .seconds(365 * 86_400))
    /// ```
    public static func presentedFewerThan(_ count: Int, within window: Duration) -> DialogCondition {
        DialogCondition(.presentedFewerThan(count, within: window))
    }

    /// Every condition is met (`.all([])` always is).
    ///
    /// ```swift
    /// DialogCondition.all([.launches(atLeast: 5), .parameter("isPro", equals: false)])
    /// ```
    public static func all(_ conditions: [DialogCondition]) -> DialogCondition { DialogCondition(.all(conditions)) }

    /// At least one condition is met (`.any([])` never is).
    ///
    /// ```swift
    /// DialogCondition.any([.launches(atLeast: 20), .event("photoSaved", atLeast: 10)])
    /// ```
    public static func any(_ conditions: [DialogCondition]) -> DialogCondition { DialogCondition(.any(conditions)) }

    /// What it requires: `launches ≥ 5`, `days since first launch ≥ 3`, `photoSaved ≥ 5 in the last 30 days`,
    /// `isPro = false`, `not in the first session`, `presented < 3 times in the last 365 days`, `all of (…)`.
    ///
    /// ```swift
    /// print(DialogCondition.event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)))   // photoSaved ≥ 5 in the last 30 days
    /// ```
    public var description: String {
        switch kind {
        case .launches(let count): "launches ≥ \(count)"
        case .daysSinceFirstLaunch(let days): "days since first launch ≥ \(days)"
        case .daysSinceVersionFirstSeen(let days): "days since this version was first seen ≥ \(days)"
        case .event(let name, let count, let window):
            "\(PrefsText.quotedIfNeeded(name)) ≥ \(count)" + (window.map { " in the last \(Self.text(of: $0))" } ?? "")
        case .parameter(let name, let value): "\(PrefsText.quotedIfNeeded(name)) = \(value)"
        case .notInFirstSession: "not in the first session"
        case .presentedFewerThan(let count, let window): "presented < \(count) times in the last \(Self.text(of: window))"
        case .all(let conditions): "all of (" + conditions.map(\.description).joined(separator: "; ") + ")"
        case .any(let conditions): "any of (" + conditions.map(\.description).joined(separator: "; ") + ")"
        case .unrecognized(let kind): "a condition this release does not read (\(kind))"
        }
    }

    /// `30 days`, `1 day`, `90 seconds`.
    static func text(of duration: Duration) -> String {
        let seconds = duration.timeInterval
        if seconds >= 86_400, seconds.truncatingRemainder(dividingBy: 86_400) == 0 {
            let days = seconds / 86_400
            return days == 1 ? "1 day" : "\(Int(exactly: days).map(String.init) ?? "\(days)") days"
        }
        if seconds == seconds.rounded(), abs(seconds) < 1e15 { return "\(Int(seconds)) seconds" }
        return "\(seconds) seconds"
    }

    /// A parameter's value, as the app sets it (``DialogGate/setParameter(_:_:)``) and a condition compares it: a Bool,
    /// an integer, a double or a string, written as a literal.
    ///
    /// ```swift
    /// let gate = DialogGate(prefs: prefs, parameters: ["isPro": false, "plan": "team", "seats": 5])
    /// ```
    public enum Value: Sendable, Hashable, CustomStringConvertible, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByFloatLiteral, ExpressibleByStringLiteral
    {
        /// `true` or `false`: `"isPro": false`.
        case bool(Bool)
        /// An integer, equal to a double of the same number: `"seats": 5`.
        case int(Int)
        /// A double: `"ratio": 2.5`.
        case double(Double)
        /// A string: `"plan": "team"`.
        case string(String)

        /// `false` as a value: `gate.setParameter("isPro", false)`.
        public init(booleanLiteral value: Bool) { self = .bool(value) }
        /// `5` as a value: `gate.setParameter("seats", 5)`.
        public init(integerLiteral value: Int) { self = .int(value) }
        /// `2.5` as a value: `gate.setParameter("ratio", 2.5)`.
        public init(floatLiteral value: Double) { self = .double(value) }
        /// `"team"` as a value: `gate.setParameter("plan", "team")`.
        public init(stringLiteral value: String) { self = .string(value) }

        /// `true`, `5`, `2.5`, `"team"` (a string in quotes).
        ///
        /// ```swift
        /// print(DialogCondition.Value.string("team"))   // "team", with its quotes
        /// ```
        public var description: String {
            switch self {
            case .bool(let value): "\(value)"
            case .int(let value): "\(value)"
            case .double(let value): "\(value)"
            case .string(let value): PrefsText.quoted(value)
            }
        }

        /// Whether a parameter holding `self` meets a condition asking for `required`: equal values, an integer and a
        /// double of the same number included.
        func matches(_ required: Value) -> Bool {
            switch (self, required) {
            case (.int(let int), .double(let double)), (.double(let double), .int(let int)): Double(int) == double && Int(exactly: double) == int
            default: self == required
            }
        }
    }
}

/// Quoting for the texts conditions and reasons print.
enum PrefsText {
    /// `"text"`, with control characters escaped: safe to print to a terminal.
    static func quoted(_ text: String) -> String {
        PrefsError.quoted(text)
    }

    /// The name as it is when it is a plain identifier (`photoSaved`, `app.opened`), else quoted.
    static func quotedIfNeeded(_ name: String) -> String {
        let plain =
            !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        return plain ? name : quoted(name)
    }
}
