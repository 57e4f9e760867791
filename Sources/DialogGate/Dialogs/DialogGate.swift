import Foundation
import Prefs
import PrefsSupport

/// Decides whether to present local dialogs, and records what happened, in a `Prefs` store.
///
/// The app claims a presentation, presents with its own UI, then reports the answer:
/// ```swift
/// let gate = DialogGate(prefs: prefs, appVersion: "2.1")
/// let welcome = Dialog("welcome")
/// if let presentation = try gate.claim(welcome).presentation {
///     // … show the alert; when the user answers:
///     try presentation.finish(.neverRemind)
/// }
/// ```
/// Claiming decides and records in one transaction of the store, so two gates, two threads or two processes
/// on one store never both present a dialog, and a limit is never exceeded. A presentation counts when it is
/// answered: a dialog interrupted before an answer (a crash) shows again.
public final class DialogGate: Sendable {
    public let prefs: Prefs
    public let session: DialogSession
    public let appVersion: String?
    /// How often any of this gate's dialogs may be presented (TipKit's `displayFrequency`).
    public let displayFrequency: DisplayFrequency
    /// Called after a presentation is claimed, answered or cancelled, for the app's analytics; never under a lock.
    let onEvent: (@Sendable (DialogEvent) -> Void)?
    let clock: @Sendable () -> Date
    private let overridesState: Locked<DialogOverrides>

    /// How long a presentation held by a process on another host (a store on a shared disk) binds: such a
    /// holder cannot be asked whether it still runs. A holder on this host binds for as long as it runs.
    public static let remoteClaimLifetime: Duration = .seconds(3_600)

    /// - Parameters:
    ///   - prefs: where dialog state lives (under `dialogs.ID`, plus any policy's never-remind key).
    ///   - session: the scope of "OK" answers and of ``DisplayFrequency/oncePerSession-type.property``; nil (the
    ///     default) for ``DialogSession/store(_:)``, the process's session on this store, so that gates on other
    ///     stores (another user's) have their own.
    ///   - appVersion: the running app version, for ``DialogPolicy/resetsOn``.
    ///   - overrides: QA overrides; none by default. A QA build opts in to the environment variable with
    ///     `overrides: DialogOverrides.fromEnvironment().overrides` (release builds should not: whoever launches the app
    ///     could show or hide its dialogs).
    ///   - displayFrequency: how often any of the gate's dialogs may be presented; no limit by default.
    ///   - parameters: app parameters for ``DialogCondition/parameter(_:equals:)``, set in the session's memory as
    ///     ``setParameter(_:_:)`` sets them (`["isPro": false]`); none by default.
    ///   - onEvent: called after a presentation is claimed, answered or cancelled (for analytics).
    ///   - clock: the current date (injected in tests).
    public init(
        prefs: Prefs,
        session: DialogSession? = nil,
        appVersion: String? = nil,
        overrides: DialogOverrides = DialogOverrides(),
        displayFrequency: DisplayFrequency = .unlimited,
        parameters: [String: DialogCondition.Value] = [:],
        onEvent: (@Sendable (DialogEvent) -> Void)? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.prefs = prefs
        self.session = session ?? .store(prefs)
        for (name, value) in parameters { self.session.setParameter(name, value) }
        self.appVersion = appVersion
        self.displayFrequency = displayFrequency
        self.onEvent = onEvent
        self.clock = clock
        self.overridesState = Locked(overrides)
    }

    /// The QA overrides in force; changing them touches no stored state.
    public var overrides: DialogOverrides {
        get { overridesState.withLock { $0 } }
        set { overridesState.withLock { $0 = newValue } }
    }

    // MARK: - Deciding

    /// Whether to present `dialog` now, with the reasons, from the latest committed state (other processes'
    /// writes included). To present, use ``claim(_:)``: a decision may be out of date by the time it is used.
    public func decision(for dialog: Dialog) -> DialogDecision {
        prefs.refreshReportingErrors()
        let now = clock()
        let overrides = overrides
        let (stored, lastOfAny, input) = committedInput(for: dialog, now: now, overrides: overrides)
        if !overrides.decides(dialog.id),
            observed(dialog, stored, input) != stored || lastOfAny.reanchored(now: now) != lastOfAny
                || usageObservations(input.conditions, now: now) != (nil, [])
        {
            // Keep what this decision saw: the clock anchors (so a wait does not restart at every decision),
            // a never-remind written by older code (so tools list it and resets clear it) and the conditions (so
            // `prefs-tool dialogs explain` shows them).
            storeObservations(of: dialog, now: now)
        }
        return DialogRules.decide(dialog, input)
    }

    /// What the rules see of `dialog` in the latest committed state, read outside a transaction.
    func committedInput(
        for dialog: Dialog, now: Date, overrides: DialogOverrides
    ) -> (stored: DialogRecord?, lastOfAny: LastPresentation, input: DialogRules.Input) {
        let stored = record(for: dialog.id)
        let legacy = dialog.policy.neverRemindKey.flatMap { try? prefs.storedValue(forKey: $0) }
        let lastOfAny = LastPresentation(date: prefs[Self.lastPresentationKey], reanchoredAt: prefs[Self.lastPresentationReanchoredKey])
        let conditions = conditionInputs(for: dialog) { name throws(PrefsError) in try prefs.storedValue(forKey: name) }
        let input = input(
            for: dialog, record: stored, legacyValue: legacy, lastOfAny: lastOfAny, conditions: conditions, now: now, overrides: overrides)
        return (stored, lastOfAny, input)
    }

    /// `decision(for:).shouldPresent`.
    public func shouldPresent(_ dialog: Dialog) -> Bool {
        decision(for: dialog).shouldPresent
    }

    // MARK: - Presenting

    /// Decides and, when the rules allow, claims a presentation of `dialog`, in one transaction of the store.
    ///
    /// While the presentation is held, every other claim of the dialog, from any gate or process on the store,
    /// is declined with ``DialogReason/alreadyPresenting``. End it with ``DialogPresentation/finish(_:)``
    /// once the user answered (it counts then), or ``DialogPresentation/cancel()`` if it was not shown after all.
    /// A process that ends without doing either (a crash) leaves nothing that blocks: the dialog may be
    /// claimed again at once.
    ///
    /// ```swift
    /// switch try gate.claim(welcome) {
    /// case .granted(let presentation):
    ///     let answer = await showAlert(for: welcome)   // your UI: .hideForSession, .neverRemind, .dismiss…
    ///     try presentation.finish(answer)
    /// case .declined(let decision):
    ///     print(decision)   // "welcome: not presented: already being presented"
    /// }
    /// ```
    public func claim(_ dialog: Dialog) throws(DialogGateError) -> DialogClaim {
        try DialogGateError.converting { try claimInStore([dialog], inOrder: false) }
    }

    /// Claims the first of `dialogs` that may be presented: the first, in one transaction of the store, of the dialogs
    /// that are not yet done, the others waiting for it. For dialogs shown one after another (onboarding hints).
    ///
    /// ```swift
    /// let onboarding = [Dialog("intro1", policy: DialogPolicy(maximumPresentations: 1)), Dialog("intro2", policy: …)]
    /// if let presentation = try gate.claim(nextOf: onboarding).presentation {
    ///     try presentation.finish(await show(presentation.dialog))   // intro2 only once intro1 is done
    /// }
    /// ```
    ///
    /// A dialog is done when it will not be eligible again by itself: answered "never remind" (unexpired, or under its
    /// legacy key), its ``DialogPolicy/maximumPresentations`` reached, or invalidated by the app with
    /// `record(.neverRemind, for:)` (the user did what it suggested). While the first dialog not done is not eligible
    /// (snoozed, "OK" this session, its conditions unmet, on screen in another process), none of the others is: the
    /// claim is declined with that dialog's decision; once every dialog is done, with the last one's. A QA override that
    /// forces one of them presents that one. Deciding and claiming are one transaction, so two processes never show two
    /// dialogs of the list at once, nor one out of order.
    public func claim(nextOf dialogs: [Dialog]) throws(DialogGateError) -> DialogClaim {
        try DialogGateError.converting { try claimInStore(dialogs, inOrder: true) }
    }

    private func claimInStore(_ dialogs: [Dialog], inOrder: Bool) throws -> DialogClaim {
        let entries = try dialogs.map { dialog in
            let legacyName = try dialog.policy.neverRemindKey.map {
                try KeyName.validateLegacy($0); return $0
            }
            return Candidate(dialog: dialog, key: try DialogRecord.storeKey(for: dialog.id), legacyName: legacyName)
        }
        guard let last = entries.last else { return .declined(DialogDecision(dialogID: "", shouldPresent: false, reasons: [])) }
        let now = clock()
        let overrides = overrides
        let token = UUID().uuidString
        let appVersion = appVersion
        DialogPresentation.activeTokens.withLock { _ = $0.insert(token) }  // before the commit: see ``binds(_:now:)``
        do {
            let (dialog, decision) = try prefs.transaction { transaction -> (Dialog, DialogDecision) in
                // The first dialog not done (or one a QA override forces), in order; the last when all are done.
                var pick: Candidate?
                for entry in entries where pick == nil || overrides.forced.contains(entry.dialog.id) {
                    if overrides.forced.contains(entry.dialog.id) {
                        pick = entry
                        break
                    }
                    if !inOrder { pick = entry; continue }
                    let read = try readInput(
                        for: entry.dialog, key: entry.key, legacyName: entry.legacyName, in: transaction, now: now, overrides: overrides)
                    if !DialogRules.isDone(entry.dialog, read.input) { pick = entry }
                }
                let chosen = pick ?? last
                let (dialog, key, legacyName) = (chosen.dialog, chosen.key, chosen.legacyName)
                let (stored, lastOfAny, input) = try readInput(
                    for: dialog, key: key, legacyName: legacyName, in: transaction, now: now, overrides: overrides)
                let decision = DialogRules.decide(dialog, input)
                try storeUsageObservations(input.conditions, in: &transaction, now: now)
                if decision.shouldPresent {
                    try LastPresentation(date: now).store(in: &transaction, replacing: lastOfAny)
                    var (record, versionReset) = DialogRules.effectiveRecord(stored, policy: dialog.policy, appVersion: appVersion)
                    record = DialogRules.reanchored(record, now: now)
                    Self.stamp(&record, dialog, appVersion: appVersion)
                    record.claim = DialogRecord.Claim(
                        token: token, claimedAt: now, expiresAt: Self.remoteClaimExpiry(now),
                        holder: .current)
                    try transaction.set(record, for: key)
                    if versionReset?.clearsAnswers == true, let legacyName { try transaction.setStoredValue(nil, forKey: legacyName) }
                } else if !overrides.decides(dialog.id) {
                    let observed = observed(dialog, stored, input)
                    if observed != stored { try transaction.set(observed, for: key) }
                    try lastOfAny.reanchored(now: now).store(in: &transaction, replacing: lastOfAny)
                }
                return (dialog, decision)
            }
            guard decision.shouldPresent else {
                DialogPresentation.activeTokens.withLock { _ = $0.remove(token) }
                return .declined(decision)
            }
            session.notePresentation()
            onEvent?(.presented(dialog.id))
            return .granted(DialogPresentation(dialog: dialog, decision: decision, token: token, claimedAt: now, gate: self))
        } catch {
            DialogPresentation.activeTokens.withLock { _ = $0.remove(token) }
            throw error
        }
    }

    /// Presents `dialog` through the app's own UI when the rules allow: claims it, awaits the answer and
    /// records it. While it is on screen, another call (two scenes launching together, another process)
    /// returns "not presented" with ``DialogReason/alreadyPresenting``. A presenter that throws cancels the
    /// presentation: nothing is counted.
    ///
    /// ```swift
    /// try await gate.presentIfNeeded(welcome) { dialog in await showAlert(for: dialog) }
    /// ```
    ///
    /// `present` runs on the caller's actor (`isolation`, the main actor when called from a view controller), so it
    /// may use the caller's state and UI without being `@Sendable`. The claim and the answer are recorded off that
    /// actor, so the store's I/O (which may wait for another process's lock) never blocks the main thread.
    @discardableResult
    public func presentIfNeeded(
        _ dialog: Dialog,
        isolation: isolated (any Actor)? = #isolation,
        present: (Dialog) async throws -> DialogResponse
    ) async throws -> DialogDecision {
        let presentation: DialogPresentation
        switch try await claimOffActor(dialog) {
        case .declined(let decision): return decision
        case .granted(let granted): presentation = granted
        }
        let response: DialogResponse
        do {
            response = try await present(dialog)
        } catch {
            try? await Self.offActor { try presentation.cancel() }  // the presenter's error is the one to report
            throw error
        }
        try await Self.offActor { try presentation.finish(response) }
        return presentation.decision
    }

    /// ``claim(_:)`` on the global executor: a nonisolated `async` function runs there, off the caller's actor.
    private func claimOffActor(_ dialog: Dialog) async throws -> DialogClaim {
        try claim(dialog)
    }

    /// Runs `work` on the global executor, off the caller's actor.
    private static func offActor(_ work: @Sendable () throws -> Void) async throws {
        try work()
    }

    // MARK: - Recording

    /// Records that `dialog` is being shown, if the rules still allow it, in one transaction: the two-step form
    /// of ``claim(_:)`` for code that decided with ``shouldPresent(_:)``. It counts at once (so a presentation
    /// interrupted before an answer counts too) and holds nothing: prefer ``claim(_:)``.
    ///
    /// - Throws: ``DialogGateError/notPresentable(_:)`` when another gate, thread or process presented or
    ///   answered since the decision (the limit is never exceeded), or a store error.
    public func recordPresentation(of dialog: Dialog) throws(DialogGateError) {
        try DialogGateError.converting { try recordPresentationInStore(of: dialog) }
    }

    private func recordPresentationInStore(of dialog: Dialog) throws {
        let key = try DialogRecord.storeKey(for: dialog.id)
        let now = clock()
        let overrides = overrides
        try update(dialog) { record, transaction in
            let (_, lastOfAny, input) = try readInput(
                for: dialog, key: key, legacyName: dialog.policy.neverRemindKey, in: transaction, now: now, overrides: overrides)
            let decision = DialogRules.decide(dialog, input)
            guard decision.shouldPresent else { throw DialogGateError.notPresentable(decision) }
            record = DialogRules.reanchored(record, now: now)
            Self.count(&record, shownAt: now, dialog)
            try LastPresentation(date: now).store(in: &transaction, replacing: lastOfAny)
        }
        session.notePresentation()
        onEvent?(.presented(dialog.id))
    }

    /// Records the user's answer to `dialog` outside a presentation (a settings screen's "never remind me");
    /// to answer a presentation, use ``DialogPresentation/finish(_:)``, which also counts it.
    public func record(_ response: DialogResponse, for dialog: Dialog) throws(DialogGateError) {
        try DialogGateError.converting { try record(response, for: dialog, ending: nil) }
    }

    /// Records `response`; when it ends `presentation`, counts it and releases its claim, in the same transaction.
    func record(_ response: DialogResponse, for dialog: Dialog, ending presentation: DialogPresentation?) throws {
        let now = clock()
        try update(dialog, legacyFlag: response == .neverRemind ? true : nil) { record, _ in
            if let presentation {
                Self.count(&record, shownAt: presentation.claimedAt, dialog)
                if record.claim?.token == presentation.token { record.claim = nil }
            }
            record.lastResponse = response.kind
            record.lastResponseDate = now
            switch response {
            case .neverRemind:
                record.neverRemindSince = now
                record.neverRemindReanchoredAt = nil
            case .remindLater(let until):
                record.snoozedUntil = Self.storableSnooze(until)
                record.snoozedAt = now
                record.snoozeReanchoredAt = nil
            case .remindLaterAfter(let interval):
                record.snoozedUntil = Self.storableSnooze(now.addingTimeInterval(interval.timeInterval))
                record.snoozedAt = now
                record.snoozeReanchoredAt = nil
            case .hideForSession, .dismiss:
                break
            }
        }
        if response == .hideForSession { session.suppress(dialog.id) }
        if presentation != nil { onEvent?(.answered(dialog.id, response)) }
    }

    /// Releases `presentation`'s claim without counting it.
    func release(_ presentation: DialogPresentation) throws {
        let key = try DialogRecord.storeKey(for: presentation.dialog.id)
        try prefs.transaction { transaction in
            guard var record = DialogRecord.belonging(to: presentation.dialog.id, try transaction.value(for: key)),
                record.claim?.token == presentation.token
            else { return }
            record.claim = nil
            try transaction.set(record, for: key)
        }
        onEvent?(.cancelled(presentation.dialog.id))
    }

    // MARK: - Rules input

    /// What the rules read about `dialog`, from its stored record and the value under its never-remind key.
    private func input(
        for dialog: Dialog, record: DialogRecord?, legacyValue: StoredValue?, lastOfAny: LastPresentation, conditions: ConditionInputs,
        now: Date, overrides: DialogOverrides
    ) -> DialogRules.Input {
        DialogRules.Input(
            record: record,
            legacyNeverRemindKey: legacyValue?.isTruthy == true ? dialog.policy.neverRemindKey : nil,
            neverRemindArgument: dialog.policy.neverRemindKey.flatMap(neverRemindArgument(named:)),
            suppressedForSession: session.isSuppressed(dialog.id),
            beingPresented: record?.claim.map { Self.binds($0, now: now) } ?? false,
            appVersion: appVersion,
            now: now,
            overrides: overrides,
            displayFrequency: displayFrequency,
            sessionPresentedAny: session.hasPresented,
            lastPresentationOfAny: lastOfAny,
            conditions: conditions
        )
    }

    /// The launch argument naming a never-remind key (`-UserHasSeenMsg NO`) read as a `Bool`, as the app's typed keys
    /// read it; nil when none names it or it reads as no `Bool` (the key's own reads report that).
    func neverRemindArgument(named name: String) -> Bool? {
        guard let argument = prefs.launchArgumentValue(forKey: name) else { return nil }
        return (try? LaunchArguments.converted(argument, to: .bool))?.isTruthy
    }

    /// A dialog to claim, with its record's key and its never-remind key's name (both checked).
    private struct Candidate {
        var dialog: Dialog
        var key: Prefs.Key<DialogRecord?>
        var legacyName: String?
    }

    /// What `dialog`'s conditions read, through `read` (a key's stored value): nothing for a dialog without conditions.
    /// A value that cannot be read is kept as such: the conditions that read it are unmet, and say why.
    func conditionInputs(for dialog: Dialog, _ read: (String) throws(PrefsError) -> StoredValue?) -> ConditionInputs {
        guard let condition = dialog.policy.conditions else { return ConditionInputs(session: session.launchToken, appVersion: appVersion) }
        return ConditionInputs.reading(eventNames: condition.eventNames, session: session, appVersion: appVersion, read)
    }

    /// The usage values whose clock anchors `now` moves (see ``ClockRule``): what a decision stores.
    func usageObservations(_ inputs: ConditionInputs, now: Date) -> (usage: UsageRecord?, events: [EventLog]) {
        let usage = inputs.usage.value.flatMap { usage in
            let anchored = usage.reanchored(now: now, version: appVersion)
            return anchored != usage ? anchored : nil
        }
        let events = inputs.events.values.compactMap { stored in
            stored.value.flatMap { log in
                let anchored = log.reanchored(now: now)
                return anchored != log ? anchored : nil
            }
        }
        return (usage, events)
    }

    /// Stores ``usageObservations(_:now:)`` in `transaction`.
    func storeUsageObservations(_ inputs: ConditionInputs, in transaction: inout Prefs.Transaction, now: Date) throws {
        let (usage, events) = usageObservations(inputs, now: now)
        if let usage { try transaction.set(usage, for: UsageRecord.key) }
        for log in events { try transaction.set(log, for: try EventLog.storeKey(for: log.name)) }
    }

    /// Reads in `transaction` what the rules see of `dialog` (its record under `key`, the value under `legacyName`,
    /// its never-remind key, and when any dialog was last presented) and builds their input from it.
    private func readInput(
        for dialog: Dialog, key: Prefs.Key<DialogRecord?>, legacyName: String?, in transaction: borrowing Prefs.Transaction,
        now: Date, overrides: DialogOverrides
    ) throws -> ReadInput {
        let stored = DialogRecord.belonging(to: dialog.id, try transaction.value(for: key))
        let legacy = try legacyName.map { try transaction.storedValue(forKey: $0) } ?? nil
        let lastOfAny = try LastPresentation(transaction)
        let conditions = conditionInputs(for: dialog) { name throws(PrefsError) in try transaction.storedValue(forKey: name) }
        return (
            stored, lastOfAny,
            input(for: dialog, record: stored, legacyValue: legacy, lastOfAny: lastOfAny, conditions: conditions, now: now, overrides: overrides)
        )
    }

    /// A dialog's stored record, when any dialog was last presented, and the rules' input built from them.
    private typealias ReadInput = (stored: DialogRecord?, lastOfAny: LastPresentation, input: DialogRules.Input)

    /// When any dialog on the store was last presented, for ``DisplayFrequency/minimumInterval``.
    static let lastPresentationKey = Prefs.Key<Date?>("dialoggate.lastPresentation")
    /// When the clock was first seen behind ``lastPresentationKey``'s date (see ``ClockRule``); a key of its own, so
    /// that a release that reads only the date reads it as before.
    static let lastPresentationReanchoredKey = Prefs.Key<Date?>("dialoggate.lastPresentation.reanchoredAt")

    /// When any dialog on the store was last presented, with its clock anchor.
    struct LastPresentation: Hashable, Sendable {
        var date: Date?
        var reanchoredAt: Date?

        init(date: Date? = nil, reanchoredAt: Date? = nil) {
            self.date = date
            self.reanchoredAt = reanchoredAt
        }

        /// As committed, read in `transaction`.
        init(_ transaction: borrowing Prefs.Transaction) throws {
            self.init(
                date: try transaction.value(for: DialogGate.lastPresentationKey),
                reanchoredAt: try transaction.value(for: DialogGate.lastPresentationReanchoredKey))
        }

        /// With its anchor brought up to `now`.
        func reanchored(now: Date) -> LastPresentation {
            LastPresentation(date: date, reanchoredAt: ClockRule.anchor(reanchoredAt, behind: date, now: now))
        }

        /// Writes what differs from `stored`.
        func store(in transaction: inout Prefs.Transaction, replacing stored: LastPresentation) throws {
            if date != stored.date { try transaction.set(date, for: DialogGate.lastPresentationKey) }
            if reanchoredAt != stored.reanchoredAt {
                if let reanchoredAt {
                    try transaction.set(reanchoredAt, for: DialogGate.lastPresentationReanchoredKey)
                } else {
                    transaction.reset(DialogGate.lastPresentationReanchoredKey)
                }
            }
        }
    }

    /// Whether a claim still binds: its token is live in this process, its holder still runs on this host, or,
    /// for a holder on another host, it has not expired. A token is live from just before its claim commits,
    /// so a claim of this process never looks abandoned to another gate of the process.
    static func binds(_ claim: DialogRecord.Claim, now: Date) -> Bool {
        let holder = claim.holder
        if holder == .current { return DialogPresentation.activeTokens.withLock { $0.contains(claim.token) } }
        return holder.isRunning() ?? (now < claim.expiresAt)
    }

    static func remoteClaimExpiry(_ now: Date) -> Date {
        now.addingTimeInterval(remoteClaimLifetime.timeInterval)
    }

    /// The stored record as a decision leaves it: clock anchors brought up to `now`, and a never-remind that only
    /// the legacy key records adopted (the record names the key, so `prefs-tool dialogs` lists it and resets
    /// clear it). Equal to `stored` when there is nothing to keep.
    private func observed(_ dialog: Dialog, _ stored: DialogRecord?, _ input: DialogRules.Input) -> DialogRecord? {
        var record = stored.map { DialogRules.reanchored($0, now: input.now) }
        if let key = input.legacyNeverRemindKey, input.neverRemindArgument == nil, record?.neverRemindKey != key {
            var adopted = record ?? DialogRecord()
            Self.stamp(&adopted, dialog, appVersion: appVersion)
            record = adopted
        }
        let conditions = Self.storedConditions(of: dialog)
        if record?.conditions != conditions, record != nil || conditions != nil {
            // Named in the record (without an app version: no answer is recorded), so QA's tools can explain it.
            var named = record ?? DialogRecord()
            named.id = dialog.id
            named.conditions = conditions
            record = named
        }
        return record
    }

    /// The dialog's conditions as its record keeps them.
    static func storedConditions(of dialog: Dialog) -> StoredConditions? {
        dialog.policy.conditions.map { StoredConditions(dialog.policy, $0) }
    }

    /// Stores what a decision observed, re-reading in a transaction so that an answer another process recorded
    /// meanwhile is kept. A failure is reported as the store's diagnostic and otherwise ignored: deciding must not
    /// fail, and what is lost is at most the time since this decision.
    private func storeObservations(of dialog: Dialog, now: Date) {
        do {
            let key = try DialogRecord.storeKey(for: dialog.id)
            let overrides = overrides
            try prefs.transaction { transaction in
                let (stored, lastOfAny, input) = try readInput(
                    for: dialog, key: key, legacyName: dialog.policy.neverRemindKey, in: transaction, now: now, overrides: overrides)
                let observed = observed(dialog, stored, input)
                if observed != stored { try transaction.set(observed, for: key) }
                try lastOfAny.reanchored(now: now).store(in: &transaction, replacing: lastOfAny)
                try storeUsageObservations(input.conditions, in: &transaction, now: now)
            }
        } catch {
            prefs.reportWriteFailure(error, key: DialogRecord.storeKeyName(for: dialog.id))
        }
    }
}
