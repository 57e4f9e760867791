import Foundation
import Prefs
import PrefsSupport
internal import PrefsJSON

/// What conditions read: the usage in the store, the parameters, the session and the app version. A feed message can
/// be judged on the same inputs (launches, days since the first launch, parameters the app sets).
struct ConditionInputs: Hashable, Sendable {
    var usage: StoredUsage<UsageRecord> = .absent
    /// The logs of the events the conditions name, by name (absent: never donated).
    var events: [String: StoredUsage<EventLog>] = [:]
    /// The parameters: the stored ones, with the session's (in memory) over them.
    var parameters: [String: DialogCondition.Value] = [:]
    /// Why the stored parameters cannot be read, if they cannot.
    var parametersProblem: String?
    /// Whether the session's parameters are known: false in `prefs-tool`, which sees only the stored ones.
    var sessionParametersKnown = true
    /// The session's launch token; nil in `prefs-tool`, which judges "first session" by the launch count.
    var session: String?
    var appVersion: String?
}

extension ConditionInputs {
    /// The inputs of conditions that count `eventNames`, read through `read` (a key's stored value), for `session` (its
    /// launch, and its parameters over the stored ones) and `appVersion`. A value that cannot be read is kept as such:
    /// the conditions that read it are unmet, and say why.
    static func reading(
        eventNames: Set<String>, session: DialogSession, appVersion: String?, _ read: (String) throws(PrefsError) -> StoredValue?
    ) -> ConditionInputs {
        var inputs = ConditionInputs(session: session.launchToken, appVersion: appVersion)
        func stored<Value: PrefsStorable & Hashable & Sendable>(_ name: String, as: Value.Type) -> StoredUsage<Value> {
            do {
                return StoredUsage.decoding(try read(name), key: name)
            } catch {
                return .unreadable(error)
            }
        }
        inputs.usage = stored(UsageRecord.key.name, as: UsageRecord.self)
        for name in eventNames {
            var log = stored(EventLog.storeKeyName(for: name), as: EventLog.self)
            if let found = log.value, found.name != name { log = .absent }  // another event's (a hash collision)
            inputs.events[name] = log
        }
        switch stored(StoredParameters.keyName, as: StoredParameters.self) {
        case .absent: break
        case .present(let parameters): inputs.parameters = parameters.values.mapValues(\.value)
        case .unreadable(let error): inputs.parametersProblem = "stored parameters unreadable: \(error)"
        }
        inputs.parameters.merge(session.parameters) { _, inMemory in inMemory }
        return inputs
    }
}

/// How a dialog's policy counts: versions grouped as its ``DialogPolicy/resetsOn`` counts them, and usage counted from
/// the running version's first launch when a version reset clears the history.
struct ConditionCounting: Hashable, Sendable {
    var grouping: DialogPolicy.VersionChange?
    var historySince: DialogPolicy.VersionChange?

    init(grouping: DialogPolicy.VersionChange? = nil, historySince: DialogPolicy.VersionChange? = nil) {
        self.grouping = grouping
        self.historySince = historySince
    }

    init(_ policy: DialogPolicy) {
        grouping = policy.resetsOn
        historySince = policy.resetClears.contains(.history) ? policy.resetsOn : nil
    }
}

/// One condition judged: met or not (nil: unknown, in `prefs-tool` for a parameter the app keeps in memory), and what
/// it saw, with the parts of an `all` or `any`.
package struct ConditionStatus: Hashable, Sendable {
    package var condition: DialogCondition
    package var met: Bool?
    /// The current value: `2`, `1 day`, `false`, `not set`, `no launch recorded`.
    package var current: String
    package var parts: [ConditionStatus] = []

    /// What a line of `prefs-tool dialogs explain` names: the condition, or `all of:` and `any of:` above their parts.
    package var heading: String {
        switch condition.kind {
        case .all: "all of:"
        case .any: "any of:"
        default: condition.description
        }
    }

    /// The status and its parts, depth first, each with its depth (0 for this one).
    package var flattened: [(depth: Int, status: ConditionStatus)] {
        [(0, self)] + parts.flatMap { $0.flattened.map { ($0.depth + 1, $0.status) } }
    }
}

/// The condition rules: pure functions of the condition, the inputs, the dialog's presentations and the clock.
enum ConditionRules {
    static let day: TimeInterval = 86_400

    /// Judges `condition` for a dialog presented at `presentations` (anchored at `presentationsAnchor`).
    static func evaluate(
        _ condition: DialogCondition, _ inputs: ConditionInputs, counting: ConditionCounting, presentations: [Date],
        presentationsAnchor: Date?, now: Date
    ) -> ConditionStatus {
        func status(_ met: Bool?, _ current: String) -> ConditionStatus {
            ConditionStatus(condition: condition, met: met, current: current)
        }
        let usage = inputs.usage.value
        // The running version's first launch, when usage counts from it.
        let baseline = counting.historySince.flatMap { change in
            inputs.appVersion.flatMap { usage?.firstLaunch(of: $0, counting: change) }
        }
        let sinceVersion = counting.historySince != nil ? " in \(inputs.appVersion.map(PrefsText.quoted) ?? "this version")" : ""
        switch condition.kind {
        case .launches(let required):
            if let problem = inputs.usage.problem { return status(required <= 0 ? true : false, problem) }
            guard let usage else { return status(required <= 0, "no launch recorded") }
            var launches = usage.launches
            if counting.historySince != nil {
                // Numbers a store holds may be any (a hand-edited record): no overflow.
                let (since, overflow) = usage.launches.subtractingReportingOverflow(baseline?.launchesBefore ?? usage.launches)
                launches = overflow ? 0 : max(0, since)
            }
            return status(launches >= required, "\(launches)\(sinceVersion)")

        case .daysSinceFirstLaunch(let days):
            if let problem = inputs.usage.problem { return status(days <= 0, problem) }
            guard let first = usage?.firstLaunch else { return status(days <= 0, "no launch recorded") }
            let elapsed = elapsed(since: first, anchor: usage?.firstLaunchReanchoredAt, now: now)
            return status(elapsed >= Double(days) * day, daysText(elapsed))

        case .daysSinceVersionFirstSeen(let days):
            if let problem = inputs.usage.problem { return status(days <= 0, problem) }
            guard let version = inputs.appVersion else { return status(days <= 0, "no app version (DialogGate's appVersion)") }
            guard let seen = usage?.firstLaunch(of: version, counting: counting.grouping) else {
                return status(days <= 0, "\(PrefsText.quoted(version)) not launched yet")
            }
            let elapsed = elapsed(since: seen.firstSeen, anchor: seen.reanchoredAt, now: now)
            return status(elapsed >= Double(days) * day, daysText(elapsed))

        case .event(let name, let required, let window):
            let stored = inputs.events[name] ?? .absent
            if let problem = stored.problem { return status(required <= 0, problem) }
            guard let log = stored.value else { return status(required <= 0, "0\(sinceVersion)") }
            var count: Int
            if window == nil && counting.historySince == nil {
                count = log.count
            } else {
                let anchor = log.reanchored(now: now).reanchoredAt
                count = log.dates.count { date in
                    let inWindow = window.map { now < ClockRule.end(of: $0.timeInterval, from: date, anchor: anchor, now: now) } ?? true
                    let inVersion = counting.historySince == nil || baseline.map { date >= $0.firstSeen } ?? false
                    return inWindow && inVersion
                }
            }
            return status(count >= required, "\(count)\(sinceVersion)")

        case .parameter(let name, let required):
            if let value = inputs.parameters[name] { return status(value.matches(required), value.description) }
            if let problem = inputs.parametersProblem { return status(false, problem) }
            return inputs.sessionParametersKnown ? status(false, "not set") : status(nil, "not stored (the app may set it in memory)")

        case .notInFirstSession:
            if let problem = inputs.usage.problem { return status(false, problem) }
            guard let usage, usage.launches > 0 else { return status(false, "no launch recorded") }
            guard let session = inputs.session else {
                return usage.launches > 1 ? status(true, "launch \(usage.launches)") : status(false, "launch 1: the first session")
            }
            return usage.firstSession == session ? status(false, "the first session") : status(true, "not the first session")

        case .presentedFewerThan(let limit, let window):
            let ends = presentations.map { ClockRule.end(of: window.timeInterval, from: $0, anchor: presentationsAnchor, now: now) }
                .filter { now < $0 }.sorted()
            guard ends.count >= limit else { return status(true, "\(ends.count)") }
            // Eligible again once enough of them leave the window (never, for a limit of 0 or less).
            let next = limit > 0 ? ends[ends.count - limit] : nil
            return status(false, "\(ends.count)" + (next.map { ", until \(ISO8601.format($0, fractionDigits: 0))" } ?? ""))

        case .all(let conditions), .any(let conditions):
            let parts = conditions.map {
                evaluate($0, inputs, counting: counting, presentations: presentations, presentationsAnchor: presentationsAnchor, now: now)
            }
            let met: Bool?
            if case .all = condition.kind {
                met = parts.contains { $0.met == false } ? false : parts.contains { $0.met == nil } ? nil : true
            } else {
                met = parts.contains { $0.met == true } ? true : parts.contains { $0.met == nil } ? nil : false
            }
            let current = parts.map { "\($0.condition): \($0.current)" }.joined(separator: "; ")
            return ConditionStatus(condition: condition, met: met, current: current, parts: parts)

        case .unrecognized:
            return status(nil, "not read by this release")
        }
    }

    /// Seconds since `start`: while the clock is behind it (set back), since when that was first seen (see ``ClockRule``).
    static func elapsed(since start: Date, anchor: Date?, now: Date) -> TimeInterval {
        if now >= start { return now.timeIntervalSince(start) }
        return now.timeIntervalSince(ClockRule.anchor(anchor, behind: start, now: now) ?? now)
    }

    /// `0 days`, `1 day`, `12 days`: whole days.
    static func daysText(_ seconds: TimeInterval) -> String {
        let days = (seconds / day).rounded(.down)
        guard let whole = Int(exactly: days) else { return "\(days) days" }
        return whole == 1 ? "1 day" : "\(whole) days"
    }

    /// The reasons an unmet condition gives a decision: one per unmet part of a top-level `all` (and of an `all` in it),
    /// one for any other condition.
    static func unmetReasons(_ status: ConditionStatus) -> [DialogReason] {
        if status.met == true { return [] }
        if case .all = status.condition.kind { return status.parts.flatMap(unmetReasons) }
        return [.conditionUnmet(status.condition, current: status.current)]
    }
}
