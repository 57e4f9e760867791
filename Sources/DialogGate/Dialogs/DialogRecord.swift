import Foundation
import PrefsSupport
import MessageFeed
import Prefs
internal import PrefsJSON

/// What DialogGate keeps about one dialog, stored as JSON under `dialogs.ID` in the app's `Prefs` store
/// (or `dialogs.h.HASH` for an id that is not a valid key name; see ``storeKeyName(for:)``).
///
/// Package API: `prefs-tool dialogs` lists it; an app asks ``DialogGate`` instead.
package struct DialogRecord: Codable, Hashable, Sendable, PrefsStorable {
    /// The dialog's id, so a record stored under a hashed key can be listed and told apart from another
    /// id with the same hash. nil in records written before it was kept.
    package var id: String?
    /// How many times the dialog was presented: counted when a presentation ends with an answer (see
    /// ``DialogPresentation/finish(_:)``), so one interrupted by a crash is not counted and shows again.
    package var presentations = 0
    package var firstPresented: Date?
    package var lastPresented: Date?
    /// The last answer and when it was given.
    package var lastResponse: String?
    package var lastResponseDate: Date?
    /// Set by "never remind"; cleared by reset.
    package var neverRemindSince: Date?
    /// When the clock was first seen behind ``neverRemindSince``: a ``DialogPolicy/neverRemindExpiry`` then runs its
    /// length from here while the clock stays behind. Cleared once the clock is past ``neverRemindSince`` again.
    package var neverRemindReanchoredAt: Date?
    /// Set by "remind later": until when, and when the answer was given.
    package var snoozedUntil: Date?
    package var snoozedAt: Date?
    /// When the clock was first seen behind ``snoozedAt`` (set back since the answer): the snooze then runs its
    /// length from here while the clock stays behind. Cleared once the clock is past ``snoozedAt`` again.
    package var snoozeReanchoredAt: Date?
    /// When the clock was first seen behind ``lastPresented``: the minimum interval then runs from here while the
    /// clock stays behind. Cleared once the clock is past ``lastPresented`` again.
    package var lastPresentedReanchoredAt: Date?
    /// The app version the record was started with (for ``DialogPolicy/resetsOn``).
    package var appVersion: String?
    /// The policy's never-remind key when it has one, so a reset can clear it too.
    package var neverRemindKey: String?
    /// The dates of the last presentations (at least ``presentationLogMinimum``, more when a condition counts more, at
    /// most 1,000),
    /// for ``DialogCondition/presentedFewerThan(_:within:)``: kept across version resets. nil when none was counted
    /// since it was kept (records of earlier releases).
    package var recentPresentations: [Date]?
    /// When the clock was first seen behind the latest of ``recentPresentations``.
    package var recentPresentationsReanchoredAt: Date?
    /// The dialog's conditions as the app's last decision or claim saw them, for `prefs-tool dialogs explain`.
    package var conditions: StoredConditions?
    /// The presentation on screen now, if any (see ``DialogGate/claim(_:)``): no other gate or process presents
    /// the dialog while its holder runs.
    package var claim: Claim?

    package init() {}

    /// A presentation in progress: who holds it and since when.
    ///
    /// A claim binds while its holder process runs on this host (its id and start time name it), and until
    /// ``expiresAt`` for a holder on another host (a store on a shared disk). A holder that crashed leaves a claim
    /// that binds nothing: the dialog may be presented again at once.
    package struct Claim: Codable, Hashable, Sendable {
        /// Names this presentation; only its holder ends it.
        package var token: String
        /// When the dialog was put on screen; recorded as ``DialogRecord/lastPresented`` when it ends.
        package var claimedAt: Date
        /// Until when a holder on another host, which cannot be asked whether it still runs, keeps the claim.
        package var expiresAt: Date
        package var host: String
        package var processID: Int32
        /// The holder's start time, telling it from a later process given the same id; nil where it cannot be read.
        package var processStarted: UInt64?

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
    package static func storeKey(for id: String) throws -> Prefs.Key<DialogRecord?> {
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
    package static func storeKeyName(for id: String) -> String {
        let plain = keyPrefix + id
        return KeyName.problem(with: plain) == nil ? plain : hashedKeyPrefix + StableHash.hex(id.precomposedStringWithCanonicalMapping)
    }

    /// How many presentation dates a record keeps at least (``recentPresentations``).
    package static let presentationLogMinimum = 10

    package static let keyPrefix = "dialogs."
    /// The prefix of the keys of records whose id is not a valid key name.
    package static let hashedKeyPrefix = "dialogs.h."
}
