import Foundation
import MessageFeed
import Prefs
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PrefsSupport

/// A response as a ``FeedLoader`` delivers it: status, header fields and the (size-capped) body.
///
/// ```swift
/// let response = FeedResponse(statusCode: 200, headers: ["ETag": "\"v1\""], body: Data("[]".utf8))
/// response.header("etag")   // "\"v1\""
/// ```
package struct FeedResponse: Sendable, Hashable {
    /// The HTTP status code.
    package var statusCode: Int
    /// Header fields keyed by lowercased name.
    package var headers: [String: String]
    /// The body.
    package var body: Data

    /// Creates a response; header names are lowercased.
    ///
    /// ```swift
    /// FeedResponse(statusCode: 304, headers: ["Cache-Control": "max-age=60"], body: Data())
    /// ```
    package init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// The value of a header field, whatever the case of `name`.
    ///
    /// ```swift
    /// response.header("Last-Modified")
    /// ```
    package func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// Performs one HTTP GET for a ``FeedFetcher``. The default is ``URLSessionFeedLoader``; tests and apps
/// with their own networking can supply another.
///
/// A loader returns every status as a response (it does not throw for 404 or 500), refuses redirects that
/// ``FeedURLPolicy/redirectRefusal(from:to:allowInsecureHTTP:)`` refuses with ``FeedFetchError/insecureRedirect(to:)``,
/// and stops reading a body whose decoded size exceeds the limit with ``FeedFetchError/tooLarge(bytes:limit:)``
/// (or refuses an encoded body it cannot bound, with ``FeedFetchError/encodedBody(contentEncoding:)``). It should honour task cancellation;
/// the fetcher enforces its timeout either way.
///
/// ```swift
/// struct CannedLoader: FeedLoader {
///     func load(_ request: URLRequest, options: FeedOptions) async throws -> FeedResponse {
///         FeedResponse(statusCode: 200, body: Data("[]".utf8))
///     }
/// }
/// ```
package protocol FeedLoader: Sendable {
    /// Sends `request` and returns the response with its whole body, enforcing `options`' `FeedOptions.maximumBytes`
    /// and `FeedOptions.allowInsecureHTTP` (for redirects).
    func load(_ request: URLRequest, options: FeedOptions) async throws -> FeedResponse
}

/// Which feed URLs may be fetched: `https` anywhere, `http` only on loopback hosts (127.0.0.0/8, `::1`,
/// `localhost`) or with an explicit opt-in, `file` read directly.
///
/// ```swift
/// FeedURLPolicy.refusal(for: URL(string: "http://example.com/m.json")!, allowInsecureHTTP: false)   // .insecureURL
/// FeedURLPolicy.isLoopback(host: "127.0.0.1")                                                      // true
/// ```
package enum FeedURLPolicy {
    /// Why `url` may not be fetched, or nil when it may.
    ///
    /// ```swift
    /// FeedURLPolicy.refusal(for: URL(string: "https://example.com/m.json")!, allowInsecureHTTP: false)   // nil
    /// ```
    package static func refusal(for url: URL, allowInsecureHTTP: Bool, allowFile: Bool = true) -> FeedFetchError? {
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

    /// Why a redirect from a request for `original` to `target` may not be followed, or nil when it may: `target`
    /// must pass ``refusal(for:allowInsecureHTTP:allowFile:)`` (no `file`), and a loopback (or unspecified, such as
    /// `0.0.0.0`) host is allowed only when `original` was on one: a public feed cannot send its clients to services
    /// listening on their own machine.
    ///
    /// ```swift
    /// FeedURLPolicy.redirectRefusal(from: URL(string: "https://example.com/m.json")!,
    ///                               to: URL(string: "http://127.0.0.1:8080/admin")!, allowInsecureHTTP: false)   // .insecureRedirect
    /// ```
    package static func redirectRefusal(from original: URL, to target: URL, allowInsecureHTTP: Bool) -> FeedFetchError? {
        if refusal(for: target, allowInsecureHTTP: allowInsecureHTTP, allowFile: false) != nil
            || (isLocalHost(target.host ?? "") && !isLocalHost(original.host ?? ""))
        {
            return .insecureRedirect(to: target)
        }
        return nil
    }

    /// Whether `host` is `localhost`, `::1` or an IPv4 address in 127.0.0.0/8, in any spelling the resolver
    /// accepts (`127.1`, `2130706433`, `0x7f.0.0.1`, `::ffff:127.0.0.1`).
    ///
    /// ```swift
    /// FeedURLPolicy.isLoopback(host: "127.8.9.10")   // true
    /// FeedURLPolicy.isLoopback(host: "127.example")  // false
    /// ```
    package static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix("."), !name.hasSuffix("..") { name.removeLast() }
        if name == "localhost" { return true }
        return numericAddress(name).map { $0.loopback } ?? false
    }

    /// Whether `host` is loopback (``isLoopback(host:)``) or an address that reaches this machine all the same:
    /// 0.0.0.0/8 or `::` (connecting to the unspecified address reaches a local listener on Linux).
    static func isLocalHost(_ host: String) -> Bool {
        if isLoopback(host: host) { return true }
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        return numericAddress(name).map { $0.unspecified } ?? false
    }

    /// A numeric host as the resolver reads it (`inet_aton` for IPv4, `inet_pton` for IPv6; IPv4-mapped IPv6
    /// addresses as their IPv4 address); nil for a name.
    private static func numericAddress(_ name: String) -> (loopback: Bool, unspecified: Bool)? {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":" || $0 == "x") }) else { return nil }
        var v4 = in_addr()
        if !name.contains(":"), inet_aton(name, &v4) != 0 {
            let first = UInt8(truncatingIfNeeded: UInt32(bigEndian: v4.s_addr) >> 24)
            return (first == 127, first == 0)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return (bytes[12] == 127, bytes[12] == 0)  // ::ffff:a.b.c.d
        }
        let allZero = bytes[0..<15].allSatisfy { $0 == 0 }
        return (allZero && bytes[15] == 1, allZero && bytes[15] == 0)
    }
}

/// The default ``FeedLoader``: an ephemeral `URLSession` without a URL cache (on Linux, `URLCache` never
/// revalidates), with a delegate that checks `Content-Length` up front and counts received bytes as they
/// arrive (cancelling past the limit), and that refuses redirects that ``FeedURLPolicy/redirectRefusal(from:to:allowInsecureHTTP:)``
/// refuses before they are followed.
///
/// It asks for `Accept-Encoding: identity` and refuses a response whose `Content-Encoding` is anything else
/// (``FeedFetchError/encodedBody(contentEncoding:)``) before reading its body. URLSession decodes gzip, deflate,
/// brotli and zstd by itself and hands over the decoded bytes only later, on the delegate queue, so counting them
/// cannot stop the decoding in time: on Linux, a 1 MB gzip body expanding to 1 GiB took 1.1 GB of memory before
/// the cap was noticed.
///
/// ```swift
/// let loader = URLSessionFeedLoader()
/// let response = try await loader.load(URLRequest(url: url), options: FeedOptions())
/// ```
package final class URLSessionFeedLoader: FeedLoader {
    private let session: URLSession
    private let delegate: LoaderDelegate

    /// Creates a loader with its own session.
    ///
    /// ```swift
    /// let fetcher = FeedFetcher(url: url, prefs: prefs, loader: URLSessionFeedLoader())
    /// ```
    package init() {
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
    /// let response = try await URLSessionFeedLoader().load(URLRequest(url: url), options: FeedOptions())
    /// response.statusCode   // 200
    /// ```
    package func load(_ request: URLRequest, options limits: FeedOptions) async throws -> FeedResponse {
        var request = request
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
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
        var limits: FeedOptions
        var response: HTTPURLResponse?
        var body = Data()
        /// A failure decided by the delegate (too large, refused redirect), reported instead of the cancellation.
        var failure: FeedFetchError?
    }

    private let pending = Locked<[Int: Pending]>([:])

    func register(_ id: Int, continuation: CheckedContinuation<FeedResponse, any Error>, limits: FeedOptions) {
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
        // The transfer is paused until the completion handler runs, so a refusal here stops it before the body.
        if let http = response as? HTTPURLResponse, let encoding = Self.contentEncoding(http) {
            fail(dataTask, .encodedBody(contentEncoding: encoding))
            completionHandler(.cancel)
            return
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
        let original = task.originalRequest?.url ?? response.url
        if let target = request.url,
            original.map({ FeedURLPolicy.redirectRefusal(from: $0, to: target, allowInsecureHTTP: allowInsecure) != nil }) ?? true
        {
            // Not followed: the redirect response completes the task, which then reports this failure.
            // (Cancelling here as well crashes swift-corelibs-foundation, which still awaits this handler.)
            pending.withLock { $0[task.taskIdentifier]?.failure = .insecureRedirect(to: target) }
            completionHandler(nil)
            return
        }
        var next = request
        next.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        completionHandler(next)
    }

    /// The response's content coding when it is not identity: any `Content-Encoding` value but `identity` (or none).
    static func contentEncoding(_ response: HTTPURLResponse) -> String? {
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, name.lowercased() == "content-encoding", let value = value as? String else { continue }
            let codings = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            if codings.contains(where: { $0 != "identity" }) { return value }
        }
        return nil
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
