import Foundation
import Prefs
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as a ``FeedLoader`` delivers it: status, header fields and the (size-capped) body.
///
/// ```swift
/// let response = FeedResponse(statusCode: 200, headers: ["ETag": "\"v1\""], body: Data("[]".utf8))
/// response.header("etag")   // "\"v1\""
/// ```
public struct FeedResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var statusCode: Int
    /// Header fields keyed by lowercased name.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response; header names are lowercased.
    ///
    /// ```swift
    /// FeedResponse(statusCode: 304, headers: ["Cache-Control": "max-age=60"], body: Data())
    /// ```
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The value of a header field, whatever the case of `name`.
    ///
    /// ```swift
    /// response.header("Last-Modified")
    /// ```
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// What a loader must enforce for one request.
///
/// ```swift
/// let limits = FeedLoadLimits(maximumBytes: 1 << 20, allowInsecureHTTP: false)
/// ```
public struct FeedLoadLimits: Sendable, Hashable {
    /// The largest body accepted; a larger one fails with ``FeedFetchError/tooLarge(bytes:limit:)``.
    public var maximumBytes: Int
    /// Whether redirects to `http` on public hosts are followed.
    public var allowInsecureHTTP: Bool

    /// Creates limits.
    ///
    /// ```swift
    /// FeedLoadLimits(maximumBytes: 65_536, allowInsecureHTTP: true)
    /// ```
    public init(maximumBytes: Int, allowInsecureHTTP: Bool) {
        self.maximumBytes = maximumBytes
        self.allowInsecureHTTP = allowInsecureHTTP
    }
}

/// Performs one HTTP GET for a ``FeedFetcher``. The default is ``URLSessionFeedLoader``; tests and apps
/// with their own networking can supply another.
///
/// A loader returns every status as a response (it does not throw for 404 or 500), refuses redirects that
/// ``FeedURLPolicy`` refuses with ``FeedFetchError/insecureRedirect(to:)``, and stops reading a body that
/// exceeds the limit with ``FeedFetchError/tooLarge(bytes:limit:)``. It should honour task cancellation;
/// the fetcher enforces its timeout either way.
///
/// ```swift
/// struct CannedLoader: FeedLoader {
///     func load(_ request: URLRequest, limits: FeedLoadLimits) async throws -> FeedResponse {
///         FeedResponse(statusCode: 200, body: Data("[]".utf8))
///     }
/// }
/// ```
public protocol FeedLoader: Sendable {
    /// Sends `request` and returns the response with its whole body.
    func load(_ request: URLRequest, limits: FeedLoadLimits) async throws -> FeedResponse
}

/// Which feed URLs may be fetched: `https` anywhere, `http` only on loopback hosts (127.0.0.0/8, `::1`,
/// `localhost`) or with an explicit opt-in, `file` read directly.
///
/// ```swift
/// FeedURLPolicy.refusal(for: URL(string: "http://example.com/m.json")!, allowInsecureHTTP: false)   // .insecureURL
/// FeedURLPolicy.isLoopback(host: "127.0.0.1")                                                      // true
/// ```
public enum FeedURLPolicy {
    /// Why `url` may not be fetched, or nil when it may.
    ///
    /// ```swift
    /// FeedURLPolicy.refusal(for: URL(string: "https://example.com/m.json")!, allowInsecureHTTP: false)   // nil
    /// ```
    public static func refusal(for url: URL, allowInsecureHTTP: Bool, allowFile: Bool = true) -> FeedFetchError? {
        switch url.scheme?.lowercased() {
        case "https":
            return nil
        case "http":
            if allowInsecureHTTP || isLoopback(host: url.host ?? "") { return nil }
            return .insecureURL(url)
        case "file" where allowFile:
            return nil
        default:
            return .unsupportedScheme(url)
        }
    }

    /// Whether `host` is `localhost`, `::1` or an IPv4 address in 127.0.0.0/8.
    ///
    /// ```swift
    /// FeedURLPolicy.isLoopback(host: "127.8.9.10")   // true
    /// FeedURLPolicy.isLoopback(host: "127.example")  // false
    /// ```
    public static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4,
              octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil })
        else { return false }
        return octets[0] == "127"
    }
}

/// The default ``FeedLoader``: an ephemeral `URLSession` without a URL cache (on Linux, `URLCache` never
/// revalidates), with a delegate that checks `Content-Length` up front and counts received bytes as they
/// arrive (cancelling past the limit), and that refuses redirects to insecure URLs before they are followed.
///
/// ```swift
/// let loader = URLSessionFeedLoader()
/// let response = try await loader.load(URLRequest(url: url), limits: .init(maximumBytes: 1 << 20, allowInsecureHTTP: false))
/// ```
public final class URLSessionFeedLoader: FeedLoader {
    private let session: URLSession
    private let delegate: LoaderDelegate

    /// Creates a loader with its own session.
    ///
    /// ```swift
    /// let fetcher = FeedFetcher(url: url, prefs: prefs, loader: URLSessionFeedLoader())
    /// ```
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        delegate = LoaderDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        // The session retains its delegate until invalidated.
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; see ``FeedLoader``.
    ///
    /// ```swift
    /// let response = try await URLSessionFeedLoader().load(URLRequest(url: url), limits: limits)
    /// response.statusCode   // 200
    /// ```
    public func load(_ request: URLRequest, limits: FeedLoadLimits) async throws -> FeedResponse {
        let task = session.dataTask(with: request)
        let delegate = delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FeedResponse, any Error>) in
                delegate.register(task.taskIdentifier, continuation: continuation, limits: limits)
                if Task.isCancelled {
                    delegate.finish(task.taskIdentifier, with: .failure(CancellationError()))
                    task.cancel()
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// Collects each task's response and body and resumes its continuation exactly once.
private final class LoaderDelegate: NSObject, URLSessionDataDelegate, Sendable {
    struct Pending {
        var continuation: CheckedContinuation<FeedResponse, any Error>
        var limits: FeedLoadLimits
        var response: HTTPURLResponse?
        var body = Data()
        /// A failure decided by the delegate (too large, refused redirect), reported instead of the cancellation.
        var failure: FeedFetchError?
    }

    private let pending = Locked<[Int: Pending]>([:])

    func register(_ id: Int, continuation: CheckedContinuation<FeedResponse, any Error>, limits: FeedLoadLimits) {
        pending.withLock { $0[id] = Pending(continuation: continuation, limits: limits) }
    }

    /// Resumes the continuation of task `id` once; later calls do nothing.
    func finish(_ id: Int, with result: Result<FeedResponse, any Error>) {
        let entry = pending.withLock { $0.removeValue(forKey: id) }
        entry?.continuation.resume(with: result)
    }

    /// Records a failure and cancels the task; completion reports the failure.
    private func fail(_ task: URLSessionTask, _ failure: FeedFetchError) {
        pending.withLock { $0[task.taskIdentifier]?.failure = failure }
        task.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let limit = pending.withLock { state -> Int? in
            state[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
            return state[dataTask.taskIdentifier]?.limits.maximumBytes
        }
        if let limit, response.expectedContentLength > Int64(limit) {
            fail(dataTask, .tooLarge(bytes: Int(clamping: response.expectedContentLength), limit: limit))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = pending.withLock { state -> (Int, Int)? in
            guard var entry = state[dataTask.taskIdentifier], entry.failure == nil else { return nil }
            entry.body.append(data)
            let count = entry.body.count
            state[dataTask.taskIdentifier] = entry
            return count > entry.limits.maximumBytes ? (count, entry.limits.maximumBytes) : nil
        }
        if let (count, limit) = overflow { fail(dataTask, .tooLarge(bytes: count, limit: limit)) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let allowInsecure = pending.withLock { $0[task.taskIdentifier]?.limits.allowInsecureHTTP } ?? false
        if let target = request.url, FeedURLPolicy.refusal(for: target, allowInsecureHTTP: allowInsecure, allowFile: false) != nil {
            // Not followed: the redirect response completes the task, which then reports this failure.
            // (Cancelling here as well crashes swift-corelibs-foundation, which still awaits this handler.)
            pending.withLock { $0[task.taskIdentifier]?.failure = .insecureRedirect(to: target) }
            completionHandler(nil)
            return
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let entry = pending.withLock { $0[task.taskIdentifier] }
        guard let entry else { return }
        if let failure = entry.failure {
            finish(task.taskIdentifier, with: .failure(failure))
        } else if let error {
            let reason = (error as? URLError).map { "\($0.localizedDescription) (URLError \($0.code.rawValue))" } ?? "\(error)"
            finish(task.taskIdentifier, with: .failure((error as? URLError)?.code == .cancelled ? CancellationError() : FeedFetchError.transport(reason)))
        } else if let response = entry.response {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            finish(task.taskIdentifier, with: .success(FeedResponse(statusCode: response.statusCode, headers: headers, body: entry.body)))
        } else {
            finish(task.taskIdentifier, with: .failure(FeedFetchError.transport("no HTTP response")))
        }
    }
}
