import CCurlShim
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MessageFeed
import Prefs
import PrefsSupport

/// The default ``FeedLoader`` where libcurl can be loaded (Linux): ``CurlFeedLoader`` when it is available, else
/// ``URLSessionFeedLoader``.
///
/// ```swift
/// let loader = FeedLoaders.standard()
/// ```
package enum FeedLoaders {
    /// A new default loader.
    package static func standard() -> any FeedLoader {
        CurlFeedLoader.isAvailable ? CurlFeedLoader() : URLSessionFeedLoader()
    }

    /// Loads `url` once with the standard loader, as ``FeedFetcher`` requests it but without a cache: one deadline,
    /// `options.timeout`, for the whole load, redirects included (a redirect does not restart it), then
    /// ``FeedFetchError/timedOut(after:)``. For tools that read a feed (`prefs-tool feed lint URL`, `feed explain URL`).
    ///
    /// ```swift
    /// let response = try await FeedLoaders.load(url, options: FeedOptions(timeout: .seconds(10)))
    /// ```
    package static func load(_ url: URL, options: FeedOptions) async throws -> FeedResponse {
        var request = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: max(1, options.timeout.timeInterval.rounded(.up)))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let loader = standard(), sent = request
        return try await Deadline.run(options.timeout, orThrow: { FeedFetchError.timedOut(after: $0) }) {
            try await loader.load(sent, options: options)
        }
    }
}

/// A ``FeedLoader`` that drives libcurl itself (the libcurl FoundationNetworking uses on Linux, loaded with
/// `dlopen`), so that every byte of the body passes through a callback that runs before the next is read.
///
/// URLSession on Linux decodes gzip, deflate, brotli and zstd inside libcurl and queues the decoded bytes for its
/// delegate, while libcurl reads on: no size check in the delegate can stop a gzip bomb before it fills the memory
/// (a 1 MB body expanding to 1 GiB took 1.1 GB there). This loader asks for `Accept-Encoding: identity`, still
/// decodes a body a server encodes anyway, and stops the transfer inside the write callback as soon as the decoded
/// bytes pass `FeedOptions.maximumBytes`; memory stays at the cap plus one 16 KiB chunk, whatever the encoding.
/// Redirects are followed here, each checked with ``FeedURLPolicy/redirectRefusal(from:to:allowInsecureHTTP:)``
/// before it is requested (at most 10). Header values with control characters are not sent. Only GET.
///
/// ```swift
/// let response = try await CurlFeedLoader().load(URLRequest(url: url), options: FeedOptions())
/// ```
final class CurlFeedLoader: FeedLoader {
    /// Whether libcurl could be loaded: always false except on Linux.
    static var isAvailable: Bool { prefs_curl_available() == 1 }

    /// The most redirects followed for one request.
    static let maximumRedirects = 10
    /// The most bytes of response header fields kept for one response.
    static let maximumHeaderBytes = 256 << 10

    /// Creates a loader.
    init() {}

    /// Sends `request` (a GET); see ``FeedLoader``.
    func load(_ request: URLRequest, options limits: FeedOptions) async throws -> FeedResponse {
        guard Self.isAvailable else { throw FeedFetchError.transport("libcurl could not be loaded") }
        let cancelled = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FeedResponse, any Error>) in
                // libcurl's easy interface blocks: one thread per request, never a pool thread.
                let thread = Thread {
                    continuation.resume(with: Result { try Self.perform(request, limits: limits, cancelled: cancelled) })
                }
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// The request, its redirects followed one by one under the policy, all within the request's timeout: each hop
    /// gets what is left of it, so redirects never restart it.
    private static func perform(_ request: URLRequest, limits: FeedOptions, cancelled: CancelFlag) throws -> FeedResponse {
        guard let original = request.url else { throw FeedFetchError.transport("the request has no URL") }
        var url = original
        let timeout = request.timeoutInterval > 0 ? Duration.milliseconds(Int64(min(request.timeoutInterval, 86_400) * 1000)) : nil
        let deadline = timeout.map { ContinuousClock.now + $0 }
        for _ in 0...maximumRedirects {
            var remaining: Duration?
            if let timeout, let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw FeedFetchError.timedOut(after: timeout) }
                remaining = left
            }
            let transfer = Transfer(limits: limits, cancelled: cancelled)
            let (status, location) = try transfer.run(url: url, request: request, timeout: remaining, of: timeout)
            guard [301, 302, 303, 307, 308].contains(status), let location, let target = URL(string: location) else {
                return FeedResponse(statusCode: status, headers: transfer.headers, body: transfer.body)
            }
            if let refusal = FeedURLPolicy.redirectRefusal(from: original, to: target, allowInsecureHTTP: limits.allowInsecureHTTP) {
                throw refusal
            }
            url = target
        }
        throw FeedFetchError.transport("more than \(maximumRedirects) redirects")
    }

    /// Set once the caller's task is cancelled; libcurl's callbacks read it.
    private final class CancelFlag: Sendable {
        private let value = Locked(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// One libcurl transfer: its handle, the headers and body received, and why the callbacks stopped it.
    private final class Transfer {
        let limits: FeedOptions
        let cancelled: CancelFlag
        var headers: [String: String] = [:]
        var headerBytes = 0
        /// The status of the response whose header fields are arriving.
        var status = 0
        var body = Data()
        var failure: FeedFetchError?

        init(limits: FeedOptions, cancelled: CancelFlag) {
            self.limits = limits
            self.cancelled = cancelled
        }

        /// `CURLE_OPERATION_TIMEDOUT`: the transfer ran out of the time it was given.
        static let operationTimedOut: Int32 = 28

        /// Performs a GET of `url` with `request`'s header fields, within `remaining` of the request's `total` timeout
        /// (nil: no timeout); returns the status and the redirect target.
        func run(url: URL, request: URLRequest, timeout remaining: Duration?, of total: Duration?) throws -> (status: Int, location: String?) {
            guard let handle = prefs_curl_easy_init() else { throw FeedFetchError.transport("libcurl could not start a transfer") }
            defer { prefs_curl_easy_cleanup(handle) }
            var list: UnsafeMutableRawPointer?
            defer { prefs_curl_slist_free_all(list) }
            var fields = request.allHTTPHeaderFields ?? [:]
            fields = fields.filter { $0.key.lowercased() != "accept-encoding" }
            fields["Accept-Encoding"] = "identity"
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                // A value with CR, LF or another control character would be a header injection: not sent.
                guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && $0 != ":" }),
                    !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
                else { continue }
                list = prefs_curl_slist_append(list, "\(name): \(value)")
            }
            let context = Unmanaged.passUnretained(self).toOpaque()
            // 0 is no timeout for libcurl: what is left of the request's, at least 1 ms.
            let timeout = remaining.map { max(1, Int($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)) } ?? 0
            var setup: [Int32] = [
                prefs_curl_setopt_pointer(handle, Option.url, url.absoluteString),
                prefs_curl_setopt_long(handle, Option.noSignal, 1),
                prefs_curl_setopt_long(handle, Option.followLocation, 0),
                prefs_curl_setopt_long(handle, Option.httpGet, 1),
                prefs_curl_setopt_pointer(handle, Option.httpHeader, list),
                // "" enables every decoder libcurl has, for a server that encodes although identity was asked for;
                // the Accept-Encoding field above replaces the one libcurl would send.
                prefs_curl_setopt_pointer(handle, Option.acceptEncoding, ""),
                prefs_curl_setopt_long(handle, Option.timeoutMilliseconds, timeout),
                prefs_curl_setopt_pointer(handle, Option.writeData, context),
                prefs_curl_setopt_data_callback(
                    handle, Option.writeFunction,
                    { data, size, count, context in
                        guard let data, let context else { return 0 }
                        return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().received(data, size * count)
                    }),
                prefs_curl_setopt_pointer(handle, Option.headerData, context),
                prefs_curl_setopt_data_callback(
                    handle, Option.headerFunction,
                    { data, size, count, context in
                        guard let data, let context else { return 0 }
                        return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().receivedHeader(data, size * count)
                    }),
                prefs_curl_setopt_long(handle, Option.noProgress, 0),
                prefs_curl_setopt_pointer(handle, Option.progressData, context),
                prefs_curl_setopt_progress_callback(
                    handle, Option.progressFunction,
                    { context, _, _, _, _ in
                        guard let context else { return 1 }
                        return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().cancelled.isSet ? 1 : 0
                    }),
            ]
            // http and https only, even if a proxy or a later libcurl would offer more (unknown before 7.85: ignored).
            _ = prefs_curl_setopt_pointer(handle, Option.protocols, "http,https")
            setup.removeAll { $0 == 0 }
            if let code = setup.first { throw FeedFetchError.transport("libcurl: \(String(cString: prefs_curl_strerror(code)))") }
            let code = withExtendedLifetime(self) { prefs_curl_easy_perform(handle) }
            if let failure { throw failure }
            if cancelled.isSet { throw CancellationError() }
            guard code == 0 else {
                if code == Self.operationTimedOut, let total { throw FeedFetchError.timedOut(after: total) }
                throw FeedFetchError.transport("\(String(cString: prefs_curl_strerror(code))) (libcurl error \(code))")
            }
            var status = 0
            _ = prefs_curl_getinfo_long(handle, Info.responseCode, &status)
            var redirect: UnsafePointer<CChar>?
            _ = prefs_curl_getinfo_string(handle, Info.redirectURL, &redirect)
            return (status, redirect.map { String(cString: $0) })
        }

        /// A chunk of the (decoded) body: kept while the total stays within the limit; past it, the transfer stops
        /// here, before libcurl reads or decodes anything more.
        func received(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
            if cancelled.isSet { return 0 }
            guard body.count + count <= limits.maximumBytes else {
                failure = .tooLarge(bytes: body.count + count, limit: limits.maximumBytes)
                return 0  // CURLE_WRITE_ERROR
            }
            data.withMemoryRebound(to: UInt8.self, capacity: count) { body.append($0, count: count) }
            return count
        }

        /// One header line, or a status line that starts a new response (after a 1xx).
        func receivedHeader(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
            headerBytes += count
            guard headerBytes <= CurlFeedLoader.maximumHeaderBytes else {
                failure = .transport("the response header fields are over \(CurlFeedLoader.maximumHeaderBytes) bytes")
                return 0
            }
            let line = data.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
            if line.hasPrefix("HTTP/") {
                headers = [:]
                status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                return count
            }
            guard let colon = line.firstIndex(of: ":") else { return count }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n"))
            // A repeated field is combined as RFC 9110 §5.3 says.
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            // A declared length over the limit is refused before any of the body is read (not a redirect's body).
            if name == "content-length", !(300..<400).contains(status), let length = Int(value), length > limits.maximumBytes {
                failure = .tooLarge(bytes: length, limit: limits.maximumBytes)
                return 0
            }
            return count
        }
    }

    /// libcurl option numbers (`CURLOPT_*`: a type base plus a number, stable across releases).
    private enum Option {
        static let writeData: Int32 = 10_001
        static let url: Int32 = 10_002
        static let writeFunction: Int32 = 20_011
        static let httpHeader: Int32 = 10_023
        static let headerData: Int32 = 10_029
        static let noProgress: Int32 = 43
        static let followLocation: Int32 = 52
        static let progressData: Int32 = 10_057
        static let headerFunction: Int32 = 20_079
        static let httpGet: Int32 = 80
        static let noSignal: Int32 = 99
        static let acceptEncoding: Int32 = 10_102
        static let timeoutMilliseconds: Int32 = 155
        static let progressFunction: Int32 = 20_219  // CURLOPT_XFERINFOFUNCTION
        static let protocols: Int32 = 10_318  // CURLOPT_PROTOCOLS_STR
    }

    /// libcurl info numbers (`CURLINFO_*`).
    private enum Info {
        static let responseCode: Int32 = 0x20_0002
        static let redirectURL: Int32 = 0x10_001F
    }
}
