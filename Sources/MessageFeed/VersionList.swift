/// A feed's version list, such as `"appVersions": ["1.2", ">=1.4 <2.0", "17.*"]`: matches when any entry
/// matches.
///
/// - An **empty** list matches nothing. A **missing** list (the field absent from the feed) is not a
///   `VersionList` at all: the caller treats it as "no restriction".
/// - An entry that does not parse is kept, with its index and ``VersionRequirement/ParseError``, so a feed
///   linter can report it; it matches nothing, and the other entries still work.
/// - The cancel idiom `["0"]` keeps working: `"0"` is the exact version 0, which no real app or OS has.
///
/// ```swift
/// let list = VersionList(parsing: ["1.2", "1.x", ">=2"])
/// list.matches(Version("2.1")!)          // true
/// list.invalidEntries.map(\.index)       // [1]
/// VersionList(parsing: ["0"]).matches(Version("17.0.1")!)   // false
/// ```
struct VersionList: Sendable, Hashable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// One entry of the list: its position, its text as written and what it parsed to.
    ///
    /// ```swift
    /// let entry = VersionList(parsing: ["1.x"]).entries[0]
    /// entry.error?.description   // "1.x": "x" is not a number
    /// ```
    struct Entry: Sendable, Hashable {
        /// The position in the feed's array, from 0.
        let index: Int
        /// The entry as written in the feed.
        let text: String
        /// The parsed requirement, or why it could not be parsed.
        let result: Result<VersionRequirement, VersionRequirement.ParseError>

        /// The parsed requirement, or nil when the entry is invalid.
        var requirement: VersionRequirement? {
            if case .success(let requirement) = result { return requirement }
            return nil
        }

        /// Why the entry could not be parsed, or nil when it is valid.
        var error: VersionRequirement.ParseError? {
            if case .failure(let error) = result { return error }
            return nil
        }
    }

    /// Every entry, valid or not, in feed order.
    ///
    /// ```swift
    /// VersionList(parsing: ["1", "2"]).entries.count   // 2
    /// ```
    let entries: [Entry]

    /// Parses each entry on its own; bad entries are recorded, never fatal.
    ///
    /// ```swift
    /// let list = VersionList(parsing: ["17.*", "*"])
    /// list.requirements.count      // 1
    /// list.invalidEntries.count    // 1
    /// ```
    init(parsing texts: [String]) {
        entries = texts.enumerated().map { index, text in
            Entry(
                index: index, text: text,
                result: Result { () throws(VersionRequirement.ParseError) in
                    try VersionRequirement(parsing: text)
                })
        }
    }

    /// A list from string literals, parsed like ``init(parsing:)``.
    ///
    /// ```swift
    /// let list: VersionList = ["17.*", "18.0"]
    /// ```
    init(arrayLiteral texts: String...) {
        self.init(parsing: texts)
    }

    /// The requirements of the valid entries, in feed order.
    ///
    /// ```swift
    /// VersionList(parsing: ["1", "x"]).requirements.map(\.description)   // ["1"]
    /// ```
    var requirements: [VersionRequirement] {
        entries.compactMap(\.requirement)
    }

    /// The entries that did not parse, each with its index and error.
    ///
    /// ```swift
    /// VersionList(parsing: ["1", ">="]).invalidEntries.map(\.index)   // [1]
    /// ```
    var invalidEntries: [Entry] {
        entries.filter { $0.error != nil }
    }

    /// Whether any valid entry matches `version`; always false for an empty list.
    ///
    /// ```swift
    /// VersionList(parsing: []).matches(Version("1.0")!)   // false
    /// ```
    func matches(_ version: Version) -> Bool {
        matches(RunningVersion(release: version))
    }

    /// Whether any valid entry matches the running version (its release, and its build for a build token).
    ///
    /// ```swift
    /// VersionList(parsing: ["2.0 (145)"]).matches(RunningVersion("2.0 (145)")!)   // true
    /// ```
    func matches(_ running: RunningVersion) -> Bool {
        entries.contains { $0.requirement?.matches(running) ?? false }
    }

    /// The entries in normalized form, invalid ones as written and marked:
    /// `["1.2", ">=1.4 <2", "1.x" (invalid)]`.
    ///
    /// ```swift
    /// VersionList(parsing: ["= 1.2", "1.x"]).description   // ["1.2", "1.x" (invalid)]
    /// ```
    var description: String {
        let items = entries.map { entry in
            entry.requirement.map { #""\#($0)""# } ?? #""\#(entry.text)" (invalid)"#
        }
        return "[" + items.joined(separator: ", ") + "]"
    }
}
