import MessageFeed
import Foundation
import Prefs

/// What ``FeedFetcher/fetch(force:)`` produced: the feed to use, where it came from, and what went wrong.
///
/// ```swift
/// let result = await fetcher.fetch()
/// switch result.source {
/// case .network, .notModified: print("fresh")
/// case .cache: print("last good feed from \(result.fetchedAt!)")
/// case .none: print("no feed: \(result.error!)")
/// }
/// ```
package struct FeedFetchResult: Sendable, Hashable {
    /// Where the feed came from.
    ///
    /// ```swift
    /// result.source == .notModified   // a 304 confirmed the stored body
    /// ```
    package enum Source: String, Sendable, Hashable {
        /// A 200 (or a `file://` read) delivered it just now.
        case network
        /// A 304 confirmed the stored body.
        case notModified
        /// The stored last good feed, because it is fresh (max-age), or a fetch failed or was not attempted.
        case cache
        /// There is no feed to use.
        case none
    }

    /// Where ``feed`` came from.
    package var source: Source
    /// The feed to use, or nil.
    package var feed: DecodedFeed?
    /// When ``feed`` was fetched or last confirmed.
    package var fetchedAt: Date?
    /// What went wrong with the feed, if anything: a failed fetch (the last good feed may still be used), a backoff,
    /// a refused URL.
    package var error: FeedFetchError?
    /// The store's failure to write the feed cache, if any: not the feed's fault, so not in ``error``.
    package var storeError: PrefsError?
    /// Whether a request reached the network (always false for refused URLs and `file://`).
    package var requestSent: Bool

    /// Creates a result.
    ///
    /// ```swift
    /// FeedFetchResult(source: .none, feed: nil, fetchedAt: nil, error: .timedOut(after: .seconds(10)), requestSent: true)
    /// ```
    package init(source: Source, feed: DecodedFeed?, fetchedAt: Date?, error: FeedFetchError?, requestSent: Bool, storeError: PrefsError? = nil) {
        self.source = source
        self.feed = feed
        self.fetchedAt = fetchedAt
        self.error = error
        self.requestSent = requestSent
        self.storeError = storeError
    }
}
