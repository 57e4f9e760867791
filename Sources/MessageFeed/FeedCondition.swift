import Foundation

/// A message's `conditions`, as the feed writes them: the inputs of a local dialog's conditions (DialogGate's
/// `DialogCondition`), which a `MessageCenter` judges on the store's usage and the app's parameters. Package API: the
/// feed's format, read by the decoder and judged by DialogGate and `prefs-tool feed explain`.
///
/// In the feed, an object whose members must all hold, each a condition by name (an unknown name is an error that
/// skips the message: ignoring it would show the message to whom it leaves out):
///
/// ```json
/// "conditions": {
///   "launchesAtLeast": 5,
///   "daysSinceFirstLaunchAtLeast": 3,
///   "daysSinceVersionFirstSeenAtLeast": 1,
///   "events": {"photoSaved": {"atLeast": 5, "withinSeconds": 2592000}},
///   "parameters": {"plan": "free", "country": ["DE", "AT"]},
///   "notInFirstSession": true,
///   "any": [{"parameters": {"cohort": "b"}}, {"launchesAtLeast": 20}]
/// }
/// ```
package indirect enum FeedCondition: Sendable, Hashable {
    /// `launchesAtLeast`: launches recorded with `DialogGate.recordLaunch()`.
    case launches(atLeast: Int)
    /// `daysSinceFirstLaunchAtLeast`.
    case daysSinceFirstLaunch(atLeast: Int)
    /// `daysSinceVersionFirstSeenAtLeast`: days since the running app version's first launch.
    case daysSinceVersionFirstSeen(atLeast: Int)
    /// One member of `events`: donations of the event (`DialogGate.donate(_:)`), in the last `withinSeconds` if given.
    case event(String, atLeast: Int, withinSeconds: Double?)
    /// One member of `parameters`: the app parameter equals one of the values (one value, or an array of them).
    case parameter(String, oneOf: [Value])
    /// `"notInFirstSession": true`.
    case notInFirstSession
    /// An object of conditions, or `all`'s array of them: every one holds.
    case all([FeedCondition])
    /// `any`'s array of condition objects: at least one holds.
    case any([FeedCondition])

    /// A parameter value as the feed writes it.
    package enum Value: Sendable, Hashable, CustomStringConvertible {
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)

        /// `true`, `5`, `2.5`, `"free"`.
        package var description: String {
            switch self {
            case .bool(let value): "\(value)"
            case .int(let value): "\(value)"
            case .double(let value): "\(value)"
            case .string(let value): "\"\(value)\""
            }
        }
    }

    /// The condition names an object of conditions may hold.
    ///
    /// ```swift
    /// FeedCondition.names.contains("launchesAtLeast")   // true
    /// ```
    package static let names = [
        "launchesAtLeast", "daysSinceFirstLaunchAtLeast", "daysSinceVersionFirstSeenAtLeast", "events", "parameters",
        "notInFirstSession", "all", "any",
    ]

    /// The members of one event's condition.
    static let eventKeys = ["atLeast", "withinSeconds"]

    /// The names of the events the condition counts.
    package var eventNames: Set<String> {
        switch self {
        case .event(let name, _, _): [name]
        case .all(let conditions), .any(let conditions): conditions.reduce(into: []) { $0.formUnion($1.eventNames) }
        default: []
        }
    }
}
