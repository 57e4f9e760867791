import Foundation
import Observation
@_spi(Tooling) import MessageFeed
@_spi(Tooling) import MessageFeedFetching
@_spi(Tooling) import Prefs

/// The app-facing service: fetches the feed, decides which message to show, and remembers which one
/// the user acknowledged. The shape of the original `AlertService`, made safe.
///
/// A message is shown when its id is greater than the stored `lastMessageId` and its targeting matches.
/// `lastMessageId` is written when the user *acknowledges* the message (confirm or link), never when it is
/// presented, so a message interrupted by a crash or by another modal is shown again at the next launch.
/// The stored value only ever grows. It is read as the seed's `UserDefaults.integer(forKey:)` read it, for the
/// values that has a whole-number answer to (`3`, `3.0`, `"3"`, `true`); any other stored value fails closed:
/// no message is shown and ``lastError`` says why.
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
    /// What went wrong during the last refresh or acknowledgement, or nil. The last good feed may still
    /// have been used.
    public internal(set) var lastError: FeedFetchError?
    /// The feed's issues from the last refresh: skipped messages, dropped links, unknown keys.
    public private(set) var diagnostics: [FeedIssue] = []
    /// Every targeting check of the last decision (what `prefs-tool feed explain` prints). Tooling API.
    @_spi(Tooling) public var lastReport: TargetingReport? { report }
    /// The outcome of the last fetch. Tooling API.
    @_spi(Tooling) public var lastFetch: FeedFetchResult? { fetch }
    /// The storage of ``lastReport`` and ``lastFetch``, observed like the public state (an observed property cannot be
    /// `@_spi` itself).
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
    /// Called on the main actor when a message becomes pending (an impression), when one is acknowledged, and
    /// when one is dismissed without acknowledging: for the app's analytics.
    ///
    /// ```swift
    /// center.onEvent = { event in analytics.log("\(event)") }   // "impression 7", "acknowledged 7 (confirm)"
    /// ```
    @ObservationIgnored public var onEvent: (@MainActor (DialogEvent) -> Void)?
    /// The fetcher, for inspecting its cache. Tooling API.
    @_spi(Tooling) public let fetcher: FeedFetcher
    private let clock: @Sendable () -> Date
    @ObservationIgnored private var generation = 0
    /// Whether the first refresh recorded the `lastMessageId` declaration.
    @ObservationIgnored private var declaredLastMessageId = false
    @ObservationIgnored private var processInstallationId: String?

    /// Creates a message center. Nothing is fetched until ``refresh(force:)``.
    ///
    /// - Parameters:
    ///   - feedURL: the feed, `messages.json` on static hosting.
    ///   - prefs: the app's store: the last acknowledged id, the cached feed and the fetch state live there.
    ///   - context: the running app (bundle identifier, versions, locale) that messages are targeted at.
    ///   - lastMessageIdKey: the key name of the last acknowledged id; `"lastMessageId"` as in the original
    ///     service (a programming error, stopping here, if the name is not a valid key name).
    ///   - options: timeouts, size cap, cache age, backoff, allowed link schemes.
    ///   - impressions: how often a message not yet acknowledged is shown again (by default at every refresh).
    ///   - clock: the current date, for targeting, max-age, backoff and cache age.
    ///   - random: a number in `0..<1` for the backoff jitter.
    ///
    /// ```swift
    /// let center = MessageCenter(feedURL: url, prefs: try Prefs(.sqlite(storeURL)),
    ///                            context: .current(bundleIdentifier: "com.example.app", appVersion: "2.1"))
    /// ```
    public convenience init(
        feedURL: URL,
        prefs: Prefs,
        context: MessageContext,
        lastMessageIdKey: String = "lastMessageId",
        options: FeedOptions = FeedOptions(),
        impressions: ImpressionPolicy = ImpressionPolicy(),
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.init(
            feedURL: feedURL, prefs: prefs, context: context, lastMessageIdKey: lastMessageIdKey, options: options,
            impressions: impressions, loader: nil, clock: clock, random: random)
    }

    /// Creates a message center whose requests `loader` performs (nil for the standard loader): tests, and tools
    /// with their own networking. Tooling API.
    @_spi(Tooling) public init(
        feedURL: URL,
        prefs: Prefs,
        context: MessageContext,
        lastMessageIdKey: String = "lastMessageId",
        options: FeedOptions = FeedOptions(),
        impressions: ImpressionPolicy = ImpressionPolicy(),
        loader: (any FeedLoader)?,
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.feedURL = feedURL
        self.prefs = prefs
        self.context = context
        self.lastMessageIdKey = Prefs.Key<Int>(lastMessageIdKey, initial: 0)
        passedOverKey = Prefs.Key<[Int]>(lastMessageIdKey + ".passedOver", initial: [])
        impressionPolicy = impressions
        impressionsKey = Prefs.Key<MessageImpressions>(lastMessageIdKey + ".impressions", initial: MessageImpressions())
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
        if !declaredLastMessageId {
            // Reads go through the stored value (to read "3" as UserDefaults would), and a read never writes: the
            // first refresh, which writes the fetch state anyway, records the key, so `prefs-tool list` shows it and
            // `reset lastMessageId` finds it before the first acknowledgement.
            declaredLastMessageId = true
            do { try prefs.declare(lastMessageIdKey) } catch { prefs.reportWriteFailure(error, key: lastMessageIdKey.name) }
        }
        generation += 1
        let current = generation
        isRefreshing = true
        let result = await fetcher.fetch(force: force)
        guard current == generation else { return }
        isRefreshing = false
        fetch = result
        lastError = result.error
        diagnostics = result.feed?.issues ?? []
        guard let feed = result.feed else {
            report = nil
            pendingMessage = nil
            return
        }
        let lastMessageId: Int, passedOver: Set<Int>
        switch readAcknowledged() {
        case .success(let value): (lastMessageId, passedOver) = value
        case .failure(let error):
            lastError = error
            (lastMessageId, passedOver) = (.max, [])  // fail closed: every message may have an id at or below the value not read
        }
        let now = clock()
        let report = MessageTargeting.explain(
            feed.messages, context: context, now: now, lastMessageId: lastMessageId, passedOver: passedOver,
            installationId: installationId()
        )
        self.report = report
        // Keep the message that may be on screen while it is still eligible: the user acknowledges what they saw.
        if let pending = pendingMessage, report.evaluations.contains(where: { $0.isEligible && $0.message.id == pending.id }) { return }
        pendingMessage = selectRespectingImpressions(report, now: now)
        if let pendingMessage { onEvent?(.impression(pendingMessage)) }
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
    @discardableResult
    public func acknowledge(_ action: Acknowledgement, for message: RemoteMessage) -> URL? {
        if pendingMessage?.id == message.id { pendingMessage = nil }
        let key = lastMessageIdKey, passedOverKey = passedOverKey, impressionsKey = impressionsKey
        // The lower ids of this app in the feed: those not acknowledged yet are passed over, not lost.
        let lower = (fetch?.feed?.messages ?? []).filter { $0.bundleId == message.bundleId && $0.id < message.id }.map(\.id)
        do {
            let unreadable = try prefs.transaction { transaction -> FeedFetchError? in
                switch Self.lastMessageId(from: try transaction.storedValue(forKey: key.name), key: key.name) {
                case .success(let current):
                    var passedOver = Set(try transaction.value(for: passedOverKey))
                    passedOver.formUnion(lower.filter { $0 > current })
                    passedOver.remove(message.id)
                    try transaction.set(max(current, message.id), for: key)
                    if passedOver.isEmpty {
                        transaction.reset(passedOverKey)  // nothing passed over: no key to show in prefs-tool
                    } else {
                        try transaction.set(Array(passedOver.sorted().suffix(Self.passedOverLimit)), for: passedOverKey)
                    }
                    if try transaction.storedValue(forKey: impressionsKey.name) != nil {
                        var impressions = try transaction.value(for: impressionsKey)
                        if impressions.messages.removeValue(forKey: String(message.id)) != nil { try transaction.set(impressions, for: impressionsKey) }
                    }
                    return nil
                case .failure(let error):
                    return error
                }
            }
            if let unreadable { lastError = unreadable }
        } catch {
            lastError = .storeFailed(error)
        }
        onEvent?(.acknowledged(message, action))
        return action == .link ? message.link?.url : nil
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
        onEvent?(.dismissed(message))
    }

    /// The id of the last acknowledged message; 0 before any; `Int.max` when the stored value cannot be read
    /// as a whole number (nothing is shown then).
    ///
    /// ```swift
    /// center.lastMessageId   // 3
    /// ```
    public var lastMessageId: Int {
        let stored: StoredValue?
        do { stored = try prefs.storedValue(forKey: lastMessageIdKey.name) } catch { return prefs[lastMessageIdKey] }
        return (try? Self.lastMessageId(from: stored, key: lastMessageIdKey.name).get()) ?? .max
    }

    /// The installation id used for rollouts, created once in the store (atomically, so two processes
    /// agree). If the store cannot be written, a per-process id is used and ``lastError`` says why.
    ///
    /// ```swift
    /// let bucket = MessageTargeting.rolloutBucket(installationId: center.installationId(), messageId: 7)
    /// ```
    public func installationId() -> String {
        if let stored = prefs[Self.installationIdKey], !stored.isEmpty { return stored }
        do {
            return try prefs.update(Self.installationIdKey) { value in
                if let existing = value, !existing.isEmpty { return existing }
                let created = UUID().uuidString
                value = created
                return created
            }
        } catch {
            lastError = .storeFailed(error)
            if let processInstallationId { return processInstallationId }
            let created = UUID().uuidString
            processInstallationId = created
            return created
        }
    }

    /// The most passed-over ids kept (the highest): a feed holds a handful of messages per app.
    static let passedOverLimit = 100

    /// `lastMessageId` and the passed-over ids as committed now, including other processes' writes.
    private func readAcknowledged() -> Result<(Int, Set<Int>), FeedFetchError> {
        let key = lastMessageIdKey, passedOverKey = passedOverKey
        do {
            let (stored, passedOver) = try prefs.transaction { (try $0.storedValue(forKey: key.name), Set(try $0.value(for: passedOverKey))) }
            return Self.lastMessageId(from: stored, key: key.name).map { ($0, passedOver) }
        } catch {
            lastError = .storeFailed(error)
            return .success((prefs[key], Set(prefs[passedOverKey])))
        }
    }

    /// A stored `lastMessageId` read as `UserDefaults.integer(forKey:)` reads it, where that gives a whole
    /// number: nothing stored is 0; an integer; a double or a string of a whole number (`3.0`, `"3"`,
    /// `" 3 "`, `"3.0"`); a Boolean, 1 or 0. Anything else (`3.5`, `"three"`, a date…) is a failure: the
    /// seed would have read something, but not necessarily the id it meant, so the caller fails closed.
    /// Tooling API, so that tools reading a store (`prefs-tool feed explain`) decide as the app does.
    ///
    /// ```swift
    /// MessageCenter.lastMessageId(from: try prefs.storedValue(forKey: "lastMessageId"))   // .success(3) for "3"
    /// ```
    @_spi(Tooling) public nonisolated static func lastMessageId(from stored: StoredValue?, key: String = "lastMessageId") -> Result<Int, FeedFetchError> {
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
