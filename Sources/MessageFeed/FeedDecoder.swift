import Foundation
import PrefsSupport
internal import PrefsJSON

/// Turns a `messages.json` document into validated ``RemoteMessage`` values and diagnostics.
///
/// A bad entry never spoils the others: an entry with a wrong type, a missing required key, a duplicate
/// key, a bad date, an over-long text or a non-positive id is skipped with an error naming its JSON path
/// and line:column (`$[2].id: expected an integer, found string`); nothing unvalidated is ever returned.
/// Only a document that is not JSON, or whose top level is not an array, fails as a whole.
///
/// Integers beyond the `Int64` range are read leniently: the strict JSON parser refuses the whole document
/// for one, so the decoder replaces such a literal by a placeholder of the same length and parses again
/// (locations stay exact); the field that holds it then fails like any other wrong value, and only its
/// message is skipped.
///
/// ```swift
/// let feed = try FeedDecoder.decode(#"[{"id": 1, "bundleId": "com.a", "title": "T", "text": "x", "confirmLabel": "OK"}]"#)
/// feed.messages.first?.id   // 1
/// ```
package enum FeedDecoder {
    /// The longest title, in characters (grapheme clusters); a longer one skips the message.
    ///
    /// ```swift
    /// "é".count <= FeedDecoder.maximumTitleLength   // characters, not bytes
    /// ```
    package static let maximumTitleLength = 200
    /// The longest text, in characters; a longer one skips the message.
    ///
    /// ```swift
    /// message.text.count <= FeedDecoder.maximumTextLength   // always true for a decoded message
    /// ```
    package static let maximumTextLength = 5_000
    /// The longest button label (`confirmLabel`, `link.title`), in characters; a longer one skips the message.
    ///
    /// ```swift
    /// message.confirmLabel.count <= FeedDecoder.maximumLabelLength   // always true for a decoded message
    /// ```
    package static let maximumLabelLength = 100
    /// How many out-of-range numbers one document may contain before it is refused as a whole.
    static let maximumOutOfRangeNumbers = 32
    /// The most issues a decoded feed (or a lint) lists: the first ones in document order, then one more
    /// issue at `$` counting the others (`and 1747425 more issues (1747425 errors) not listed`), an error if
    /// any of them is. A 1 MiB feed of `{}` has 1.7 million.
    ///
    /// ```swift
    /// feed.issues.count <= FeedDecoder.maximumIssues + 1   // always true
    /// ```
    package static let maximumIssues = 200

    /// The keys a message object of format 1 may have; a wrapped message may also have ``formatTwoKeys``. Any other key
    /// is ignored with a warning (a key of format 2 in a message that is not wrapped is an error).
    ///
    /// ```swift
    /// FeedDecoder.messageKeys.contains("rolloutPercent")   // true
    /// ```
    package static let messageKeys = [
        "id", "bundleId", "title", "text", "confirmLabel", "appVersions", "osVersions", "link",
        "cancelled", "startsAt", "endsAt", "priority", "locales", "rolloutPercent",
    ]
    /// The feed format this release reads: 2. Release 0.2 and earlier read format 1, flat message objects, and
    /// ignore a member they do not know; a message that uses a member of a later format (``formatTwoKeys``) is
    /// therefore wrapped, `{"minimumReaderVersion": 2, "message": {…}}`, which an earlier release skips (it finds
    /// none of a message's required keys) instead of showing it to everyone the member leaves out. A wrapped message
    /// whose `minimumReaderVersion` is above this number is skipped with a warning: a later release shows it.
    ///
    /// ```swift
    /// FeedDecoder.readerVersion   // 2
    /// ```
    package static let readerVersion = 2
    /// The members of format 2, read only in a wrapped message: its own caps (`maxImpressions`,
    /// `minimumIntervalSeconds`), `conditions` on the app's usage, `testDevices` and `update`.
    ///
    /// ```swift
    /// FeedDecoder.formatTwoKeys.contains("conditions")   // true
    /// ```
    package static let formatTwoKeys = ["maxImpressions", "minimumIntervalSeconds", "conditions", "testDevices", "update"]
    /// The keys of the object that wraps a message of a later format.
    ///
    /// ```swift
    /// FeedDecoder.envelopeKeys   // ["minimumReaderVersion", "message"]
    /// ```
    package static let envelopeKeys = ["minimumReaderVersion", "message"]
    /// The keys of an `update` object.
    ///
    /// ```swift
    /// FeedDecoder.updateKeys.contains("releasedAt")   // true
    /// ```
    package static let updateKeys = ["recommendedVersion", "minimumVersion", "releasedAt", "minimumAgeSeconds"]
    /// The keys a link object may have.
    ///
    /// ```swift
    /// FeedDecoder.linkKeys   // ["title", "url"]
    /// ```
    package static let linkKeys = ["title", "url"]

    /// Decodes a feed document.
    ///
    /// - Throws: a ``FeedIssue`` at `$` when the document is not JSON (with the parser's line:column) or
    ///   its top level is not an array.
    ///
    /// ```swift
    /// do {
    ///     let feed = try FeedDecoder.decode(data)
    ///     feed.issues.forEach { print($0) }
    /// } catch {
    ///     print(error)   // 1:1: error: $: expected an array of messages, found object
    /// }
    /// ```
    package static func decode(_ data: Data, options: FeedOptions = FeedOptions()) throws(FeedIssue) -> DecodedFeed {
        try decodeDocument(data, options: options).get().feed
    }

    /// Decodes a feed document as a reader of feed format `readerVersion` does: 1 reads as release 0.2 and earlier did
    /// (flat messages only, unknown members ignored), so tests show what those releases make of a later format.
    ///
    /// ```swift
    /// let asOlderRelease = try FeedDecoder.decode(data, readerVersion: 1)
    /// ```
    package static func decode(_ data: Data, readerVersion: Int) throws(FeedIssue) -> DecodedFeed {
        try decodeDocument(data, options: FeedOptions(), readerVersion: readerVersion).get().feed
    }

    /// Decodes a feed document from text; see ``decode(_:options:)-(Data,_)``.
    ///
    /// ```swift
    /// let feed = try FeedDecoder.decode("[]")   // no messages, no issues
    /// ```
    package static func decode(_ text: String, options: FeedOptions = FeedOptions()) throws(FeedIssue) -> DecodedFeed {
        try decode(Data(text.utf8), options: options)
    }

    // MARK: - Document

    /// A decoded feed with its located document, for the linter, and its issues before capping, so the
    /// linter can add its own and still list the first ones in document order.
    struct Document {
        var root: LocatedJSON
        var feed: DecodedFeed
        var issues: IssueList
    }

    /// Issues counted but not listed: how many, how many errors, and where the first is.
    struct IssueCount {
        private(set) var total = 0
        private(set) var errors = 0
        private(set) var first: SourceLocation?

        mutating func count(_ severity: FeedIssue.Severity, at location: SourceLocation) {
            total += 1
            if severity == .error { errors += 1 }
            if first.map({ location.offset < $0.offset }) ?? true { first = location }
        }

        mutating func add(_ other: IssueCount) {
            total += other.total
            errors += other.errors
            if let location = other.first, first.map({ location.offset < $0.offset }) ?? true { first = location }
        }
    }

    /// Issues kept in memory bounded by ``maximumIssues``: those beyond the first ones in document order
    /// are only counted.
    struct IssueList {
        private var kept: [FeedIssue] = []
        /// The largest offset in `kept`.
        private var keptEnd = -1
        private var omitted = IssueCount()

        /// Whether ``maximumIssues`` are kept: issues after them in the document would only be counted.
        var isFull: Bool { kept.count >= maximumIssues }

        mutating func add(_ issues: [FeedIssue]) {
            // The decoder reports in document order: once the list is full, later issues are only counted.
            if isFull, issues.allSatisfy({ $0.location.offset > keptEnd }) {
                for issue in issues { omitted.count(issue.severity, at: issue.location) }
                return
            }
            kept += issues
            keptEnd = issues.reduce(keptEnd) { max($0, $1.location.offset) }
            if kept.count > 2 * maximumIssues { trim() }
        }

        mutating func add(_ issue: FeedIssue) {
            add([issue])
        }

        /// Counts issues that come after every kept one in the document (see ``isFull``).
        mutating func add(unlisted: IssueCount) {
            omitted.add(unlisted)
        }

        /// Sorts, keeps the first ``maximumIssues`` and counts the rest.
        private mutating func trim() {
            kept.sort()
            if kept.count > maximumIssues {
                for issue in kept[maximumIssues...] { omitted.count(issue.severity, at: issue.location) }
                kept.removeSubrange(maximumIssues...)
            }
            keptEnd = kept.last?.location.offset ?? -1
        }

        /// The first issues in document order, and one counting the others, if any.
        func listed() -> [FeedIssue] {
            var list = self
            list.trim()
            let omitted = list.omitted
            guard omitted.total > 0, let location = omitted.first else { return list.kept }
            let errors = omitted.errors == 0 ? "" : " (\(omitted.errors) error\(omitted.errors == 1 ? "" : "s"))"
            return list.kept + [
                FeedIssue(
                    omitted.errors > 0 ? .error : .warning, at: .root, location,
                    "and \(omitted.total) more issue\(omitted.total == 1 ? "" : "s")\(errors) not listed"
                )
            ]
        }
    }

    static func decodeDocument(_ data: Data, options: FeedOptions, readerVersion: Int = readerVersion) -> Result<Document, FeedIssue> {
        let parsed: (root: LocatedJSON, outOfRange: [Int: String])
        switch parseLeniently(data) {
        case .success(let value): parsed = value
        case .failure(let issue): return .failure(issue)
        }
        guard case .array(let elements) = parsed.root.value else {
            return .failure(FeedIssue(.error, at: .root, parsed.root.location, "expected an array of messages, found \(parsed.root.kindName)"))
        }
        var messages: [RemoteMessage] = []
        var issues = IssueList()
        var skipped: [Int] = []
        var firstIndex: [String: [Int: Int]] = [:]  // bundleId → id → feed index of its first valid message
        for (index, element) in elements.enumerated() {
            let (message, found, unlisted) = FeedMessageReader.read(
                element, index: index, outOfRange: parsed.outOfRange, options: options, listsIssues: !issues.isFull,
                readerVersion: readerVersion
            )
            issues.add(found)
            issues.add(unlisted: unlisted)
            guard let message else {
                skipped.append(index)
                continue
            }
            if let first = firstIndex[message.bundleId]?[message.id] {
                let base = message.isWrapped ? JSONPath.root / index / "message" : JSONPath.root / index
                let location = parsed.root[base / "id"]?.location ?? element.location
                issues.add(
                    FeedIssue(
                        .error, at: base / "id", location,
                        "duplicate id \(message.id) for bundleId \"\(message.bundleId)\" (first at $[\(first)]); this message is skipped"
                    ))
                skipped.append(index)
                continue
            }
            firstIndex[message.bundleId, default: [:]][message.id] = index
            messages.append(message)
        }
        let feed = DecodedFeed(messages: messages, issues: issues.listed(), skippedIndexes: skipped)
        return .success(Document(root: parsed.root, feed: feed, issues: issues))
    }

    /// Parses with locations, turning each number literal the parser cannot represent into a same-length
    /// string placeholder, recorded by offset with its original text.
    private static func parseLeniently(_ data: Data) -> Result<(root: LocatedJSON, outOfRange: [Int: String]), FeedIssue> {
        var bytes = [UInt8](data)
        var outOfRange: [Int: String] = [:]
        while true {
            do {
                return .success((try JSON.parseLocated(bytes), outOfRange))
            } catch {
                // A number out of range is replaced, in place and at the same length, by a string ("000…"): its value
                // is then reported where it is read, as one issue among others, instead of failing the whole feed.
                guard let literal = error.outOfRangeNumber, literal.count >= 2, outOfRange.count < maximumOutOfRangeNumbers else {
                    return .failure(FeedIssue(.error, at: .root, error.location, "invalid JSON: \(error.message)"))
                }
                let (offset, end) = (literal.lowerBound, literal.upperBound)
                outOfRange[offset] = String(decoding: bytes[offset..<end], as: UTF8.self)
                let quote = UInt8(ascii: "\"")
                bytes.replaceSubrange(offset..<end, with: [quote] + Array(repeating: UInt8(ascii: "0"), count: end - offset - 2) + [quote])
            }
        }
    }

    /// The end of the number literal starting at `start`, or nil if none starts there.
    // MARK: - Value rules shared with the linter

    /// Why a value was refused, as a sentence fragment.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// A link URL that is allowed: `http`/`https` with a host and no user name or password, or a scheme in
    /// `allowedSchemes`. A user part is refused because it lets a link read as another site
    /// (`https://www.apple.com@example.net/` leads to example.net).
    static func linkURL(_ text: String, allowedSchemes: Set<String>) -> Result<URL, Problem> {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            return .failure(Problem(description: "\"\(text)\" is not an absolute URL"))
        }
        let extra = Set(allowedSchemes.map { $0.lowercased() })
        if scheme == "http" || scheme == "https" {
            guard let host = url.host, !host.isEmpty else { return .failure(Problem(description: "\"\(text)\" has no host")) }
            guard url.user == nil, url.password == nil else {
                return .failure(Problem(description: "\"\(text)\" has a user name before its host \"\(host)\", which makes it read as another site"))
            }
            return .success(url)
        }
        guard extra.contains(scheme) else {
            let allowed = (["http", "https"] + extra.sorted()).joined(separator: ", ")
            return .failure(Problem(description: "the scheme \"\(scheme)\" is not allowed (allowed: \(allowed))"))
        }
        return .success(url)
    }

    /// An ISO-8601 date-time with a time zone; a date alone or a date-time without a zone is refused,
    /// because its instant depends on where the device is.
    static func parseDate(_ text: String) -> Result<Date, Problem> {
        do {
            return .success(try ISO8601.parse(text))
        } catch .missingTimeZone {
            return .failure(Problem(description: "\"\(text)\" has no time zone; add 'Z' or an offset such as +01:00"))
        } catch {
            if (try? ISO8601.parse(text, allowDateOnly: true)) != nil {  // only to word the error better
                return .failure(Problem(description: "\"\(text)\" is a date without a time and time zone; write e.g. \(text)T00:00:00Z"))
            }
            return .failure(Problem(description: "\"\(text)\" is not an ISO-8601 date-time: \(error)"))
        }
    }

    /// A language tag as written in `locales`: letters, then `-` or `_` separated alphanumeric subtags.
    static func isLanguageTag(_ text: String) -> Bool {
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let language = subtags.first, (1...8).contains(language.count),
            language.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic })
        else { return false }
        return subtags.dropFirst().allSatisfy { subtag in
            (1...8).contains(subtag.count) && subtag.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) }
        }
    }

    /// C0 and C1 control characters other than newline and tab, which alert text legitimately uses.
    static func isUnexpectedControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        default: false
        }
    }

    /// The known key closest to `key` by edit distance, ignoring case, if it is close enough to be a typo
    /// (at most 2 edits, or a third of the key's length for longer keys).
    static func nearestKey(to key: String, in known: [String]) -> String? {
        let lowered = key.lowercased()
        guard let best = known.min(by: { Suggestions.distance(lowered, $0.lowercased()) < Suggestions.distance(lowered, $1.lowercased()) }),
            Suggestions.distance(lowered, best.lowercased()) <= max(2, lowered.count / 3)
        else { return nil }
        return best
    }
}
