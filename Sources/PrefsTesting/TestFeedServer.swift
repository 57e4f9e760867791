import Foundation
import PrefsSupport

/// A `messages.json` on a real HTTP server on 127.0.0.1, for an app's tests of its remote messages: what the app's
/// `MessageCenter` fetches, revalidates and shows, without a network or a mock.
///
/// The server answers `GET <path>` with the feed last published, an `ETag` that changes with each ``publish(_:)``,
/// and `304 Not Modified` to a request that names the current tag in `If-None-Match`; any other path is a 404.
/// ``fail(status:)`` makes it answer an error until the next ``publish(_:)``. It listens on the loopback address only
/// and stops when it is released or ``stop()`` is called.
///
/// ```swift
/// let hello = #"{"id": 2, "bundleId": "com.example.app", "title": "Hello", "text": "New", "confirmLabel": "OK"}"#
/// let server = try TestFeedServer("[\(hello)]")
/// defer { server.stop() }
/// let context = MessageContext.current(bundleIdentifier: "com.example.app", appVersion: "1.0")
/// let center = MessageCenter(feedURL: server.url, prefs: try Prefs(.memory), context: context)
/// await center.refresh()
/// center.pendingMessage?.id   // 2
/// server.requestCount   // 1, then one more per fetch
/// server.publish("[]")   // the next fetch downloads an empty feed
/// ```
public final class TestFeedServer: Sendable {
    /// Why the server could not start: the socket call that failed and its `errno`.
    ///
    /// ```swift
    /// do { _ = try TestFeedServer("[]") } catch { print(error) }   // e.g. bind 127.0.0.1:0 failed: … (errno 98)
    /// ```
    public struct StartError: Error, Sendable, Hashable, CustomStringConvertible {
        /// `<call> failed: <strerror text> (errno <code>)`.
        public let description: String
    }

    private struct Feed {
        var body: Data
        var version: Int
        var failure: Int?
        var served = 0
        var notModified = 0
    }

    private let server: TestHTTPServer
    private let feed: Locked<Feed>

    /// The feed's URL: `http://127.0.0.1:PORT/messages.json` (or the path given).
    ///
    /// ```swift
    /// server.url.absoluteString   // "http://127.0.0.1:40213/messages.json"
    /// ```
    public let url: URL

    /// Starts serving `json` (the feed's text, served as is: a test of a malformed feed publishes one) at `path` on an
    /// ephemeral port of 127.0.0.1.
    ///
    /// ```swift
    /// let server = try TestFeedServer("[]", path: "/v2/messages.json")
    /// ```
    public init(_ json: String, path: String = "/messages.json") throws(StartError) {
        let feed = Locked(Feed(body: Data(json.utf8), version: 1))
        do {
            server = try TestHTTPServer { request in
                guard request.path == path else { return .status(404) }
                return feed.withLock { feed in
                    feed.served += 1
                    if let status = feed.failure { return .status(status, body: "failing on purpose") }
                    let tag = "\"v\(feed.version)\""
                    if request.header("If-None-Match") == tag {
                        feed.notModified += 1
                        return .status(304, headers: ["ETag": tag])
                    }
                    return .ok(feed.body, headers: ["ETag": tag, "Content-Type": "application/json"])
                }
            }
        } catch {
            throw StartError(description: error.description)
        }
        self.feed = feed
        url = server.url(path)
    }

    deinit {
        server.stop()
    }

    /// Serves `json` from now on, under a new `ETag`, and ends a ``fail(status:)``.
    ///
    /// ```swift
    /// server.publish(#"[{"id": 4, "bundleId": "com.example.app", "title": "Sale", "text": "-50%", "confirmLabel": "OK"}]"#)
    /// ```
    public func publish(_ json: String) {
        feed.withLock { feed in
            feed.body = Data(json.utf8)
            feed.version += 1
            feed.failure = nil
        }
    }

    /// Answers every request for the feed with `status` (a server error by default) until the next ``publish(_:)``,
    /// as a host having an outage.
    ///
    /// ```swift
    /// server.fail(status: 503)
    /// ```
    public func fail(status: Int = 500) {
        feed.withLock { $0.failure = status }
    }

    /// How many requests for the feed the server has answered, failures and `304 Not Modified` included.
    ///
    /// ```swift
    /// server.requestCount   // 0 before the app's first fetch
    /// ```
    public var requestCount: Int { feed.withLock { $0.served } }

    /// How many of them were answered `304 Not Modified`: the app revalidated its cached feed instead of downloading
    /// it again.
    ///
    /// ```swift
    /// server.notModifiedCount   // 1 after a second fetch of an unchanged feed
    /// ```
    public var notModifiedCount: Int { feed.withLock { $0.notModified } }

    /// Stops listening and closes every open connection; returns at once. Later requests are refused.
    ///
    /// ```swift
    /// server.stop()
    /// ```
    public func stop() {
        server.stop()
    }
}
