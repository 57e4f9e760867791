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

/// A feed host under an attacker's control, on loopback: encoded bodies, redirects to this machine, odd validators.
@Suite("Hostile feed servers")
struct HostileFeedServerTests {
    let clock = TestClock(feedEpoch)

    private func fetcher(_ url: URL, prefs: Prefs, loader: (any FeedLoader)? = nil) -> FeedFetcher {
        FeedFetcher(url: url, prefs: prefs, options: .unhurried, loader: loader, clock: clock.function, random: { 0 })
    }

    @Test("the gzip test bodies decode as gzip says (gzip -dc)")
    func gzipHelper() async throws {
        let zeros = try await ChildProcess.runSystem("/bin/gzip", ["-dc"], stdin: Gzip.zeros(count: 1_000_003))
        #expect(zeros.status == 0, "\(zeros.stderr)")
        #expect(zeros.stdout.utf8.count == 1_000_003)
        #expect(zeros.stdout.utf8.allSatisfy { $0 == 0 })
        let text = String(repeating: "feed ", count: 20_000)  // over one stored block
        let stored = try await ChildProcess.runSystem("/bin/gzip", ["-dc"], stdin: Gzip.stored(Data(text.utf8)))
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout == text)
    }

    @Test("a gzip bomb (1 GiB in 1 MB) stops at the cap, and identity was asked for")
    func gzipBomb() async throws {
        let bomb = Gzip.zeros(count: 1 << 30)
        let server = try TestHTTPServer { _ in .ok(bomb, headers: ["Content-Encoding": "gzip"]) }
        defer { server.stop() }
        let result = await fetcher(server.url("/messages.json"), prefs: try Prefs(.memory)).fetch()
        guard case .tooLarge(let bytes, let limit) = result.error else {
            Issue.record("expected tooLarge, got \(String(describing: result.error))")
            return
        }
        #expect(limit == 1 << 20)
        #expect(bytes > limit && bytes <= limit + (64 << 10), "stopped within one chunk of the cap: \(bytes)")
        #expect(server.requests.first?.header("Accept-Encoding") == "identity")
    }

    @Test("a feed gzip-encoded although identity was asked for is decoded and used")
    func encodedFeed() async throws {
        let server = try TestHTTPServer { _ in .ok(Gzip.stored(Data(Feeds.seed.utf8)), headers: ["Content-Encoding": "gzip"]) }
        defer { server.stop() }
        let result = await fetcher(server.url("/messages.json"), prefs: try Prefs(.memory)).fetch()
        #expect(result.error == nil)
        #expect(result.feed?.messages.map(\.id) == [1])
    }

    @Test("URLSessionFeedLoader refuses an encoded body: URLSession decodes it out of reach of the cap")
    func urlSessionRefusesEncodedBody() async throws {
        let server = try TestHTTPServer { _ in .ok(Gzip.stored(Data(Feeds.seed.utf8)), headers: ["Content-Encoding": "gzip"]) }
        defer { server.stop() }
        let result = await fetcher(server.url("/messages.json"), prefs: try Prefs(.memory), loader: URLSessionFeedLoader()).fetch()
        #expect(result.error == .encodedBody(contentEncoding: "gzip"))
        #expect(server.requests.first?.header("Accept-Encoding") == "identity")
    }

    // MARK: - Redirects to this machine

    @Test("a redirect to loopback (or 0.0.0.0) is refused unless the feed itself is on loopback")
    func loopbackRedirectPolicy() throws {
        let publicFeed = try #require(URL(string: "https://feeds.example.com/messages.json"))
        let localFeed = try #require(URL(string: "http://127.0.0.1:8080/messages.json"))
        for target in [
            "http://127.0.0.1:6379/", "http://localhost:8080/admin", "https://127.0.0.1/", "http://[::1]:80/",
            "http://127.1:22/", "http://2130706433/", "http://0x7f000001/", "http://0.0.0.0:8080/",
            "http://[::ffff:127.0.0.1]/", "http://LOCALHOST./",
        ] {
            let url = try #require(URL(string: target))
            #expect(FeedURLPolicy.redirectRefusal(from: publicFeed, to: url, allowInsecureHTTP: false) == .insecureRedirect(to: url), "\(target)")
            #expect(FeedURLPolicy.redirectRefusal(from: publicFeed, to: url, allowInsecureHTTP: true) == .insecureRedirect(to: url), "\(target)")
            if !target.contains("0.0.0.0") {  // not loopback: plain http to it needs allowInsecureHTTP
                #expect(FeedURLPolicy.redirectRefusal(from: localFeed, to: url, allowInsecureHTTP: false) == nil, "\(target)")
            }
        }
        let elsewhere = try #require(URL(string: "https://cdn.example.net/messages.json"))
        #expect(FeedURLPolicy.redirectRefusal(from: publicFeed, to: elsewhere, allowInsecureHTTP: false) == nil)
        let plain = try #require(URL(string: "http://cdn.example.net/messages.json"))
        #expect(FeedURLPolicy.redirectRefusal(from: publicFeed, to: plain, allowInsecureHTTP: false) == .insecureRedirect(to: plain))
        #expect(FeedURLPolicy.redirectRefusal(from: localFeed, to: plain, allowInsecureHTTP: false) == .insecureRedirect(to: plain))
        #expect(
            FeedFetchError.insecureRedirect(to: URL(string: "http://127.0.0.1:6379/")!).description
                == "refusing the redirect to http://127.0.0.1:6379/: only a feed on a loopback host may redirect to one")
        #expect(FeedURLPolicy.isLoopback(host: "127.1") && FeedURLPolicy.isLoopback(host: "2130706433"))
        #expect(!FeedURLPolicy.isLoopback(host: "127.example") && !FeedURLPolicy.isLoopback(host: "128.0.0.1"))
    }

    @Test(
        "both loaders judge each redirect against the URL first requested",
        arguments: [LoaderKind.standard, .urlSession])
    func redirectsJudgedAgainstOriginal(loader: LoaderKind) async throws {
        // Within loopback: followed. (A public origin cannot be served here; the policy test above covers it.)
        let server = try TestHTTPServer { request in
            switch request.path {
            case "/a": .status(302, headers: ["Location": "/b"])
            case "/b": .status(307, headers: ["Location": "http://localhost:\(request.header("Host")?.split(separator: ":").last ?? "")/c"])
            case "/c": .ok(Feeds.seed)
            default: .status(302, headers: ["Location": "http://example.invalid/messages.json"])
            }
        }
        defer { server.stop() }
        let followed = await fetcher(server.url("/a"), prefs: try Prefs(.memory), loader: loader.make()).fetch()
        #expect(followed.error == nil)
        #expect(server.requests.map(\.path) == ["/a", "/b", "/c"])
        #expect(server.requests.allSatisfy { $0.header("Accept-Encoding") == "identity" })
        let refused = await fetcher(server.url("/elsewhere"), prefs: try Prefs(.memory), loader: loader.make()).fetch()
        #expect(refused.error == .insecureRedirect(to: URL(string: "http://example.invalid/messages.json")!))
    }

    @Test("a redirect loop ends with an error")
    func redirectLoop() async throws {
        let server = try TestHTTPServer { _ in .status(302, headers: ["Location": "/again"]) }
        defer { server.stop() }
        let result = await fetcher(server.url("/start"), prefs: try Prefs(.memory)).fetch()
        guard case .transport = result.error else {
            Issue.record("expected a transport error, got \(String(describing: result.error))")
            return
        }
        #expect(server.requests.count <= 21)
    }

    // MARK: - Validators

    @Test("an ETag holding a CR is not stored, and the next request is still conditional on Last-Modified")
    func controlCharacterInETag() async throws {
        let lastModified = "Sun, 01 Mar 2026 10:00:00 GMT"
        let server = try TestHTTPServer { request in
            if request.header("If-Modified-Since") == lastModified { return .status(304) }
            return .ok(Feeds.seed, headers: ["ETag": "\"v1\rX\"", "Last-Modified": lastModified])
        }
        defer { server.stop() }
        let fetcher = fetcher(server.url("/messages.json"), prefs: try Prefs(.memory))
        #expect(await fetcher.fetch().error == nil)
        #expect(fetcher.cache?.etag == nil)
        #expect(fetcher.cache?.lastModified == lastModified)
        clock.advance(by: 3_600)
        let second = await fetcher.fetch()
        #expect(second.error == nil)
        #expect(second.source == .notModified)
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.header("If-Modified-Since") == lastModified)
        #expect(server.requests.last?.header("If-None-Match") == nil)
    }

    enum LoaderKind: Sendable, CustomTestStringConvertible {
        case standard, urlSession
        func make() -> any FeedLoader { self == .standard ? FeedLoaders.standard() : URLSessionFeedLoader() }
        var testDescription: String { self == .standard ? "FeedLoaders.standard()" : "URLSessionFeedLoader" }
    }
}
