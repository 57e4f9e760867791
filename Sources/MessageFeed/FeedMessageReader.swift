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

    /// The message at `$[index]`, or nil when it is invalid; and the issues found either way.
    ///
    /// - Parameter listsIssues: false to only count the issues (``FeedDecoder/maximumIssues`` are listed
    ///   already): their paths and messages are then never built, which is most of the cost of a huge bad feed.
    static func read(
        _ node: LocatedJSON, index: Int, outOfRange: [Int: String], options: FeedOptions, listsIssues: Bool = true
    ) -> (message: RemoteMessage?, issues: [FeedIssue], unlisted: FeedDecoder.IssueCount) {
        let reader = FeedMessageReader(index: index, path: JSONPath.root / index, outOfRange: outOfRange, options: options, listsIssues: listsIssues)
        let message = reader.readMessage(node)
        return (reader.found.isValid ? message : nil, reader.found.issues, reader.found.unlisted)
    }

    private init(index: Int, path: JSONPath, outOfRange: [Int: String], options: FeedOptions, listsIssues: Bool) {
        self.index = index
        self.path = path
        self.outOfRange = outOfRange
        self.options = options
        self.listsIssues = listsIssues
    }

    // MARK: - The message

    private func readMessage(_ node: LocatedJSON) -> RemoteMessage? {
        guard let members = node.members else {
            error(path, node.location, "expected an object, found \(kind(node))")
            return nil
        }
        checkKeys(members, at: path, known: FeedDecoder.messageKeys)
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
        guard let id, let bundleId, let title, let body, let confirmLabel else { return nil }
        var message = RemoteMessage(
            id: id, bundleId: bundleId, title: title, text: body, confirmLabel: confirmLabel,
            link: link ?? nil, cancelled: cancelled,
            startsAt: startsAt, endsAt: endsAt, priority: priority, locales: locales,
            rolloutPercent: rolloutPercent, feedIndex: index
        )
        message.appVersionList = appVersions  // parsed once, with each invalid entry reported above
        message.osVersionList = osVersions
        return message
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

    private func checkKeys(_ members: [LocatedJSON.Member], at path: JSONPath, known: [String]) {
        var firstLocation: [String: SourceLocation] = [:]
        for member in members {
            if let first = firstLocation[member.key] {
                error(path / member.key, member.keyLocation, "duplicate key \"\(member.key)\" (first at \(first))")
            } else {
                firstLocation[member.key] = member.keyLocation
            }
            if known.contains(member.key) { continue }
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

    private func report(_ severity: FeedIssue.Severity, _ path: () -> JSONPath, _ location: SourceLocation, _ message: () -> String) {
        if listsIssues {
            found.issues.append(FeedIssue(severity, at: path(), location, message()))
        } else {
            found.unlisted.count(severity, at: location)
        }
    }
}
