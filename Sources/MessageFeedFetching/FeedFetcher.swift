import Foundation
import PrefsSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MessageFeed
import Prefs

/// Fetches a messages feed and keeps the last good one in the store: what `MessageCenter` fetches with.
///
/// Package API (`prefs-tool feed fetch` uses it); an app uses DialogGate's `MessageCenter`.
///
/// - `https` only, except loopback hosts and `FeedOptions.allowInsecureHTTP`; `file://` URLs are read directly.
///   A refused URL never reaches the network.
/// - Conditional requests (`If-None-Match`, `If-Modified-Since`) from the stored validators; a 304 reuses
///   the stored body and refreshes its fetch date.
/// - `Cache-Control: max-age` is the minimum interval between requests unless the fetch is forced.
/// - 429 and 5xx back off exponentially with jitter (honouring `Retry-After` seconds up to
///   `FeedOptions.maximumBackoff`); no request is made before the retry date, forced or not. A failed connection or a
///   timeout backs off nothing: it says nothing about the server (the device was offline), so the next fetch asks.
/// - A clock set back neither freezes nor hurries anything: max-age, the backoff and the maximum cache age follow
///   `ClockRule` (while the clock is behind the recorded time, each runs its length from when that was first seen).
/// - Bodies over `FeedOptions.maximumBytes` once decoded are refused (the loader stops reading there; see
///   ``FeedLoader``); redirects to loopback only from a loopback feed; the timeout is enforced here as well as in the
///   request (URLSession on Linux rounds request timeouts down to whole seconds).
/// - On any other failure the last good feed is used while it is younger than `FeedOptions.maximumCacheAge`.
/// - A 404 or 410 means the publisher removed the feed: the last good feed is dropped at once and nothing is
///   shown until the URL serves a feed again.
///
/// Concurrent calls share one fetch. The clock and the jitter are injected, so tests never sleep.
///
/// ```swift
/// let fetcher = FeedFetcher(url: URL(string: "https://example.com/messages.json")!, prefs: prefs)
/// let result = await fetcher.fetch()
/// result.feed?.messages.count
/// result.error?.description
/// ```
package actor FeedFetcher {
    /// The feed URL.
    package nonisolated let url: URL
    /// The options this fetcher was made with.
    package nonisolated let options: FeedOptions
    /// The key of this feed's ``FeedCache`` in the store.
    package nonisolated let cacheKey: Prefs.Key<FeedCache?>
    let prefs: Prefs
    let loader: any FeedLoader
    let clock: @Sendable () -> Date
    let random: @Sendable () -> Double
    private var inFlight: Task<FeedFetchResult, Never>?

    /// Creates a fetcher.
    ///
    /// - Parameters:
    ///   - url: the feed, `messages.json` on static hosting.
    ///   - prefs: the store that keeps the fetched feed and the fetch state (ETag, backoff).
    ///   - options: timeouts, size cap, cache age, backoff, allowed link schemes.
    ///   - loader: performs HTTP requests; nil for the standard loader (on Linux one that drives libcurl itself, so
    ///     that the size cap bounds decoded bytes; elsewhere a ``URLSessionFeedLoader``).
    ///   - clock: the current date, for max-age, backoff and cache age.
    ///   - random: a number in `0..<1` for the backoff jitter.
    ///
    /// ```swift
    /// let fetcher = FeedFetcher(url: url, prefs: prefs, clock: { testClock.now }, random: { 0.5 })
    /// ```
    package init(
        url: URL,
        prefs: Prefs,
        options: FeedOptions = FeedOptions(),
        loader: (any FeedLoader)? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.url = url
        self.options = options
        self.prefs = prefs
        self.loader = loader ?? FeedLoaders.standard()
        self.clock = clock
        self.random = random
        cacheKey = FeedCache.key(for: url)
    }

    /// The stored cache of this feed, if any (nil when the stored record belongs to another URL).
    ///
    /// ```swift
    /// fetcher.cache?.nextRetryAt
    /// ```
    package nonisolated var cache: FeedCache? {
        prefs[cacheKey].flatMap { $0.url == url.absoluteString ? $0 : nil }
    }

    /// Fetches the feed (or decides not to) and returns the feed to use with where it came from; never throws.
    ///
    /// - Parameter force: ignore `max-age` and ask the server now (a backoff still applies).
    ///
    /// ```swift
    /// let result = await fetcher.fetch(force: true)
    /// if result.source == .cache, let error = result.error { print("using the last good feed: \(error)") }
    /// ```
    package func fetch(force: Bool = false) async -> FeedFetchResult {
        if let inFlight { return await inFlight.value }
        let task = Task { await self.performFetch(force: force) }
        inFlight = task
        let result = await task.value
        inFlight = nil
        return result
    }

    // MARK: - The fetch

    private func performFetch(force: Bool) async -> FeedFetchResult {
        let now = clock()
        var stored = cache
        if let cache = stored, cache.reanchored(now: now) != cache {
            // The clock is behind a recorded time: keep when that was first seen, so the waits run from it (ClockRule).
            if let error = write({ $0 = $0.reanchored(now: now) }) { prefs.reportWriteFailure(error, key: cacheKey.name) }
            stored = self.cache ?? cache.reanchored(now: now)
        }
        if let refusal = FeedURLPolicy.refusal(for: url, allowInsecureHTTP: options.allowInsecureHTTP) {
            return fallback(stored, now: now, error: refusal, requestSent: false)
        }
        if url.isFileURL { return readFile(stored: stored, now: now) }
        if !force, stored?.isFresh(at: now, maximumAge: options.maximumCacheAge.timeInterval) == true {
            return fallback(stored, now: now, error: nil, requestSent: false)
        }
        if let stored, let retry = stored.retryDate(at: now, maximumBackoff: options.maximumBackoff.timeInterval) {
            return fallback(stored, now: now, error: .backingOff(until: retry, failures: stored.consecutiveFailures), requestSent: false)
        }

        var request = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: max(1, options.timeout.timeInterval.rounded(.up)))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if stored?.body != nil {
            // A validator stored by an earlier release (or by hand) is checked again before it is sent.
            if let etag = Self.validator(stored?.etag) { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let lastModified = Self.validator(stored?.lastModified) { request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        }
        let response: FeedResponse
        do {
            let loader = loader
            let options = options, sent = request
            response = try await Deadline.run(options.timeout, orThrow: { FeedFetchError.timedOut(after: $0) }) {
                try await loader.load(sent, options: options)
            }
            if response.body.count > options.maximumBytes {  // a custom loader may not enforce the cap
                throw FeedFetchError.tooLarge(bytes: response.body.count, limit: options.maximumBytes)
            }
        } catch {
            let failure = error as? FeedFetchError ?? .transport("\(error)")
            return recordFailure(failure, retryAfter: nil, now: now, requestSent: true)
        }

        switch response.statusCode {
        case 200:
            return accept(response, now: now, requestSent: true)
        case 304:
            return revalidate(response, stored: stored, now: now)
        case 404, 410:
            return removed(status: response.statusCode, now: now)
        default:
            let retryAfter = response.header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return recordFailure(.httpStatus(response.statusCode, url: url), retryAfter: retryAfter, now: now, requestSent: true)
        }
    }

    /// A 200: validate the body, store it as the last good feed, use it.
    private func accept(_ response: FeedResponse, now: Date, requestSent: Bool) -> FeedFetchResult {
        let feed: DecodedFeed
        do {
            feed = try FeedDecoder.decode(response.body, options: options)
        } catch {
            return recordFailure(.invalidFeed(error), retryAfter: nil, now: now, requestSent: requestSent)
        }
        let maxAge = Self.maxAge(response.header("Cache-Control"))
        let storeError = write { cache in
            cache.body = String(decoding: response.body, as: UTF8.self)  // valid UTF-8: it parsed
            cache.etag = Self.validator(response.header("ETag"))
            cache.lastModified = Self.validator(response.header("Last-Modified"))
            cache.fetchedAt = now
            cache.maxAge = maxAge
            cache.answered()
        }
        return FeedFetchResult(source: .network, feed: feed, fetchedAt: now, error: nil, requestSent: requestSent, storeError: storeError)
    }

    /// A 304: the stored body is still current; refresh its date and validators.
    private func revalidate(_ response: FeedResponse, stored: FeedCache?, now: Date) -> FeedFetchResult {
        guard let stored, stored.body != nil else {
            return recordFailure(.notModifiedWithoutCachedFeed, retryAfter: nil, now: now, requestSent: true)
        }
        let storeError = write { cache in
            cache.fetchedAt = now
            // A 304 updates the stored header fields it carries and leaves the others (RFC 9111 §4.3.4).
            if let cacheControl = response.header("Cache-Control") { cache.maxAge = Self.maxAge(cacheControl) }
            if let etag = response.header("ETag") { cache.etag = Self.validator(etag) }
            if let lastModified = response.header("Last-Modified") { cache.lastModified = Self.validator(lastModified) }
            cache.answered()
        }
        var refreshed = stored
        refreshed.fetchedAt = now
        refreshed.fetchedAtReanchoredAt = nil
        var result = fallback(refreshed, now: now, error: nil, requestSent: true)
        result.storeError = storeError
        if result.feed != nil { result.source = .notModified }
        return result
    }

    /// A 404 or 410: the publisher removed the feed (deleting `messages.json` from static hosting gives a 404).
    /// The last good feed is dropped at once, so no message it held is shown again, even when a later fetch
    /// fails; the next 200 brings a feed back. A 404 that was a hosting glitch costs one launch without a message.
    private func removed(status: Int, now: Date) -> FeedFetchResult {
        let failure = FeedFetchError.feedRemoved(status: status, url: url)
        let storeError = write { cache in
            cache.body = nil
            cache.etag = nil
            cache.lastModified = nil
            cache.fetchedAt = now
            cache.maxAge = nil
            cache.answered()
            cache.lastFailure = failure.description
        }
        if let storeError {  // the removal is the error to show; the store's failure goes to its diagnostics
            prefs.reportWriteFailure(storeError, key: cacheKey.name)
        }
        return FeedFetchResult(source: .none, feed: nil, fetchedAt: nil, error: failure, requestSent: true)
    }

    /// A `file://` feed: read directly, size-capped, validated and stored like a 200.
    private func readFile(stored: FeedCache?, now: Date) -> FeedFetchResult {
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            if let size = (attributes[.size] as? NSNumber)?.intValue, size > options.maximumBytes {
                return recordFailure(.tooLarge(bytes: size, limit: options.maximumBytes), retryAfter: nil, now: now, requestSent: false)
            }
            data = try Data(contentsOf: url)
        } catch {
            return recordFailure(.unreadableFile(path: url.path, reason: "\(error.localizedDescription)"), retryAfter: nil, now: now, requestSent: false)
        }
        if data.count > options.maximumBytes {
            return recordFailure(.tooLarge(bytes: data.count, limit: options.maximumBytes), retryAfter: nil, now: now, requestSent: false)
        }
        return accept(FeedResponse(statusCode: 200, body: data), now: now, requestSent: false)
    }

    // MARK: - Failures and the last good feed

    /// Counts a failure, sets the retry date for a retryable one (429, 5xx), and falls back to the last good feed.
    private func recordFailure(_ failure: FeedFetchError, retryAfter: Int?, now: Date, requestSent: Bool) -> FeedFetchResult {
        let storeError = write { cache in
            cache.consecutiveFailures += 1
            cache.lastFailure = failure.description
            cache.nextRetryAt = nil
            cache.failedAt = nil
            cache.failedAtReanchoredAt = nil
            if failure.isRetryable {
                cache.serverFailures += 1
                // Retry-After is capped like the backoff: a server (or proxy) asking for years must not stop fetching.
                let requested = min(TimeInterval(max(0, retryAfter ?? 0)), options.maximumBackoff.timeInterval)
                let delay = max(backoff(afterFailures: cache.serverFailures), requested)
                cache.nextRetryAt = now.addingTimeInterval(delay)
                cache.failedAt = now
            } else if !failure.isBeforeAnswer {
                cache.serverFailures = 0  // the server answered, and not that it is overloaded
            }
        }
        var result = fallback(cache, now: now, error: failure, requestSent: requestSent)
        result.storeError = storeError
        return result
    }

    /// The backoff before jitter is `initial × 2^(failures − 1)` for the server's `failures` (429, 5xx) in a row, capped
    /// at the maximum; the delay is half of it plus a random share of the other half ("equal jitter").
    func backoff(afterFailures failures: Int) -> TimeInterval {
        let initial = options.initialBackoff.timeInterval
        let maximum = options.maximumBackoff.timeInterval
        let base = min(initial * pow(2, Double(min(max(failures - 1, 0), 40))), maximum)
        let share = min(max(random(), 0), 1)
        return base / 2 + base / 2 * share
    }

    /// The stored feed if it is young enough, with `error` telling why it is used.
    private func fallback(_ stored: FeedCache?, now: Date, error: FeedFetchError?, requestSent: Bool) -> FeedFetchResult {
        let maximumAge = options.maximumCacheAge.timeInterval
        // A stored body was validated before it was stored; one that no longer decodes (edited by hand)
        // is treated as absent, and kept.
        guard let stored, stored.isUsable(at: now, maximumAge: maximumAge), let body = stored.body,
            let feed = try? FeedDecoder.decode(Data(body.utf8), options: options)
        else {
            return FeedFetchResult(source: .none, feed: nil, fetchedAt: nil, error: error, requestSent: requestSent)
        }
        return FeedFetchResult(source: .cache, feed: feed, fetchedAt: stored.fetchedAt, error: error, requestSent: requestSent)
    }

    /// Read-modify-writes the cache atomically; returns the store error, if any.
    private func write(_ change: (inout FeedCache) -> Void) -> PrefsError? {
        let url = url
        do {
            try prefs.update(cacheKey) { value in
                var cache = value.flatMap { $0.url == url.absoluteString ? $0 : nil } ?? FeedCache(url: url)
                change(&cache)
                value = cache
            }
            return nil
        } catch {
            return PrefsError(error)  // `update`'s own: the closure throws nothing
        }
    }

    /// A validator (`ETag`, `Last-Modified`) as it may be sent back, trimmed; nil when empty or holding a control
    /// character (CR, LF, NUL, DEL…), which no header field may carry: such a value is not stored, so it can neither
    /// break the next request nor stop the other validator from being sent.
    static func validator(_ value: String?) -> String? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return value
    }

    /// `max-age` in seconds from a `Cache-Control` value; 0 for `no-cache` or `no-store`; nil without either.
    static func maxAge(_ cacheControl: String?) -> Int? {
        guard let cacheControl else { return nil }
        var result: Int?
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-cache", "no-store": return 0
            case "max-age":
                if parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 {
                    result = seconds
                }
            default: continue
            }
        }
        return result
    }
}

extension FeedCache {
    /// The server answered (200, 304, 404, 410): no backoff, no failures in a row.
    mutating func answered() {
        fetchedAtReanchoredAt = nil
        consecutiveFailures = 0
        serverFailures = 0
        nextRetryAt = nil
        failedAt = nil
        failedAtReanchoredAt = nil
        lastFailure = nil
    }
}
