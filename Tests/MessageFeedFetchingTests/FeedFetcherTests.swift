@testable import MessageFeed
@testable import MessageFeedFetching
import Foundation
import TestFixtures
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsSupport

@Suite("FeedFetcher")
struct FeedFetcherTests {
    let clock = TestClock(feedEpoch)

    private func fetcher(
        _ url: URL, prefs: Prefs, options: FeedOptions = .unhurried, loader: (any FeedLoader)? = nil,
        random: Double = 0
    ) -> FeedFetcher {
        FeedFetcher(url: url, prefs: prefs, options: options, loader: loader, clock: clock.function, random: { random })
    }

    // MARK: - Success and revalidation

    @Test("200: the feed is used and stored as the last good feed with its validators")
    func ok() async throws {
        let prefs = try Prefs(.memory)
        let server = try jsonServer(Feeds.seed, headers: ["ETag": #""v1""#, "Last-Modified": "Sun, 01 Mar 2026 10:00:00 GMT"])
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        let result = await fetcher.fetch()
        #expect(result.error == nil)
        #expect(result.source == .network)
        #expect(result.requestSent)
        #expect(result.feed?.messages.map(\.id) == [1])
        let cache = try #require(fetcher.cache)
        #expect(cache.body == Feeds.seed)
        #expect(cache.etag == #""v1""#)
        #expect(cache.lastModified == "Sun, 01 Mar 2026 10:00:00 GMT")
        #expect(cache.fetchedAt == clock.now)
        #expect(fetcher.cacheKey.name.hasPrefix("dialoggate.feed."))
        // The key is a stable hash of the URL, the same in every process and release.
        #expect(FeedCache.key(for: URL(string: "https://example.com/messages.json")!).name == "dialoggate.feed.bc6ff516b2dd8194")
        let request = try #require(server.requests.first)
        #expect(request.header("If-None-Match") == nil)
        #expect(request.header("Accept") == "application/json")
    }

    @Test("304: validators are sent, the stored body is reused and its date refreshed")
    func notModified() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { request in
            if request.header("If-None-Match") == #""v1""# { return .status(304, headers: ["ETag": #""v1""#]) }
            return .ok(Feeds.seed, headers: ["ETag": #""v1""#, "Last-Modified": "Sun, 01 Mar 2026 10:00:00 GMT", "Cache-Control": "max-age=60"])
        }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        clock.advance(by: 3_600)
        let result = await fetcher.fetch()
        #expect(result.error == nil)
        #expect(result.source == .notModified)
        #expect(result.feed?.messages.map(\.id) == [1])
        #expect(result.fetchedAt == clock.now)
        #expect(fetcher.cache?.fetchedAt == clock.now)
        #expect(server.requests.count == 2)
        #expect(server.requests[1].header("If-None-Match") == #""v1""#)
        #expect(server.requests[1].header("If-Modified-Since") == "Sun, 01 Mar 2026 10:00:00 GMT")
        #expect(fetcher.cache?.maxAge == 60)  // kept: the 304 carried no Cache-Control
        #expect(fetcher.cache?.body == Feeds.seed)
    }

    @Test("max-age: no request before it runs out unless forced")
    func maxAge() async throws {
        let prefs = try Prefs(.memory)
        let server = try jsonServer(Feeds.seed, headers: ["Cache-Control": "public, max-age=300"])
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.maxAge == 300)
        clock.advance(by: 100)
        let cached = await fetcher.fetch()
        #expect(server.requests.count == 1)
        #expect(cached.source == .cache && cached.error == nil && !cached.requestSent)
        #expect(cached.feed?.messages.map(\.id) == [1])
        let forced = await fetcher.fetch(force: true)
        #expect(server.requests.count == 2)
        #expect(forced.source == .network)
        clock.advance(by: 299)
        _ = await fetcher.fetch()
        #expect(server.requests.count == 2)
        clock.advance(by: 1)
        _ = await fetcher.fetch()
        #expect(server.requests.count == 3)
    }

    // MARK: - Failures

    @Test(
        "404 and 410: the feed was removed; the last good feed is dropped at once and not used after a later failure",
        arguments: [404, 410])
    func removedFeed(status: Int) async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.ok(Feeds.seed, headers: ["ETag": #""v1""#]))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let url = server.url("/messages.json")
        let fetcher = fetcher(url, prefs: prefs)
        #expect(await fetcher.fetch().feed?.messages.map(\.id) == [1])
        scenario.set(.status(status))
        clock.advance(by: 60)
        let result = await fetcher.fetch()
        #expect(result.error == .feedRemoved(status: status, url: url))
        #expect(result.error?.description == "HTTP status \(status) from \(url.absoluteString): the feed was removed, so no message is shown")
        #expect(result.source == .none && result.feed == nil)
        #expect(fetcher.cache?.body == nil && fetcher.cache?.etag == nil)
        #expect(fetcher.cache?.nextRetryAt == nil)
        #expect(server.requests.last?.header("If-None-Match") == #""v1""#)

        scenario.set(.status(503))  // a later failure does not bring the removed feed back
        clock.advance(by: 60)
        #expect(await fetcher.fetch().feed == nil)
        scenario.set(.ok(Feeds.seed))
        clock.advance(by: 3_600)
        #expect(await fetcher.fetch(force: true).feed?.messages.map(\.id) == [1], "a feed published again is used")
    }

    @Test("500: exponential backoff with jitter from the injected clock; no request before the retry date")
    func serverErrorBackoff() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { _ in .status(500) }
        defer { server.stop() }
        let url = server.url("/messages.json")
        let fetcher = fetcher(url, prefs: prefs, random: 0.5)  // delay = base/2 + base/2 × 0.5 = 0.75 × base
        let first = await fetcher.fetch()
        #expect(first.error == .httpStatus(500, url: url))
        #expect(first.source == .none && first.feed == nil)
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(45))  // 60 s base
        clock.advance(by: 44)
        let waiting = await fetcher.fetch(force: true)
        #expect(server.requests.count == 1)
        #expect(waiting.error == .backingOff(until: feedEpoch.addingTimeInterval(45), failures: 1))
        clock.advance(by: 1)
        _ = await fetcher.fetch()
        #expect(server.requests.count == 2)
        #expect(fetcher.cache?.consecutiveFailures == 2)
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(90))  // 120 s base
    }

    @Test("429: Retry-After is honoured when longer than the backoff; success resets the counters")
    func tooManyRequests() async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.status(429, headers: ["Retry-After": "600"]))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(600))
        clock.advance(by: 599)
        _ = await fetcher.fetch()
        #expect(server.requests.count == 1)
        scenario.set(.ok(Feeds.seed))
        clock.advance(by: 1)
        let result = await fetcher.fetch()
        #expect(result.source == .network)
        #expect(fetcher.cache?.consecutiveFailures == 0)
        #expect(fetcher.cache?.nextRetryAt == nil)
    }

    @Test("a slow response hits a sub-second timeout")
    func timeout() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { _ in .ok(Feeds.seed).delayed(by: .seconds(600)) }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs, options: FeedOptions(timeout: .milliseconds(300)))
        let started = ContinuousClock.now
        let result = await fetcher.fetch()
        let elapsed = ContinuousClock.now - started
        #expect(result.error == .timedOut(after: .milliseconds(300)))
        #expect(result.error?.description == "timed out after 0.3 seconds")
        // The error alone proves the timer won; the bound only shows nobody waited for the server's 600 s. It is
        // loose because a loaded 2-core machine under ThreadSanitizer can starve the cooperative pool for minutes
        // (150 s seen once).
        #expect(elapsed < .seconds(450), "took \(elapsed)")
        #expect(fetcher.cache?.nextRetryAt == nil, "a timeout says nothing about the server: no backoff")
    }

    @Test("an oversized body is refused (2 MiB with a 1 MiB cap)")
    func oversized() async throws {
        let prefs = try Prefs(.memory)
        let body = Data(repeating: UInt8(ascii: " "), count: 2 << 20)
        let server = try TestHTTPServer { _ in .ok(body) }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        let result = await fetcher.fetch()
        #expect(result.error == .tooLarge(bytes: 2 << 20, limit: 1 << 20))
        #expect(result.feed == nil)
        #expect(fetcher.cache?.body == nil)
        // A custom loader that ignores the limit is caught by the fetcher.
        let careless = CannedLoader { _ in FeedResponse(statusCode: 200, body: body) }
        let checked = await self.fetcher(URL(string: "https://example.com/m.json")!, prefs: prefs, loader: careless).fetch()
        #expect(checked.error == .tooLarge(bytes: 2 << 20, limit: 1 << 20))
    }

    @Test(
        "an invalid body is not stored; the last good feed is kept and used",
        arguments: [
            ("[{\"id\": 1,", "3:1: error: $: invalid JSON: expected a string key, found end of input"),
            ("{\"id\": 1}", "1:1: error: $: expected an array of messages, found object"),
        ])
    func invalidBody(body: String, issue: String) async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.ok(Feeds.seed))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        scenario.set(.ok(body + "\n\n"))
        clock.advance(by: 10)
        let result = await fetcher.fetch()
        guard case .invalidFeed(let found)? = result.error else {
            Issue.record("expected an invalid feed, got \(String(describing: result.error))")
            return
        }
        #expect(found.description == issue)
        #expect(result.source == .cache)
        #expect(result.feed?.messages.map(\.id) == [1])
        #expect(fetcher.cache?.body == Feeds.seed)
        #expect(fetcher.cache?.fetchedAt == feedEpoch)
    }

    @Test("the last good feed is not used once older than the maximum cache age")
    func cacheTooOld() async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.ok(Feeds.seed))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        scenario.set(.status(403))
        clock.advance(by: 7 * 86_400 - 1)
        #expect(await fetcher.fetch().feed != nil)
        clock.advance(by: 1)
        let result = await fetcher.fetch()
        #expect(result.feed == nil)
        #expect(result.source == .none)
        #expect(fetcher.cache?.body == Feeds.seed)  // kept, just not used
    }

    // MARK: - URL policy

    @Test("http to a public host is refused before any network access")
    func insecureRefused() async throws {
        let prefs = try Prefs(.memory)
        let loader = CannedLoader { _ in FeedResponse(statusCode: 200, body: Data(Feeds.seed.utf8)) }
        let url = try #require(URL(string: "http://example.invalid/messages.json"))
        let result = await fetcher(url, prefs: prefs, loader: loader).fetch()
        #expect(result.error == .insecureURL(url))
        #expect(
            result.error?.description
                == "refusing http://example.invalid/messages.json: only https is allowed, except for loopback hosts or with allowInsecureHTTP")
        #expect(!result.requestSent)
        #expect(loader.recorded.isEmpty)
        // The default loader too: nothing is resolved or connected.
        let real = await fetcher(url, prefs: prefs).fetch()
        #expect(real.error == .insecureURL(url))
        // An explicit opt-in lets it through.
        let allowed = await fetcher(url, prefs: prefs, options: FeedOptions(allowInsecureHTTP: true), loader: loader).fetch()
        #expect(allowed.source == .network)
        #expect(loader.recorded.count == 1)
    }

    @Test(
        "URL policy: https anywhere, http on loopback only, file read directly, other schemes refused",
        arguments: [
            ("https://example.com/m.json", true), ("http://127.0.0.1:8080/m.json", true), ("http://127.1.2.3/m.json", true),
            ("http://localhost/m.json", true), ("http://[::1]:8080/m.json", true), ("http://example.com/m.json", false),
            ("http://127.0.0.1.example.com/m.json", false), ("ftp://example.com/m.json", false), ("file:///tmp/m.json", true),
        ])
    func urlPolicy(text: String, allowed: Bool) throws {
        let url = try #require(URL(string: text))
        #expect((FeedURLPolicy.refusal(for: url, allowInsecureHTTP: false) == nil) == allowed)
    }

    @Test("a redirect to http on a public host is refused")
    func insecureRedirect() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { request in
            request.path == "/moved" ? .ok(Feeds.seed) : .status(302, headers: ["Location": "http://example.invalid/messages.json"])
        }
        defer { server.stop() }
        let result = await fetcher(server.url("/messages.json"), prefs: prefs).fetch()
        #expect(result.error == .insecureRedirect(to: URL(string: "http://example.invalid/messages.json")!))
        #expect(server.requests.count == 1)
    }

    @Test("a redirect within loopback is followed")
    func loopbackRedirect() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { request in
            request.path == "/moved" ? .ok(Feeds.seed) : .status(301, headers: ["Location": "/moved"])
        }
        defer { server.stop() }
        let result = await fetcher(server.url("/messages.json"), prefs: prefs).fetch()
        #expect(result.error == nil)
        #expect(result.feed?.messages.count == 1)
        #expect(server.requests.map(\.path) == ["/messages.json", "/moved"])
    }

    @Test("file:// feeds are read directly")
    func fileFeed() async throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("prefs.sqlite")))
        let file = directory.file("messages.json")
        try Data(Feeds.multipleApplications.utf8).write(to: file)
        let fetcher = fetcher(file, prefs: prefs)
        let result = await fetcher.fetch()
        #expect(result.error == nil)
        #expect(result.source == .network && !result.requestSent)
        #expect(result.feed?.messages.map(\.id) == [3, 1])
        try FileManager.default.removeItem(at: file)
        let missing = await fetcher.fetch()
        guard case .unreadableFile(let path, _)? = missing.error else {
            Issue.record("expected unreadableFile, got \(String(describing: missing.error))")
            return
        }
        #expect(path == file.path)
        #expect(missing.feed?.messages.count == 2)  // the last good feed
    }

    @Test("concurrent fetches share one request")
    func concurrentFetchesShare() async throws {
        let prefs = try Prefs(.memory)
        let server = try TestHTTPServer { _ in .ok(Feeds.seed).delayed(by: .milliseconds(200)) }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        async let first = fetcher.fetch()
        async let second = fetcher.fetch()
        let results = await [first, second]
        #expect(results.allSatisfy { $0.feed?.messages.count == 1 })
        #expect(server.requests.count == 1)
    }

    // MARK: - Hostile headers and clock changes

    @Test(
        "a huge Retry-After is capped at maximumBackoff, and the cache stays readable",
        arguments: [
            "31536000000", "9223372036854775807",
        ])
    func hugeRetryAfter(value: String) async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.ok(Feeds.seed))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        scenario.set(.status(503, headers: ["Retry-After": value]))
        clock.advance(by: 10)
        let failed = await fetcher.fetch(force: true)
        #expect(failed.source == .cache && failed.feed?.messages.map(\.id) == [1])
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(3600))
        let raw = try #require(try prefs.storedValue(forKey: fetcher.cacheKey.name))
        #expect(try raw.decode(FeedCache.self).nextRetryAt == clock.now.addingTimeInterval(3600), "the stored cache reads back")

        scenario.set(.ok(Feeds.of(Feeds.message(id: 2))))
        clock.advance(by: 3599)
        #expect(await fetcher.fetch(force: true).error == .backingOff(until: clock.now.addingTimeInterval(1), failures: 1))
        clock.advance(by: 1)
        let recovered = await fetcher.fetch(force: true)
        #expect(recovered.source == .network && recovered.feed?.messages.map(\.id) == [2])
        #expect(server.requests.count == 3)
    }

    @Test("max-age with the clock set back after the fetch: it runs its length from when that was first seen, then a request")
    func clockBackAfterMaxAge() async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.ok(Feeds.seed, headers: ["Cache-Control": "max-age=300"]))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        scenario.set(.ok(Feeds.of(Feeds.message(id: 2)), headers: ["Cache-Control": "max-age=300"]))
        clock.advance(by: -3 * 86_400 + 3600)  // set back 3 days, then an hour passes
        #expect(await fetcher.fetch().source == .cache, "fresh for max-age from when the clock was first seen behind")
        #expect(fetcher.cache?.fetchedAtReanchoredAt == clock.now)
        clock.advance(by: 299)
        #expect(await fetcher.fetch().source == .cache)
        #expect(server.requests.count == 1)
        clock.advance(by: 1)
        let result = await fetcher.fetch()
        #expect(result.source == .network && result.feed?.messages.map(\.id) == [2])
        #expect(fetcher.cache?.fetchedAtReanchoredAt == nil, "the new fetch date is not behind the clock")
        clock.advance(by: 100)
        #expect(await fetcher.fetch().source == .cache, "max-age counts again from the new fetch date")
        #expect(server.requests.count == 2)
    }

    @Test("a backoff with the clock set back after the failure: its length from when that was first seen, not the jump")
    func clockBackAfterBackoff() async throws {
        let prefs = try Prefs(.memory)
        let scenario = Scenario(.status(503))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs)
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(30))
        scenario.set(.ok(Feeds.seed))
        clock.advance(by: -10 * 86_400 + 7200)  // set back 10 days, then two hours pass
        let seenBehind = clock.now
        #expect(await fetcher.fetch(force: true).error == .backingOff(until: seenBehind.addingTimeInterval(30), failures: 1))
        clock.advance(by: 30)
        let result = await fetcher.fetch(force: true)
        #expect(result.source == .network && result.error == nil)
        #expect(server.requests.count == 2)
    }

    @Test("a retry date from a cache without the failure's date (an older release), further ahead than maximumBackoff, is ignored")
    func clockBackAfterOlderBackoff() async throws {
        let prefs = try Prefs(.memory)
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let url = server.url("/messages.json")
        var cache = FeedCache(url: url)
        cache.consecutiveFailures = 1
        cache.nextRetryAt = clock.now.addingTimeInterval(10 * 86_400)
        try prefs.set(cache, for: FeedCache.key(for: url))
        let result = await fetcher(url, prefs: prefs).fetch(force: true)
        #expect(result.source == .network && result.error == nil)
    }

    /// Reported: a feed fetched, then the clock set back a year and the device offline for 30 days: the message still showed.
    @Test("a feed fetched \"in the future\" (the clock set back since) ages: offline, it is used for the maximum cache age, then not")
    func cacheFetchedInTheFuture() async throws {
        let prefs = try Prefs(.memory)
        let network = try OfflineSwitch()
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs, loader: network)
        #expect(await fetcher.fetch().source == .network)
        network.isOffline = true
        clock.advance(by: -365 * 86_400)
        #expect(await fetcher.fetch().feed?.messages.map(\.id) == [1], "the last good feed, while the device is offline")
        clock.advance(by: 7 * 86_400 - 1)
        #expect(await fetcher.fetch().feed?.messages.map(\.id) == [1])
        clock.advance(by: 1)
        #expect(await fetcher.fetch().feed == nil, "7 days, the maximum cache age, from when the clock was first seen behind")
        clock.advance(by: 23 * 86_400)
        let later = await fetcher.fetch()
        #expect(later.feed == nil && later.source == .none, "30 days offline: nothing shown")
        #expect(fetcher.cache?.age(at: clock.now).map { Int($0.rounded()) } == 30 * 86_400)
    }

    // MARK: - Offline

    /// Reported: no network at the first launch, network at a relaunch 10 s later: no request was made
    /// ("not fetching before …:40Z after 1 failure in a row").
    @Test("offline first launch: a failed connection starts no backoff; the relaunch 10 s later fetches")
    func offlineFirstLaunch() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("app.sqlite")
        let network = try OfflineSwitch()
        network.isOffline = true
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let url = server.url("/messages.json")
        let first = await fetcher(url, prefs: try Prefs(.sqlite(store)), loader: network).fetch()
        guard case .transport? = first.error else {
            Issue.record("expected a connection failure, got \(String(describing: first.error))")
            return
        }
        #expect(first.feed == nil)
        let failed = try #require(fetcher(url, prefs: try Prefs(.sqlite(store))).cache)
        #expect(failed.consecutiveFailures == 1 && failed.nextRetryAt == nil && failed.serverFailures == 0)

        network.isOffline = false
        clock.advance(by: 10)
        let relaunch = await fetcher(url, prefs: try Prefs(.sqlite(store)), loader: network).fetch()
        #expect(relaunch.error == nil)
        #expect(relaunch.source == .network && relaunch.feed?.messages.map(\.id) == [1])
        #expect(server.requests.count == 1)
    }

    @Test("a connection failure between two 503s neither backs off nor resets the server's count: the second 503 doubles the backoff")
    func offlineBetweenServerFailures() async throws {
        let prefs = try Prefs(.memory)
        let network = try OfflineSwitch()
        let server = try TestHTTPServer { _ in .status(503) }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: prefs, loader: network)
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(30))  // 60 s base, random 0
        clock.advance(by: 30)
        network.isOffline = true
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.nextRetryAt == nil && fetcher.cache?.serverFailures == 1)
        network.isOffline = false
        _ = await fetcher.fetch()
        #expect(fetcher.cache?.nextRetryAt == clock.now.addingTimeInterval(60), "120 s base: the second of the server's failures")
        #expect(fetcher.cache?.consecutiveFailures == 3)
    }
}

/// The device's network, switched by the test: online, requests go to the server; offline, to a loopback port nobody
/// listens on, so the standard loader fails to connect for real.
final class OfflineSwitch: FeedLoader {
    private let offline = Locked(false)
    private let standard = FeedLoaders.standard()
    /// A port that refuses connections for as long as the switch lives. (A port that was only free a moment ago
    /// could be another test's server by the time the request is sent: the "offline" request then reached it.)
    private let closed: ClosedPort

    init() throws {
        closed = try ClosedPort()
    }

    var isOffline: Bool {
        get { offline.withLock { $0 } }
        set { offline.withLock { $0 = newValue } }
    }

    func load(_ request: URLRequest, options: FeedOptions) async throws -> FeedResponse {
        var request = request
        if isOffline, let url = request.url, var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            parts.port = closed.port
            request.url = parts.url
        }
        return try await standard.load(request, options: options)
    }
}
