import Foundation
internal import PrefsJSON

/// Checks a feed document before it is published: everything ``FeedDecoder`` reports, plus warnings about
/// messages that can never be shown and links that should be `https`.
///
/// Errors: invalid JSON (with the parser's line:column), a top level that is not an array, wrong types,
/// missing required keys, duplicate keys in one object, duplicate ids within one bundle, ids that are not
/// positive integers, unparseable version entries, unparseable dates and dates without a time zone,
/// `rolloutPercent` outside 0...100, over-long texts, invalid language tags, a key that differs from a
/// known one only in case (`appversions` → did you mean `appVersions`), which skips its message, and, in feed format 2,
/// a member of format 2 in a message that is not wrapped, an unknown condition, event or update key (with the nearest
/// name), and a bad count, duration or version.
///
/// Warnings: other unknown keys (with the nearest known key: `appVersion` → did you mean `appVersions`),
/// control characters in texts, dropped links, `http` links, a bare major likely meant as a range (`"17"` is exactly
/// 17.0.0; `"17.*"` is every 17.x), and messages that can never match: cancelled,
/// `endsAt` not after `startsAt`, `endsAt` in the past (when `now` is given), an empty version or locale
/// list, a version list that is the `["0"]` cancel idiom, `rolloutPercent` 0, an empty `testDevices` list,
/// `maxImpressions` 0, an update whose minimum is above its recommended version, a message that needs a later reader
/// than this release, and a message placed after a higher id for the same app (added after that one was acknowledged,
/// it is never shown).
///
/// Issues come sorted by location (errors first at the same place), so output is stable; after the first
/// ``FeedDecoder/maximumIssues``, one last issue counts the others.
///
/// ```swift
/// for issue in FeedLinter.lint(data, now: Date()) {
///     print(issue)   // 4:5: warning: $[0].appVersion: unknown key "appVersion" is ignored; did you mean "appVersions"?
/// }
/// ```
package enum FeedLinter {
    /// Lints a feed document.
    ///
    /// - Parameters:
    ///   - data: the feed document's bytes.
    ///   - now: when given, an `endsAt` at or before it is reported as past.
    ///   - options: the decoding options the app uses (its allowed link schemes).
    ///
    /// ```swift
    /// let issues = FeedLinter.lint(data, now: Date())
    /// let hasErrors = issues.contains { $0.severity == .error }
    /// ```
    package static func lint(_ data: Data, now: Date? = nil, options: FeedOptions = FeedOptions()) -> [FeedIssue] {
        switch FeedDecoder.decodeDocument(data, options: options) {
        case .failure(let issue):
            return [issue]
        case .success(let document):
            var issues = document.issues
            for message in document.feed.messages {
                issues.add(warnings(for: message, in: document.root, now: now))
            }
            issues.add(orderWarnings(document.feed.messages, in: document.root))
            return issues.listed()
        }
    }

    /// Lints a feed document given as text; see ``lint(_:now:options:)-(Data,_,_)``.
    ///
    /// ```swift
    /// FeedLinter.lint("{}").first?.description   // "1:1: error: $: expected an array of messages, found object"
    /// ```
    package static func lint(_ text: String, now: Date? = nil, options: FeedOptions = FeedOptions()) -> [FeedIssue] {
        lint(Data(text.utf8), now: now, options: options)
    }

    // MARK: - Warnings about valid messages

    private static func warnings(for message: RemoteMessage, in root: LocatedJSON, now: Date?) -> [FeedIssue] {
        let base = message.feedPath
        var issues: [FeedIssue] = []
        func warn(_ key: String, _ text: String, at extra: String? = nil) {
            var path = base / key
            if let extra { path = path / extra }
            let location = root[path]?.location ?? root[base]?.location ?? root.location
            issues.append(FeedIssue(.warning, at: path, location, text))
        }

        if message.cancelled {
            warn("cancelled", "message \(message.id) is cancelled: it is never shown")
        }
        if let startsAt = message.startsAt, let endsAt = message.endsAt, endsAt <= startsAt {
            warn("endsAt", "endsAt \(ISO8601.format(endsAt)) is not after startsAt \(ISO8601.format(startsAt)): the message is never shown")
        }
        if let now, let endsAt = message.endsAt, endsAt <= now {
            warn("endsAt", "endsAt \(ISO8601.format(endsAt)) is in the past (now is \(ISO8601.format(now))): the message is no longer shown")
        }
        for (key, list) in [("appVersions", message.appVersionList), ("osVersions", message.osVersionList)] {
            guard let list else { continue }
            for entry in list.entries {
                guard let major = likelyMeantAsRange(entry, in: list) else { continue }
                let path = base / key / entry.index
                let location = root[path]?.location ?? root[base]?.location ?? root.location
                issues.append(
                    FeedIssue(
                        .warning, at: path, location,
                        "\"\(entry.text)\" matches version \(major).0.0 only, not \(major).1 or \(major).0.1; write \"\(major).*\" for every \(major).x, "
                            + "or \"\(major).0\" if only \(major).0.0 is meant"))
            }
            if list.entries.isEmpty {
                warn(key, "an empty \(key) list matches no version: the message is never shown; remove the key to target every version")
            } else if isCancelIdiom(list) {
                warn(key, "\(key) \(list) matches no real version: this is the cancel idiom, the message is never shown")
            }
        }
        if message.locales?.isEmpty == true {
            warn("locales", "an empty locales list matches no locale: the message is never shown; remove the key to target every locale")
        }
        if message.rolloutPercent == 0 {
            warn("rolloutPercent", "rolloutPercent 0 shows the message to no installation")
        }
        if let link = message.link, link.url.scheme?.lowercased() == "http" {
            warn("link", "the link uses http; use https so the page cannot be altered on the way", at: "url")
        }
        if message.testDevices?.isEmpty == true {
            warn("testDevices", "an empty testDevices list matches no installation: the message is never shown; remove the key to target every one")
        }
        if message.maximumImpressions == 0 {
            warn("maxImpressions", "maxImpressions 0 never shows the message")
        }
        if let update = message.update, let recommended = update.recommendedVersion.flatMap({ Version($0) }),
            let minimum = update.minimumVersion.flatMap({ Version($0) }), minimum > recommended
        {
            warn(
                "update",
                "minimumVersion \(minimum) is above recommendedVersion \(recommended): every version the update recommends is required; "
                    + "recommend the minimum or a later version", at: "minimumVersion")
        }
        return issues
    }

    /// Messages a user can miss: an app shows ids above its `lastMessageId`, and lower ids that were in the feed,
    /// unacknowledged, when a higher one was acknowledged. A lower id added to the feed after an installation
    /// acknowledged a higher one is never shown there. The feed does not say when a message was added; a message
    /// placed after a higher live id of its app (feeds grow at the end) is taken to have been added after it.
    /// One pass in feed order, keeping the highest live id seen so far per app: linear in the messages.
    private static func orderWarnings(_ messages: [RemoteMessage], in root: LocatedJSON) -> [FeedIssue] {
        var highest: [String: Int] = [:]  // bundleId → the highest live id placed before the current message
        var issues: [FeedIssue] = []
        // An update message is shown by its versions, not its id: it neither hides nor is hidden by another id.
        for message in messages.sorted(by: { $0.feedIndex < $1.feedIndex }) where canEverShow(message) && message.update == nil {
            let earlier = highest[message.bundleId]
            highest[message.bundleId] = max(earlier ?? message.id, message.id)
            guard let higher = earlier, higher > message.id else { continue }
            let path = message.feedPath / "id"
            let location = root[path]?.location ?? root.location
            issues.append(
                FeedIssue(
                    .warning, at: path, location,
                    "message \(message.id) comes after message \(higher) for the same app but has a lower id: if it was added after "
                        + "\(higher), an installation that acknowledged \(higher) first never sees it; give a new message an id above \(higher)"))
        }
        return issues
    }

    /// Whether some installation could be shown `message` at some time (the checks of the warnings above).
    private static func canEverShow(_ message: RemoteMessage) -> Bool {
        if message.cancelled || message.rolloutPercent == 0 || message.locales?.isEmpty == true || message.testDevices?.isEmpty == true
            || message.maximumImpressions == 0
        {
            return false
        }
        if let startsAt = message.startsAt, let endsAt = message.endsAt, endsAt <= startsAt { return false }
        return [message.appVersionList, message.osVersionList].allSatisfy { list in
            guard let list else { return true }
            return !list.entries.isEmpty && !isCancelIdiom(list)
        }
    }

    /// The major of a bare-major entry (`"17"`: exactly 17.0.0, as every version without a wildcard is exact) that is
    /// likely meant as a range: no other entry of its list names that major (`["17", "17.0.1"]` lists 17's releases one
    /// by one), and it is not 0 (the cancel idiom).
    static func likelyMeantAsRange(_ entry: VersionList.Entry, in list: VersionList) -> Int? {
        let text = entry.text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.allSatisfy({ Version.digitValue($0) != nil }), let major = Int(text), major != 0 else { return nil }
        let namedElsewhere = list.entries.contains { other in
            other.index != entry.index
                && (other.requirement?.constraints ?? []).contains { constraint in
                    switch constraint {
                    case .comparison(_, let version): version[component: 0] == major
                    case .wildcard(let prefix, _): prefix.first == major
                    case .build: false
                    }
                }
        }
        return namedElsewhere ? nil : major
    }

    /// A non-empty list whose entries are all the exact version 0 (`["0"]`, `["0.0"]`), which no app or OS has.
    static func isCancelIdiom(_ list: VersionList) -> Bool {
        guard !list.entries.isEmpty, let zero = Version(components: [0]) else { return false }
        return list.entries.allSatisfy { entry in
            guard let requirement = entry.requirement, requirement.constraints.count == 1,
                case .comparison(.equal, let version) = requirement.constraints[0]
            else { return false }
            return version == zero
        }
    }
}
