import Foundation
import Prefs

/// What DialogGate keeps about one dialog, stored as JSON under `dialogs.ID` in the app's ``Prefs`` store
/// (or `dialogs.h.HASH` for an id that is not a valid key name; see ``storeKeyName(for:)``).
public struct DialogRecord: Codable, Hashable, Sendable, PrefsStorable {
    /// The dialog's id, so a record stored under a hashed key can be listed and told apart from another
    /// id with the same hash. nil in records written before it was kept.
    public var id: String?
    /// How many times the dialog was presented.
    public var presentations = 0
    public var firstPresented: Date?
    public var lastPresented: Date?
    /// The last answer and when it was given.
    public var lastResponse: String?
    public var lastResponseDate: Date?
    /// Set by "never remind"; cleared by reset.
    public var neverRemindSince: Date?
    /// Set by "remind later": until when, and when the answer was given.
    public var snoozedUntil: Date?
    public var snoozedAt: Date?
    /// When the clock was first seen behind ``snoozedAt`` (set back since the answer): the snooze then runs its
    /// length from here while the clock stays behind. Cleared once the clock is past ``snoozedAt`` again.
    public var snoozeReanchoredAt: Date?
    /// When the clock was first seen behind ``lastPresented``: the minimum interval then runs from here while the
    /// clock stays behind. Cleared once the clock is past ``lastPresented`` again.
    public var lastPresentedReanchoredAt: Date?
    /// The app version the record was started with (for ``DialogPolicy/resetsOnAppVersionChange``).
    public var appVersion: String?
    /// The policy's never-remind key when it has one, so a reset can clear it too.
    public var neverRemindKey: String?

    public init() {}

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
