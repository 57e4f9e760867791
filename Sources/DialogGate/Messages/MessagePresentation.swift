import Foundation
import PrefsSupport
import MessageFeed
import Prefs
internal import PrefsJSON

/// The message on screen now, as local dialogs keep theirs (``DialogRecord/Claim``): which message and which center
/// holds it, stored under `lastMessageId.presenting` (beside the center's `lastMessageId` key) as
/// `{"messageId": 7, "claim": {"token": …, "claimedAt": …, "host": …, "processID": …, …}}`.
///
/// While it binds (its holder runs: another window's center, or another process; see ``DialogGate/binds(_:now:)``),
/// no other center on the store presents a message: one message at a time across windows and processes. A holder that
/// crashed binds nothing.
struct MessagePresentationRecord: Codable, Hashable, Sendable, PrefsStorable {
    var messageId: Int
    var claim: DialogRecord.Claim
}

/// The presentation one ``MessageCenter`` holds, shared by the center (on the main actor) and its store work (on
/// ``MessageStoreWork``'s queue). The main actor ends a presentation at once (an acknowledgement, a dismissal), so a
/// decision running meanwhile cannot bring it back: ``adopt(_:ifNothingEndedSince:)`` refuses after an end.
final class MessageClaimHolder: Sendable {
    /// A claim this center holds: its token and message.
    struct Held: Sendable, Hashable {
        let token: String
        let messageId: Int
    }

    private struct State {
        var held: Held?
        /// Bumped by every ``end(messageId:)``.
        var ends = 0
    }

    private let state = Locked(State())
    let prefs: Prefs
    let key: Prefs.Key<MessagePresentationRecord?>

    init(prefs: Prefs, key: Prefs.Key<MessagePresentationRecord?>) {
        self.prefs = prefs
        self.key = key
    }

    deinit {
        // The center went away (its window closed) without an answer: the message may be shown elsewhere now.
        if let held = state.withLock({ $0.held }) { Self.release(held, prefs: prefs, key: key) }
    }

    /// The claim held, and the count of ends so far (for ``adopt(_:ifNothingEndedSince:)``).
    var snapshot: (held: Held?, ends: Int) {
        state.withLock { ($0.held, $0.ends) }
    }

    var held: Held? { snapshot.held }

    /// Holds `new` (or nothing) instead of the current claim, unless the main actor ended a presentation since
    /// `ends`; a claim given up is released in this process at once (its token no longer binds here).
    func adopt(_ new: Held?, ifNothingEndedSince ends: Int) -> Bool {
        let replaced: Held?? = state.withLock { state in
            guard state.ends == ends else { return .none }
            defer { state.held = new }
            return .some(state.held)
        }
        guard case .some(let old) = replaced else { return false }
        if let old, old != new { Self.forget(old) }
        return true
    }

    /// Ends the presentation of `messageId` (any, when nil): acknowledged or dismissed on the main actor. Returns the
    /// claim that ended, for the store work that releases it; its token no longer binds in this process from now on.
    func end(messageId: Int? = nil) -> Held? {
        let ended = state.withLock { state -> Held? in
            state.ends += 1
            guard let held = state.held, messageId.map({ $0 == held.messageId }) ?? true else { return nil }
            state.held = nil
            return held
        }
        if let ended { Self.forget(ended) }
        return ended
    }

    /// Releases `held` in the store (on the store queue), unless another claim replaced it there.
    static func release(_ held: Held, prefs: Prefs, key: Prefs.Key<MessagePresentationRecord?>) {
        forget(held)
        MessageStoreWork.submit {
            do {
                try prefs.transaction { transaction in
                    if try transaction.value(for: key)?.claim.token == held.token { transaction.reset(key) }
                }
            } catch {
                prefs.reportWriteFailure(error, key: key.name)
            }
        }
    }

    /// Stops `held`'s token binding in this process.
    private static func forget(_ held: Held) {
        DialogPresentation.activeTokens.withLock { _ = $0.remove(held.token) }
    }
}

/// One decision of a ``MessageCenter`` refresh, run on ``MessageStoreWork``'s queue: reads what was acknowledged, explains
/// the feed (``MessageTargeting``), and keeps, claims or gives up the presentation, in one transaction of the store.
struct MessageDecision: Sendable {
    var prefs: Prefs
    var keys: MessageCenter.StoreKeys
    var holder: MessageClaimHolder
    var messages: [RemoteMessage]
    var context: MessageContext
    var now: Date
    var impressionPolicy: ImpressionPolicy
    /// Whether to record the `lastMessageId` declaration (the first refresh).
    var declaresLastMessageId: Bool
    /// The installation id to use when the store's cannot be read or created.
    var fallbackInstallationId: String
    /// The session, app version and display frequency the messages' conditions and frequency are judged with.
    var audience: MessageAudience
    /// The message a QA override of this process forces (``MessageCenter/forcedMessageId``), if any.
    var forcedMessageId: Int?
    /// Whether the message this center holds was forced: kept on screen while it is in the feed, whatever its checks.
    var heldWasForced: Bool

    /// What the decision found.
    struct Outcome: Sendable {
        var report: TargetingReport
        /// The message to present, with the token of its claim (nil when the store could not be written: shown unclaimed).
        var pending: (message: RemoteMessage, token: String?)?
        /// The message another center or process presents, when that is why none is pending here.
        var presentedElsewhere: Int?
        /// What went wrong with the stored state (`unreadableState`), if anything.
        var error: FeedFetchError?
        /// What went wrong with the store, if anything.
        var storeError: PrefsError?
        /// The `lastMessageId` the decision read (`Int.max` when it is not a whole number).
        var lastMessageId: Int
        /// The holder's count of ends when the decision began: an unclaimed outcome applies only if none happened since.
        var ends: Int
        /// Whether the pending message was forced by a QA override (whatever its checks).
        var pendingIsForced = false
    }

    private enum Choice {
        case keep(MessageClaimHolder.Held, RemoteMessage)
        case claim(MessageClaimHolder.Held, RemoteMessage)
        case none(presentedElsewhere: Int?)
    }

    /// What the transaction decided.
    private struct Decided {
        var report: TargetingReport
        var choice: Choice
        var error: FeedFetchError?
        var lastMessageId: Int
    }

    func run() -> Outcome {
        var storeError: PrefsError?
        if declaresLastMessageId {
            // Reads go through the stored value (to read "3" as UserDefaults would), and a read never writes: the
            // first refresh records the key, so `prefs-tool list` shows it and `reset lastMessageId` finds it before
            // the first acknowledgement.
            do { try prefs.declare(keys.lastMessageId) } catch { prefs.reportWriteFailure(error, key: keys.lastMessageId.name) }
        }
        let installationId: String
        do {
            installationId = try MessageCenter.storedInstallationId(prefs)
        } catch let failure {
            storeError = PrefsError(failure)
            installationId = fallbackInstallationId
        }
        let (held, ends) = holder.snapshot
        let token = UUID().uuidString
        DialogPresentation.activeTokens.withLock { _ = $0.insert(token) }  // before the commit, as a dialog's claim
        let decided: Decided
        do {
            decided = try prefs.transaction { transaction in try decide(&transaction, held: held, token: token, installationId: installationId) }
        } catch let failure {
            DialogPresentation.activeTokens.withLock { _ = $0.remove(token) }
            return unclaimed(failure, installationId: installationId, ends: ends)
        }
        var outcome = Outcome(
            report: decided.report, error: decided.error, storeError: storeError, lastMessageId: decided.lastMessageId, ends: ends)
        switch decided.choice {
        case .keep(let kept, let message):
            DialogPresentation.activeTokens.withLock { _ = $0.remove(token) }
            outcome.pending = (message, kept.token)
            outcome.pendingIsForced = heldWasForced
        case .claim(let claimed, let message):
            if holder.adopt(claimed, ifNothingEndedSince: ends) {
                outcome.pending = (message, claimed.token)
                outcome.pendingIsForced = decided.report.forced
                audience.session.notePresentation()  // a message shown uses up `.oncePerSession`, as a dialog does
            } else {
                MessageClaimHolder.release(claimed, prefs: prefs, key: keys.presenting)  // ended meanwhile: not shown
            }
        case .none(let elsewhere):
            DialogPresentation.activeTokens.withLock { _ = $0.remove(token) }
            if held != nil { _ = holder.adopt(nil, ifNothingEndedSince: ends) }
            outcome.presentedElsewhere = elsewhere
        }
        return outcome
    }

    /// The decision inside the transaction: keep this center's presentation while its message is still eligible;
    /// present nothing while another center or process holds one; else claim the preferred message the impression
    /// policy allows.
    private func decide(
        _ transaction: inout Prefs.Transaction, held: MessageClaimHolder.Held?, token: String, installationId: String
    ) throws -> Decided {
        var error: FeedFetchError?
        var lastMessageId: Int, passedOver: Set<Int>
        // A launch argument (`-lastMessageId 0`) is read above the store, for this launch, as the app's keys read it.
        let stored = try prefs.launchArgumentValue(forKey: keys.lastMessageId.name) ?? transaction.storedValue(forKey: keys.lastMessageId.name)
        switch MessageCenter.lastMessageId(from: stored, key: keys.lastMessageId.name) {
        case .success(let value):
            (lastMessageId, passedOver) = (value, Set(try transaction.value(for: keys.passedOver)))
        case .failure(let failure):
            error = failure
            (lastMessageId, passedOver) = (.max, [])  // fail closed: every message may have an id at or below the value not read
        }
        var (state, storedLastOfAny) = try audience.state(for: messages, in: transaction, now: now)
        // Its clock anchor kept, as a dialog's decision keeps it, so an interval does not restart at every refresh.
        let lastOfAny = storedLastOfAny.reanchored(now: now)
        try lastOfAny.store(in: &transaction, replacing: storedLastOfAny)
        // The QA keys are read leniently: one that cannot be read is reported and left alone, never overwritten.
        let storedForced = try lenient(keys.forced.name, as: Int.self, in: transaction, &error)
        state.skippedVersion = try lenient(keys.skippedVersion.name, as: String.self, in: transaction, &error)
        state.forcedMessageId = forcedMessageId ?? storedForced
        let report = MessageTargeting.explain(
            messages, context: context, now: now, lastMessageId: lastMessageId, passedOver: passedOver, installationId: installationId,
            state: state)
        let eligible = report.evaluations.filter(\.isEligible).map(\.message)
        let presenting = try transaction.value(for: keys.presenting)
        if let held, presenting?.claim.token == held.token, let message = stillShown(held, in: report) {
            // It may be on screen: the user acknowledges what they saw.
            return Decided(report: report, choice: .keep(held, message), error: error, lastMessageId: lastMessageId)
        }
        if let presenting, presenting.claim.token != held?.token, DialogGate.binds(presenting.claim, now: now) {
            return Decided(report: report, choice: .none(presentedElsewhere: presenting.messageId), error: error, lastMessageId: lastMessageId)
        }
        let selected: RemoteMessage?
        if report.forced {
            selected = report.selected
        } else if impressionPolicy.limits || eligible.contains(where: { $0.maximumImpressions != nil || $0.minimumInterval != nil }) {
            selected = try selectCounting(eligible, &transaction)
        } else {
            selected = report.selected
        }
        guard let selected else {
            if presenting != nil { transaction.reset(keys.presenting) }  // this center's, or one that binds nothing
            return Decided(report: report, choice: .none(presentedElsewhere: nil), error: error, lastMessageId: lastMessageId)
        }
        let claim = DialogRecord.Claim(token: token, claimedAt: now, expiresAt: DialogGate.remoteClaimExpiry(now), holder: .current)
        try transaction.set(MessagePresentationRecord(messageId: selected.id, claim: claim), for: keys.presenting)
        // Shown: it counts toward every gate's display frequency on the store, as a dialog's presentation does.
        try DialogGate.LastPresentation(date: now).store(in: &transaction, replacing: lastOfAny)
        if report.forced, storedForced == selected.id { transaction.reset(keys.forced) }  // a one-shot override: consumed
        return Decided(
            report: report, choice: .claim(MessageClaimHolder.Held(token: token, messageId: selected.id), selected), error: error,
            lastMessageId: lastMessageId)
    }

    /// The message this center holds, if it is still to be shown: eligible but for the display frequency (which its own
    /// presentation uses up), or, when a QA override forced it, still in the feed.
    private func stillShown(_ held: MessageClaimHolder.Held, in report: TargetingReport) -> RemoteMessage? {
        guard let evaluation = report.evaluations.first(where: { $0.message.id == held.messageId && $0.message.bundleId == context.bundleIdentifier })
        else { return nil }
        if heldWasForced || evaluation.checks.allSatisfy({ $0.passed || $0.rule == .displayFrequency }) { return evaluation.message }
        return nil
    }

    /// The value under `name` as `Value`; nil when none is stored, and when it cannot be read (then `error` says why).
    private func lenient<Value: PrefsStorable>(
        _ name: String, as: Value.Type, in transaction: borrowing Prefs.Transaction, _ problem: inout FeedFetchError?
    ) throws -> Value? {
        guard let stored = try transaction.storedValue(forKey: name) else { return nil }
        do {
            return try stored.decode(Value.self)
        } catch {
            problem = .unreadableState(key: name, reason: "\(stored.type) \(stored.preview(limit: 40)) is not a \(Value.self)")
            return nil
        }
    }

    /// The impression policy for `message`: its own caps from the feed over the center's; none for a required update,
    /// which shows at every refresh.
    private func policy(for message: RemoteMessage) -> ImpressionPolicy {
        if message.update?.isRequired(forAppVersion: context.appVersion) == true { return ImpressionPolicy() }
        return ImpressionPolicy(
            maximumImpressions: message.maximumImpressions ?? impressionPolicy.maximumImpressions,
            minimumInterval: message.minimumInterval ?? impressionPolicy.minimumInterval)
    }

    /// Of `eligible`, the preferred one (priority, then id) that its impression policy allows, with its impression
    /// counted; the anchors of the clock rule kept.
    private func selectCounting(_ eligible: [RemoteMessage], _ transaction: inout Prefs.Transaction) throws -> RemoteMessage? {
        let stored = try transaction.value(for: keys.impressions)
        var log = stored.reanchored(now: now)  // kept, so a wait does not restart at every refresh
        let selected = eligible.filter { log.allows($0.id, policy(for: $0), now: now) }.min(by: MessageTargeting.isPreferred)
        if let selected, policy(for: selected).limits {
            let count = (log.messages[String(selected.id)]?.count ?? 0) + 1
            log.messages[String(selected.id)] = MessageImpressions.Entry(count: count, last: now)
        }
        if log != stored { try transaction.set(log, for: keys.impressions) }
        return selected
    }

    /// When the store's transaction failed (a read-only store, a lock held past its timeout): the decision from what
    /// the store last read, unclaimed; nothing under an impression policy, whose impression could not be counted.
    private func unclaimed(_ failure: any Error, installationId: String, ends: Int) -> Outcome {
        let lastMessageId =
            (try? MessageCenter.lastMessageId(
                from: try prefs.launchArgumentValue(forKey: keys.lastMessageId.name) ?? prefs.storedValue(forKey: keys.lastMessageId.name)
            ).get()) ?? .max
        let report = MessageTargeting.explain(
            messages, context: context, now: now, lastMessageId: lastMessageId, passedOver: Set(prefs[keys.passedOver]),
            installationId: installationId)
        var outcome = Outcome(report: report, storeError: PrefsError(failure), lastMessageId: lastMessageId, ends: ends)
        if !impressionPolicy.limits, let selected = report.selected { outcome.pending = (selected, nil) }
        return outcome
    }
}
