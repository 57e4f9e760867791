import Foundation

/// How a `MessageCenter` fetches its feed: timeout, size cap, how long the last good feed is used, backoff,
/// and the link schemes kept. Every value has a default; set only what the app needs.
///
/// ```swift
/// var options = FeedOptions()
/// options.timeout = .seconds(5)
/// options.maximumCacheAge = .seconds(2 * 86_400)
/// ```
public struct FeedOptions: Sendable, Hashable {
    /// How long a request may take in all. Default 10 s.
    public var timeout: Duration
    /// The largest accepted body, counted after any content decoding. Default 1 MiB.
    public var maximumBytes: Int
    /// Allows `http` to public hosts (and redirects there). Default false; loopback is always allowed.
    public var allowInsecureHTTP: Bool
    /// How long the last good feed may be used when fetching fails. Default 7 days.
    public var maximumCacheAge: Duration
    /// The backoff after the server's first 429 or 5xx, before jitter; it doubles with each one in a row. Default 60 s.
    /// A failed connection or a timeout starts no backoff.
    public var initialBackoff: Duration
    /// The longest backoff, before jitter, and the longest `Retry-After` honoured. Default 1 hour.
    public var maximumBackoff: Duration
    /// URL schemes kept in links besides `http` and `https`, e.g. the app's own (`myapp`); compared case-insensitively.
    /// A link with another scheme is dropped, and the message still shows.
    public var allowedLinkSchemes: Set<String>

    /// Creates options; every parameter has the documented default.
    ///
    /// ```swift
    /// let options = FeedOptions(timeout: .seconds(5), allowedLinkSchemes: ["myapp"])
    /// ```
    public init(
        timeout: Duration = .seconds(10),
        maximumBytes: Int = 1 << 20,
        allowInsecureHTTP: Bool = false,
        maximumCacheAge: Duration = .seconds(7 * 86_400),
        initialBackoff: Duration = .seconds(60),
        maximumBackoff: Duration = .seconds(3_600),
        allowedLinkSchemes: Set<String> = []
    ) {
        self.timeout = timeout
        self.maximumBytes = maximumBytes
        self.allowInsecureHTTP = allowInsecureHTTP
        self.maximumCacheAge = maximumCacheAge
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.allowedLinkSchemes = allowedLinkSchemes
    }
}
