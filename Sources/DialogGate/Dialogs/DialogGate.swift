import Foundation
import Prefs

/// Decides whether to present local dialogs, and records what happened, in a ``Prefs`` store.
///
/// The app asks, presents with its own UI, then reports:
/// ```swift
/// let gate = DialogGate(prefs: prefs, appVersion: "2.1")
/// let welcome = Dialog("welcome")
/// if gate.shouldPresent(welcome) {
///     try gate.recordPresentation(of: welcome)
///     // … show the alert; when the user answers:
///     try gate.record(.neverRemind, for: welcome)
/// }
/// ```
/// Suppression starts with the answer, not the presentation: a dialog interrupted before an answer shows again.
public final class DialogGate: Sendable {
    public let prefs: Prefs
    public let session: DialogSession
    public let appVersion: String?
    private let clock: @Sendable () -> Date
    private let overridesState: Locked<DialogOverrides>
    /// Ids of the dialogs ``presentIfNeeded(_:present:)`` is presenting now.
    private let presenting = Locked<Set<String>>([])

    /// - Parameters:
    ///   - prefs: where dialog state lives (under `dialogs.ID`, plus any policy's never-remind key).
    ///   - session: the scope of "OK" answers; the process by default.
    ///   - appVersion: the running app version, for ``DialogPolicy/resetsOnAppVersionChange``.
    ///   - overrides: QA overrides; by default read from `DIALOGGATE_OVERRIDE`.
    ///   - clock: the current date (injected in tests).
    public init(
        prefs: Prefs,
        session: DialogSession = .process,
        appVersion: String? = nil,
        overrides: DialogOverrides = DialogOverrides.fromEnvironment().0,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.prefs = prefs
        self.session = session
        self.appVersion = appVersion
        self.clock = clock
        self.overridesState = Locked(overrides)
    }

    /// The QA overrides in force; changing them touches no stored state.
    public var overrides: DialogOverrides {
        get { overridesState.withLock { $0 } }
        set { overridesState.withLock { $0 = newValue } }
    }

    // MARK: - Deciding

    /// Whether to present `dialog` now, with the reasons.
    public func decision(for dialog: Dialog) -> DialogDecision {
        let now = clock()
        let stored = record(for: dialog.id)
        if let stored, DialogRules.reanchored(stored, now: now) != stored {
            // The clock moved past a recorded time: keep the anchor, so a wait does not restart at every decision.
            storeAnchors(of: dialog, now: now)
        }
        return DialogRules.decide(dialog, DialogRules.Input(
            record: stored,
            legacyNeverRemind: legacyNeverRemind(dialog),
            suppressedForSession: session.isSuppressed(dialog.id),
            appVersion: appVersion,
            now: now,
            overrides: overrides
        ))
    }

    /// `decision(for:).shouldPresent`.
    public func shouldPresent(_ dialog: Dialog) -> Bool {
        decision(for: dialog).shouldPresent
    }

    // MARK: - Recording

    /// Records that `dialog` was shown (counts toward limits and intervals; suppresses nothing by itself).
    public func recordPresentation(of dialog: Dialog) throws {
        let now = clock()
        try update(dialog) { record in
            record.presentations += 1
            record.firstPresented = record.firstPresented ?? now
            record.lastPresented = now
            record.lastPresentedReanchoredAt = nil
        }
    }

    /// Records the user's answer to `dialog`.
    public func record(_ response: DialogResponse, for dialog: Dialog) throws {
        let now = clock()
        switch response {
        case .ok:
            session.suppress(dialog.id)
        case .neverRemind, .remindLater, .remindLaterAfter, .dismiss:
            break
        }
        try update(dialog, legacyFlag: response == .neverRemind ? true : nil) { record in
            record.lastResponse = response.kind
            record.lastResponseDate = now
            switch response {
            case .neverRemind:
                record.neverRemindSince = now
            case .remindLater(let until):
                record.snoozedUntil = Self.storableSnooze(until)
                record.snoozedAt = now
                record.snoozeReanchoredAt = nil
            case .remindLaterAfter(let interval):
                record.snoozedUntil = Self.storableSnooze(now.addingTimeInterval(interval.timeInterval))
                record.snoozedAt = now
                record.snoozeReanchoredAt = nil
            case .ok, .dismiss:
                break
            }
        }
    }

    /// Presents `dialog` through the app's own UI when the rules allow, recording the presentation and the answer.
    ///
    /// A dialog is presented once at a time: a call made while another call on this gate is presenting the same id
    /// (two scenes launching together) returns "not presented" with ``DialogReason/alreadyPresenting``.
    ///
    /// ```swift
    /// try await gate.presentIfNeeded(welcome) { dialog in await showAlert(for: dialog) }
    /// ```
    @discardableResult
    public func presentIfNeeded(_ dialog: Dialog, present: (Dialog) async throws -> DialogResponse) async throws -> DialogDecision {
        guard presenting.withLock({ $0.insert(dialog.id).inserted }) else {
            return DialogDecision(dialogID: dialog.id, shouldPresent: false, reasons: [.alreadyPresenting])
        }
        defer { _ = presenting.withLock { $0.remove(dialog.id) } }
        let decision = decision(for: dialog)
        guard decision.shouldPresent else { return decision }
        try recordPresentation(of: dialog)
        let response = try await present(dialog)
        try record(response, for: dialog)
        return decision
    }

    // MARK: - Listing and resetting

    /// Every dialog with stored state, sorted by id. A dialog whose id is not a valid key name is listed
    /// under its key's name (`h.` and a hash; see ``DialogRecord/storeKeyName(for:)``), with its id in
    /// ``DialogState/dialogID``.
    public func states() throws -> [DialogState] {
        try prefs.snapshot().compactMap { name, stored -> DialogState? in
            guard name.hasPrefix(DialogRecord.keyPrefix) else { return nil }
            let id = String(name.dropFirst(DialogRecord.keyPrefix.count))
            do {
                var state = DialogState(id: id, record: try stored.decode(DialogRecord.self), suppressedForSession: false)
                state.suppressedForSession = session.isSuppressed(state.dialogID)
                return state
            } catch {
                return DialogState(id: id, record: nil, suppressedForSession: session.isSuppressed(id), problem: "\(error)")
            }
        }.sorted { $0.id < $1.id }
    }

    /// Forgets everything about the dialogs `ids` (stored state, legacy never-remind keys, and "OK" in this session).
    /// An id may also be a ``DialogState/id`` as listed (`h.` and a hash for an id that is not a valid key name).
    /// No ids, no change (use ``resetAll()`` to forget every dialog).
    public func reset(_ ids: [String]) throws {
        guard !ids.isEmpty else { return }  // session.clear([]) would forget every "OK" of the session
        var removals: [String: StoredValue?] = [:]
        var sessionIDs = ids
        for id in ids {
            let key = try DialogRecord.storeKey(for: id)
            removals[key.name] = .some(nil)
            let stored = storedRecord(key)
            if let legacy = stored?.neverRemindKey { removals[legacy] = .some(nil) }
            if let recorded = stored?.id, recorded != id { sessionIDs.append(recorded) }
        }
        try prefs.setStoredValues(removals)
        session.clear(sessionIDs)
    }

    /// Forgets everything about `dialogs`, including never-remind keys written by older code before any record existed.
    public func reset(_ dialogs: [Dialog]) throws {
        try reset(dialogs.map(\.id))
        let legacy = Dictionary(dialogs.compactMap(\.policy.neverRemindKey).map { ($0, StoredValue?.none) }) { first, _ in first }
        if !legacy.isEmpty { try prefs.setStoredValues(legacy) }
    }

    /// Forgets every dialog's state.
    public func resetAll() throws {
        let ids = try states().map(\.id)
        if !ids.isEmpty { try reset(ids) }
        session.clear()
    }

    // MARK: - Storage

    /// A snooze date the store can keep: within `Date.distantPast...Date.distantFuture` (NaN counts as the
    /// latest). `.remindLaterAfter(.seconds(Int64.max))` then snoozes until year 4001 instead of failing to
    /// encode a date ISO-8601 cannot write.
    static func storableSnooze(_ date: Date) -> Date {
        if date.timeIntervalSinceReferenceDate.isNaN { return .distantFuture }
        return min(max(date, .distantPast), .distantFuture)
    }

    /// The record of dialog `id`; nil when none is stored, or when the one under its key belongs to
    /// another id (two ids that are not key names with the same hash).
    private func record(for id: String) -> DialogRecord? {
        guard let key = try? DialogRecord.storeKey(for: id) else { return nil }
        return DialogRecord.belonging(to: id, storedRecord(key))
    }

    /// Whatever record is stored under `key`.
    private func storedRecord(_ key: Prefs.Key<DialogRecord?>) -> DialogRecord? {
        prefs[key]
    }

    private func legacyNeverRemind(_ dialog: Dialog) -> Bool {
        guard let name = dialog.policy.neverRemindKey, let key = try? Prefs.Key(validating: name, initial: false) else { return false }
        return prefs[key]
    }

    /// Stores the clock anchors of `dialog`'s record for `now`, re-reading it in a transaction so that an answer
    /// another process recorded meanwhile is kept. A failure is reported as the store's diagnostic and otherwise
    /// ignored: deciding must not fail, and the anchors lost are at most the time since this decision.
    private func storeAnchors(of dialog: Dialog, now: Date) {
        do {
            let key = try DialogRecord.storeKey(for: dialog.id)
            try prefs.transaction { transaction in
                guard let stored = DialogRecord.belonging(to: dialog.id, try transaction.value(for: key)) else { return }
                let anchored = DialogRules.reanchored(stored, now: now)
                if anchored != stored { try transaction.set(anchored, for: key) }
            }
        } catch {
            prefs.reportWriteFailure(error, key: DialogRecord.storeKeyName(for: dialog.id))
        }
    }

    /// Changes a dialog's record atomically, starting a fresh one when the app version reset it, and writes
    /// the legacy never-remind key in the same transaction.
    ///
    /// When the app version reset the record, the legacy key is removed with it (unless this change sets it):
    /// the never-remind it recorded belongs to the old version, and once the new record carries the new
    /// version nothing else would tell the rules to ignore it.
    private func update(_ dialog: Dialog, legacyFlag: Bool? = nil, _ change: (inout DialogRecord) -> Void) throws {
        let key = try DialogRecord.storeKey(for: dialog.id)
        let legacyKey = try dialog.policy.neverRemindKey.map { try Prefs.Key(validating: $0, initial: false) }
        let appVersion = appVersion
        try prefs.transaction { transaction in
            let stored = DialogRecord.belonging(to: dialog.id, try transaction.value(for: key))
            var (record, versionReset) = DialogRules.effectiveRecord(stored, policy: dialog.policy, appVersion: appVersion)
            record.id = dialog.id
            record.appVersion = record.appVersion ?? appVersion
            record.neverRemindKey = dialog.policy.neverRemindKey
            change(&record)
            try transaction.set(record, for: key)
            if let legacyKey {
                if let legacyFlag {
                    try transaction.set(legacyFlag, for: legacyKey)
                } else if versionReset != nil {
                    transaction.reset(legacyKey)
                }
            }
        }
    }
}

/// A dialog's stored state, for listing (`prefs-tool dialogs`).
public struct DialogState: Sendable, Hashable {
    /// The name the state is stored under, after `dialogs.`: the dialog id, or `h.` and 16 hex digits for an
    /// id that is not a valid key name. ``DialogGate/reset(_:)`` accepts it.
    public var id: String
    /// nil when the stored record cannot be read (see `problem`).
    public var record: DialogRecord?
    public var suppressedForSession: Bool
    public var problem: String?

    /// The dialog's id: the one its record keeps (for a hashed key), else ``id``.
    public var dialogID: String {
        guard let recorded = record?.id, DialogRecord.storeKeyName(for: recorded) == DialogRecord.keyPrefix + id else { return id }
        return recorded
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
        case .ok: "ok"
        case .neverRemind: "neverRemind"
        case .remindLater, .remindLaterAfter: "remindLater"
        case .dismiss: "dismiss"
        }
    }
}
