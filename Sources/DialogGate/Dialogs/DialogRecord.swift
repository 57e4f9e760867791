import Foundation
import PrefsSupport
@_spi(Tooling) import MessageFeed
@_spi(Tooling) import Prefs
internal import PrefsJSON

/// What DialogGate keeps about one dialog, stored as JSON under `dialogs.ID` in the app's `Prefs` store
/// (or `dialogs.h.HASH` for an id that is not a valid key name; see ``storeKeyName(for:)``).
///
/// Tooling API (`@_spi(Tooling) import DialogGate`): `prefs-tool dialogs` lists it; an app asks ``DialogGate`` instead.
@_spi(Tooling) public struct DialogRecord: Codable, Hashable, Sendable, PrefsStorable {
    /// The dialog's id, so a record stored under a hashed key can be listed and told apart from another
    /// id with the same hash. nil in records written before it was kept.
    public var id: String?
    /// How many times the dialog was presented: counted when a presentation ends with an answer (see
    /// ``DialogPresentation/finish(_:)``), so one interrupted by a crash is not counted and shows again.
    public var presentations = 0
    public var firstPresented: Date?
    public var lastPresented: Date?
    /// The last answer and when it was given.
    public var lastResponse: String?
    public var lastResponseDate: Date?
    /// Set by "never remind"; cleared by reset.
    public var neverRemindSince: Date?
    /// When the clock was first seen behind ``neverRemindSince``: a ``DialogPolicy/neverRemindExpiry`` then runs its
    /// length from here while the clock stays behind. Cleared once the clock is past ``neverRemindSince`` again.
    public var neverRemindReanchoredAt: Date?
    /// Set by "remind later": until when, and when the answer was given.
    public var snoozedUntil: Date?
    public var snoozedAt: Date?
    /// When the clock was first seen behind ``snoozedAt`` (set back since the answer): the snooze then runs its
    /// length from here while the clock stays behind. Cleared once the clock is past ``snoozedAt`` again.
    public var snoozeReanchoredAt: Date?
    /// When the clock was first seen behind ``lastPresented``: the minimum interval then runs from here while the
    /// clock stays behind. Cleared once the clock is past ``lastPresented`` again.
    public var lastPresentedReanchoredAt: Date?
    /// The app version the record was started with (for ``DialogPolicy/resetsOn``).
    public var appVersion: String?
    /// The policy's never-remind key when it has one, so a reset can clear it too.
    public var neverRemindKey: String?
    /// The presentation on screen now, if any (see ``DialogGate/claim(_:)``): no other gate or process presents
    /// the dialog while its holder runs.
    public var claim: Claim?

    public init() {}

    /// A presentation in progress: who holds it and since when.
    ///
    /// A claim binds while its holder process runs on this host (its id and start time name it), and until
    /// ``expiresAt`` for a holder on another host (a store on a shared disk). A holder that crashed leaves a claim
    /// that binds nothing: the dialog may be presented again at once.
    public struct Claim: Codable, Hashable, Sendable {
        /// Names this presentation; only its holder ends it.
        public var token: String
        /// When the dialog was put on screen; recorded as ``DialogRecord/lastPresented`` when it ends.
        public var claimedAt: Date
        /// Until when a holder on another host, which cannot be asked whether it still runs, keeps the claim.
        public var expiresAt: Date
        public var host: String
        public var processID: Int32
        /// The holder's start time, telling it from a later process given the same id; nil where it cannot be read.
        public var processStarted: UInt64?

        var holder: ProcessIdentity {
            ProcessIdentity(host: host, processID: processID, started: processStarted)
        }

        init(token: String, claimedAt: Date, expiresAt: Date, holder: ProcessIdentity) {
            self.token = token
            self.claimedAt = claimedAt
            self.expiresAt = expiresAt
            host = holder.host
            processID = holder.processID
            processStarted = holder.started
        }
    }

    /// The store key of a dialog's record (see ``storeKeyName(for:)``); any id has one.
    public static func storeKey(for id: String) throws -> Prefs.Key<DialogRecord?> {
        try Prefs.Key(validating: storeKeyName(for: id), initial: nil)
    }

    /// The name of the key a dialog's record is stored under: ``keyPrefix`` and the id when that is a valid
    /// key name; otherwise (an id with a newline or another control character, white space at either end,
    /// or too long) ``hashedKeyPrefix`` and 16 hex digits of the FNV-1a 64 hash of the id in Unicode NFC, the same in
    /// every process and release and for every spelling of the id (`é` precomposed or as `e` and a combining accent,
    /// as Swift compares strings). The record keeps the id itself (``id``).
    ///
    /// ```swift
    /// DialogRecord.storeKeyName(for: "welcome")         // "dialogs.welcome"
    /// DialogRecord.storeKeyName(for: "msg:Line 1\nLine 2")   // "dialogs.h." + 16 hex digits
    /// ```
    public static func storeKeyName(for id: String) -> String {
        let plain = keyPrefix + id
        return KeyName.problem(with: plain) == nil ? plain : hashedKeyPrefix + StableHash.hex(id.precomposedStringWithCanonicalMapping)
    }

    public static let keyPrefix = "dialogs."
    /// The prefix of the keys of records whose id is not a valid key name.
    public static let hashedKeyPrefix = "dialogs.h."
}
