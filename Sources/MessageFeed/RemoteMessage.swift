import Foundation
internal import PrefsJSON

/// One validated message of a remote `messages.json` feed: what to show and whom to show it to.
///
/// The feed is a JSON array of objects (`id`, `bundleId`, `title`, `text`, `confirmLabel`, optional version lists and
/// link), with optional targeting fields added:
///
/// ```json
/// [
///   {
///     "id": 3,
///     "bundleId": "com.createchsol.AppAlertExample",
///     "title": "App Alert",
///     "text": "Warning: There is a bug in the application and I am working on it.",
///     "confirmLabel": "OK",
///     "appVersions": ["1.0"],
///     "osVersions": ["17.0.1", "17.2"],
///     "link": { "title": "More information", "url": "https://www.createchsol.com" },
///     "startsAt": "2026-03-01T00:00:00Z", "endsAt": "2026-04-01T00:00:00Z",
///     "priority": 1, "locales": ["en", "de"], "rolloutPercent": 50, "cancelled": false
///   }
/// ]
/// ```
///
/// Values are only ever made by the feed decoder (or by you, in tests and previews): every
/// field has passed validation, so a view can show one without further checks.
///
/// ```swift
/// if let message = center.pendingMessage {
///     print(message.title, message.text, message.link?.url as Any)
/// }
/// ```
public struct RemoteMessage: Sendable, Hashable, Identifiable {
    /// A button that opens a web page (or an app URL whose scheme the app allows).
    ///
    /// ```swift
    /// let link = RemoteMessage.Link(title: "More information", url: URL(string: "https://example.com")!)
    /// ```
    public struct Link: Sendable, Hashable {
        /// The button label, at most 100 characters.
        public var title: String
        /// Where the button leads: `http`, `https` or an allowed app scheme.
        public var url: URL

        /// Creates a link.
        ///
        /// ```swift
        /// RemoteMessage.Link(title: "Status page", url: URL(string: "https://status.example.com")!)
        /// ```
        public init(title: String, url: URL) {
            self.title = title
            self.url = url
        }
    }

    /// The message number; a message is shown when it is greater than the stored `lastMessageId`.
    public var id: Int
    /// The app the message is for, compared exactly with ``MessageContext/bundleIdentifier``.
    public var bundleId: String
    /// The alert title, at most 200 characters.
    public var title: String
    /// The alert text, at most 5,000 characters; may contain newlines.
    public var text: String
    /// The label of the button that dismisses the alert, at most 100 characters.
    public var confirmLabel: String
    /// An optional second button.
    public var link: Link?
    /// The app versions the message targets, as the feed writes them (`"1.0"`, `">=1.2 <2.0"`, `"17.*"`); nil when
    /// the feed sets none (every version). A list with no matching entry matches nothing.
    public var appVersions: [String]? {
        get { appVersionList?.entries.map(\.text) }
        set { appVersionList = newValue.map(VersionList.init(parsing:)) }
    }
    /// The OS versions the message targets, as the feed writes them; nil when the feed sets none (every version).
    public var osVersions: [String]? {
        get { osVersionList?.entries.map(\.text) }
        set { osVersionList = newValue.map(VersionList.init(parsing:)) }
    }
    /// ``appVersions`` parsed, as targeting reads them.
    var appVersionList: VersionList?
    /// ``osVersions`` parsed, as targeting reads them.
    var osVersionList: VersionList?
    /// `"cancelled": true` withdraws a message without changing its id.
    public var cancelled: Bool
    /// The first instant the message may be shown (inclusive), if any.
    public var startsAt: Date?
    /// The instant from which the message is no longer shown (exclusive), if any.
    public var endsAt: Date?
    /// Among eligible messages the highest priority wins, then the highest id. Default 0.
    public var priority: Int
    /// Language tags such as `en` or `pt-BR`; nil when the feed sets none (every locale).
    public var locales: [String]?
    /// The share of installations, 0 to 100, that see the message; nil means everyone.
    public var rolloutPercent: Int?
    /// The message's position in the feed array, so that `$[feedIndex]` names it in diagnostics.
    public var feedIndex: Int

    /// Creates a message; the defaults are those of a feed entry with only the required fields.
    ///
    /// ```swift
    /// let message = RemoteMessage(id: 1, bundleId: "com.example.app", title: "Hello",
    ///                             text: "We are fixing a bug.", confirmLabel: "OK")
    /// ```
    public init(
        id: Int,
        bundleId: String,
        title: String,
        text: String,
        confirmLabel: String,
        link: Link? = nil,
        appVersions: [String]? = nil,
        osVersions: [String]? = nil,
        cancelled: Bool = false,
        startsAt: Date? = nil,
        endsAt: Date? = nil,
        priority: Int = 0,
        locales: [String]? = nil,
        rolloutPercent: Int? = nil,
        feedIndex: Int = 0
    ) {
        self.id = id
        self.bundleId = bundleId
        self.title = title
        self.text = text
        self.confirmLabel = confirmLabel
        self.link = link
        appVersionList = appVersions.map(VersionList.init(parsing:))
        osVersionList = osVersions.map(VersionList.init(parsing:))
        self.cancelled = cancelled
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.priority = priority
        self.locales = locales
        self.rolloutPercent = rolloutPercent
        self.feedIndex = feedIndex
    }
}

/// The messages of a feed that passed validation, and what was wrong with the rest.
///
/// ```swift
/// let feed = try FeedDecoder.decode(data)
/// feed.messages.map(\.id)          // [1, 3]
/// feed.skippedIndexes              // [1]: $[1] was invalid
/// feed.issues.map(\.summary)       // ["$[1].id: expected an integer, found string"]
/// ```
package struct DecodedFeed: Sendable, Hashable {
    /// The valid messages, in feed order.
    package var messages: [RemoteMessage]
    /// Everything the decoder noticed, in document order: errors for skipped messages and invalid
    /// version entries, warnings for dropped links, unknown keys and control characters. At most
    /// ``FeedDecoder/maximumIssues``, then one at `$` counting the others.
    package var issues: [FeedIssue]
    /// The positions in the feed array of the entries that were skipped.
    package var skippedIndexes: [Int]

    /// Creates a decoded feed.
    ///
    /// ```swift
    /// let empty = DecodedFeed(messages: [], issues: [], skippedIndexes: [])
    /// ```
    package init(messages: [RemoteMessage], issues: [FeedIssue], skippedIndexes: [Int]) {
        self.messages = messages
        self.issues = issues
        self.skippedIndexes = skippedIndexes
    }
}
