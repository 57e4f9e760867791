import Foundation
import MessageFeed
import Prefs
import PrefsSupport
internal import PrefsJSON

// What a remote message shares with local dialogs: its conditions, judged on the inputs of a dialog's conditions (the
// store's launches, days and donations, the app's parameters), and the gate's display frequency, which a message
// shown uses up as a dialog does (`dialoggate.lastPresentation` and the session's "presented any").

extension DialogCondition {
    /// A feed message's condition as a dialog's: the same rules judge both. A parameter with several values is any of
    /// them.
    init(feed condition: FeedCondition) {
        switch condition {
        case .launches(let count): self = .launches(atLeast: count)
        case .daysSinceFirstLaunch(let days): self = .daysSinceFirstLaunch(atLeast: days)
        case .daysSinceVersionFirstSeen(let days): self = .daysSinceVersionFirstSeen(atLeast: days)
        case .event(let name, let count, let seconds): self = .event(name, atLeast: count, within: seconds.map { .seconds($0) })
        case .parameter(let name, let values):
            let each = values.map { DialogCondition.parameter(name, equals: DialogCondition.Value(feed: $0)) }
            self = each.count == 1 ? each[0] : .any(each)
        case .notInFirstSession: self = .notInFirstSession
        case .all(let conditions): self = .all(conditions.map(DialogCondition.init(feed:)))
        case .any(let conditions): self = .any(conditions.map(DialogCondition.init(feed:)))
        }
    }
}

extension DialogCondition.Value {
    init(feed value: FeedCondition.Value) {
        switch value {
        case .bool(let bool): self = .bool(bool)
        case .int(let int): self = .int(int)
        case .double(let double): self = .double(double)
        case .string(let string): self = .string(string)
        }
    }
}

/// What a message's audience is judged on beyond the feed, read from the store: the inputs of its conditions, the
/// version the user skipped, and the gate's display frequency.
struct MessageAudience: Sendable {
    /// The session whose launch, parameters and "presented any" count: the gate's, else the process's on the store.
    var session: DialogSession
    /// The app version conditions count the version's days by.
    var appVersion: String?
    /// The gate's display frequency, when the center was made with a gate.
    var displayFrequency: DisplayFrequency?

    /// The targeting state for `messages` at `now`: reads, in `transaction`, what their conditions count and when any
    /// dialog or message was last presented.
    func state(
        for messages: [RemoteMessage], in transaction: borrowing Prefs.Transaction, now: Date
    ) throws -> (state: MessageTargeting.State, lastOfAny: DialogGate.LastPresentation) {
        let lastOfAny = try DialogGate.LastPresentation(transaction)
        var state = MessageTargeting.State()
        let eventNames = messages.reduce(into: Set<String>()) { $0.formUnion($1.conditions?.eventNames ?? []) }
        if messages.contains(where: { $0.conditions != nil }) {
            let inputs = ConditionInputs.reading(eventNames: eventNames, session: session, appVersion: appVersion) { name throws(PrefsError) in
                try transaction.storedValue(forKey: name)
            }
            state.conditions = { condition in Self.judge(condition, inputs, now: now) }
        }
        if let frequency = displayFrequency {
            state.displayFrequency = Self.frequencyCheck(frequency, presentedThisSession: session.hasPresented, lastOfAny: lastOfAny, now: now)
        }
        return (state, lastOfAny)
    }

    /// Judges a message's condition as a dialog's, with what it saw: the unmet parts (`launches ≥ 5 (now 2)`), or every
    /// part when all are met.
    static func judge(_ condition: FeedCondition, _ inputs: ConditionInputs, now: Date) -> (met: Bool, detail: String) {
        summary(of: status(of: condition, inputs, now: now))
    }

    /// A judged condition as a targeting check: met only when known to be, with what it saw.
    static func summary(of status: ConditionStatus) -> (met: Bool, detail: String) {
        if status.met == true {
            let parts = status.flattened.filter { $0.status.parts.isEmpty }.map { "\($0.status.condition) (now \($0.status.current))" }
            return (true, parts.isEmpty ? "no condition" : parts.joined(separator: "; "))
        }
        let unmet = ConditionRules.unmetReasons(status).map { reason -> String in
            guard case .conditionUnmet(let condition, let current) = reason else { return "\(reason)" }
            return "\(condition) (now \(current))"
        }
        return (false, (status.met == nil ? "unknown: " : "not met: ") + unmet.joined(separator: "; "))
    }

    /// The condition judged, with every part: what `prefs-tool feed explain` lists.
    static func status(of condition: FeedCondition, _ inputs: ConditionInputs, now: Date) -> ConditionStatus {
        ConditionRules.evaluate(
            DialogCondition(feed: condition), inputs, counting: ConditionCounting(), presentations: [], presentationsAnchor: nil, now: now)
    }

    /// The gate's display frequency, as a dialog's decision applies it.
    static func frequencyCheck(
        _ frequency: DisplayFrequency, presentedThisSession: Bool, lastOfAny: DialogGate.LastPresentation, now: Date
    ) -> (passed: Bool, detail: String) {
        var blocking: [String] = []
        if frequency.oncePerSession && presentedThisSession { blocking.append(DialogReason.anotherDialogThisSession.description) }
        if let interval = frequency.minimumInterval, let last = lastOfAny.date {
            let next = ClockRule.end(of: interval.timeInterval, from: last, anchor: lastOfAny.reanchoredAt, now: now)
            if now < next { blocking.append(DialogReason.displayFrequency(lastPresented: last, nextAllowed: next).description) }
        }
        if blocking.isEmpty {
            let parts = [frequency.oncePerSession ? "none presented in this session" : nil, frequency.minimumInterval.map { _ in "interval passed" }]
            return (true, parts.compactMap { $0 }.joined(separator: ", ").nonEmpty ?? "no limit")
        }
        return (false, blocking.joined(separator: "; "))
    }
}

extension String {
    /// The string, or nil when it is empty.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

extension MessageCenter {
    /// A feed message's conditions judged on `prefs`' usage and stored parameters, with `parameters` (what the app sets
    /// in memory, which the store does not know) over them; a parameter neither gives is unknown. For `prefs-tool feed
    /// explain`. Package API.
    package nonisolated static func conditionStatus(
        of condition: FeedCondition, prefs: Prefs?, parameters: [String: DialogCondition.Value], appVersion: String?, now: Date
    ) -> ConditionStatus {
        var inputs = ConditionInputs.reading(eventNames: condition.eventNames, session: DialogSession(), appVersion: appVersion) {
            name throws(PrefsError) in try prefs?.storedValue(forKey: name)
        }
        inputs.parameters.merge(parameters) { _, given in given }
        inputs.sessionParametersKnown = false
        inputs.session = nil
        return MessageAudience.status(of: condition, inputs, now: now)
    }

    /// A judged condition as `feed explain` shows it in its check: met only when known to be, with what it saw. Package
    /// API.
    package nonisolated static func conditionSummary(_ status: ConditionStatus) -> (met: Bool, detail: String) {
        MessageAudience.summary(of: status)
    }
}
