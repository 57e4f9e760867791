import Foundation
import Observation
import Prefs

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
    /// center.acknowledge(.confirm)
    /// ```
    public enum Acknowledgement: Sendable, Hashable {
        /// The confirm button (`confirmLabel`).
        case confirm
        /// The link button; ``MessageCenter/acknowledge(_:)`` returns the link's URL.
        case link
    }

    /// The key holding the installation id used for rollouts: a UUID string created once per store.
    ///
    /// ```swift
    /// prefs[MessageCenter.installationIdKey]   // "6F1C…"
    /// ```
    public nonisolated static let installationIdKey = Prefs.Key<String?>("dialoggate.installationId")

    /// The message to present, or nil. Cleared by ``acknowledge(_:)`` and ``dismissWithoutAcknowledging()``.
    public private(set) var pendingMessage: RemoteMessage?
    /// What went wrong during the last refresh or acknowledgement, or nil. The last good feed may still
    /// have been used (see ``lastFetch``).
    public private(set) var lastError: FeedFetchError?
    /// The feed's issues from the last refresh: skipped messages, dropped links, unknown keys.
    public private(set) var diagnostics: [FeedIssue] = []
    /// Every targeting check of the last decision, for a debug screen.
    public private(set) var lastReport: TargetingReport?
    /// The outcome of the last fetch.
    public private(set) var lastFetch: FeedFetchResult?
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
    /// The fetcher, for inspecting its cache.
    public let fetcher: FeedFetcher
    private let clock: @Sendable () -> Date
    @ObservationIgnored private var generation = 0
    @ObservationIgnored private var processInstallationId: String?

    /// Creates a message center. Nothing is fetched until ``refresh(force:)``.
    ///
    /// - Parameters:
    ///   - lastMessageIdKey: the key name of the last acknowledged id; `"lastMessageId"` as in the original
    ///     service (a programming error, stopping here, if the name is not a valid key name).
    ///   - options: timeouts, size cap, cache age, backoff, allowed link schemes.
    ///   - loader: performs HTTP requests; nil for ``FeedLoaders/standard()``.
    ///   - clock: the current date, for targeting, max-age, backoff and cache age.
    ///   - random: a number in `0..<1` for the backoff jitter.
    ///
    /// ```swift
    /// let center = MessageCenter(feedURL: url, prefs: try Prefs(.sqlite(storeURL)),
    ///                            context: .current(bundleIdentifier: "com.example.app", appVersion: "2.1"))
    /// ```
    public init(
        feedURL: URL,
        prefs: Prefs,
        context: MessageContext,
        lastMessageIdKey: String = "lastMessageId",
        options: FeedFetcher.Options = FeedFetcher.Options(),
        loader: (any FeedLoader)? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.feedURL = feedURL
        self.prefs = prefs
        self.context = context
        self.lastMessageIdKey = Prefs.Key<Int>(lastMessageIdKey, initial: 0)
        // Reads go through the stored value (to read "3" as UserDefaults would), which declares nothing: declare the
        // key here, so `prefs-tool list` shows it, and `reset lastMessageId` finds it, before the first acknowledgement.
        prefs.declareOnFirstUse(self.lastMessageIdKey)
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
        isRefreshing = false
        lastFetch = result
        lastError = result.error
        diagnostics = result.feed?.issues ?? []
        guard let feed = result.feed else {
            lastReport = nil
            pendingMessage = nil
            return
        }
        let lastMessageId: Int
        switch readLastMessageId() {
        case .success(let value): lastMessageId = value
        case .failure(let error):
            lastError = error
            lastMessageId = .max  // fail closed: every message may have an id at or below the value not read
        }
        let report = MessageTargeting.explain(
            feed.messages, context: context, now: clock(), lastMessageId: lastMessageId, installationId: installationId()
        )
        lastReport = report
        pendingMessage = report.selected
    }

    /// Records that the user acknowledged the pending message: stores its id as `lastMessageId` (never
    /// lowering the stored value) and clears ``pendingMessage``.
    ///
    /// - Returns: the link's URL for `.link` (nil for `.confirm`, for a message without a link, or when
    ///   nothing is pending).
    ///
    /// ```swift
    /// if let url = center.acknowledge(.link) { openURL(url) }
    /// ```
    @discardableResult
    public func acknowledge(_ action: Acknowledgement) -> URL? {
        guard let message = pendingMessage else { return nil }
        return acknowledge(action, for: message)
    }

    /// Records that the user acknowledged `message`, whether or not it is still pending: for UI that
    /// holds the presented message itself (SwiftUI's `alert(_:isPresented:presenting:)` may clear its
    /// binding before the button action runs). Clears ``pendingMessage`` if it is that message.
    /// A stored `lastMessageId` that cannot be read is left alone (it might be higher) and reported.
    ///
    /// ```swift
    /// Button(message.confirmLabel) { center.acknowledge(.confirm, for: message) }
    /// ```
    @discardableResult
    public func acknowledge(_ action: Acknowledgement, for message: RemoteMessage) -> URL? {
        if pendingMessage?.id == message.id { pendingMessage = nil }
        let key = lastMessageIdKey
        do {
            let unreadable = try prefs.transaction { transaction -> FeedFetchError? in
                switch Self.lastMessageId(from: try transaction.storedValue(forKey: key.name), key: key.name) {
                case .success(let current):
                    try transaction.set(max(current, message.id), for: key)
                    return nil
                case .failure(let error):
                    return error
                }
            }
            if let unreadable { lastError = unreadable }
        } catch {
            lastError = .storeFailed("\(error)")
        }
        return action == .link ? message.link?.url : nil
    }

    /// Clears ``pendingMessage`` without storing anything, so the message is shown again next time
    /// (for example when another modal took over).
    ///
    /// ```swift
    /// center.dismissWithoutAcknowledging()
    /// ```
    public func dismissWithoutAcknowledging() {
        pendingMessage = nil
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
            lastError = .storeFailed("\(error)")
            if let processInstallationId { return processInstallationId }
            let created = UUID().uuidString
            processInstallationId = created
            return created
        }
    }

    /// `lastMessageId` as committed now, including other processes' writes.
    private func readLastMessageId() -> Result<Int, FeedFetchError> {
        let key = lastMessageIdKey
        do {
            return Self.lastMessageId(from: try prefs.transaction { try $0.storedValue(forKey: key.name) }, key: key.name)
        } catch {
            lastError = .storeFailed("\(error)")
            return .success(prefs[key])
        }
    }

    /// A stored `lastMessageId` read as `UserDefaults.integer(forKey:)` reads it, where that gives a whole
    /// number: nothing stored is 0; an integer; a double or a string of a whole number (`3.0`, `"3"`,
    /// `" 3 "`, `"3.0"`); a Boolean, 1 or 0. Anything else (`3.5`, `"three"`, a date…) is a failure: the
    /// seed would have read something, but not necessarily the id it meant, so the caller fails closed.
    /// Public so that tools reading a store (`prefs-tool feed explain`) decide as the app does.
    ///
    /// ```swift
    /// MessageCenter.lastMessageId(from: try prefs.storedValue(forKey: "lastMessageId"))   // .success(3) for "3"
    /// ```
    public nonisolated static func lastMessageId(from stored: StoredValue?, key: String = "lastMessageId") -> Result<Int, FeedFetchError> {
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
