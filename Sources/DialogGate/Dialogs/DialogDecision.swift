import Foundation
import Prefs

/// Whether to present a dialog now, with every reason that decided it.
///
/// ```swift
/// let decision = gate.decision(for: welcome)
/// if decision.shouldPresent { … } else { print(decision) }   // "welcome: not presented: never remind since 2026-11-29T10:00:00Z"
/// ```
public struct DialogDecision: Sendable, Hashable, CustomStringConvertible {
    public var dialogID: String
    public var shouldPresent: Bool
    /// Why: the rules that blocked it, or why it may be presented (and informational notes such as a version reset).
    public var reasons: [DialogReason]

    public var description: String {
        "\(dialogID): \(shouldPresent ? "present" : "not presented"): " + reasons.map(\.description).joined(separator: "; ")
    }
}

/// One reason in a ``DialogDecision``.
public enum DialogReason: Sendable, Hashable, CustomStringConvertible {
    /// Nothing blocks it; `shown` presentations so far, out of `limit`.
    case eligible(shown: Int, limit: Int?)
    /// "OK" was chosen in this session.
    case suppressedForSession
    /// "Never remind" was chosen (the date is unknown when only a legacy key says so).
    case neverRemind(since: Date?)
    /// "Remind later" until this date.
    case snoozed(until: Date)
    /// Presented as many times as the policy allows.
    case presentationLimitReached(shown: Int, limit: Int)
    /// Presented too recently.
    case tooSoon(lastPresented: Date, nextAllowed: Date)
    /// The app version changed, so earlier answers no longer count.
    case resetByAppVersionChange(from: String, to: String)
    /// A QA override decided (see ``DialogOverrides``).
    case overridden(DialogOverrides.Mode)
    /// A QA override forces this dialog id.
    case forced
    /// ``DialogGate/presentIfNeeded(_:present:)`` is presenting this dialog already (a concurrent call).
    case alreadyPresenting

    public var description: String {
        switch self {
        case .eligible(let shown, let limit):
            limit.map { "eligible (shown \(shown) of \($0) times)" } ?? "eligible (shown \(shown) times)"
        case .suppressedForSession: "suppressed for this session (OK)"
        case .neverRemind(let since): since.map { "never remind since \(ISO8601.format($0, fractionDigits: 0))" } ?? "never remind"
        case .snoozed(let until): "snoozed until \(ISO8601.format(until, fractionDigits: 0))"
        case .presentationLimitReached(let shown, let limit): "shown \(shown) of \(limit) times"
        case .tooSoon(let last, let next):
            "last shown \(ISO8601.format(last, fractionDigits: 0)); not again before \(ISO8601.format(next, fractionDigits: 0))"
        case .resetByAppVersionChange(let from, let to): "answers reset by the app version change \(from) → \(to)"
        case .overridden(let mode): "QA override: \(mode)"
        case .forced: "QA override: forced"
        case .alreadyPresenting: "already being presented"
        }
    }
}

/// The decision rules: a pure function of the dialog, its stored state, the session, the context and the clock.
public enum DialogRules {
    /// The inputs the rules read.
    public struct Input: Sendable, Hashable {
        public var record: DialogRecord?
        /// `true` stored under the policy's ``DialogPolicy/neverRemindKey`` (written by older code).
        public var legacyNeverRemind: Bool
        public var suppressedForSession: Bool
        public var appVersion: String?
        public var now: Date
        public var overrides: DialogOverrides

        public init(record: DialogRecord?, legacyNeverRemind: Bool = false, suppressedForSession: Bool = false,
                    appVersion: String? = nil, now: Date, overrides: DialogOverrides = DialogOverrides()) {
            self.record = record
            self.legacyNeverRemind = legacyNeverRemind
            self.suppressedForSession = suppressedForSession
            self.appVersion = appVersion
            self.now = now
            self.overrides = overrides
        }
    }

    /// The record the rules use: the stored one, or a fresh one when the app version changed under a policy that resets.
    public static func effectiveRecord(_ record: DialogRecord?, policy: DialogPolicy, appVersion: String?) -> (DialogRecord, DialogReason?) {
        guard let record else { return (DialogRecord(), nil) }
        if policy.resetsOnAppVersionChange, let appVersion, let recorded = record.appVersion, recorded != appVersion {
            return (DialogRecord(), .resetByAppVersionChange(from: recorded, to: appVersion))
        }
        return (record, nil)
    }

    /// The record with its times moved to `now` when the clock went back before them: a snooze or cooldown
    /// then runs its remaining length from now. It never fires early, and waits at most its own length
    /// plus the time that had passed before the jump, instead of the whole jump. DialogGate stores the result.
    public static func reanchored(_ record: DialogRecord, now: Date) -> DialogRecord {
        var record = record
        if let last = record.lastPresented, now < last { record.lastPresented = now }
        if let at = record.snoozedAt, let until = record.snoozedUntil, now < at {
            record.snoozedUntil = now.addingTimeInterval(until.timeIntervalSince(at))
            record.snoozedAt = now
        }
        return record
    }

    public static func decide(_ dialog: Dialog, _ input: Input) -> DialogDecision {
        func decision(_ present: Bool, _ reasons: [DialogReason]) -> DialogDecision {
            DialogDecision(dialogID: dialog.id, shouldPresent: present, reasons: reasons)
        }
        if input.overrides.forced.contains(dialog.id) { return decision(true, [.forced]) }
        switch input.overrides.mode {
        case .hideAll: return decision(false, [.overridden(.hideAll)])
        case .showAll: return decision(true, [.overridden(.showAll)])
        case .none: break
        }

        let (stored, versionNote) = effectiveRecord(input.record, policy: dialog.policy, appVersion: input.appVersion)
        let record = reanchored(stored, now: input.now)
        var blocking: [DialogReason] = []
        if input.suppressedForSession { blocking.append(.suppressedForSession) }
        if let since = record.neverRemindSince {
            blocking.append(.neverRemind(since: since))
        } else if input.legacyNeverRemind && versionNote == nil {
            blocking.append(.neverRemind(since: nil))
        }
        if let until = record.snoozedUntil, input.now < until { blocking.append(.snoozed(until: until)) }
        if let limit = dialog.policy.maximumPresentations, record.presentations >= limit {
            blocking.append(.presentationLimitReached(shown: record.presentations, limit: limit))
        }
        if let interval = dialog.policy.minimumInterval, let last = record.lastPresented {
            let nextAllowed = last.addingTimeInterval(interval.timeInterval)
            if input.now < nextAllowed { blocking.append(.tooSoon(lastPresented: last, nextAllowed: nextAllowed)) }
        }
        let notes = versionNote.map { [$0] } ?? []
        if blocking.isEmpty {
            return decision(true, notes + [.eligible(shown: record.presentations, limit: dialog.policy.maximumPresentations)])
        }
        return decision(false, notes + blocking)
    }
}

extension Duration {
    /// Seconds as a `TimeInterval`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
