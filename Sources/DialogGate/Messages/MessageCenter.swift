import Foundation
import Observation
import MessageFeed
import MessageFeedFetching
import Prefs

/// The app-facing service: fetches the feed, decides which message to show, and remembers which one
/// the user acknowledged: each message shown once, when its id exceeds `lastMessageId`, made safe.
///
/// A message is shown when its id is greater than the stored `lastMessageId` and its targeting matches.
/// `lastMessageId` is written when the user *acknowledges* the message (confirm or link), never when it is
/// presented, so a message interrupted by a crash or by another modal is shown again at the next launch.
/// The stored value only ever grows. It is read as `UserDefaults.integer(forKey:)` reads it, for the
/// values that has a whole-number answer to (`3`, `3.0`, `"3"`, `true`); any other stored value fails closed:
/// no message is shown and ``lastError`` says why. QA starts an app in a known state with the launch argument
/// `-lastMessageId 0`: that launch's decisions read it above the stored value, which they never change.
///
/// **One message at a time, across windows and processes**: a center per window (or scene, or an app extension) on
/// one store is fine. The center whose refresh makes a message pending claims its presentation in the store, as
/// ``DialogGate/claim(_:)`` does for a dialog; while it holds it (until ``acknowledge(_:for:)``,
/// ``dismissWithoutAcknowledging()``, or the center's release), every other center on the store presents none
/// (``presentedElsewhere`` says which message is on screen elsewhere), and the next decision of each sees the
/// acknowledgement. A holder that crashed binds nothing.
///
/// **With local dialogs**: a message shown counts as a presentation for the store's ``DialogGate``s (their
/// ``DisplayFrequency``); a center made with `gate:` also waits for that gate's display frequency and judges a feed
/// message's conditions with its session and parameters. See ``init(feedURL:prefs:context:lastMessageIdKey:options:impressions:gate:clock:random:)``.
///
/// **Off the main actor**: the store's reads and writes (the decision, the acknowledgement) run on a background queue,
/// in the order they were asked for, so a store whose lock another process holds never freezes the main actor.
/// ``acknowledge(_:for:)`` returns at once; ``flush()`` waits for its write (a normal exit waits up to two seconds).
///
/// ```swift
/// @State private var messages = MessageCenter(
///     feedURL: URL(string: "https://example.github.io/AppAlert/messages.json")!,
///     prefs: prefs,
///     context: .current(bundleIdentifier: "com.example.app", appVersion: "1.4.2")
/// )
/// …
/// .task { await messages.refresh() }
/// .alert(messages.pendingMessage?.title ?? "",
///        isPresented: Binding(get: { messages.pendingMessage != nil },
///                             set: { if !$0 { messages.dismissWithoutAcknowledging() } }),
///        presenting: messages.pendingMessage) { message in
///     Button(message.confirmLabel) { messages.acknowledge(.confirm, for: message) }
///     if let link = message.link {
///         Button(link.title) { messages.acknowledge(.link, for: message); openURL(link.url) }
///     }
/// } message: { message in Text(message.text) }
/// ```
@MainActor @Observable
public final class MessageCenter {
    /// How the user left a message; both store its id as `lastMessageId`.
    ///
    /// ```swift
    /// center.acknowledge(.confirm, for: message)
    /// ```
    public enum Acknowledgement: Sendable, Hashable {
        /// The confirm button (`confirmLabel`).
        case confirm
        /// The link button; ``MessageCenter/acknowledge(_:for:)`` returns the link's URL.
        case link
        /// "Skip this version", for an update message (`RemoteMessage.update`) that is not required: stores its
        /// recommended version (`lastMessageId.skippedVersion`), so it shows again only when the feed recommends a later
        /// one. A required update cannot be skipped (``isRequiredUpdate(_:)``): it shows again at the next refresh. For
        /// another message, the same as ``confirm``.
        ///
        /// ```swift
        /// Button("Skip This Version") { center.acknowledge(.skipVersion, for: message) }
        /// ```
        case skipVersion
    }

    /// The key holding the installation id used for rollouts: a UUID string created once per store.
    ///
    /// ```swift
    /// prefs[MessageCenter.installationIdKey]   // "6F1C…"
    /// ```
    public nonisolated static let installationIdKey = Prefs.Key<String?>("dialoggate.installationId")

    /// The message to present, or nil. Cleared by ``acknowledge(_:for:)`` and ``dismissWithoutAcknowledging()``.
    /// A refresh never swaps it for another message while it is still to be shown (it may be on screen): it
    /// changes only when the message is no longer eligible (acknowledged elsewhere, cancelled, removed).
    public private(set) var pendingMessage: RemoteMessage?
    /// The id of the message another center or process on the store presents now, when that is why no message is
    /// pending here (one message at a time across windows); nil otherwise.
    ///
    /// ```swift
    /// center.presentedElsewhere   // 7: another window shows message 7
    /// ```
    public private(set) var presentedElsewhere: Int?
    /// What went wrong with the feed during the last refresh or acknowledgement, or nil. The last good feed may still
    /// have been used.
    public internal(set) var lastError: FeedFetchError?
    /// What went wrong with the store during the last refresh, acknowledgement or ``installationId()``, or nil: the
    /// feed cache or the message state could not be read or written (a read-only store, a lock held too long).
    ///
    /// ```swift
    /// if let error = center.lastStoreError { log("messages: \(error)") }   // the feed itself may be fine
    /// ```
    public internal(set) var lastStoreError: PrefsError?
    /// The feed's issues from the last refresh: skipped messages, dropped links, unknown keys.
    public private(set) var diagnostics: [FeedIssue] = []
    /// Every targeting check of the last decision (what `prefs-tool feed explain` prints). Package API.
    package var lastReport: TargetingReport? { report }
    /// The outcome of the last fetch. Package API.
    package var lastFetch: FeedFetchResult? { fetch }
    /// The storage of ``lastReport`` and ``lastFetch``, observed like the public state.
    private var report: TargetingReport?
    private var fetch: FeedFetchResult?
    /// Whether a refresh is running.
    public private(set) var isRefreshing = false

    /// The feed URL.
    public let feedURL: URL
    /// The app, OS and locale the feed is matched against.
    public let context: MessageContext
    /// The store holding `lastMessageId`, the installation id and the feed cache.
    public let prefs: Prefs
    /// The key holding the id of the last acknowledged message.
    public let lastMessageIdKey: Prefs.Key<Int>
    /// The key holding the ids passed over: messages that were in the feed, unacknowledged, when a higher id was
    /// acknowledged (`lastMessageId.passedOver`). They stay eligible although their id is not above `lastMessageId`,
    /// so acknowledging a higher id (a higher priority, a lower id that starts later) never hides a lower one.
    ///
    /// ```swift
    /// prefs[center.passedOverKey]   // [3]
    /// ```
    public let passedOverKey: Prefs.Key<[Int]>
    /// How often a message not yet acknowledged is shown again.
    public let impressionPolicy: ImpressionPolicy
    /// The key holding each message's impressions (`lastMessageId.impressions`), written when
    /// ``impressionPolicy`` limits them.
    let impressionsKey: Prefs.Key<MessageImpressions>
    /// This center's presentation claim (stored under `lastMessageId.presenting`), released when the center is.
    let holder: MessageClaimHolder
    /// Called on the main actor when a message becomes pending (an impression), when one is acknowledged, and
    /// when one is dismissed without acknowledging: for the app's analytics.
    ///
    /// ```swift
    /// center.onEvent = { event in analytics.log("\(event)") }   // "impression 7", "acknowledged 7 (confirm)"
    /// ```
    @ObservationIgnored public var onEvent: (@MainActor (DialogEvent) -> Void)?
    /// The gate whose display frequency, session, app version and parameters the messages take part in, if the center
    /// was made with one (see ``init(feedURL:prefs:context:lastMessageIdKey:options:impressions:gate:clock:random:)``).
    ///
    /// ```swift
    /// center.gate?.displayFrequency   // .oncePerSession
    /// ```
    public let gate: DialogGate?
    /// A message to show at the next refresh whatever its targeting (its id, versions, dates, conditions, caps), for QA:
    /// once shown, it is cleared. Set it from a launch argument with ``forcedMessageId(arguments:environment:)``, in a QA
    /// build only; `prefs-tool messages force ID` stores a one-shot override the next refresh of any center consumes.
    ///
    /// ```swift
    /// center.forcedMessageId = 7   // the next refresh shows message 7, if the feed has it for this app
    /// ```
    @ObservationIgnored public var forcedMessageId: Int?
    /// Whether ``pendingMessage`` was forced (``forcedMessageId`` or `prefs-tool messages force`).
    @ObservationIgnored private var pendingWasForced = false
    /// The session, app version and display frequency messages are judged with.
    private let audience: MessageAudience
    /// The fetcher, for inspecting its cache. Package API.
    package let fetcher: FeedFetcher
    private let clock: @Sendable () -> Date
    @ObservationIgnored private var generation = 0
    /// Whether the first refresh recorded the `lastMessageId` declaration.
    @ObservationIgnored private var declaredLastMessageId = false
    @ObservationIgnored private var processInstallationId: String?
    /// The highest id acknowledged here whose write has not finished yet, so ``lastMessageId`` reads it at once.
    @ObservationIgnored private var acknowledgedInFlight: (id: Int, writes: Int)?
    /// `lastMessageId` as the last decision read it or the last acknowledgement wrote it, so that reading it on the
    /// main actor never waits for the store.
    @ObservationIgnored private var knownLastMessageId: Int?

    /// Creates a message center. Nothing is fetched until ``refresh(force:)``.
    ///
    /// - Parameters:
    ///   - feedURL: the feed, `messages.json` on static hosting.
    ///   - prefs: the app's store: the last acknowledged id, the cached feed and the fetch state live there.
    ///   - context: the running app (bundle identifier, versions, locale) that messages are targeted at.
    ///   - lastMessageIdKey: the key name of the last acknowledged id; `"lastMessageId"` by default, the name
    ///     apps on UserDefaults used (a programming error, stopping here, if the name is not a valid key name).
    ///   - options: timeouts, size cap, cache age, backoff, allowed link schemes.
    ///   - impressions: how often a message not yet acknowledged is shown again (by default at every refresh); a feed
    ///     message's own `maxImpressions` and `minimumIntervalSeconds` replace these for it.
    ///   - gate: the app's ``DialogGate`` on the same store, so that messages take part in its rules: a message is
    ///     shown only when the gate's ``DialogGate/displayFrequency`` allows a presentation (a required update
    ///     excepted), and the feed's conditions are judged with the gate's session (its launch, and the parameters it
    ///     sets in memory) and app version. Without one, the session is ``DialogSession/store(_:)``, the one a
    ///     `DialogGate(prefs:)` uses, and no display frequency limits messages. Either way a message shown counts as a
    ///     presentation for every gate on the store: `dialoggate.lastPresentation` and the session's "presented any".
    ///   - clock: the current date, for targeting, max-age, backoff and cache age.
    ///   - random: a number in `0..<1` for the backoff jitter.
    ///
    /// ```swift
    /// let gate = DialogGate(prefs: prefs, appVersion: "2.1", displayFrequency: .oncePerSession)
    /// let center = MessageCenter(feedURL: url, prefs: prefs,
    ///                            context: .current(bundleIdentifier: "com.example.app", appVersion: "2.1"), gate: gate)
    /// ```
    public convenience init(
        feedURL: URL,
        prefs: Prefs,
        context: MessageContext,
        lastMessageIdKey: String = "lastMessageId",
        options: FeedOptions = FeedOptions(),
        impressions: ImpressionPolicy = ImpressionPolicy(),
        gate: DialogGate? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.init(
            feedURL: feedURL, prefs: prefs, context: context, lastMessageIdKey: lastMessageIdKey, options: options,
            impressions: impressions, gate: gate, loader: nil, clock: clock, random: random)
    }

    /// Creates a message center whose requests `loader` performs (nil for the standard loader): tests, and tools
    /// with their own networking. Package API.
    package init(
        feedURL: URL,
        prefs: Prefs,
        context: MessageContext,
        lastMessageIdKey: String = "lastMessageId",
        options: FeedOptions = FeedOptions(),
        impressions: ImpressionPolicy = ImpressionPolicy(),
        gate: DialogGate? = nil,
        loader: (any FeedLoader)?,
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.gate = gate
        audience = MessageAudience(
            session: gate?.session ?? .store(prefs), appVersion: gate?.appVersion ?? context.appVersion, displayFrequency: gate?.displayFrequency)
        self.feedURL = feedURL
        self.prefs = prefs
        self.context = context
        self.lastMessageIdKey = Prefs.Key<Int>(lastMessageIdKey, initial: 0)
        passedOverKey = Prefs.Key<[Int]>(lastMessageIdKey + ".passedOver", initial: [])
        impressionPolicy = impressions
        impressionsKey = Prefs.Key<MessageImpressions>(lastMessageIdKey + ".impressions", initial: MessageImpressions())
        holder = MessageClaimHolder(prefs: prefs, key: Prefs.Key<MessagePresentationRecord?>(lastMessageIdKey + ".presenting"))
        self.clock = clock
        fetcher = FeedFetcher(url: feedURL, prefs: prefs, options: options, loader: loader, clock: clock, random: random)
    }

    /// Fetches the feed (or uses the last good one) and decides which message to present. Never throws:
    /// problems go to ``lastError`` and ``diagnostics``. When refreshes overlap, the last one started wins.
    ///
    /// - Parameter force: ignore the server's `max-age` (a backoff after failures still applies).
    ///
    /// ```swift
    /// await center.refresh()
    /// if let message = center.pendingMessage { present(message) }
    /// ```
    public func refresh(force: Bool = false) async {
        generation += 1
        let current = generation
        isRefreshing = true
        let result = await fetcher.fetch(force: force)
        guard current == generation else { return }
        fetch = result
        lastError = result.error
        lastStoreError = result.storeError
        diagnostics = result.feed?.issues ?? []
        guard let feed = result.feed else {
            isRefreshing = false
            report = nil
            presentedElsewhere = nil
            if let ended = holder.end() { MessageClaimHolder.release(ended, prefs: prefs, key: holder.key) }
            pendingMessage = nil
            pendingWasForced = false
            return
        }
        let decision = MessageDecision(
            prefs: prefs, keys: storeKeys, holder: holder, messages: feed.messages, context: context, now: clock(),
            impressionPolicy: impressionPolicy, declaresLastMessageId: !declaredLastMessageId,
            fallbackInstallationId: fallbackInstallationId(), audience: audience, forcedMessageId: forcedMessageId,
            heldWasForced: pendingWasForced)
        declaredLastMessageId = true
        let outcome = await MessageStoreWork.run { decision.run() }
        guard current == generation else { return }
        isRefreshing = false
        report = outcome.report
        knownLastMessageId = outcome.lastMessageId
        presentedElsewhere = outcome.presentedElsewhere
        if let error = outcome.error { lastError = error }
        if let error = outcome.storeError { lastStoreError = error }
        // An acknowledgement or a dismissal while the decision ran ended what it would show: it stays ended.
        let stillHeld = outcome.pending.map { $0.token == nil ? holder.snapshot.ends == outcome.ends : holder.held?.token == $0.token }
        guard stillHeld != false else { return }
        let previous = pendingMessage
        pendingMessage = outcome.pending?.message
        pendingWasForced = outcome.pending != nil && outcome.pendingIsForced
        if pendingWasForced, forcedMessageId == pendingMessage?.id { forcedMessageId = nil }  // once
        if let pendingMessage, pendingMessage.id != previous?.id { onEvent?(.impression(pendingMessage)) }
    }

    /// Waits until the store writes asked for so far (``acknowledge(_:for:)`` and ``dismissWithoutAcknowledging()`` of
    /// every center of the process) are done, without blocking the main actor: before the app reads the store
    /// another way, or before it is suspended. A normal exit waits for them by itself (up to two seconds).
    ///
    /// ```swift
    /// center.acknowledge(.confirm, for: message)
    /// await center.flush()   // lastMessageId is in the store
    /// ```
    public func flush() async {
        await MessageStoreWork.run {}
    }

    /// Records that the user acknowledged `message`, the one presented: stores its id as `lastMessageId`
    /// (never lowering the stored value) and clears ``pendingMessage`` if it is that message. It takes the
    /// message, not "whatever is pending", so that a refresh can never make it acknowledge one the user did not
    /// see; it works whether or not the message is still pending (SwiftUI's `alert(_:isPresented:presenting:)`
    /// may clear its binding before the button action runs).
    /// A stored `lastMessageId` that cannot be read is left alone (it might be higher) and reported.
    ///
    /// - Returns: the link's URL for `.link` (nil for `.confirm`, or for a message without a link).
    ///
    /// ```swift
    /// Button(message.confirmLabel) { center.acknowledge(.confirm, for: message) }
    /// ```
    ///
    /// An update message (`RemoteMessage.update`) is shown by its versions, not its id: acknowledging it stores no
    /// `lastMessageId`, so it shows again (within its caps) while the app is below its version, unless the user chose
    /// ``Acknowledgement/skipVersion`` for a recommended one.
    @discardableResult
    public func acknowledge(_ action: Acknowledgement, for message: RemoteMessage) -> URL? {
        if pendingMessage?.id == message.id {
            pendingMessage = nil
            pendingWasForced = false
        }
        let ended = holder.end(messageId: message.id)
        let keys = storeKeys
        let prefs = prefs, id = message.id
        if let update = message.update {
            // Skipped: the recommended version, unless the update is required (which cannot be skipped).
            let skipped = action == .skipVersion && !isRequiredUpdate(message) ? update.recommendedVersion : nil
            MessageStoreWork.submit { [weak self] in
                let written = Self.recordUpdateAnswer(skipping: skipped, ending: ended, prefs: prefs, keys: keys)
                if let written { Task { @MainActor in self?.lastStoreError = written } }
            }
            onEvent?(.acknowledged(message, action))
            return action == .link ? message.link?.url : nil
        }
        // The lower ids of this app in the feed: those not acknowledged yet are passed over, not lost.
        let lower = (fetch?.feed?.messages ?? []).filter { $0.bundleId == message.bundleId && $0.id < message.id && $0.update == nil }.map(\.id)
        acknowledgedInFlight = (max(acknowledgedInFlight?.id ?? message.id, message.id), (acknowledgedInFlight?.writes ?? 0) + 1)
        MessageStoreWork.submit { [weak self] in
            let written = Self.recordAcknowledgement(of: id, lower: lower, ending: ended, prefs: prefs, keys: keys)
            Task { @MainActor in self?.acknowledgementWritten(written) }
        }
        onEvent?(.acknowledged(message, action))
        return action == .link ? message.link?.url : nil
    }

    /// Whether `message` is an update the running app must install (`MessageContext.appVersion` below the feed's
    /// `minimumVersion`): it cannot be skipped or dismissed for good, and shows at every refresh, so present it without
    /// "Later" or "Skip This Version".
    ///
    /// ```swift
    /// if !center.isRequiredUpdate(message) {
    ///     Button("Skip This Version") { center.acknowledge(.skipVersion, for: message) }
    /// }
    /// ```
    public func isRequiredUpdate(_ message: RemoteMessage) -> Bool {
        message.update?.isRequired(forAppVersion: context.appVersion) ?? false
    }

    /// An acknowledgement's write finished (on the main actor again).
    private func acknowledgementWritten(_ written: Result<Int, AcknowledgementFailure>) {
        switch written {
        case .success(let stored): knownLastMessageId = stored
        case .failure(.feed(.unreadableState(let key, let reason))):
            knownLastMessageId = .max
            lastError = .unreadableState(key: key, reason: reason)
        case .failure(.feed(let error)): lastError = error
        case .failure(.store(let error)): lastStoreError = error
        }
        if let inFlight = acknowledgedInFlight { acknowledgedInFlight = inFlight.writes > 1 ? (inFlight.id, inFlight.writes - 1) : nil }
    }

    /// Acknowledges ``pendingMessage``, as release 0.1's `acknowledge(_:)` did; nil when none is pending.
    ///
    /// Deprecated since 0.2: pass the message you presented to ``acknowledge(_:for:)``. A refresh between presenting
    /// and acknowledging may have replaced the pending message, and this form would then acknowledge one the user never
    /// saw.
    @available(*, deprecated, renamed: "acknowledge(_:for:)", message: "pass the message you presented")
    @discardableResult
    public func acknowledge(_ action: Acknowledgement) -> URL? {
        guard let message = pendingMessage else { return nil }
        return acknowledge(action, for: message)
    }

    /// Clears ``pendingMessage`` without storing anything, so the message is shown again next time
    /// (for example when another modal took over).
    ///
    /// ```swift
    /// center.dismissWithoutAcknowledging()
    /// ```
    public func dismissWithoutAcknowledging() {
        guard let message = pendingMessage else { return }
        pendingMessage = nil
        pendingWasForced = false
        if let ended = holder.end(messageId: message.id) { MessageClaimHolder.release(ended, prefs: prefs, key: holder.key) }
        onEvent?(.dismissed(message))
    }

    /// The id of the last acknowledged message, as the last refresh read it or this center's last acknowledgement
    /// wrote it (one whose write is under way included), so reading it never waits for the store; read from the store
    /// before the first refresh. 0 before any; `Int.max` when the stored value cannot be read as a whole number
    /// (nothing is shown then). A launch argument naming the key (`-lastMessageId 0`, see the store's
    /// `launchArguments`) is read above the store by every decision of that launch; acknowledgements are still stored.
    ///
    /// ```swift
    /// center.lastMessageId   // 3
    /// ```
    public var lastMessageId: Int {
        let value: Int
        if let knownLastMessageId {
            value = knownLastMessageId
        } else {
            let stored: StoredValue?
            do {
                stored = try prefs.launchArgumentValue(forKey: lastMessageIdKey.name) ?? prefs.storedValue(forKey: lastMessageIdKey.name)
            } catch {
                return prefs[lastMessageIdKey]
            }
            value = (try? Self.lastMessageId(from: stored, key: lastMessageIdKey.name).get()) ?? .max
        }
        return max(value, acknowledgedInFlight?.id ?? value)
    }

    /// The installation id used for rollouts, created once in the store (atomically, so two processes
    /// agree). If the store cannot be written, a per-process id is used and ``lastStoreError`` says why.
    ///
    /// ```swift
    /// let selection = MessageSelection(messages, context: center.context, now: Date(), lastMessageId: center.lastMessageId,
    ///                                  installationId: center.installationId())
    /// ```
    public func installationId() -> String {
        do {
            return try Self.storedInstallationId(prefs)
        } catch {
            lastStoreError = PrefsError(error)
            return fallbackInstallationId()
        }
    }

    /// The store's installation id, created when there is none (atomically, so two processes agree). Package API:
    /// `prefs-tool messages device-id` prints it.
    package nonisolated static func storedInstallationId(_ prefs: Prefs) throws -> String {
        if let stored = prefs[installationIdKey], !stored.isEmpty { return stored }
        return try prefs.update(installationIdKey) { value in
            if let existing = value, !existing.isEmpty { return existing }
            let created = UUID().uuidString
            value = created
            return created
        }
    }

    /// The per-process installation id used while the store's cannot be read or created.
    private func fallbackInstallationId() -> String {
        if let processInstallationId { return processInstallationId }
        let created = UUID().uuidString
        processInstallationId = created
        return created
    }

    /// The keys a center keeps its state under, for its work on the store queue.
    struct StoreKeys: Sendable {
        var lastMessageId: Prefs.Key<Int>
        var passedOver: Prefs.Key<[Int]>
        var impressions: Prefs.Key<MessageImpressions>
        var presenting: Prefs.Key<MessagePresentationRecord?>
        /// `lastMessageId.forced`: the one-shot QA override `prefs-tool messages force ID` writes.
        var forced: Prefs.Key<Int?>
        /// `lastMessageId.skippedVersion`: the update version the user skipped.
        var skippedVersion: Prefs.Key<String?>
    }

    var storeKeys: StoreKeys {
        let name = lastMessageIdKey.name
        return StoreKeys(
            lastMessageId: lastMessageIdKey, passedOver: passedOverKey, impressions: impressionsKey, presenting: holder.key,
            forced: Self.forcedKey(lastMessageIdKey: name), skippedVersion: Prefs.Key<String?>(name + ".skippedVersion"))
    }

    /// The key of the one-shot QA override (`lastMessageId.forced`) that `prefs-tool messages force ID` writes. Package API.
    package nonisolated static func forcedKey(lastMessageIdKey: String = "lastMessageId") -> Prefs.Key<Int?> {
        Prefs.Key<Int?>(lastMessageIdKey + ".forced")
    }

    /// The most passed-over ids kept (the highest): a feed holds a handful of messages per app.
    nonisolated static let passedOverLimit = 100

    /// A stored `lastMessageId` read as `UserDefaults.integer(forKey:)` reads it, where that gives a whole
    /// number: nothing stored is 0; an integer; a double or a string of a whole number (`3.0`, `"3"`,
    /// `" 3 "`, `"3.0"`); a Boolean, 1 or 0. Anything else (`3.5`, `"three"`, a date…) is a failure: code on
    /// UserDefaults would have read something, but not necessarily the id it meant, so the caller fails closed.
    /// Package API, so that tools reading a store (`prefs-tool feed explain`) decide as the app does.
    ///
    /// ```swift
    /// MessageCenter.lastMessageId(from: try prefs.storedValue(forKey: "lastMessageId"))   // .success(3) for "3"
    /// ```
    package nonisolated static func lastMessageId(from stored: StoredValue?, key: String = "lastMessageId") -> Result<Int, FeedFetchError> {
        func whole(_ value: Double) -> Int? {
            guard value.isFinite, value == value.rounded(.towardZero) else { return nil }
            return Int(exactly: value)
        }
        let value: Int?
        switch stored?.json {
        case nil, .null?: value = 0
        case .int(let int)?: value = int
        case .double(let double)?: value = whole(double)
        case .bool(let bool)?: value = bool ? 1 : 0
        case .string(let text)?:
            // Digits with an optional sign, and optionally a fraction of zeros: what integerValue reads whole.
            let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            let fractionIsZero = parts.count == 1 || parts[1].allSatisfy { $0 == "0" }
            value = fractionIsZero ? parts.first.flatMap { Int($0) } : nil
        default: value = nil
        }
        guard let value else {
            let shown = stored.map { "\($0.type) \($0.preview(limit: 40))" } ?? "nothing"
            return .failure(.unreadableState(key: key, reason: "\(shown) is not a whole number"))
        }
        return .success(value)
    }
}
