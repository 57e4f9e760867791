import Foundation
import PrefsSupport
import MessageFeed
import Prefs
internal import PrefsJSON

/// The last good feed of one URL, kept in the store with what is needed to revalidate it and to back off.
///
/// Stored under `dialoggate.feed.<16 hex digits>`, the FNV-1a hash of the feed URL (see ``key(for:)``),
/// as a JSON object with dates in ISO-8601. Only a body that parsed as a JSON array is ever stored as
/// "last good"; failures update the counters and keep the body.
///
/// ```swift
/// let cache = prefs[FeedCache.key(for: url)]
/// cache?.etag                  // "\"v7\""
/// cache?.consecutiveFailures   // 0
/// ```
package struct FeedCache: Codable, Hashable, Sendable, PrefsStorable {
    /// The feed URL, so that a hash collision between two URLs is noticed rather than mixing feeds.
    package var url: String
    /// The last good body, as UTF-8 text; nil until a fetch succeeds.
    package var body: String?
    /// The `ETag` of the response that delivered or confirmed `body`, sent back as `If-None-Match`.
    package var etag: String?
    /// The `Last-Modified` of that response, sent back as `If-Modified-Since`.
    package var lastModified: String?
    /// When `body` was last fetched or confirmed by a 304.
    package var fetchedAt: Date?
    /// When the clock was first seen behind ``fetchedAt`` (set back since the fetch): while it stays behind, max-age and
    /// the maximum cache age run from here (see ``age(at:)``). nil while the clock is at or past ``fetchedAt``.
    package var fetchedAtReanchoredAt: Date?
    /// The `Cache-Control: max-age` of that response, in seconds: no request is made before it runs out
    /// (unless a refresh is forced). 0 for `no-cache` or `no-store`.
    package var maxAge: Int?
    /// Failed fetches in a row; reset by a success.
    package var consecutiveFailures: Int
    /// The server's 429 and 5xx answers in a row: each doubles the backoff. A failure that is not the server's answer
    /// (no connection, a timeout) leaves it as it is; any other answer resets it.
    package var serverFailures: Int
    /// No request is made before this date: the backoff after a 429 or a 5xx (see ``retryDate(at:maximumBackoff:)``).
    package var nextRetryAt: Date?
    /// When the failure that set ``nextRetryAt`` happened: the backoff's start. nil in caches written before it was kept.
    package var failedAt: Date?
    /// When the clock was first seen behind ``failedAt``: while it stays behind, the backoff runs from here.
    package var failedAtReanchoredAt: Date?
    /// What went wrong the last time, for diagnostics.
    package var lastFailure: String?

    /// Creates an empty cache for `url`.
    ///
    /// ```swift
    /// var cache = FeedCache(url: url)
    /// ```
    package init(url: URL) {
        self.url = url.absoluteString
        consecutiveFailures = 0
        serverFailures = 0
    }

    /// The prefix of every feed cache key.
    ///
    /// ```swift
    /// let isFeedCache = name.hasPrefix(FeedCache.keyPrefix)   // "dialoggate.feed.bc6ff516b2dd8194"
    /// ```
    package static let keyPrefix = "dialoggate.feed."

    /// The key the cache of `url` is stored under: ``keyPrefix`` and 16 hex digits of FNV-1a 64 of the URL.
    ///
    /// ```swift
    /// FeedCache.key(for: URL(string: "https://example.com/messages.json")!).name   // "dialoggate.feed.bc6ff516b2dd8194"
    /// ```
    package static func key(for url: URL) -> Prefs.Key<FeedCache?> {
        Prefs.Key<FeedCache?>(keyPrefix + StableHash.hex(url.absoluteString))
    }

    /// How old the body is at `now`, or nil without a body: the time since ``fetchedAt``, or, while the clock is behind
    /// it (set back since the fetch), the time since the clock was first seen behind it (``fetchedAtReanchoredAt``,
    /// now when not yet recorded), as ``ClockRule`` has every wait run. Never negative: a feed fetched "in the future"
    /// ages like any other.
    ///
    /// ```swift
    /// cache.age(at: Date())   // e.g. 3600
    /// ```
    package func age(at now: Date) -> TimeInterval? {
        guard body != nil, let fetchedAt else { return nil }
        let start = now < fetchedAt ? ClockRule.anchor(fetchedAtReanchoredAt, behind: fetchedAt, now: now) ?? now : fetchedAt
        return now.timeIntervalSince(start)
    }

    /// Whether the body may still be used at `now`: it exists and its ``age(at:)`` is below `maximumAge`.
    ///
    /// ```swift
    /// cache.isUsable(at: Date(), maximumAge: 7 * 86_400)
    /// ```
    package func isUsable(at now: Date, maximumAge: TimeInterval) -> Bool {
        guard let age = age(at: now) else { return false }
        return age < maximumAge
    }

    /// Whether the server said the body is still fresh at `now`: its ``age(at:)`` is below `max-age` (capped at
    /// `maximumAge`).
    ///
    /// ```swift
    /// if cache.isFresh(at: Date(), maximumAge: 7 * 86_400) { /* no request */ }
    /// ```
    package func isFresh(at now: Date, maximumAge: TimeInterval) -> Bool {
        guard let maxAge, maxAge > 0, let age = age(at: now) else { return false }
        return age < min(TimeInterval(maxAge), maximumAge)
    }

    /// Until when no request is made at `now`: the backoff's end by ``ClockRule`` (its length, ``nextRetryAt`` less
    /// ``failedAt``, from the failure, or from when the clock was first seen behind it); nil when there is no backoff
    /// or it has ended. A cache written before ``failedAt`` was kept uses ``nextRetryAt`` unless it is further ahead
    /// than `maximumBackoff` (set before the clock went back).
    ///
    /// ```swift
    /// if let retry = cache.retryDate(at: Date(), maximumBackoff: 3_600) { print("not before \(retry)") }
    /// ```
    package func retryDate(at now: Date, maximumBackoff: TimeInterval) -> Date? {
        guard let nextRetryAt else { return nil }
        let end: Date
        if let failedAt {
            end = ClockRule.end(
                of: min(nextRetryAt.timeIntervalSince(failedAt), maximumBackoff), from: failedAt, anchor: failedAtReanchoredAt, now: now)
        } else {
            guard nextRetryAt.timeIntervalSince(now) <= maximumBackoff else { return nil }
            end = nextRetryAt
        }
        return now < end ? end : nil
    }

    /// The cache with its clock anchors brought up to `now` (see ``ClockRule``).
    func reanchored(now: Date) -> FeedCache {
        var cache = self
        cache.fetchedAtReanchoredAt = ClockRule.anchor(fetchedAtReanchoredAt, behind: fetchedAt, now: now)
        cache.failedAtReanchoredAt = ClockRule.anchor(failedAtReanchoredAt, behind: failedAt, now: now)
        return cache
    }

    // MARK: - Codable, with readable dates and tolerant of missing fields

    private enum CodingKeys: String, CodingKey {
        case url, body, etag, lastModified, fetchedAt, fetchedAtReanchoredAt, maxAge, consecutiveFailures, serverFailures, nextRetryAt
        case failedAt, failedAtReanchoredAt, lastFailure
    }

    /// Reads a stored cache; missing fields take their defaults, so older or newer records still read.
    ///
    /// ```swift
    /// let cache = try JSONDecoder().decode(FeedCache.self, from: Data(#"{"url": "https://example.com/m.json"}"#.utf8))
    /// ```
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        body = try container.decodeIfPresent(String.self, forKey: .body)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        fetchedAt = try Self.decodeDate(container, .fetchedAt)
        fetchedAtReanchoredAt = try Self.decodeDate(container, .fetchedAtReanchoredAt)
        maxAge = try container.decodeIfPresent(Int.self, forKey: .maxAge)
        consecutiveFailures = try container.decodeIfPresent(Int.self, forKey: .consecutiveFailures) ?? 0
        serverFailures = try container.decodeIfPresent(Int.self, forKey: .serverFailures) ?? 0
        nextRetryAt = try Self.decodeDate(container, .nextRetryAt)
        failedAt = try Self.decodeDate(container, .failedAt)
        failedAtReanchoredAt = try Self.decodeDate(container, .failedAtReanchoredAt)
        lastFailure = try container.decodeIfPresent(String.self, forKey: .lastFailure)
    }

    /// Writes the cache with dates as ISO-8601 strings; a date outside ISO-8601's range throws
    /// `EncodingError.invalidValue` (it could not be read back), so nothing is written.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(cache)   // {"fetchedAt":"2026-03-01T12:00:00Z",…}
    /// ```
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encodeIfPresent(body, forKey: .body)
        try container.encodeIfPresent(etag, forKey: .etag)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try encodeDate(fetchedAt, .fetchedAt, in: &container)
        try encodeDate(fetchedAtReanchoredAt, .fetchedAtReanchoredAt, in: &container)
        try container.encodeIfPresent(maxAge, forKey: .maxAge)
        try container.encode(consecutiveFailures, forKey: .consecutiveFailures)
        if serverFailures != 0 { try container.encode(serverFailures, forKey: .serverFailures) }
        try encodeDate(nextRetryAt, .nextRetryAt, in: &container)
        try encodeDate(failedAt, .failedAt, in: &container)
        try encodeDate(failedAtReanchoredAt, .failedAtReanchoredAt, in: &container)
        try container.encodeIfPresent(lastFailure, forKey: .lastFailure)
    }

    private func encodeDate(_ date: Date?, _ key: CodingKeys, in container: inout KeyedEncodingContainer<CodingKeys>) throws {
        try container.encodeIfPresent(date.map { try ISO8601.formatForStorage($0, codingPath: container.codingPath + [key]) }, forKey: key)
    }

    private static func decodeDate(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        do {
            return try ISO8601.parse(text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "\(text) is not an ISO-8601 date: \(error)")
        }
    }
}
