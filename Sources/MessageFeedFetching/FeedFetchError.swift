import Foundation
import MessageFeed
import Prefs
internal import PrefsJSON

/// Why a feed could not be fetched (or why no request was made). `MessageCenter` never throws; it
/// shows these in `MessageCenter/lastError`.
///
/// ```swift
/// if let error = center.lastError { print(error) }   // e.g. "HTTP status 503 from https://…"
/// ```
public enum FeedFetchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `http` to a host that is not loopback, without `FeedOptions.allowInsecureHTTP`; refused
    /// before connecting.
    case insecureURL(URL)
    /// A scheme other than `https`, `http` and `file`.
    case unsupportedScheme(URL)
    /// The server redirected to a URL that the same rules refuse (such as `http` to a public host), or to a loopback
    /// host from a feed that is not on one.
    case insecureRedirect(to: URL)
    /// A status other than 200, 304, 404 and 410. 429 and 5xx also start a backoff (see ``isRetryable``).
    case httpStatus(Int, url: URL)
    /// 404 or 410: the publisher removed the feed. The last good feed is dropped, so nothing is shown.
    case feedRemoved(status: Int, url: URL)
    /// No complete response within the timeout.
    case timedOut(after: Duration)
    /// The body is larger than allowed: `bytes` is the declared `Content-Length` or what had arrived.
    case tooLarge(bytes: Int, limit: Int)
    /// The server encoded the body (`Content-Encoding`, such as `gzip`) although the request asked for `identity`:
    /// refused before any of it is decoded, since a few kilobytes of gzip can decode to gigabytes.
    case encodedBody(contentEncoding: String)
    /// The request failed below HTTP (connection refused, DNS, TLS…).
    case transport(String)
    /// The body is not JSON or not an array; the last good feed is kept.
    case invalidFeed(FeedIssue)
    /// A 304 arrived but no body is stored to reuse.
    case notModifiedWithoutCachedFeed
    /// A `file://` feed could not be read.
    case unreadableFile(path: String, reason: String)
    /// No request was made: an earlier failure set a retry date that has not come yet.
    case backingOff(until: Date, failures: Int)
    /// The stored value of `key` (`lastMessageId`) is not a whole number: no message is shown, and none is
    /// acknowledged, until it is reset (`prefs-tool reset lastMessageId`) or fixed.
    case unreadableState(key: String, reason: String)

    /// Whether the failure starts or extends a backoff: a 429 or a 5xx, the server's own answer that it wants fewer
    /// requests. A backoff protects the server; a failed connection or a timeout says nothing about it (the device was
    /// offline, a captive portal, a tunnel), so they start none, and the next launch or refresh asks again.
    ///
    /// ```swift
    /// FeedFetchError.httpStatus(503, url: url).isRetryable   // true
    /// FeedFetchError.httpStatus(404, url: url).isRetryable   // false
    /// FeedFetchError.transport("Could not connect to the server").isRetryable   // false
    /// ```
    public var isRetryable: Bool {
        switch self {
        case .httpStatus(let code, _): code == 429 || (500...599).contains(code)
        default: false
        }
    }

    /// Whether the failure happened before the server answered (no connection, a timeout): it says nothing about the
    /// server, so it leaves the count of the server's failures (which lengthens a backoff) as it is.
    var isBeforeAnswer: Bool {
        switch self {
        case .timedOut, .transport: true
        default: false
        }
    }

    /// One line saying what failed, e.g. `timed out after 0.3 seconds`.
    public var description: String {
        switch self {
        case .insecureURL(let url):
            "refusing \(url.absoluteString): only https is allowed, except for loopback hosts or with allowInsecureHTTP"
        case .unsupportedScheme(let url):
            "refusing \(url.absoluteString): the scheme is not https, http or file"
        case .insecureRedirect(let url):
            if FeedURLPolicy.isLocalHost(url.host ?? "") {
                "refusing the redirect to \(url.absoluteString): only a feed on a loopback host may redirect to one"
            } else {
                "refusing the redirect to \(url.absoluteString): only https is allowed, except for loopback hosts or with allowInsecureHTTP"
            }
        case .httpStatus(let code, let url):
            "HTTP status \(code) from \(url.absoluteString)"
        case .feedRemoved(let code, let url):
            "HTTP status \(code) from \(url.absoluteString): the feed was removed, so no message is shown"
        case .timedOut(let duration):
            "timed out after \(Self.seconds(duration)) seconds"
        case .tooLarge(let bytes, let limit):
            "the feed is \(bytes) bytes or more, larger than the limit of \(limit) bytes"
        case .encodedBody(let encoding):
            "refusing a body sent with Content-Encoding \(Self.quotedHeader(encoding)): the request asked for identity, and an encoded body's size is unknown until it is decoded"
        case .transport(let reason):
            "the request failed: \(reason)"
        case .invalidFeed(let issue):
            "invalid feed: \(issue); the last good feed is kept"
        case .notModifiedWithoutCachedFeed:
            "the server answered 304 Not Modified but no feed is stored"
        case .unreadableFile(let path, let reason):
            "cannot read \(path): \(reason)"
        case .backingOff(let until, let failures):
            "not fetching before \(ISO8601.format(until)) after \(failures) failure\(failures == 1 ? "" : "s") in a row"
        case .unreadableState(let key, let reason):
            "the stored \(key) cannot be read: \(reason); no message is shown until it is reset"
        }
    }

    /// A header value as sent, in quotes, with control characters escaped and at most 64 characters.
    static func quotedHeader(_ value: String) -> String {
        var text = ""
        for scalar in value.unicodeScalars.prefix(64) {
            text +=
                scalar.properties.generalCategory == .control || scalar == "\"" || scalar == "\\"
                ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return "\"\(text)\(value.unicodeScalars.count > 64 ? "…" : "")\""
    }

    /// A duration in seconds to the millisecond, without trailing zeros: `0.3`, `10`, `1.25`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
        let whole = milliseconds / 1_000, fraction = abs(milliseconds % 1_000)
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}

// Hashable by hand, each case comparing its payload.
extension FeedFetchError {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.insecureURL(let a), .insecureURL(let b)), (.unsupportedScheme(let a), .unsupportedScheme(let b)),
            (.insecureRedirect(let a), .insecureRedirect(let b)):
            a == b
        case (.httpStatus(let a, let url), .httpStatus(let b, let other)), (.feedRemoved(let a, let url), .feedRemoved(let b, let other)):
            a == b && url == other
        case (.timedOut(let a), .timedOut(let b)): a == b
        case (.tooLarge(let a, let limit), .tooLarge(let b, let other)): a == b && limit == other
        case (.encodedBody(let a), .encodedBody(let b)), (.transport(let a), .transport(let b)): a == b
        case (.invalidFeed(let a), .invalidFeed(let b)): a == b
        case (.notModifiedWithoutCachedFeed, .notModifiedWithoutCachedFeed): true
        case (.unreadableFile(let a, let reason), .unreadableFile(let b, let other)),
            (.unreadableState(let a, let reason), .unreadableState(let b, let other)):
            a == b && reason == other
        case (.backingOff(let a, let failures), .backingOff(let b, let other)): a == b && failures == other
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        // The description covers every payload, so equal values hash alike.
        hasher.combine(description)
    }
}
