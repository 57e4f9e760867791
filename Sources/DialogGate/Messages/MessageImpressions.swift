import Foundation
import PrefsSupport
import MessageFeed
import Prefs
internal import PrefsJSON

/// How often a message the user has not acknowledged may be shown again. The default shows it at every refresh
/// until it is acknowledged; an app that shows its feed at launch usually wants a cap (a message's own
/// `maxImpressions` and `minimumIntervalSeconds` in the feed replace these for it):
///
/// ```swift
/// let center = MessageCenter(feedURL: url, prefs: prefs, context: context,
///                            impressions: ImpressionPolicy(maximumImpressions: 3, minimumInterval: .seconds(86_400)))
/// ```
public struct ImpressionPolicy: Sendable, Hashable {
    /// Presentations of one message in all, until acknowledged; nil for no limit.
    public var maximumImpressions: Int?
    /// The shortest time between two presentations of one message; nil for none.
    public var minimumInterval: Duration?

    public init(maximumImpressions: Int? = nil, minimumInterval: Duration? = nil) {
        self.maximumImpressions = maximumImpressions
        self.minimumInterval = minimumInterval
    }

    /// Whether the policy limits anything (only then are impressions stored).
    var limits: Bool { maximumImpressions != nil || minimumInterval != nil }
}

/// How many times each message was presented without being acknowledged, and when last: stored under
/// `lastMessageId.impressions` (beside the center's `lastMessageId` key) when an ``ImpressionPolicy`` limits them,
/// as `{"messages": {"7": {"count": 2, "last": "2026-03-01T12:00:00Z"}}}`.
struct MessageImpressions: Codable, Hashable, Sendable, PrefsStorable {
    /// One message's impressions.
    struct Entry: Codable, Hashable, Sendable {
        var count: Int
        var last: Date
        /// When the clock was first seen behind `last` (see ``ClockRule``); nil while it is not.
        var reanchoredAt: Date?

        init(count: Int, last: Date, reanchoredAt: Date? = nil) {
            self.count = count
            self.last = last
            self.reanchoredAt = reanchoredAt
        }
    }

    /// By message id, as a string (JSON object keys).
    var messages: [String: Entry] = [:]

    /// Whether message `id` may be presented at `now` under `policy`. While the clock is behind the last impression
    /// (set back), the interval runs from when that was first seen (``ClockRule``), as every wait does.
    func allows(_ id: Int, _ policy: ImpressionPolicy, now: Date) -> Bool {
        guard let entry = messages[String(id)] else { return true }
        if let maximum = policy.maximumImpressions, entry.count >= maximum { return false }
        if let interval = policy.minimumInterval,
            now < ClockRule.end(of: interval.timeInterval, from: entry.last, anchor: entry.reanchoredAt, now: now)
        {
            return false
        }
        return true
    }

    /// The impressions with their clock anchors brought up to `now`.
    func reanchored(now: Date) -> MessageImpressions {
        var copy = self
        for (id, entry) in messages {
            copy.messages[id]?.reanchoredAt = ClockRule.anchor(entry.reanchoredAt, behind: entry.last, now: now)
        }
        return copy
    }
}
