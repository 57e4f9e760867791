import Foundation
import Prefs
import PrefsSupport

// The dialog records in the store: how a presentation is counted and stamped, and the one transaction that changes a
// record (with the legacy never-remind key beside it).
extension DialogGate {
    /// A snooze date the store can keep: within `Date.distantPast...Date.distantFuture` (NaN counts as the
    /// latest). `.remindLaterAfter(.seconds(Int64.max))` then snoozes until year 4001 instead of failing to
    /// encode a date ISO-8601 cannot write.
    static func storableSnooze(_ date: Date) -> Date {
        if date.timeIntervalSinceReferenceDate.isNaN { return .distantFuture }
        return min(max(date, .distantPast), .distantFuture)
    }

    /// Counts one presentation of `dialog`, shown at `date`, and keeps its date for the conditions that count them.
    static func count(_ record: inout DialogRecord, shownAt date: Date, _ dialog: Dialog) {
        record.presentations += 1
        record.firstPresented = record.firstPresented ?? date
        record.lastPresented = date
        record.lastPresentedReanchoredAt = nil
        let kept = min(EventLog.limit, max(DialogRecord.presentationLogMinimum, dialog.policy.conditions?.presentationsCounted ?? 0))
        let log = (record.recentPresentations ?? []) + [date]
        record.recentPresentations = Array(log.suffix(kept))
        record.recentPresentationsReanchoredAt = ClockRule.anchor(record.recentPresentationsReanchoredAt, behind: log.max(), now: date)
    }

    /// Names the dialog, its app version and its never-remind key in its record.
    static func stamp(_ record: inout DialogRecord, _ dialog: Dialog, appVersion: String?) {
        record.id = dialog.id
        record.appVersion = record.appVersion ?? appVersion
        record.neverRemindKey = dialog.policy.neverRemindKey
        record.conditions = storedConditions(of: dialog)
    }

    /// The record of dialog `id`; nil when none is stored, or when the one under its key belongs to
    /// another id (two ids that are not key names with the same hash).
    func record(for id: String) -> DialogRecord? {
        guard let key = try? DialogRecord.storeKey(for: id) else { return nil }
        return DialogRecord.belonging(to: id, prefs[key])
    }

    /// Changes a dialog's record atomically, starting a fresh one when the app version reset it, and writes
    /// the legacy never-remind key in the same transaction. `change` gets the record to change and the
    /// transaction; it may throw to write nothing.
    ///
    /// When the app version reset the record, the legacy key is removed with it (unless this change sets it):
    /// the never-remind it recorded belongs to the old version, and once the new record carries the new
    /// version nothing else would tell the rules to ignore it.
    func update(
        _ dialog: Dialog, legacyFlag: Bool? = nil,
        _ change: (inout DialogRecord, inout Prefs.Transaction) throws -> Void
    ) throws {
        let key = try DialogRecord.storeKey(for: dialog.id)
        // Any name older code used with UserDefaults (`"Intro tip "`), written raw, as a Bool.
        let legacyName = try dialog.policy.neverRemindKey.map {
            try KeyName.validateLegacy($0); return $0
        }
        let appVersion = appVersion
        try prefs.transaction { transaction in
            let stored = DialogRecord.belonging(to: dialog.id, try transaction.value(for: key))
            var (record, versionReset) = DialogRules.effectiveRecord(stored, policy: dialog.policy, appVersion: appVersion)
            Self.stamp(&record, dialog, appVersion: appVersion)
            try change(&record, &transaction)
            try transaction.set(record, for: key)
            if let legacyName {
                if let legacyFlag {
                    try transaction.setStoredValue(StoredValue(legacyFlag), forKey: legacyName)
                } else if versionReset?.clearsAnswers == true {
                    try transaction.setStoredValue(nil, forKey: legacyName)
                }
            }
        }
    }
}

extension DialogOverrides {
    /// Whether the overrides decide `id` (forced, show-all or hide-all), so that nothing the rules saw is stored.
    func decides(_ id: String) -> Bool {
        mode != .none || forced.contains(id)
    }
}

extension DialogRecord {
    /// `record` unless it keeps another dialog's id (a hash collision between two ids that are not key names).
    static func belonging(to id: String, _ record: DialogRecord?) -> DialogRecord? {
        guard let record else { return nil }
        if let recorded = record.id, recorded != id { return nil }
        return record
    }
}

extension DialogResponse {
    /// The name stored in ``DialogRecord/lastResponse``.
    var kind: String {
        switch self {
        case .hideForSession: "ok"
        case .neverRemind: "neverRemind"
        case .remindLater, .remindLaterAfter: "remindLater"
        case .dismiss: "dismiss"
        }
    }
}
