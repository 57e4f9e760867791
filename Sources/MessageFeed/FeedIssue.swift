package import PrefsJSON

/// One problem found in a messages feed: how serious it is, where it is (JSON path and line:column) and
/// what is wrong.
///
/// `MessageCenter/diagnostics` lists the issues that change what is shown (a skipped message, a dropped link);
/// `prefs-tool feed lint` adds the ones an author wants to hear about before publishing (a cancelled message,
/// a past `endsAt`, an `http` link).
///
/// ```swift
/// for issue in center.diagnostics {
///     print(issue)   // 3:11: error: $[0].id: expected an integer, found string
/// }
/// ```
public struct FeedIssue: Error, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// How serious an issue is.
    ///
    /// ```swift
    /// let errors = issues.filter { $0.severity == .error }
    /// ```
    public enum Severity: String, Sendable, Hashable, Comparable {
        /// Something is ignored or never shown, but the feed is valid: an unknown key, a cancelled message.
        case warning
        /// The feed or a message is invalid: the message is skipped (or, for an invalid version entry,
        /// that entry matches nothing), or the whole feed is unusable.
        case error

        /// Errors sort before warnings at the same location.
        ///
        /// ```swift
        /// FeedIssue.Severity.error < .warning   // true
        /// ```
        public static func < (lhs: Severity, rhs: Severity) -> Bool {
            lhs == .error && rhs == .warning
        }
    }

    /// How serious the issue is.
    public var severity: Severity
    /// The value concerned, e.g. `$[2].id`; `$` for the whole document.
    public var path: String { jsonPath.description }
    /// The line (from 1) where the value (or the key, for key problems) starts in the document.
    public var line: Int { location.line }
    /// The column (from 1, in characters) where the value starts.
    public var column: Int { location.column }
    /// What is wrong, without path and location: `expected an integer, found string`.
    public var message: String
    package var jsonPath: JSONPath
    package var location: SourceLocation

    package init(_ severity: Severity, at path: JSONPath, _ location: SourceLocation, _ message: String) {
        self.severity = severity
        self.jsonPath = path
        self.location = location
        self.message = message
    }

    /// `path: message`, as a log line without the location: `$[2].id: expected an integer, found string`.
    ///
    /// ```swift
    /// issue.summary   // "$[2].id: expected an integer, found string"
    /// ```
    public var summary: String { "\(path): \(message)" }

    /// `line:column: severity: path: message`, e.g. `4:11: error: $[2].id: expected an integer, found string`.
    public var description: String { "\(location): \(severity.rawValue): \(path): \(message)" }

    /// Document order: by location, then errors first, then by path and message, so sorting is stable.
    ///
    /// ```swift
    /// let ordered = issues.sorted()
    /// ```
    public static func < (lhs: FeedIssue, rhs: FeedIssue) -> Bool {
        if lhs.location.offset != rhs.location.offset { return lhs.location.offset < rhs.location.offset }
        if lhs.severity != rhs.severity { return lhs.severity < rhs.severity }
        if lhs.path != rhs.path { return lhs.path < rhs.path }
        return lhs.message < rhs.message
    }
}
