import Foundation
import Prefs

extension DialogGate {
    // MARK: - Declaring

    /// Records the app's dialogs in the store, as `Prefs.declare` records keys: each dialog's id, its policy's
    /// never-remind key and its conditions (for `prefs-tool dialogs explain`), before any decision. Tools then know them: `prefs-tool dialogs` lists a dialog whose only
    /// answer is a legacy key older code wrote (`"UserHasSeenMsg" = "YES"`), and `prefs-tool dialogs reset --all` (or
    /// ``resetAll()`` from any gate) clears that key, so the dialog shows again, even if this release never asked about
    /// it. Call it at launch with every dialog the app may show; one transaction, and no write when every dialog is
    /// recorded already.
    ///
    /// ```swift
    /// try gate.declare([Dialog("intro", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg")), Dialog("rate-app")])
    /// ```
    public func declare(_ dialogs: [Dialog]) throws(DialogGateError) {
        try DialogGateError.converting { try declareInStore(dialogs) }
    }

    private func declareInStore(_ dialogs: [Dialog]) throws {
        let entries = try dialogs.map { dialog in (dialog, try DialogRecord.storeKey(for: dialog.id)) }
        try prefs.transaction { transaction in
            for (dialog, key) in entries {
                let stored = try transaction.value(for: key)
                if let recorded = stored?.id, recorded != dialog.id { continue }  // another id's record (a hash collision)
                var record = stored ?? DialogRecord()
                record.id = dialog.id
                record.neverRemindKey = dialog.policy.neverRemindKey ?? record.neverRemindKey
                record.conditions = Self.storedConditions(of: dialog) ?? record.conditions
                if record != stored { try transaction.set(record, for: key) }
            }
        }
    }

    // MARK: - Listing and resetting

    /// Every dialog with stored state, sorted by id, from the latest committed state. A dialog whose id is not
    /// a valid key name is listed under its key's name (`h.` and a hash; see ``DialogRecord/storeKeyName(for:)``),
    /// with its id in ``DialogState/dialogID``. A record that names a never-remind key written by older code
    /// carries that key's stored value (``DialogState/legacyValue``), and what a launch argument naming that key
    /// decides for this launch (``DialogState/neverRemindArgument``).
    package func states() throws -> [DialogState] {
        prefs.refreshReportingErrors()
        let values = try prefs.snapshot()  // one read: each record beside the key it names
        return values.compactMap { name, stored -> DialogState? in
            guard name.hasPrefix(DialogRecord.keyPrefix) else { return nil }
            let id = String(name.dropFirst(DialogRecord.keyPrefix.count))
            do {
                let record = try stored.decode(DialogRecord.self)
                var state = DialogState(id: id, record: record, suppressedForSession: false)
                state.suppressedForSession = session.isSuppressed(state.dialogID)
                state.legacyValue = record.neverRemindKey.flatMap { values[$0] }
                state.neverRemindArgument = record.neverRemindKey.flatMap(neverRemindArgument(named:))
                return state
            } catch {
                return DialogState(id: id, record: nil, suppressedForSession: session.isSuppressed(id), problem: "\(error)")
            }
        }.sorted { $0.id < $1.id }
    }

    /// Forgets everything about the dialogs `ids` (stored state, the never-remind key its record names, and "OK"
    /// in this session), in one transaction. An id may also be the name `prefs-tool dialogs` lists (`h.` and a hash
    /// for an id that is not a valid key name). No ids, no change (use ``resetAll()`` to forget every dialog).
    public func reset(_ ids: [String]) throws(DialogGateError) {
        try DialogGateError.converting { try reset(ids, legacyKeys: []) }
    }

    /// Forgets everything about `dialogs`, including never-remind keys written by older code before any record existed.
    public func reset(_ dialogs: [Dialog]) throws(DialogGateError) {
        try DialogGateError.converting { try reset(dialogs.map(\.id), legacyKeys: dialogs.compactMap(\.policy.neverRemindKey)) }
    }

    /// Forgets every dialog's state, when any dialog was last presented (``DisplayFrequency``), the usage conditions
    /// count (launches and donations; a launch recorded after this counts as the first), and every "OK" of the session.
    /// Stored parameters stay: they are the app's, not the dialogs'.
    public func resetAll() throws(DialogGateError) {
        try DialogGateError.converting {
            try reset(try states().map(\.id), legacyKeys: [])
            try prefs.transaction { transaction in
                transaction.reset(Self.lastPresentationKey)
                transaction.reset(Self.lastPresentationReanchoredKey)
                transaction.reset(UsageRecord.key)
                for name in try transaction.storedKeys() where name.hasPrefix(EventLog.keyPrefix) {
                    try transaction.setStoredValue(nil, forKey: name)
                }
            }
        }
        session.clear()
    }

    private func reset(_ ids: [String], legacyKeys: [String]) throws {
        guard !ids.isEmpty else { return }  // session.clear([]) would forget every "OK" of the session
        let sessionIDs = try prefs.transaction { transaction -> [String] in
            var sessionIDs = ids
            for name in legacyKeys where KeyName.legacyProblem(with: name) == nil { try transaction.setStoredValue(nil, forKey: name) }
            for id in ids {
                let key = try DialogRecord.storeKey(for: id)
                let stored = try transaction.value(for: key)  // a record that does not decode reads as nil: removed all the same
                transaction.reset(key)
                if let legacy = stored?.neverRemindKey, KeyName.legacyProblem(with: legacy) == nil {
                    try transaction.setStoredValue(nil, forKey: legacy)
                }
                if let recorded = stored?.id, recorded != id { sessionIDs.append(recorded) }
            }
            return sessionIDs
        }
        session.clear(sessionIDs)
    }
}

/// A dialog's stored state, for listing (`prefs-tool dialogs`). Package API.
package struct DialogState: Sendable, Hashable {
    /// The name the state is stored under, after `dialogs.`: the dialog id, or `h.` and 16 hex digits for an
    /// id that is not a valid key name. ``DialogGate/reset(_:)-([String])`` accepts it.
    package var id: String
    /// nil when the stored record cannot be read (see `problem`).
    package var record: DialogRecord?
    package var suppressedForSession: Bool
    package var problem: String?
    /// The value stored under the record's ``DialogRecord/neverRemindKey`` (by older code, or by DialogGate
    /// alongside its own record), or nil.
    package var legacyValue: StoredValue?
    /// What a launch argument naming the never-remind key (`-UserHasSeenMsg NO`), read as a `Bool`, decides for the
    /// launch of the store's ``Prefs`` (above the record and the stored key); nil without one.
    package var neverRemindArgument: Bool?

    package init(id: String, record: DialogRecord?, suppressedForSession: Bool, problem: String? = nil, legacyValue: StoredValue? = nil) {
        self.id = id
        self.record = record
        self.suppressedForSession = suppressedForSession
        self.problem = problem
        self.legacyValue = legacyValue
    }

    /// Whether the never-remind key reads as true, as `UserDefaults.bool(forKey:)` reads it (`true`, `"YES"`, `1`…).
    package var legacyNeverRemind: Bool {
        legacyValue?.isTruthy == true
    }

    /// The dialog's id: the one its record keeps (for a hashed key), else ``id``.
    package var dialogID: String {
        guard let recorded = record?.id, DialogRecord.storeKeyName(for: recorded) == DialogRecord.keyPrefix + id else { return id }
        return recorded
    }
}
