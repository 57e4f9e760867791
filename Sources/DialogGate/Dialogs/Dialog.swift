import Foundation
import Prefs

/// A local dialog an app may show: a stable id and the policy that decides when.
///
/// ```swift
/// let welcome = Dialog("welcome")                                    // OK hides it for this session
/// let tips = Dialog("tips", policy: .init(maximumPresentations: 3, minimumInterval: .seconds(86_400)))
/// let legacy = Dialog("intro", policy: .init(neverRemindKey: "UserHasSeenMsg"))  // seed 000's key keeps working
/// ```
public struct Dialog: Sendable, Hashable, Identifiable {
    /// Stable across releases: the stored state is kept under it.
    public let id: String
    public var policy: DialogPolicy

    public init(_ id: String, policy: DialogPolicy = DialogPolicy()) {
        self.id = id
        self.policy = policy
    }
}

/// When a dialog may be presented, beyond the user's own answers.
public struct DialogPolicy: Sendable, Hashable {
    /// Presentations allowed in all, until reset; nil for no limit.
    public var maximumPresentations: Int?
    /// The shortest time between two presentations; nil for none.
    public var minimumInterval: Duration?
    /// When true, a new app version clears never-remind, snooze and the presentation count.
    public var resetsOnAppVersionChange: Bool
    /// A store key holding `true` once the user chose never-remind, for stores written by older code:
    /// seed 000 passes any key (`"UserHasSeenMsg"`), seed 001 uses `"dialog_neverAgain"`. DialogGate reads it and writes it.
    public var neverRemindKey: String?

    public init(
        maximumPresentations: Int? = nil,
        minimumInterval: Duration? = nil,
        resetsOnAppVersionChange: Bool = false,
        neverRemindKey: String? = nil
    ) {
        self.maximumPresentations = maximumPresentations
        self.minimumInterval = minimumInterval
        self.resetsOnAppVersionChange = resetsOnAppVersionChange
        self.neverRemindKey = neverRemindKey
    }
}

/// The user's answer to a presented dialog.
public enum DialogResponse: Sendable, Hashable, CustomStringConvertible {
    /// "OK": not again in this session (the process's lifetime, or an explicit ``DialogSession``).
    case ok
    /// "Don't remind me": not again until reset.
    case neverRemind
    /// "Remind me later", at a date.
    case remindLater(until: Date)
    /// "Remind me later", after an interval.
    case remindLaterAfter(Duration)
    /// Closed without an answer: nothing is suppressed.
    case dismiss

    public var description: String {
        switch self {
        case .ok: "ok"
        case .neverRemind: "never remind"
        case .remindLater(let date): "remind later (until \(ISO8601.format(date, fractionDigits: 0)))"
        case .remindLaterAfter(let interval): "remind later (after \(interval))"
        case .dismiss: "dismiss"
        }
    }
}
