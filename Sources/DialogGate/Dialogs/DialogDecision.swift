import Foundation
import PrefsSupport
import MessageFeed
import Prefs
internal import PrefsJSON

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
    /// "Never remind" was chosen (the date is nil in no record DialogGate writes).
    case neverRemind(since: Date?)
    /// The policy's never-remind key, written by older code, reads as true (as `UserDefaults.bool(forKey:)`
    /// reads it: `true`, `"YES"`, `"true"`, `1`, `1.0`).
    case legacyNeverRemind(key: String)
    /// "Remind later" until this date.
    case snoozed(until: Date)
    /// Presented as many times as the policy allows.
    case presentationLimitReached(shown: Int, limit: Int)
    /// Presented too recently.
    case tooSoon(lastPresented: Date, nextAllowed: Date)
    /// The app version changed, so earlier answers no longer count.
    case resetByAppVersionChange(from: String, to: String)
    /// "Never remind" was chosen, but longer ago than the policy's ``DialogPolicy/neverRemindExpiry``: asked again.
    case neverRemindExpired(since: Date)
    /// A dialog was presented in this session already (``DisplayFrequency/oncePerSession-type.property``).
    case anotherDialogThisSession
    /// A dialog was presented too recently (``DisplayFrequency/minimumInterval``).
    case displayFrequency(lastPresented: Date, nextAllowed: Date)
    /// A QA override decided (see ``DialogOverrides``).
    case overridden(DialogOverrides.Mode)
    /// A QA override forces this dialog id.
    case forced
    /// The dialog is on screen already: another call, gate or process holds a presentation of it
    /// (see ``DialogGate/claim(_:)``).
    case alreadyPresenting
    /// A condition of the policy (``DialogPolicy/conditions``) is unmet, with what it saw: `launches ≥ 5` with `2`.
    /// Each unmet part of an `all` is a reason of its own.
    case conditionUnmet(DialogCondition, current: String)
    /// The app version changed under a policy whose reset clears the history only (``DialogPolicy/ResetScope/history``):
    /// the count starts over, the answers hold.
    case historyResetByAppVersionChange(from: String, to: String)

    public var description: String {
        switch self {
        case .eligible(let shown, let limit):
            limit.map { "eligible (shown \(shown) of \($0) times)" } ?? "eligible (shown \(shown) times)"
        case .suppressedForSession: "suppressed for this session (OK)"
        case .neverRemind(let since): since.map { "never remind since \(ISO8601.format($0, fractionDigits: 0))" } ?? "never remind"
        case .legacyNeverRemind(let key): "never remind (legacy key \(key))"
        case .snoozed(let until): "snoozed until \(ISO8601.format(until, fractionDigits: 0))"
        case .presentationLimitReached(let shown, let limit): "shown \(shown) of \(limit) times"
        case .tooSoon(let last, let next):
            "last shown \(ISO8601.format(last, fractionDigits: 0)); not again before \(ISO8601.format(next, fractionDigits: 0))"
        case .resetByAppVersionChange(let from, let to): "answers reset by the app version change \(from) → \(to)"
        case .neverRemindExpired(let since): "never remind since \(ISO8601.format(since, fractionDigits: 0)) has expired"
        case .anotherDialogThisSession: "a dialog was presented in this session already"
        case .displayFrequency(let last, let next):
            "a dialog was presented at \(ISO8601.format(last, fractionDigits: 0)); none again before \(ISO8601.format(next, fractionDigits: 0))"
        case .overridden(let mode): "QA override: \(mode)"
        case .forced: "QA override: forced"
        case .alreadyPresenting: "already being presented"
        case .conditionUnmet(let condition, let current): "condition not met: \(condition) (now \(current))"
        case .historyResetByAppVersionChange(let from, let to): "presentation history reset by the app version change \(from) → \(to)"
        }
    }
}

/// The decision rules: a pure function of the dialog, its stored state, the session, the context and the clock.
/// Internal: ``DialogGate`` is the thin I/O shell an app calls; tests reach the rules with `@testable import`.
enum DialogRules {
    /// The inputs the rules read.
    struct Input: Sendable, Hashable {
        var record: DialogRecord?
        /// The policy's ``DialogPolicy/neverRemindKey`` when the value stored under it (by older code) reads as true.
        var legacyNeverRemindKey: String?
        /// A launch argument naming the policy's never-remind key (`-UserHasSeenMsg NO`), read as a `Bool`, which
        /// decides "never remind" for this launch above the store: true hides, false shows as though none was recorded.
        /// Nil when no argument names it (or it does not read as a `Bool`).
        var neverRemindArgument: Bool?
        var suppressedForSession: Bool
        /// Whether a presentation of the dialog is on screen now (a live ``DialogRecord/claim``).
        var beingPresented: Bool
        var appVersion: String?
        var now: Date
        var overrides: DialogOverrides
        /// The gate's limit across dialogs, with whether this session presented one and when any was last presented
        /// (with its clock anchor: see ``ClockRule``).
        var displayFrequency: DisplayFrequency
        var sessionPresentedAny: Bool
        var lastPresentationOfAny: DialogGate.LastPresentation
        /// What the policy's conditions read (the store's usage, the parameters, the session).
        var conditions: ConditionInputs

        init(
            record: DialogRecord?, legacyNeverRemindKey: String? = nil, neverRemindArgument: Bool? = nil, suppressedForSession: Bool = false,
            beingPresented: Bool = false, appVersion: String? = nil, now: Date, overrides: DialogOverrides = DialogOverrides(),
            displayFrequency: DisplayFrequency = .unlimited, sessionPresentedAny: Bool = false,
            lastPresentationOfAny: DialogGate.LastPresentation = DialogGate.LastPresentation(), conditions: ConditionInputs = ConditionInputs()
        ) {
            self.record = record
            self.legacyNeverRemindKey = legacyNeverRemindKey
            self.neverRemindArgument = neverRemindArgument
            self.suppressedForSession = suppressedForSession
            self.beingPresented = beingPresented
            self.appVersion = appVersion
            self.now = now
            self.overrides = overrides
            self.displayFrequency = displayFrequency
            self.sessionPresentedAny = sessionPresentedAny
            self.lastPresentationOfAny = lastPresentationOfAny
            self.conditions = conditions
        }
    }

    /// The record the rules use: the stored one, or, when the app version changed under a policy that resets, one with
    /// what the policy's ``DialogPolicy/resetClears`` clears cleared (a fresh one for `.all`). The dates
    /// ``DialogCondition/presentedFewerThan(_:within:)`` counts are kept whatever the version.
    static func effectiveRecord(_ record: DialogRecord?, policy: DialogPolicy, appVersion: String?) -> (DialogRecord, DialogReason?) {
        guard let record else { return (DialogRecord(), nil) }
        let scope = policy.resetClears
        guard let change = policy.resetsOn, !scope.isEmpty, let appVersion, let recorded = record.appVersion,
            isNewVersion(appVersion, since: recorded, change)
        else { return (record, nil) }
        var reset: DialogRecord
        if scope.contains(.all) {
            reset = DialogRecord()
        } else {
            reset = record
            reset.appVersion = nil  // stamped with the running version when written
            if scope.contains(.answers) {
                reset.neverRemindSince = nil
                reset.neverRemindReanchoredAt = nil
                reset.snoozedUntil = nil
                reset.snoozedAt = nil
                reset.snoozeReanchoredAt = nil
                reset.lastResponse = nil
                reset.lastResponseDate = nil
            }
            if scope.contains(.history) {
                reset.presentations = 0
                reset.firstPresented = nil
                reset.lastPresented = nil
                reset.lastPresentedReanchoredAt = nil
            }
        }
        reset.recentPresentations = record.recentPresentations
        reset.recentPresentationsReanchoredAt = record.recentPresentationsReanchoredAt
        let note: DialogReason =
            scope.contains(.answers)
            ? .resetByAppVersionChange(from: recorded, to: appVersion) : .historyResetByAppVersionChange(from: recorded, to: appVersion)
        return (reset, note)
    }

    /// Whether `running` is a new version since `recorded` under `change`, both read as ``RunningVersion``s (release,
    /// pre-release, build); two versions that do not both start with a number compare as text.
    static func isNewVersion(_ running: String, since recorded: String, _ change: DialogPolicy.VersionChange) -> Bool {
        guard let old = RunningVersion(recorded), let new = RunningVersion(running) else { return running != recorded }
        let newRelease = old.release != new.release
        switch change {
        case .newRelease: return newRelease
        case .newVersion: return newRelease || !old.hasSamePreRelease(as: new)
        case .newBuild: return newRelease || !old.hasSamePreRelease(as: new) || old.build != new.build
        }
    }

    /// The record with its clock anchors brought up to `now` (see ``ClockRule``); the recorded times themselves
    /// never change. DialogGate stores the result when it differs.
    static func reanchored(_ record: DialogRecord, now: Date) -> DialogRecord {
        var record = record
        record.lastPresentedReanchoredAt = ClockRule.anchor(record.lastPresentedReanchoredAt, behind: record.lastPresented, now: now)
        record.snoozeReanchoredAt = record.snoozedUntil == nil ? nil : ClockRule.anchor(record.snoozeReanchoredAt, behind: record.snoozedAt, now: now)
        record.neverRemindReanchoredAt = ClockRule.anchor(record.neverRemindReanchoredAt, behind: record.neverRemindSince, now: now)
        record.recentPresentationsReanchoredAt = ClockRule.anchor(
            record.recentPresentationsReanchoredAt, behind: record.recentPresentations?.max(), now: now)
        return record
    }

    /// When the snooze ends for `now`: the recorded end, or, while the clock is behind the answer, its length
    /// from the re-anchored start.
    static func snoozeEnd(_ record: DialogRecord, now: Date) -> Date? {
        guard let until = record.snoozedUntil else { return nil }
        guard let at = record.snoozedAt else { return until }
        return ClockRule.end(of: until.timeIntervalSince(at), from: at, anchor: record.snoozeReanchoredAt, now: now)
    }

    /// Whether `dialog` is done for a group shown in order (``DialogGate/claim(nextOf:)``): it will not be eligible again
    /// by itself, whatever the time: never remind (unexpired, or under a legacy key) or its presentation limit reached.
    static func isDone(_ dialog: Dialog, _ input: Input) -> Bool {
        let (stored, versionNote) = effectiveRecord(input.record, policy: dialog.policy, appVersion: input.appVersion)
        let record = reanchored(stored, now: input.now)
        if let argument = input.neverRemindArgument {
            if argument { return true }
        } else if let since = record.neverRemindSince {
            guard let expiry = dialog.policy.neverRemindExpiry else { return true }
            if input.now < ClockRule.end(of: expiry.timeInterval, from: since, anchor: record.neverRemindReanchoredAt, now: input.now) { return true }
        } else if input.legacyNeverRemindKey != nil, versionNote?.clearsAnswers != true {
            return true
        }
        if let limit = dialog.policy.maximumPresentations, record.presentations >= limit { return true }
        return false
    }

    static func decide(_ dialog: Dialog, _ input: Input) -> DialogDecision {
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
        if input.beingPresented { blocking.append(.alreadyPresenting) }
        if input.suppressedForSession { blocking.append(.suppressedForSession) }
        var notes = versionNote.map { [$0] } ?? []
        if let argument = input.neverRemindArgument, let key = dialog.policy.neverRemindKey {
            // The launch argument decides for this launch, above the record and the stored key (QA's `-UserHasSeenMsg NO`).
            if argument { blocking.append(.legacyNeverRemind(key: key)) }
        } else if let since = record.neverRemindSince {
            // The legacy key, written with the answer, expires with it: only a record without an answer date defers to it.
            if let expiry = dialog.policy.neverRemindExpiry,
                input.now >= ClockRule.end(of: expiry.timeInterval, from: since, anchor: record.neverRemindReanchoredAt, now: input.now)
            {
                notes.append(.neverRemindExpired(since: since))
            } else {
                blocking.append(.neverRemind(since: since))
            }
        } else if let key = input.legacyNeverRemindKey, versionNote?.clearsAnswers != true {
            blocking.append(.legacyNeverRemind(key: key))
        }
        if let until = snoozeEnd(record, now: input.now), input.now < until { blocking.append(.snoozed(until: until)) }
        if let limit = dialog.policy.maximumPresentations, record.presentations >= limit {
            blocking.append(.presentationLimitReached(shown: record.presentations, limit: limit))
        }
        if let interval = dialog.policy.minimumInterval, let last = record.lastPresented {
            let nextAllowed = ClockRule.end(of: interval.timeInterval, from: last, anchor: record.lastPresentedReanchoredAt, now: input.now)
            if input.now < nextAllowed { blocking.append(.tooSoon(lastPresented: last, nextAllowed: nextAllowed)) }
        }
        if !dialog.policy.ignoresDisplayFrequency {
            if input.displayFrequency.oncePerSession && input.sessionPresentedAny { blocking.append(.anotherDialogThisSession) }
            let any = input.lastPresentationOfAny
            if let interval = input.displayFrequency.minimumInterval, let last = any.date {
                let next = ClockRule.end(of: interval.timeInterval, from: last, anchor: any.reanchoredAt, now: input.now)
                if input.now < next { blocking.append(.displayFrequency(lastPresented: last, nextAllowed: next)) }
            }
        }
        if let condition = dialog.policy.conditions {
            let status = ConditionRules.evaluate(
                condition, input.conditions, counting: ConditionCounting(dialog.policy), presentations: record.recentPresentations ?? [],
                presentationsAnchor: record.recentPresentationsReanchoredAt, now: input.now)
            blocking += ConditionRules.unmetReasons(status)
        }
        if blocking.isEmpty {
            return decision(true, notes + [.eligible(shown: record.presentations, limit: dialog.policy.maximumPresentations)])
        }
        return decision(false, notes + blocking)
    }
}

extension DialogReason {
    /// Whether this version-reset note cleared the answers (never remind, snooze).
    var clearsAnswers: Bool {
        if case .resetByAppVersionChange = self { return true }
        return false
    }
}
