import Foundation
internal import PrefsJSON

/// Decides which message of a feed to show, and explains why: pure functions of the messages, the
/// context, the date, the last acknowledged id and the installation id.
///
/// A message is eligible when every rule passes: it is for this app, its id is greater than
/// `lastMessageId` or it was passed over (in the feed, unacknowledged, when a higher id was acknowledged), it is
/// not cancelled, the date is within `startsAt ..< endsAt`, the app and OS versions
/// match their lists (a list with no matching entry matches nothing, so `["0"]` cancels), the locale falls
/// under one of `locales`, and the installation's rollout bucket is below `rolloutPercent`. Among eligible
/// messages the highest `priority` wins, then the highest id.
///
/// ```swift
/// let report = MessageTargeting.explain(feed.messages, context: context, now: Date(),
///                                       lastMessageId: 2, installationId: installationId)
/// report.selected?.id                                           // 3
/// report.evaluations[0].check(.id)?.summary                     // "id > lastMessageId (3 > 2)"
/// ```
package enum MessageTargeting {
    /// What the installation's store and gate know beyond the feed: the version the user skipped, how the message's
    /// conditions stand, and whether the display frequency allows a message. The defaults judge without them: no
    /// version skipped, conditions not met (they cannot be judged), no display frequency.
    package struct State: Sendable {
        /// The version "skip this version" stored, if any.
        package var skippedVersion: String?
        /// Judges a message's conditions (met, and what they saw); nil when they cannot be judged: they fail closed.
        package var conditions: (@Sendable (FeedCondition) -> (met: Bool, detail: String))?
        /// Whether the gate's display frequency allows a message now, and why; nil when there is none.
        package var displayFrequency: (passed: Bool, detail: String)?
        /// The message a QA override forces (`prefs-tool messages force ID`, `-DialogGateForceMessage ID`): selected
        /// whatever its checks, if it is for this app.
        package var forcedMessageId: Int?

        package init(
            skippedVersion: String? = nil, conditions: (@Sendable (FeedCondition) -> (met: Bool, detail: String))? = nil,
            displayFrequency: (passed: Bool, detail: String)? = nil, forcedMessageId: Int? = nil
        ) {
            self.skippedVersion = skippedVersion
            self.conditions = conditions
            self.displayFrequency = displayFrequency
            self.forcedMessageId = forcedMessageId
        }
    }

    /// Checks every message and selects one.
    ///
    /// ```swift
    /// let report = MessageTargeting.explain(messages, context: context, now: now,
    ///                                       lastMessageId: 0, installationId: "A1B2…")
    /// ```
    package static func explain(
        _ messages: [RemoteMessage], context: MessageContext, now: Date, lastMessageId: Int, passedOver: Set<Int> = [],
        installationId: String, state: State = State()
    ) -> TargetingReport {
        let evaluations = messages.map {
            evaluate(
                $0, context: context, now: now, lastMessageId: lastMessageId, passedOver: passedOver, installationId: installationId,
                state: state)
        }
        if let forced = state.forcedMessageId,
            let message = messages.first(where: { $0.id == forced && $0.bundleId == context.bundleIdentifier })
        {
            return TargetingReport(evaluations: evaluations, selected: message, forced: true)
        }
        let selected = evaluations.filter(\.isEligible).map(\.message).min(by: isPreferred)
        return TargetingReport(evaluations: evaluations, selected: selected)
    }

    /// The message to show, or nil; the same as `explain(…).selected`.
    ///
    /// ```swift
    /// let message = MessageTargeting.select(messages, context: context, now: now, lastMessageId: 0, installationId: id)
    /// ```
    package static func select(
        _ messages: [RemoteMessage], context: MessageContext, now: Date, lastMessageId: Int, passedOver: Set<Int> = [],
        installationId: String
    ) -> RemoteMessage? {
        explain(messages, context: context, now: now, lastMessageId: lastMessageId, passedOver: passedOver, installationId: installationId).selected
    }

    /// Every check of one message, in ``TargetingCheck/Rule`` order; all are made even after one fails. The rules of
    /// feed format 2 (`testDevices`, `update`, `conditions`) and the display frequency are checked only where they
    /// apply: a message that sets them, a state that knows a display frequency.
    ///
    /// ```swift
    /// let evaluation = MessageTargeting.evaluate(message, context: context, now: now, lastMessageId: 2, installationId: id)
    /// evaluation.failedChecks.map(\.summary)
    /// ```
    package static func evaluate(
        _ message: RemoteMessage, context: MessageContext, now: Date, lastMessageId: Int, passedOver: Set<Int> = [],
        installationId: String, state: State = State()
    ) -> MessageEvaluation {
        let nowText = ISO8601.format(now)
        var checks: [TargetingCheck] = []
        func add(_ rule: TargetingCheck.Rule, _ passed: Bool, _ detail: String) {
            checks.append(TargetingCheck(rule: rule, passed: passed, detail: detail))
        }

        let sameApp = message.bundleId == context.bundleIdentifier
        add(.bundleId, sameApp, "\"\(message.bundleId)\" \(sameApp ? "==" : "!=") \"\(context.bundleIdentifier)\"")

        if message.update != nil {
            add(.id, true, "an update: shown while the app is below its version, whatever lastMessageId (\(lastMessageId))")
        } else if message.id > lastMessageId {
            add(.id, true, "\(message.id) > \(lastMessageId)")
        } else if passedOver.contains(message.id) {
            add(.id, true, "\(message.id) is not > \(lastMessageId), but was passed over unacknowledged")
        } else {
            add(.id, false, "\(message.id) is not > \(lastMessageId)")
        }

        add(.cancelled, !message.cancelled, message.cancelled ? "cancelled in the feed" : "not cancelled")

        if let startsAt = message.startsAt {
            let started = now >= startsAt
            add(.startsAt, started, "\(started ? "started" : "starts") \(ISO8601.format(startsAt)), now is \(nowText)")
        } else {
            add(.startsAt, true, "not set")
        }

        if let endsAt = message.endsAt {
            let running = now < endsAt
            add(.endsAt, running, "\(running ? "ends" : "ended") \(ISO8601.format(endsAt)), now is \(nowText)")
        } else {
            add(.endsAt, true, "not set")
        }

        let app = versionCheck(message.appVersionList, running: context.appVersion, label: "app version")
        add(.appVersions, app.passed, app.detail)
        let os = versionCheck(message.osVersionList, running: context.osVersion, label: "OS version")
        add(.osVersions, os.passed, os.detail)

        if let locales = message.locales {
            let tags = locales.map { "\"\($0)\"" }.joined(separator: ", ")
            if let match = locales.first(where: { MessageContext.locale(context.localeIdentifier, isCoveredBy: $0) }) {
                add(.locales, true, "\(context.localeIdentifier) matches \"\(match)\"")
            } else {
                add(.locales, false, "\(context.localeIdentifier) matches none of [\(tags)]")
            }
        } else {
            add(.locales, true, "not set")
        }

        let testDevice = message.testDevices?.contains { isSameDevice($0, installationId) } ?? false
        if let percent = message.rolloutPercent {
            let bucket = rolloutBucket(installationId: installationId, messageId: message.id)
            let inside = bucket < percent
            if testDevice {
                add(.rolloutPercent, true, "a test device, inside any rollout (bucket \(bucket), \(percent))")
            } else {
                add(.rolloutPercent, inside, inside ? "bucket \(bucket) < \(percent)" : "bucket \(bucket) is not < \(percent)")
            }
        } else {
            add(.rolloutPercent, true, "not set")
        }

        if let devices = message.testDevices {
            let shown = installationId.isEmpty ? "no installation id" : "installation \(installationId)"
            add(.testDevices, testDevice, "\(shown) \(testDevice ? "is" : "is not") one of \(devices.count) test device\(devices.count == 1 ? "" : "s")")
        }

        let required = message.update?.isRequired(forAppVersion: context.appVersion) ?? false
        if let update = message.update {
            let check = updateCheck(update, running: context.appVersion, required: required, skipped: state.skippedVersion, now: now)
            add(.update, check.passed, check.detail)
        }

        if let conditions = message.conditions {
            if let judge = state.conditions {
                let judged = judge(conditions)
                add(.conditions, judged.met, judged.detail)
            } else {
                add(.conditions, false, "not judged without the store's usage (a MessageCenter judges them)")
            }
        }

        if let frequency = state.displayFrequency {
            if required {
                add(.displayFrequency, true, "a required update: shown whatever the display frequency")
            } else {
                add(.displayFrequency, frequency.passed, frequency.detail)
            }
        }
        return MessageEvaluation(message: message, checks: checks)
    }

    /// Whether an installation id is one of a message's test devices: equal, ignoring case and white space at either
    /// end (QA pastes what `prefs-tool messages device-id` printed).
    static func isSameDevice(_ listed: String, _ installationId: String) -> Bool {
        let id = installationId.trimmingCharacters(in: .whitespaces)
        return !id.isEmpty && listed.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(id) == .orderedSame
    }

    /// The update rule: the app is below the minimum (required) or the recommended version not skipped, and the version
    /// was released ``RemoteMessage/Update/minimumAge`` ago (an app store may not serve it yet everywhere before).
    private static func updateCheck(
        _ update: RemoteMessage.Update, running text: String, required: Bool, skipped: String?, now: Date
    ) -> (passed: Bool, detail: String) {
        guard let running = RunningVersion(text) else { return (false, "app version \"\(text)\" is not a version") }
        var reasons: [String] = []
        var below = false
        if required, let minimum = update.minimumVersion {
            reasons.append("\(running) is below the minimum \(minimum): required, no skip")
            below = true
        } else if let recommended = update.recommendedVersion.flatMap({ Version($0) }) {
            if !running.isBelow(recommended) {
                reasons.append("\(running) is not below the recommended \(recommended)")
            } else if let skipped, let version = Version(lenient: skipped), version >= recommended {
                reasons.append("\(running) is below the recommended \(recommended), but \(skipped) was skipped")
            } else {
                reasons.append("\(running) is below the recommended \(recommended)")
                below = true
            }
        } else {
            reasons.append("\(running) is not below the minimum \(update.minimumVersion ?? "?")")
        }
        let from = update.showsFrom
        let old = now >= from
        reasons.append(
            "released \(ISO8601.format(update.releasedAt, fractionDigits: 0)), "
                + (old ? "shown since \(ISO8601.format(from, fractionDigits: 0))" : "not before \(ISO8601.format(from, fractionDigits: 0))"))
        return (below && old, reasons.joined(separator: "; "))
    }

    /// The installation's bucket, 0 to 99, for a message: the first 8 bytes of SHA-256 of
    /// `"<messageId>:<installationId>"`, big-endian, modulo 100. The same installation and message always give the
    /// same bucket, in every process and release; the buckets of one installation for two messages are independent,
    /// so two 10% rollouts overlap in about 1% of installations, not in all or none of them.
    ///
    /// ```swift
    /// MessageTargeting.rolloutBucket(installationId: "A1B2C3", messageId: 7)   // always the same value
    /// ```
    package static func rolloutBucket(installationId: String, messageId: Int) -> Int {
        let digest = SHA256.hash(Array("\(messageId):\(installationId)".utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % 100)
    }

    // MARK: - Internals

    /// Whether `lhs` should be shown rather than `rhs`: higher priority, then higher id, then earlier in the feed.
    package static func isPreferred(_ lhs: RemoteMessage, over rhs: RemoteMessage) -> Bool {
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        if lhs.id != rhs.id { return lhs.id > rhs.id }
        return lhs.feedIndex < rhs.feedIndex
    }

    private static func versionCheck(_ list: VersionList?, running text: String, label: String) -> (passed: Bool, detail: String) {
        guard let list else { return (true, "not set") }
        guard let version = RunningVersion(text) else {
            return (false, "\(label) \"\(text)\" is not a version, so \(list) cannot match")
        }
        if list.matches(version) { return (true, "\(version) matches \(list)") }
        return (false, "\(version) matches none of \(list)")
    }
}
