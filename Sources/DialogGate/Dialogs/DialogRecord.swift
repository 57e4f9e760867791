import Foundation
import Prefs

/// What DialogGate keeps about one dialog, stored as JSON under `dialogs.ID` in the app's ``Prefs`` store.
public struct DialogRecord: Codable, Hashable, Sendable, PrefsStorable {
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
    /// The app version the record was started with (for ``DialogPolicy/resetsOnAppVersionChange``).
    public var appVersion: String?
    /// The policy's never-remind key when it has one, so a reset can clear it too.
    public var neverRemindKey: String?

    public init() {}

    /// The store key of a dialog's record.
    public static func storeKey(for id: String) throws -> Prefs.Key<DialogRecord?> {
        try Prefs.Key(validating: keyPrefix + id, initial: nil)
    }

    public static let keyPrefix = "dialogs."
}
