import Foundation
internal import PrefsJSON

/// Reads one entry of a feed array into a ``RemoteMessage``, collecting every problem with its path and
/// location instead of stopping at the first, so a linter can report them all.
///
/// An error marks the message invalid (it is skipped), except an unparseable version entry, which only
/// matches nothing (see ``VersionList``). A key that matches a known key except for case (`appversions`)
/// is an error: it fails closed. Warnings never change the outcome, except the one for a link whose URL is
/// refused: the message is kept without its link.
struct FeedMessageReader {
    private let index: Int
    private let path: JSONPath
    private let outOfRange: [Int: String]
    private let options: FeedOptions
    private let listsIssues: Bool
    /// What was found so far; a reference, so that reporting, whose message is built only when it is listed,
    /// does not need exclusive access to the reader while it reads the reader to build the message.
    private let found = Found()

    private final class Found {
        var issues: [FeedIssue] = []
        var unlisted = FeedDecoder.IssueCount()
        var isValid = true
    }

    /// The feed format the reader reads (``FeedDecoder/readerVersion``; 1 reads as release 0.2 did, for tests).
    private let readerVersion: Int

    /// The message at `$[index]`, or nil when it is invalid; and the issues found either way.
    ///
    /// - Parameter listsIssues: false to only count the issues (``FeedDecoder/maximumIssues`` are listed
    ///   already): their paths and messages are then never built, which is most of the cost of a huge bad feed.
    static func read(
        _ node: LocatedJSON, index: Int, outOfRange: [Int: String], options: FeedOptions, listsIssues: Bool = true,
        readerVersion: Int = FeedDecoder.readerVersion
    ) -> (message: RemoteMessage?, issues: [FeedIssue], unlisted: FeedDecoder.IssueCount) {
        let reader = FeedMessageReader(
            index: index, path: JSONPath.root / index, outOfRange: outOfRange, options: options, listsIssues: listsIssues,
            readerVersion: readerVersion)
        let message = reader.readEntry(node)
        return (reader.found.isValid ? message : nil, reader.found.issues, reader.found.unlisted)
    }

    private init(index: Int, path: JSONPath, outOfRange: [Int: String], options: FeedOptions, listsIssues: Bool, readerVersion: Int) {
        self.index = index
        self.path = path
        self.outOfRange = outOfRange
        self.options = options
        self.listsIssues = listsIssues
        self.readerVersion = readerVersion
    }

    // MARK: - The message

    /// An entry of the feed array: a message, or (from format 2) a message wrapped with the reader version it needs.
    private func readEntry(_ node: LocatedJSON) -> RemoteMessage? {
        guard readerVersion >= 2, let members = node.members, members.contains(where: { $0.key == "message" }) else {
            return readMessage(node, at: path, wrapped: false)
        }
        checkKeys(members, at: path, known: FeedDecoder.envelopeKeys)
        let needed = required("minimumReaderVersion", in: node, at: path).flatMap { positiveInteger($0, path / "minimumReaderVersion") }
        guard let needed, let inner = required("message", in: node, at: path) else { return nil }
        if needed > readerVersion {
            // Valid for a later release, which shows it; never shown here, where its members might be misread.
            skip(
                path / "minimumReaderVersion", node["minimumReaderVersion"]?.location ?? node.location,
                "the message needs a feed reader of version \(needed) (this release reads \(readerVersion)): it is skipped here, and a later release shows it")
            return nil
        }
        return readMessage(inner, at: path / "message", wrapped: true)
    }

    private func readMessage(_ node: LocatedJSON, at path: JSONPath, wrapped: Bool) -> RemoteMessage? {
        guard let members = node.members else {
            error(path, node.location, "expected an object, found \(kind(node))")
            return nil
        }
        let laterKeys = readerVersion >= 2 ? FeedDecoder.formatTwoKeys + ["minimumReaderVersion"] : []
        checkKeys(members, at: path, known: FeedDecoder.messageKeys + (wrapped ? FeedDecoder.formatTwoKeys : []), unwrapped: wrapped ? [] : laterKeys)
        let id = required("id", in: node, at: path).flatMap { positiveInteger($0, path / "id") }
        let bundleId = required("bundleId", in: node, at: path).flatMap { string($0, path / "bundleId") }
        let title = required("title", in: node, at: path)
            .flatMap { displayText($0, path / "title", limit: FeedDecoder.maximumTitleLength) }
        let body = required("text", in: node, at: path)
            .flatMap { displayText($0, path / "text", limit: FeedDecoder.maximumTextLength) }
        let confirmLabel = required("confirmLabel", in: node, at: path)
            .flatMap { displayText($0, path / "confirmLabel", limit: FeedDecoder.maximumLabelLength) }
        let link = optional("link", in: node).flatMap { readLink($0, path / "link") }
        let appVersions = optional("appVersions", in: node).flatMap { versionList($0, path / "appVersions") }
        let osVersions = optional("osVersions", in: node).flatMap { versionList($0, path / "osVersions") }
        let cancelled = optional("cancelled", in: node).flatMap { bool($0, path / "cancelled") } ?? false
        let startsAt = optional("startsAt", in: node).flatMap { date($0, path / "startsAt") }
        let endsAt = optional("endsAt", in: node).flatMap { date($0, path / "endsAt") }
        let priority = optional("priority", in: node).flatMap { integer($0, path / "priority") } ?? 0
        let locales = optional("locales", in: node).flatMap { localeList($0, path / "locales") }
        let rolloutPercent = optional("rolloutPercent", in: node).flatMap { percent($0, path / "rolloutPercent") }
        let later = wrapped ? readFormatTwo(node, at: path) : FormatTwo()
        guard let id, let bundleId, let title, let body, let confirmLabel else { return nil }
        var message = RemoteMessage(
            id: id, bundleId: bundleId, title: title, text: body, confirmLabel: confirmLabel,
            link: link ?? nil, cancelled: cancelled,
            startsAt: startsAt, endsAt: endsAt, priority: priority, locales: locales,
            rolloutPercent: rolloutPercent, feedIndex: index, maximumImpressions: later.maximumImpressions,
            minimumInterval: later.minimumInterval, testDevices: later.testDevices, update: later.update
        )
        message.appVersionList = appVersions  // parsed once, with each invalid entry reported above
        message.osVersionList = osVersions
        message.conditions = later.conditions
        message.isWrapped = wrapped
        return message
    }

    // MARK: - Format 2

    /// The members of format 2 a wrapped message may have.
    private struct FormatTwo {
        var maximumImpressions: Int?
        var minimumInterval: Duration?
        var conditions: FeedCondition?
        var testDevices: [String]?
        var update: RemoteMessage.Update?
    }

    private func readFormatTwo(_ node: LocatedJSON, at path: JSONPath) -> FormatTwo {
        var later = FormatTwo()
        later.maximumImpressions = optional("maxImpressions", in: node).flatMap { nonNegativeInteger($0, path / "maxImpressions") }
        later.minimumInterval = optional("minimumIntervalSeconds", in: node).flatMap { seconds($0, path / "minimumIntervalSeconds") }
        later.conditions = optional("conditions", in: node).flatMap { conditions($0, path / "conditions") }
        later.testDevices = optional("testDevices", in: node).flatMap { strings($0, path / "testDevices")?.map(\.text) }
        later.update = optional("update", in: node).flatMap { readUpdate($0, path / "update") }
        return later
    }

    /// An object of conditions: every member holds (`.all`, in member order).
    private func conditions(_ node: LocatedJSON, _ path: JSONPath) -> FeedCondition? {
        guard let members = node.members else {
            error(path, node.location, "expected an object of conditions (\"launchesAtLeast\": 5, …), found \(kind(node))")
            return nil
        }
        var parts: [FeedCondition] = []
        var valid = true
        var seen: [String: SourceLocation] = [:]
        for member in members {
            let key = member.key, at = path / key, value = member.value
            if let first = seen[key] {
                error(at, member.keyLocation, "duplicate key \"\(key)\" (first at \(first))")
                valid = false
            }
            seen[key] = seen[key] ?? member.keyLocation
            let part: [FeedCondition]?
            switch key {
            case "launchesAtLeast": part = nonNegativeInteger(value, at).map { [.launches(atLeast: $0)] }
            case "daysSinceFirstLaunchAtLeast": part = nonNegativeInteger(value, at).map { [.daysSinceFirstLaunch(atLeast: $0)] }
            case "daysSinceVersionFirstSeenAtLeast": part = nonNegativeInteger(value, at).map { [.daysSinceVersionFirstSeen(atLeast: $0)] }
            case "events": part = events(value, at)
            case "parameters": part = parameters(value, at)
            case "notInFirstSession": part = bool(value, at).map { $0 ? [.notInFirstSession] : [] }
            case "all", "any":
                guard case .array(let elements) = value.value else {
                    error(at, value.location, "expected an array of condition objects, found \(kind(value))")
                    part = nil
                    break
                }
                let read = elements.enumerated().map { conditions($1, at / $0) }
                let all = read.compactMap { $0 }
                part = all.count == read.count ? [key == "all" ? .all(all) : .any(all)] : nil
            default:
                // Ignoring a condition would show the message to whom it leaves out: the message is skipped.
                let suggestion = FeedDecoder.nearestKey(to: key, in: FeedCondition.names).map { "; did you mean \"\($0)\"?" } ?? ""
                error(at, member.keyLocation, "unknown condition \"\(key)\" skips the message\(suggestion)")
                part = nil
            }
            if let part { parts += part } else { valid = false }
        }
        return valid ? .all(parts) : nil
    }

    /// `"events": {"photoSaved": {"atLeast": 5, "withinSeconds": 2592000}}`.
    private func events(_ node: LocatedJSON, _ path: JSONPath) -> [FeedCondition]? {
        guard let members = node.members else {
            error(path, node.location, "expected an object of events (\"photoSaved\": {\"atLeast\": 5}), found \(kind(node))")
            return nil
        }
        var parts: [FeedCondition] = []
        var valid = true
        for member in members {
            let at = path / member.key
            guard let fields = member.value.members else {
                error(at, member.value.location, "expected an object with \"atLeast\" and an optional \"withinSeconds\", found \(kind(member.value))")
                valid = false
                continue
            }
            if member.key.isEmpty {
                error(at, member.keyLocation, "an event's name is not empty")
                valid = false
            }
            for field in fields where !FeedCondition.eventKeys.contains(field.key) {
                let suggestion = FeedDecoder.nearestKey(to: field.key, in: FeedCondition.eventKeys).map { "; did you mean \"\($0)\"?" } ?? ""
                error(at / field.key, field.keyLocation, "unknown key \"\(field.key)\" in an event's condition skips the message\(suggestion)")
                valid = false
            }
            let count = required("atLeast", in: member.value, at: at).flatMap { nonNegativeInteger($0, at / "atLeast") }
            let window = optional("withinSeconds", in: member.value).map { seconds($0, at / "withinSeconds") }
            guard let count, window != .some(nil) else {
                valid = false
                continue
            }
            parts.append(.event(member.key, atLeast: count, withinSeconds: window??.timeInterval))
        }
        return valid ? parts : nil
    }

    /// `"parameters": {"plan": "free", "country": ["DE", "AT"]}`: each parameter equals its value, or one of its values.
    private func parameters(_ node: LocatedJSON, _ path: JSONPath) -> [FeedCondition]? {
        guard let members = node.members else {
            error(path, node.location, "expected an object of parameters (\"plan\": \"free\"), found \(kind(node))")
            return nil
        }
        var parts: [FeedCondition] = []
        var valid = true
        for member in members {
            let at = path / member.key
            let values: [FeedCondition.Value]?
            if case .array(let elements) = member.value.value {
                let read = elements.enumerated().map { parameterValue($1, at / $0) }
                values = read.allSatisfy { $0 != nil } ? read.compactMap { $0 } : nil
                if elements.isEmpty {
                    error(at, member.value.location, "an empty list of values matches no installation; remove the parameter to match every one")
                    valid = false
                }
            } else {
                values = parameterValue(member.value, at).map { [$0] }
            }
            if let values { parts.append(.parameter(member.key, oneOf: values)) } else { valid = false }
        }
        return valid ? parts : nil
    }

    private func parameterValue(_ node: LocatedJSON, _ path: JSONPath) -> FeedCondition.Value? {
        if let literal = outOfRange[node.location.offset] {
            error(path, node.location, "\(literal) is out of range (an integer must be within \(Int.min)...\(Int.max))")
            return nil
        }
        switch node.value {
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        default:
            error(path, node.location, "expected a boolean, a number or a string (or an array of them), found \(kind(node))")
            return nil
        }
    }

    /// `"update": {"recommendedVersion": "2.4", "minimumVersion": "2.0", "releasedAt": "…", "minimumAgeSeconds": 259200}`.
    private func readUpdate(_ node: LocatedJSON, _ path: JSONPath) -> RemoteMessage.Update? {
        guard let members = node.members else {
            error(path, node.location, "expected an object with \"recommendedVersion\" or \"minimumVersion\", and \"releasedAt\", found \(kind(node))")
            return nil
        }
        for member in members where !FeedDecoder.updateKeys.contains(member.key) {
            // A member of the update that this release does not read could make it shown where it should not be.
            let suggestion = FeedDecoder.nearestKey(to: member.key, in: FeedDecoder.updateKeys).map { "; did you mean \"\($0)\"?" } ?? ""
            error(path / member.key, member.keyLocation, "unknown key \"\(member.key)\" in an update skips the message\(suggestion)")
        }
        let recommended = optional("recommendedVersion", in: node).map { releaseVersion($0, path / "recommendedVersion") }
        let minimum = optional("minimumVersion", in: node).map { releaseVersion($0, path / "minimumVersion") }
        // The release date is required: without it an update shows the day it is published, before every region's store has it.
        let releasedAt = required("releasedAt", in: node, at: path).flatMap { date($0, path / "releasedAt") }
        let age = optional("minimumAgeSeconds", in: node).map { seconds($0, path / "minimumAgeSeconds") }
        if recommended == nil && minimum == nil {
            error(path, node.location, "an update names \"recommendedVersion\", \"minimumVersion\" or both")
            return nil
        }
        guard recommended != .some(nil), minimum != .some(nil), age != .some(nil), let releasedAt else { return nil }
        return RemoteMessage.Update(
            recommendedVersion: recommended ?? nil, minimumVersion: minimum ?? nil, releasedAt: releasedAt,
            minimumAge: (age ?? nil) ?? .seconds(86_400))
    }

    /// A release version, digits and dots (`"2.4"`), as written.
    private func releaseVersion(_ node: LocatedJSON, _ path: JSONPath) -> String? {
        guard let text = string(node, path) else { return nil }
        guard Version(text) != nil else {
            error(path, node.location, "\"\(text)\" is not a release version: digits and dots, such as \"2.4\" or \"2.4.1\"")
            return nil
        }
        return text
    }

    /// A duration in seconds: a non-negative number.
    private func seconds(_ node: LocatedJSON, _ path: JSONPath) -> Duration? {
        let value: Double
        switch node.value {
        case .int(let int) where outOfRange[node.location.offset] == nil: value = Double(int)
        case .double(let double): value = double
        default:
            error(path, node.location, "expected a number of seconds, found \(kind(node))")
            return nil
        }
        // Up to about 3 × 10¹¹ years: a Duration holds it.
        guard value >= 0, value < 1e19 else {
            error(path, node.location, "expected a number of seconds from 0 to 1e19, found \(value)")
            return nil
        }
        return .seconds(value)
    }

    /// The link, `.some(nil)` when it was dropped for its URL, nil when it is invalid (an error).
    private func readLink(_ node: LocatedJSON, _ path: JSONPath) -> RemoteMessage.Link?? {
        guard let members = node.members else {
            error(path, node.location, "expected an object with \"title\" and \"url\", found \(kind(node))")
            return nil
        }
        checkKeys(members, at: path, known: FeedDecoder.linkKeys)
        let title = required("title", in: node, at: path)
            .flatMap { displayText($0, path / "title", limit: FeedDecoder.maximumLabelLength) }
        let urlNode = required("url", in: node, at: path)
        let urlText = urlNode.flatMap { string($0, path / "url") }
        guard let title, let urlNode, let urlText else { return nil }
        switch FeedDecoder.linkURL(urlText, allowedSchemes: options.allowedLinkSchemes) {
        case .success(let url):
            return .some(RemoteMessage.Link(title: title, url: url))
        case .failure(let reason):
            warning(path / "url", urlNode.location, "link dropped: \(reason.description); the message is shown without it")
            return .some(nil)
        }
    }

    // MARK: - Keys

    /// Checks an object's keys against `known`; a key of `unwrapped` (a member of a later format in a message that is
    /// not wrapped) is an error that skips the message.
    private func checkKeys(_ members: [LocatedJSON.Member], at path: JSONPath, known: [String], unwrapped: [String] = []) {
        var firstLocation: [String: SourceLocation] = [:]
        for member in members {
            if let first = firstLocation[member.key] {
                error(path / member.key, member.keyLocation, "duplicate key \"\(member.key)\" (first at \(first))")
            } else {
                firstLocation[member.key] = member.keyLocation
            }
            if known.contains(member.key) { continue }
            if unwrapped.contains(member.key) {
                // Release 0.2 would ignore it and show the message to everyone it leaves out: it needs the wrapper
                // that release skips.
                error(
                    path / member.key, member.keyLocation,
                    "\"\(member.key)\" is read only in a message wrapped as {\"minimumReaderVersion\": \(FeedDecoder.readerVersion), \"message\": {…}} "
                        + "(release 0.2 would ignore it and show the message to everyone it leaves out); this message is skipped")
                continue
            }
            if let intended = known.first(where: { $0.lowercased() == member.key.lowercased() }) {
                // The cancel idiom with its key in the wrong case, `"appversions": ["0"]`: ignoring it would show
                // a message its author meant to hold back, so the message is skipped instead.
                error(
                    path / member.key, member.keyLocation,
                    "unknown key \"\(member.key)\" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean \"\(intended)\"?"
                )
            } else {
                var message = "unknown key \"\(member.key)\" is ignored"
                if let suggestion = FeedDecoder.nearestKey(to: member.key, in: known) {
                    message += "; did you mean \"\(suggestion)\"?"
                }
                warning(path / member.key, member.keyLocation, message)
            }
        }
    }

    /// A required member (null included, so the type check reports it), or nil after reporting it missing.
    private func required(_ key: String, in node: LocatedJSON, at path: JSONPath) -> LocatedJSON? {
        guard let value = node[key] else {
            error(path, node.location, "missing required key \"\(key)\"")
            return nil
        }
        return value
    }

    /// An optional member; `null` counts as absent, as with `Codable` optionals decoded by `JSONDecoder`.
    private func optional(_ key: String, in node: LocatedJSON) -> LocatedJSON? {
        guard let value = node[key], value.value != .null else { return nil }
        return value
    }

    // MARK: - Values

    private func string(_ node: LocatedJSON, _ path: JSONPath) -> String? {
        guard case .string(let value) = node.value, outOfRange[node.location.offset] == nil else {
            error(path, node.location, "expected a string, found \(kind(node))")
            return nil
        }
        return value
    }

    /// Display text: a string within `limit` characters; control characters are kept but warned about.
    private func displayText(_ node: LocatedJSON, _ path: JSONPath, limit: Int) -> String? {
        guard let value = string(node, path) else { return nil }
        if value.count > limit {
            error(path, node.location, "\(value.count) characters, more than the maximum of \(limit)")
            return nil
        }
        if let scalar = value.unicodeScalars.first(where: FeedDecoder.isUnexpectedControl) {
            let code = String(scalar.value, radix: 16, uppercase: true)
            let padded = String(repeating: "0", count: max(0, 4 - code.count)) + code
            warning(path, node.location, "contains the control character U+\(padded)")
        }
        return value
    }

    private func integer(_ node: LocatedJSON, _ path: JSONPath) -> Int? {
        if let literal = outOfRange[node.location.offset] {
            error(path, node.location, "\(literal) is out of range (an integer must be within \(Int.min)...\(Int.max))")
            return nil
        }
        guard case .int(let value) = node.value else {
            error(path, node.location, "expected an integer, found \(kind(node))")
            return nil
        }
        return value
    }

    private func nonNegativeInteger(_ node: LocatedJSON, _ path: JSONPath) -> Int? {
        guard let value = integer(node, path) else { return nil }
        guard value >= 0 else {
            error(path, node.location, "expected an integer of 0 or more, found \(value)")
            return nil
        }
        return value
    }

    private func positiveInteger(_ node: LocatedJSON, _ path: JSONPath) -> Int? {
        guard let value = integer(node, path) else { return nil }
        guard value > 0 else {
            error(path, node.location, "expected a positive integer, found \(value)")
            return nil
        }
        return value
    }

    private func percent(_ node: LocatedJSON, _ path: JSONPath) -> Int? {
        guard let value = integer(node, path) else { return nil }
        guard (0...100).contains(value) else {
            error(path, node.location, "expected an integer from 0 to 100, found \(value)")
            return nil
        }
        return value
    }

    private func bool(_ node: LocatedJSON, _ path: JSONPath) -> Bool? {
        guard case .bool(let value) = node.value else {
            error(path, node.location, "expected a boolean, found \(kind(node))")
            return nil
        }
        return value
    }

    /// An array of strings with their nodes; nil (after reporting each offender) if anything is not a string.
    private func strings(_ node: LocatedJSON, _ path: JSONPath) -> [(text: String, node: LocatedJSON)]? {
        guard case .array(let elements) = node.value else {
            error(path, node.location, "expected an array of strings, found \(kind(node))")
            return nil
        }
        var result: [(text: String, node: LocatedJSON)] = []
        var allStrings = true
        for (position, element) in elements.enumerated() {
            if let text = string(element, path / position) { result.append((text, element)) } else { allStrings = false }
        }
        return allStrings ? result : nil
    }

    private func versionList(_ node: LocatedJSON, _ path: JSONPath) -> VersionList? {
        guard let entries = strings(node, path) else { return nil }
        let list = VersionList(parsing: entries.map(\.text))
        for entry in list.invalidEntries {
            // An invalid entry matches nothing; the message is kept and its other entries still count.
            error(
                path / entry.index, entries[entry.index].node.location,
                "invalid version \(entry.error.map { "\($0)" } ?? entry.text)", keepsMessage: true
            )
        }
        return list
    }

    private func localeList(_ node: LocatedJSON, _ path: JSONPath) -> [String]? {
        guard let entries = strings(node, path) else { return nil }
        var valid = true
        for (position, entry) in entries.enumerated() where !FeedDecoder.isLanguageTag(entry.text) {
            error(path / position, entry.node.location, "\"\(entry.text)\" is not a language tag like \"en\" or \"pt-BR\"")
            valid = false
        }
        return valid ? entries.map(\.text) : nil
    }

    private func date(_ node: LocatedJSON, _ path: JSONPath) -> Date? {
        guard let text = string(node, path) else { return nil }
        switch FeedDecoder.parseDate(text) {
        case .success(let date): return date
        case .failure(let reason):
            error(path, node.location, reason.description)
            return nil
        }
    }

    // MARK: - Reporting

    /// The JSON kind of a value; a number the parser could not represent reads as "number".
    private func kind(_ node: LocatedJSON) -> String {
        outOfRange[node.location.offset] != nil ? "number" : node.kindName
    }

    private func error(_ path: @autoclosure () -> JSONPath, _ location: SourceLocation, _ message: @autoclosure () -> String) {
        report(.error, path, location, message)
        found.isValid = false
    }

    /// An error that does not skip the message (an invalid version entry, which matches nothing).
    private func error(
        _ path: @autoclosure () -> JSONPath, _ location: SourceLocation, _ message: @autoclosure () -> String, keepsMessage: Bool
    ) {
        report(.error, path, location, message)
        if !keepsMessage { found.isValid = false }
    }

    private func warning(_ path: @autoclosure () -> JSONPath, _ location: SourceLocation, _ message: @autoclosure () -> String) {
        report(.warning, path, location, message)
    }

    /// A warning that skips the message: valid, but not for this release.
    private func skip(_ path: @autoclosure () -> JSONPath, _ location: SourceLocation, _ message: @autoclosure () -> String) {
        report(.warning, path, location, message)
        found.isValid = false
    }

    private func report(_ severity: FeedIssue.Severity, _ path: () -> JSONPath, _ location: SourceLocation, _ message: () -> String) {
        if listsIssues {
            found.issues.append(FeedIssue(severity, at: path(), location, message()))
        } else {
            found.unlisted.count(severity, at: location)
        }
    }
}
