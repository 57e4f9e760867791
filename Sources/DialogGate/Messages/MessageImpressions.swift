import Foundation
import PrefsSupport
@_spi(Tooling) import MessageFeed
@_spi(Tooling) import Prefs
internal import PrefsJSON

/// How often a message the user has not acknowledged may be shown again. The default shows it at every refresh
/// until it is acknowledged, as the seed did; an app that shows its feed at launch usually wants a cap:
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

extension MessageCenter {
    /// Of the report's eligible messages, the one to present under the impression policy: the preferred one
    /// (priority, then id) that the policy still allows. Records its impression when the policy limits them.
    func selectRespectingImpressions(_ report: TargetingReport, now: Date) -> RemoteMessage? {
        guard impressionPolicy.limits else { return report.selected }
        let key = impressionsKey, policy = impressionPolicy
        do {
            return try prefs.transaction { transaction -> RemoteMessage? in
                let stored = try transaction.value(for: key)
                var log = stored.reanchored(now: now)  // kept, so a wait does not restart at every refresh
                let selected = report.evaluations.filter(\.isEligible).map(\.message)
                    .filter { log.allows($0.id, policy, now: now) }
                    .min(by: MessageTargeting.isPreferred)
                if let selected {
                    let count = (log.messages[String(selected.id)]?.count ?? 0) + 1
                    log.messages[String(selected.id)] = MessageImpressions.Entry(count: count, last: now)
                }
                if log != stored { try transaction.set(log, for: key) }
                return selected
            }
        } catch {
            lastError = .storeFailed(error)
            return nil  // an impression that cannot be counted could exceed the cap: show nothing this time
        }
    }
}
