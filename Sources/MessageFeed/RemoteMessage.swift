import Foundation
import PrefsSupport
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
/// A message of feed format 2 may also carry its own caps (`maxImpressions`, `minimumIntervalSeconds`), `conditions`
/// on the app's usage, `testDevices` and an `update`; it is then wrapped, `{"minimumReaderVersion": 2, "message": {…}}`,
/// so that release 0.2, which ignores members it does not know, skips it instead of showing it to everyone.
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
    /// Presentations of this message in all until it is acknowledged (the feed's `maxImpressions`), instead of the
    /// center's `ImpressionPolicy`; nil to follow the center.
    ///
    /// ```swift
    /// message.maximumImpressions   // 3: at most three launches show it unacknowledged
    /// ```
    public var maximumImpressions: Int?
    /// The shortest time between two presentations of this message (the feed's `minimumIntervalSeconds`), instead of the
    /// center's `ImpressionPolicy`; nil to follow the center.
    ///
    /// ```swift
    /// message.minimumInterval   // .seconds(86_400): at most once a day
    /// ```
    public var minimumInterval: Duration?
    /// The installations the message is for (the feed's `testDevices`: installation ids, as `prefs-tool messages
    /// device-id` prints them, compared ignoring case); nil for every installation. A listed installation is inside any
    /// `rolloutPercent`.
    ///
    /// ```swift
    /// message.testDevices   // ["6F1C2A9E-…"]: QA's phone only
    /// ```
    public var testDevices: [String]?
    /// Set for an "update available" message (the feed's `update`): shown while the app is below a version, once that
    /// version has been out for a while.
    ///
    /// ```swift
    /// if let update = message.update { print(update.recommendedVersion ?? "", update.minimumVersion ?? "") }
    /// ```
    public var update: Update?
    /// The feed's `conditions`, which a `MessageCenter` judges on the store's usage. Package API.
    package var conditions: FeedCondition?
    /// Whether the feed wraps the message in `{"minimumReaderVersion": N, "message": {…}}`, so that diagnostics name
    /// `$[i].message`.
    var isWrapped = false

    /// Where the message object is in the feed: `$[i]`, or `$[i].message` when it is wrapped.
    var feedPath: JSONPath {
        isWrapped ? JSONPath.root / feedIndex / "message" : JSONPath.root / feedIndex
    }

    /// "Update available": the versions the app should be at, and when the newest was released. Below
    /// ``minimumVersion`` the update is required: the message shows at every refresh and cannot be skipped; below
    /// ``recommendedVersion`` it is recommended: "skip this version" hides it until a higher version is recommended. It
    /// shows only once ``releasedAt`` is ``minimumAge`` in the past, so an app store that does not serve the version yet
    /// in the user's region sends nobody in a loop.
    ///
    /// ```swift
    /// let update = RemoteMessage.Update(recommendedVersion: "2.4", minimumVersion: "2.0",
    ///                                   releasedAt: Date(timeIntervalSince1970: 1_772_323_200), minimumAge: .seconds(3 * 86_400))
    /// ```
    public struct Update: Sendable, Hashable {
        /// The version users should update to (`"2.4"`); nil when only ``minimumVersion`` is given.
        public var recommendedVersion: String?
        /// Below this version the update is required; nil for none.
        public var minimumVersion: String?
        /// When the newest version named here was released.
        public var releasedAt: Date
        /// How long after ``releasedAt`` the message starts to show (the feed's `minimumAgeSeconds`, one day by default).
        public var minimumAge: Duration

        /// Creates an update; give at least one of the two versions (digits and dots: `"2.4"`).
        ///
        /// ```swift
        /// RemoteMessage.Update(minimumVersion: "2.0", releasedAt: releaseDate)   // required below 2.0, from a day after release
        /// ```
        public init(recommendedVersion: String? = nil, minimumVersion: String? = nil, releasedAt: Date, minimumAge: Duration = .seconds(86_400)) {
            self.recommendedVersion = recommendedVersion
            self.minimumVersion = minimumVersion
            self.releasedAt = releasedAt
            self.minimumAge = minimumAge
        }

        /// Whether `appVersion` is below ``minimumVersion`` (a pre-release is below its release): the update is
        /// required. Package API.
        package func isRequired(forAppVersion appVersion: String) -> Bool {
            guard let minimum = minimumVersion.flatMap({ Version($0) }), let running = RunningVersion(appVersion) else { return false }
            return running.isBelow(minimum)
        }

        /// When the message starts to show: ``releasedAt`` plus ``minimumAge``.
        package var showsFrom: Date {
            releasedAt.addingTimeInterval(max(0, minimumAge.timeInterval))
        }
    }

    /// Creates a message; the defaults are those of a feed entry with only the required fields. (A message's
    /// `conditions` come from a feed only.)
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
        feedIndex: Int = 0,
        maximumImpressions: Int? = nil,
        minimumInterval: Duration? = nil,
        testDevices: [String]? = nil,
        update: Update? = nil
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
        self.maximumImpressions = maximumImpressions
        self.minimumInterval = minimumInterval
        self.testDevices = testDevices
        self.update = update
    }
}

extension RunningVersion {
    /// Whether this version comes before `version`: a lower release, or a pre-release of it (`2.4-beta` is below 2.4).
    package func isBelow(_ version: Version) -> Bool {
        release < version || (release == version && preRelease != nil)
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
