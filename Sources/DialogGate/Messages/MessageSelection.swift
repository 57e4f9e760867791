import Foundation
import MessageFeed

/// Which message of a feed to show, and why each message is eligible or not: the targeting a ``MessageCenter``
/// applies at every refresh, as a pure function of the messages, the running app, the date, the last acknowledged id
/// and the installation id. No network and no store: a test checks a feed's targeting with it, a debug screen says
/// why a message does not show.
///
/// A message is eligible when every rule passes: it is for this app, its id is above `lastMessageId` (or in
/// `passedOver`), it is not cancelled, the date is within `startsAt ..< endsAt`, the app and OS versions match their
/// lists, the locale falls under one of `locales`, the installation's rollout bucket is below `rolloutPercent`, it is one
/// of `testDevices`, and an update's versions and release date allow it. Among the eligible messages the highest
/// `priority` wins, then the highest id. A center then applies what its store knows beyond this: a message's
/// conditions on the app's usage (here, without a store, they count as unmet), the version the user skipped, the
/// gate's display frequency, its ``ImpressionPolicy`` and the message's own caps, and whether another window presents
/// a message already.
///
/// ```swift
/// let messages = [
///     RemoteMessage(id: 3, bundleId: "com.example.app", title: "New", text: "…", confirmLabel: "OK"),
///     RemoteMessage(id: 4, bundleId: "com.example.app", title: "Beta", text: "…", confirmLabel: "OK",
///                   appVersions: [">=3.0"]),
/// ]
/// let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "17.2",
///                              localeIdentifier: "en_US")
/// let selection = MessageSelection(messages, context: context, now: Date(), lastMessageId: 2,
///                                  installationId: center.installationId())
/// selection.message?.id           // 3
/// selection.reasons(against: 4)   // ["appVersions (2.1 matches none of [\">=3.0\"])"]
/// print(selection)                // every rule of every message, pass or fail, then "selected: message 3 at $[0]"
/// ```
public struct MessageSelection: Sendable, Hashable, CustomStringConvertible {
    /// Every check of every message: the same report `prefs-tool feed explain` prints.
    private let report: TargetingReport

    /// Applies every targeting rule to every message and selects one.
    ///
    /// - Parameters:
    ///   - messages: the feed's messages, in feed order.
    ///   - context: the running app: bundle identifier, app and OS versions, locale.
    ///   - now: the date `startsAt` and `endsAt` are compared with.
    ///   - lastMessageId: the id of the last message acknowledged (``MessageCenter/lastMessageId``); 0 before any.
    ///   - passedOver: ids not above `lastMessageId` that stay eligible: they were in the feed, unacknowledged, when a
    ///     higher id was acknowledged (``MessageCenter/passedOverKey``).
    ///   - installationId: the installation's id, which places it in each message's rollout
    ///     (``MessageCenter/installationId()``).
    ///
    /// ```swift
    /// let selection = MessageSelection(messages, context: context, now: Date(), lastMessageId: 0,
    ///                                  installationId: "6F1C2A9E")
    /// ```
    public init(
        _ messages: [RemoteMessage], context: MessageContext, now: Date, lastMessageId: Int, passedOver: Set<Int> = [],
        installationId: String
    ) {
        report = MessageTargeting.explain(
            messages, context: context, now: now, lastMessageId: lastMessageId, passedOver: passedOver, installationId: installationId)
    }

    /// The message to show: among the eligible ones the highest priority, then the highest id; nil when none is
    /// eligible.
    ///
    /// ```swift
    /// if let message = selection.message { print(message.title) }
    /// ```
    public var message: RemoteMessage? { report.selected }

    /// Every eligible message, in feed order; ``message`` is one of them.
    ///
    /// ```swift
    /// selection.eligible.map(\.id)   // [3, 5]
    /// ```
    public var eligible: [RemoteMessage] { report.eligible }

    /// Why the message with id `messageId` is not eligible: the rules it fails, in the order they are checked, each
    /// with the values compared. Empty when it is eligible, or when no message has that id.
    ///
    /// ```swift
    /// selection.reasons(against: 7)   // ["id > lastMessageId (7 is not > 9)", "cancelled (cancelled in the feed)"]
    /// ```
    public func reasons(against messageId: Int) -> [String] {
        report.evaluations.first { $0.message.id == messageId }?.failedChecks.map(\.summary) ?? []
    }

    /// Each message with every rule, `pass` or `fail` and the values compared, then `selected: message N at $[i]` or
    /// `selected: none`.
    ///
    /// ```swift
    /// print(selection)
    /// // message 3 at $[0]: eligible
    /// //   pass: bundleId ("com.example.app" == "com.example.app")
    /// //   …
    /// // selected: message 3 at $[0]
    /// ```
    public var description: String { report.description }
}
