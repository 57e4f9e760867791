import Foundation
import Prefs
internal import PrefsJSON

/// A local dialog an app may show: a stable id and the policy that decides when.
///
/// ```swift
/// let welcome = Dialog("welcome")                                    // OK hides it for this session
/// let tips = Dialog("tips", policy: .init(maximumPresentations: 3, minimumInterval: .seconds(86_400)))
/// let legacy = Dialog("intro", policy: .init(neverRemindKey: "UserHasSeenMsg"))  // a legacy key keeps working
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
    /// Which change of the app version (``DialogGate/appVersion``) clears never-remind, snooze and the presentation
    /// count (or only some: see ``resetClears``); nil (the default) for none. `.newVersion` counts a pre-release and its release as two versions, so an
    /// answer given in `2.0-beta.3` does not hold in `2.0`; `.newRelease` lets it hold; `.newBuild` also resets on a
    /// new build of one version (`2.0 (145)` → `2.0 (146)`). See ``VersionChange``.
    public var resetsOn: VersionChange?
    /// A store key holding `true` once the user chose never-remind, for stores written by older code:
    /// a key the caller chose (`"UserHasSeenMsg"`) or an app's own constant (`"dialog_neverAgain"`). DialogGate reads
    /// it and writes it; a launch argument naming it (`-UserHasSeenMsg NO`) decides for that launch, and is not stored.
    /// Any name UserDefaults accepted works, white space at either end included (`"Intro tip "`); only one holding
    /// U+0000 (or over 1 MiB) is refused, with `PrefsError.invalidKeyName` from the calls that write it.
    public var neverRemindKey: String?
    /// How long "never remind" holds before the dialog may be asked again ("ask again in 6 months"); nil for ever.
    /// It runs from the recorded answer; a never-remind only a legacy key records has no date and does not expire.
    public var neverRemindExpiry: Duration?
    /// Whether the gate's ``DialogGate/displayFrequency`` leaves this dialog alone (a critical notice).
    public var ignoresDisplayFrequency: Bool
    /// When it is time to show the dialog (launches, days, events, parameters, recent presentations); nil for always.
    /// Unmet conditions make it not eligible, each with its current value in the decision's reasons.
    ///
    /// ```swift
    /// DialogPolicy(conditions: .all([.launches(atLeast: 5), .daysSinceFirstLaunch(atLeast: 3)]))
    /// ```
    public var conditions: DialogCondition?
    /// What a version reset (``resetsOn``) clears: the answers, the history, or both (the default).
    ///
    /// ```swift
    /// DialogPolicy(resetsOn: .newVersion, resetClears: .answers)   // "never" asks again in a new version; the count stays
    /// ```
    public var resetClears: ResetScope

    /// A policy; every part is optional.
    ///
    /// ```swift
    /// DialogPolicy(maximumPresentations: 1, resetsOn: .newRelease, resetClears: .history,
    ///              conditions: .all([.launches(atLeast: 5), .event("photoSaved", atLeast: 3)]))
    /// ```
    public init(
        maximumPresentations: Int? = nil,
        minimumInterval: Duration? = nil,
        resetsOn: VersionChange? = nil,
        neverRemindKey: String? = nil,
        neverRemindExpiry: Duration? = nil,
        ignoresDisplayFrequency: Bool = false,
        resetClears: ResetScope = .all,
        conditions: DialogCondition? = nil
    ) {
        self.maximumPresentations = maximumPresentations
        self.minimumInterval = minimumInterval
        self.resetsOn = resetsOn
        self.neverRemindKey = neverRemindKey
        self.neverRemindExpiry = neverRemindExpiry
        self.ignoresDisplayFrequency = ignoresDisplayFrequency
        self.resetClears = resetClears
        self.conditions = conditions
    }

    /// What a version reset clears (``DialogPolicy/resetClears``). The presentation dates that
    /// ``DialogCondition/presentedFewerThan(_:within:)`` counts are never cleared by a version: "3 in 365 days" holds
    /// whatever the versions.
    ///
    /// ```swift
    /// DialogPolicy(maximumPresentations: 1, resetsOn: .newRelease, resetClears: .history)   // once per release; "never" holds
    /// ```
    public struct ResetScope: OptionSet, Sendable, Hashable {
        /// The options as bits: 1 for ``answers``, 2 for ``history``.
        public let rawValue: Int

        /// The options `rawValue` holds (`ResetScope(rawValue: 3)` is ``all``).
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// The user's answers: never remind (and the policy's never-remind key) and remind later.
        public static let answers = ResetScope(rawValue: 1)
        /// The usage history: the presentation count and when it was last shown (``maximumPresentations`` and
        /// ``minimumInterval`` start over), and the launches and donations conditions count, which then count from the
        /// new version's first launch.
        public static let history = ResetScope(rawValue: 2)
        /// Both: a new version starts the dialog afresh (the default).
        public static let all: ResetScope = [.answers, .history]
    }

    /// Which change of the app version counts as a new version for ``DialogPolicy/resetsOn``. Versions are read as the
    /// app reports them: a numeric release (`2.0` is `2.0.0`), a pre-release (`2.0-beta.3`, `2.0b3`) and a build
    /// (`2.0 (145)`, `2.0+145`); a version that does not start with a number compares as text.
    ///
    /// ```swift
    /// DialogPolicy(resetsOn: .newVersion)   // 2.0-beta.3 → 2.0 asks again; 2.0 (145) → 2.0 (146) does not
    /// ```
    public enum VersionChange: Sendable, Hashable {
        /// A new release: `2.0` → `2.1`. A pre-release and its release are one version (an answer given in
        /// `2.0-beta.3` holds in `2.0`), and so are two builds of one version.
        case newRelease
        /// A new release or pre-release: `2.0-beta.3` → `2.0-beta.4` → `2.0` each reset; a new build of the same
        /// version does not.
        case newVersion
        /// Any change, builds included: `2.0 (145)` → `2.0 (146)` resets too.
        case newBuild
    }

    /// A policy with the earlier spelling of ``resetsOn``: `true` is `.newVersion`, under which a pre-release and its
    /// release are two versions (earlier releases counted them as one, as `.newRelease` does).
    @available(*, deprecated, message: "use resetsOn: .newVersion (a pre-release and its release are two versions) or .newRelease")
    public init(
        maximumPresentations: Int? = nil,
        minimumInterval: Duration? = nil,
        resetsOnAppVersionChange: Bool,
        neverRemindKey: String? = nil,
        neverRemindExpiry: Duration? = nil,
        ignoresDisplayFrequency: Bool = false
    ) {
        self.init(
            maximumPresentations: maximumPresentations, minimumInterval: minimumInterval, resetsOn: resetsOnAppVersionChange ? .newVersion : nil,
            neverRemindKey: neverRemindKey, neverRemindExpiry: neverRemindExpiry, ignoresDisplayFrequency: ignoresDisplayFrequency)
    }

    /// Whether any app version change resets: ``resetsOn`` is set (`true` sets `.newVersion`).
    @available(*, deprecated, message: "use resetsOn")
    public var resetsOnAppVersionChange: Bool {
        get { resetsOn != nil }
        set { resetsOn = newValue ? .newVersion : nil }
    }
}

/// How often any dialog of a gate may be presented, as TipKit's `displayFrequency`: an app never shows two nags
/// in one launch, or in one day. Dialogs whose policy ``DialogPolicy/ignoresDisplayFrequency`` are exempt. A remote
/// message shown counts as a presentation too (see ``MessageCenter``), and a center made with the gate waits for it.
///
/// ```swift
/// let gate = DialogGate(prefs: prefs, displayFrequency: .oncePerSession)
/// let daily = DialogGate(prefs: prefs, displayFrequency: .every(.seconds(86_400)))
/// ```
public struct DisplayFrequency: Sendable, Hashable {
    /// At most one presentation per ``DialogSession`` (by default the process's time on the gate's store: the launch).
    public var oncePerSession: Bool
    /// The shortest time between two presentations of any dialogs on the store, across processes; nil for none.
    public var minimumInterval: Duration?

    public init(oncePerSession: Bool = false, minimumInterval: Duration? = nil) {
        self.oncePerSession = oncePerSession
        self.minimumInterval = minimumInterval
    }

    /// No limit across dialogs (the default).
    public static let unlimited = DisplayFrequency()
    /// One dialog per session.
    public static let oncePerSession = DisplayFrequency(oncePerSession: true)
    /// One dialog per `interval`, across the processes on the store.
    public static func every(_ interval: Duration) -> DisplayFrequency { DisplayFrequency(minimumInterval: interval) }
}

/// The user's answer to a presented dialog, named by what it does. Two kinds of "OK" button are two answers:
///
/// | Button | Answer | Effect |
/// |---|---|---|
/// | "OK" for this launch (until the app is launched again) | ``hideForSession`` | not again in this session |
/// | "OK" that only closes the alert | ``dismiss`` | shown again at the next call |
/// | "Don't remind me", "Never remind me" | ``neverRemind`` | not again until reset |
///
/// ```swift
/// try presentation.finish(.hideForSession)   // [OK] hides it until the next launch
/// try presentation.finish(.dismiss)          // [OK] closes it; the next call shows it again
/// ```
public enum DialogResponse: Sendable, Hashable, CustomStringConvertible {
    /// "OK, not again for now": hidden for the rest of the session (by default the process's lifetime on the gate's
    /// store, see ``DialogSession``): an "OK" meaning "OK for this launch". Recorded as `ok`.
    case hideForSession
    /// "Don't remind me": not again until reset.
    case neverRemind
    /// "Remind me later", at a date.
    case remindLater(until: Date)
    /// "Remind me later", after an interval.
    case remindLaterAfter(Duration)
    /// Closed, nothing hidden: the next call shows it again. An "OK" that only closes the alert, and a dialog closed
    /// without an answer.
    case dismiss

    /// The earlier name of ``hideForSession``, which read as the answer to any "OK" button: an "OK" that only closes
    /// the alert is ``dismiss``.
    @available(*, deprecated, renamed: "hideForSession")
    public static var ok: DialogResponse { .hideForSession }

    /// `ok`, `never remind`, `remind later (…)`, `dismiss`: the names analytics has seen since the first release.
    public var description: String {
        switch self {
        case .hideForSession: "ok"
        case .neverRemind: "never remind"
        case .remindLater(let date): "remind later (until \(ISO8601.format(date, fractionDigits: 0)))"
        case .remindLaterAfter(let interval): "remind later (after \(interval))"
        case .dismiss: "dismiss"
        }
    }
}
