import Foundation
import Prefs
import PrefsSupport

extension DialogGate {
    // MARK: - Usage: what conditions count

    /// Records this launch for ``DialogCondition``s: counted once per session (by default the process on this store: every
    /// call, from every gate of the process on the store, after the first counts nothing), the first launch's date
    /// recorded once and never moved (a clock set back does not move it), and the first launch of the running
    /// ``appVersion``. Call it at every launch; one transaction, safe across processes. Returns the launches recorded.
    ///
    /// ```swift
    /// let gate = DialogGate(prefs: prefs, appVersion: "2.1")
    /// try gate.recordLaunch()   // in application(_:didFinishLaunchingWithOptions:)
    /// ```
    @discardableResult
    public func recordLaunch() throws(DialogGateError) -> Int {
        try DialogGateError.converting { try recordLaunchInStore() }
    }

    private func recordLaunchInStore() throws -> Int {
        let now = clock()
        let token = session.launchToken
        let version = appVersion
        let session = session
        let (launches, id) = try prefs.transaction { transaction -> (Int, String) in
            let stored = StoredUsage<UsageRecord>.decoding(try transaction.storedValue(forKey: UsageRecord.key.name), key: UsageRecord.key.name)
            var usage = try stored.forWriting() ?? UsageRecord(id: UUID().uuidString)
            if usage.lastSession != token && !session.hasLaunched(in: usage.id) {
                usage.launches = usage.launches == .max ? .max : usage.launches + 1
                if usage.firstLaunch == nil {
                    usage.firstLaunch = now
                    usage.firstSession = token
                }
                usage.lastLaunch = now
                usage.lastSession = token
                if let version {
                    usage.lastVersion = version
                    if usage.versions[version] == nil {
                        usage.versions[version] = UsageRecord.VersionSeen(firstSeen: now, launchesBefore: usage.launches - 1)
                        // The earliest versions go first: a version launched again after that counts from then.
                        while usage.versions.count > UsageRecord.versionLimit,
                            let earliest = usage.versions.min(by: { $0.value.firstSeen < $1.value.firstSeen })?.key
                        {
                            usage.versions[earliest] = nil
                        }
                    }
                }
            }
            usage = usage.reanchored(now: now, version: version)
            if usage != stored.value { try transaction.set(usage, for: UsageRecord.key) }
            return (usage.launches, usage.id)
        }
        session.noteLaunch(in: id)
        return launches
    }

    /// Records one donation of `event` now, for ``DialogCondition/event(_:atLeast:within:)``: its total, and its date
    /// among the event's last 1,000 (older dates are pruned by count). One transaction, safe across processes.
    ///
    /// ```swift
    /// try gate.donate("photoSaved")
    /// ```
    public func donate(_ event: String) throws(DialogGateError) {
        try DialogGateError.converting { try donateInStore(event) }
    }

    private func donateInStore(_ event: String) throws {
        let key = try EventLog.storeKey(for: event)
        let now = clock()
        try prefs.transaction { transaction in
            let stored = StoredUsage<EventLog>.decoding(try transaction.storedValue(forKey: key.name), key: key.name)
            var log = try stored.forWriting() ?? EventLog(name: event)
            if log.name != event {
                // Another event's log under the same hashed key: kept, not overwritten.
                throw PrefsError.invalidKeyName(key.name, reason: "holds the donations of \(PrefsError.quoted(log.name)), whose name has the same hash")
            }
            log.count = log.count == .max ? .max : log.count + 1
            log.dates.append(now)
            if log.dates.count > EventLog.limit { log.dates.removeFirst(log.dates.count - EventLog.limit) }
            try transaction.set(log.reanchored(now: now), for: key)
        }
    }

    /// Sets an app parameter for ``DialogCondition/parameter(_:equals:)`` in memory, for the session (by default the
    /// process on this store, so every gate of the process on the store sees it); nil removes it. It is not stored: set
    /// it at each launch (or pass `parameters:` to the gate), or use ``storeParameter(_:_:)``. A value set here wins
    /// over a stored one.
    ///
    /// ```swift
    /// gate.setParameter("isPro", store.isPro)
    /// ```
    public func setParameter(_ name: String, _ value: DialogCondition.Value?) {
        session.setParameter(name, value)
    }

    /// Stores an app parameter for ``DialogCondition/parameter(_:equals:)`` (nil removes it), under
    /// `dialoggate.parameters`: other processes on the store and `prefs-tool dialogs explain` see it, and it holds at the
    /// next launch. One transaction.
    ///
    /// ```swift
    /// try gate.storeParameter("cohort", "b")
    /// ```
    public func storeParameter(_ name: String, _ value: DialogCondition.Value?) throws(DialogGateError) {
        try DialogGateError.converting {
            let key = Prefs.Key<StoredParameters?>(StoredParameters.keyName)
            try prefs.transaction { transaction in
                let stored = StoredUsage<StoredParameters>.decoding(try transaction.storedValue(forKey: key.name), key: key.name)
                var parameters = try stored.forWriting() ?? StoredParameters(values: [:])
                parameters.values[name] = value.map(StoredParameterValue.init)
                if parameters.values.isEmpty {
                    transaction.reset(key)
                } else {
                    try transaction.set(parameters, for: key)
                }
            }
        }
    }

    // MARK: - Groups in order

    /// The decision for the next of `dialogs` shown in order (see ``claim(nextOf:)``): the first that is not done, or
    /// the last when all are; a decision with no id and no reasons for no dialogs.
    ///
    /// ```swift
    /// print(gate.decision(forNextOf: onboarding))   // "intro2: not presented: suppressed for this session (OK)"
    /// ```
    public func decision(forNextOf dialogs: [Dialog]) -> DialogDecision {
        guard let last = dialogs.last else { return DialogDecision(dialogID: "", shouldPresent: false, reasons: []) }
        prefs.refreshReportingErrors()
        let now = clock()
        let overrides = overrides
        let next =
            dialogs.first { overrides.forced.contains($0.id) }
            ?? dialogs.first { !DialogRules.isDone($0, committedInput(for: $0, now: now, overrides: overrides).input) } ?? last
        return decision(for: next)
    }

    // MARK: - Explaining

    /// What `prefs-tool dialogs explain` shows of the dialog stored under `id` (as ``states()`` names it): its state,
    /// and each condition its record keeps judged on the store's usage, as the app's next launch would see it (the
    /// version of the last launch; the parameters the app keeps in memory unknown). Package API.
    package func explanation(of id: String) throws -> (state: DialogState, conditions: ConditionStatus?, usage: UsageRecord?)? {
        guard let state = try states().first(where: { $0.id == id || $0.dialogID == id }) else { return nil }
        prefs.refreshReportingErrors()
        let usage = StoredUsage<UsageRecord>.decoding(try prefs.storedValue(forKey: UsageRecord.key.name), key: UsageRecord.key.name)
        guard let record = state.record, let stored = record.conditions else { return (state, nil, usage.value) }
        let condition = stored.condition.condition
        let counting = stored.counting
        var inputs = ConditionInputs(usage: usage, sessionParametersKnown: false, session: nil, appVersion: usage.value?.lastVersion)
        for name in condition.eventNames {
            let keyName = EventLog.storeKeyName(for: name)
            var log = StoredUsage<EventLog>.decoding(try prefs.storedValue(forKey: keyName), key: keyName)
            if let found = log.value, found.name != name { log = .absent }
            inputs.events[name] = log
        }
        switch StoredUsage<StoredParameters>.decoding(try prefs.storedValue(forKey: StoredParameters.keyName), key: StoredParameters.keyName) {
        case .absent: break
        case .present(let parameters): inputs.parameters = parameters.values.mapValues(\.value)
        case .unreadable(let error): inputs.parametersProblem = "stored parameters unreadable: \(error)"
        }
        let now = clock()
        // The presentations as the next decision sees them: a version reset keeps them.
        let status = ConditionRules.evaluate(
            condition, inputs, counting: ConditionCounting(grouping: counting.grouping, historySince: counting.historySince),
            presentations: record.recentPresentations ?? [], presentationsAnchor: record.recentPresentationsReanchoredAt, now: now)
        return (state, status, usage.value)
    }
}
