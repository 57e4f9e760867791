/// One entry of a feed's version list: which app or OS versions a message targets.
///
/// Four forms, which can be combined with spaces (all must hold):
/// - an exact version, `"1.2"`: equal to 1.2 with zero padding, so `1.2` and `1.2.0` match; a bare major is exact too
///   (`"17"` is 17.0.0 only: write `"17.*"` for every 17.x, as `feed lint` suggests);
/// - a wildcard, `"17.*"` or `"1.2.*"`: any version whose leading components are these (zero padded:
///   `17.*` matches `17`, `17.0` and `17.4.1`, not `170` or `18`); `"!=17.*"` is its negation;
/// - comparisons, `">=1.2 <2.0"`, with `>=`, `>`, `<=`, `<`, `=`/`==` and `!=`. A space may follow the
///   operator (`">= 1.2"`);
/// - a build in parentheses, `"2.0 (145)"` or `"(145)"`: the running version's build (``RunningVersion``, `2.0 (145)`
///   or `2.0+145`) is exactly `145`. A running version without a build matches no build token.
///
/// Versions compare with the running version's release, so a pre-release targets as its release (`2.0-beta.3` matches
/// `"2.0"`). An older release reads a build token as an invalid entry, which matches nothing: it fails closed.
///
/// ```swift
/// let range = try VersionRequirement(parsing: ">=1.2 <2.0")
/// range.matches(Version("1.10")!)   // true
/// range.matches(Version("2")!)      // false
/// try VersionRequirement(parsing: "1.x")   // throws: "1.x": "x" is not a number
/// ```
struct VersionRequirement: Sendable, Hashable, CustomStringConvertible {
    /// A comparison operator in a requirement.
    ///
    /// ```swift
    /// VersionRequirement.Operator(rawValue: ">=")   // .greaterOrEqual
    /// ```
    enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `==` (also written `=`, or left out: `"1.2"`).
        case equal = "=="
        /// `!=`.
        case notEqual = "!="
        /// `<`.
        case less = "<"
        /// `<=`.
        case lessOrEqual = "<="
        /// `>`.
        case greater = ">"
        /// `>=`.
        case greaterOrEqual = ">="

        /// Whether `version` stands in this relation to `bound`.
        ///
        /// ```swift
        /// VersionRequirement.Operator.less.holds(Version("1.9")!, Version("1.10")!)   // true
        /// ```
        func holds(_ version: Version, _ bound: Version) -> Bool {
            switch self {
            case .equal: version == bound
            case .notEqual: version != bound
            case .less: version < bound
            case .lessOrEqual: version <= bound
            case .greater: version > bound
            case .greaterOrEqual: version >= bound
            }
        }
    }

    /// One space-separated part of a requirement.
    ///
    /// ```swift
    /// try VersionRequirement(parsing: ">=1.2 <2.0").constraints
    /// // [.comparison(.greaterOrEqual, 1.2), .comparison(.less, 2.0)]
    /// ```
    enum Constraint: Sendable, Hashable, CustomStringConvertible {
        /// `>=1.2`, `!=1.3`, or a bare `1.2` (equal).
        case comparison(Operator, Version)
        /// `17.*` (leading components equal `prefix`), or `!=17.*` when `negated`.
        ///
        /// The prefix is kept as written, not as a ``Version``: `17.*` and `17.0.*` differ although
        /// `17 == 17.0`.
        case wildcard(prefix: [Int], negated: Bool)
        /// `(145)`: the running version's build is exactly this.
        case build(String)

        /// Whether `version` satisfies this constraint.
        ///
        /// ```swift
        /// VersionRequirement.Constraint.wildcard(prefix: [17], negated: false).matches(Version("17.4.1")!)   // true
        /// ```
        func matches(_ version: Version) -> Bool {
            matches(RunningVersion(release: version))
        }

        /// Whether a running version satisfies this constraint: a version or a wildcard by its release, a build by its
        /// build.
        func matches(_ running: RunningVersion) -> Bool {
            switch self {
            case .comparison(let op, let bound):
                return op.holds(running.release, bound)
            case .wildcard(let prefix, let negated):
                let hasPrefix = prefix.indices.allSatisfy { running.release[component: $0] == prefix[$0] }
                return hasPrefix != negated
            case .build(let build):
                return running.build == build
            }
        }

        /// The constraint in normalized form: `1.2` (equality is written bare), `>=1.2`, `17.*`, `!=17.*`.
        ///
        /// ```swift
        /// VersionRequirement.Constraint.comparison(.equal, Version("1.2")!).description   // "1.2"
        /// ```
        var description: String {
            switch self {
            case .comparison(.equal, let version):
                return version.description
            case .comparison(let op, let version):
                return op.rawValue + version.description
            case .wildcard(let prefix, let negated):
                let pattern = prefix.map(String.init).joined(separator: ".") + ".*"
                return negated ? "!=" + pattern : pattern
            case .build(let build):
                return "(\(build))"
            }
        }
    }

    /// Why a requirement could not be parsed, naming the whole text and the offending token.
    ///
    /// ```swift
    /// do { _ = try VersionRequirement(parsing: ">=") }
    /// catch { print(error) }   // ">=": missing version after ">="
    /// ```
    struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, with the token it concerns.
        ///
        /// It conforms to `Error` only so parsing internals can return `Result<_, Reason>`; the public
        /// initializers throw ``ParseError``, which adds the whole text.
        ///
        /// ```swift
        /// VersionRequirement.ParseError.Reason.notANumber("x").description   // "x" is not a number
        /// ```
        enum Reason: Error, Sendable, Hashable, CustomStringConvertible {
            /// The text is empty or only whitespace.
            case empty
            /// A version component is not made of ASCII digits: `"x"` in `1.x`, `"2-beta"` in `1.2-beta`.
            case notANumber(String)
            /// A version component has more than 9 digits.
            case numberTooLarge(String)
            /// A version has an empty component: `1.`, `.1`, `1..2`.
            case emptyComponent(token: String)
            /// A version has more than 8 components.
            case tooManyComponents(token: String)
            /// An operator with nothing after it: `>=`, or `>= <2`.
            case missingVersion(after: String)
            /// A run of `<`, `>`, `=`, `!` that is not an operator: `=>`, `!`, `<>`.
            case unknownOperator(String)
            /// `*` with no number before it: `*`, `>=*`.
            case bareWildcard
            /// `*` somewhere other than the last component: `1.*.2`.
            case misplacedWildcard(token: String)
            /// A wildcard after an ordering operator: `<17.*`.
            case wildcardAfterOrdering(Operator)
            /// A build that is not one parenthesized word, or with an operator: `()`, `>=(145)`, `(145`.
            case malformedBuild(token: String)

            /// The reason as a sentence fragment, quoting the token.
            ///
            /// ```swift
            /// VersionRequirement.ParseError.Reason.bareWildcard.description
            /// // a wildcard needs at least one leading number, like "17.*"
            /// ```
            var description: String {
                switch self {
                case .empty:
                    return #"empty requirement; write a version like "1.2", a wildcard like "17.*" or comparisons like ">=1.2 <2.0""#
                case .notANumber(let part):
                    return #""\#(part)" is not a number"#
                case .numberTooLarge(let part):
                    return #""\#(part)" is too large; a version component has at most \#(Version.maximumComponentDigits) digits"#
                case .emptyComponent(let token):
                    return #""\#(token)" has an empty component"#
                case .tooManyComponents(let token):
                    return #""\#(token)" has more than \#(Version.maximumComponentCount) components"#
                case .missingVersion(let op):
                    return #"missing version after "\#(op)""#
                case .unknownOperator(let op):
                    return #""\#(op)" is not an operator; use ==, =, !=, <, <=, > or >="#
                case .bareWildcard:
                    return #"a wildcard needs at least one leading number, like "17.*""#
                case .misplacedWildcard(let token):
                    return #""*" may only be the last component, but "\#(token)" has it elsewhere"#
                case .wildcardAfterOrdering(let op):
                    return #"a wildcard can only follow == or !=, not "\#(op.rawValue)"; compare with a version instead, like "\#(op.rawValue)17""#
                case .malformedBuild(let token):
                    return #""\#(token)" is not a build; write the build in parentheses, without an operator: "2.0 (145)" or "(145)""#
                }
            }
        }

        /// The whole requirement text, as given.
        let text: String
        /// What is wrong with it.
        let reason: Reason

        /// An error for `text`, as ``VersionRequirement/init(parsing:)`` throws it.
        ///
        /// ```swift
        /// VersionRequirement.ParseError(text: "1.x", reason: .notANumber("x"))
        /// ```
        init(text: String, reason: Reason) {
            self.text = text
            self.reason = reason
        }

        /// `"<text>": <reason>`, for example `"1.x": "x" is not a number`.
        var description: String {
            #""\#(text)": \#(reason)"#
        }
    }

    /// The constraints, all of which must hold; never empty.
    ///
    /// ```swift
    /// try VersionRequirement(parsing: "17.*").constraints   // [.wildcard(prefix: [17], negated: false)]
    /// ```
    let constraints: [Constraint]

    /// Parses one entry of a version list.
    ///
    /// ```swift
    /// let wildcard = try VersionRequirement(parsing: "17.*")
    /// wildcard.matches(Version("17.4.1")!)   // true
    /// ```
    /// - Throws: ``ParseError`` naming the offending token.
    init(parsing text: String) throws(ParseError) {
        switch Self.parse(text) {
        case .success(let constraints): self.constraints = constraints
        case .failure(let reason): throw ParseError(text: text, reason: reason)
        }
    }

    /// Whether `version` satisfies every constraint.
    ///
    /// ```swift
    /// try VersionRequirement(parsing: "16").matches(Version("16.0")!)   // true
    /// ```
    func matches(_ version: Version) -> Bool {
        constraints.allSatisfy { $0.matches(version) }
    }

    /// Whether a running version (release, and build for a build token) satisfies every constraint.
    ///
    /// ```swift
    /// try VersionRequirement(parsing: "2.0 (145)").matches(RunningVersion("2.0 (145)")!)   // true
    /// ```
    func matches(_ running: RunningVersion) -> Bool {
        constraints.allSatisfy { $0.matches(running) }
    }

    /// The normalized text, which parses back to an equal requirement: `">= 1.2   <2.0"` → `">=1.2 <2.0"`,
    /// `"=1.2"` → `"1.2"`.
    ///
    /// ```swift
    /// try VersionRequirement(parsing: "== 1.2").description   // "1.2"
    /// ```
    var description: String {
        constraints.map(\.description).joined(separator: " ")
    }

    // MARK: - Parsing

    private static let operatorCharacters: Set<Character> = ["<", ">", "=", "!"]

    private static func parse(_ text: String) -> Result<[Constraint], ParseError.Reason> {
        let tokens = text.split(whereSeparator: \.isWhitespace)
        if tokens.isEmpty { return .failure(.empty) }
        var constraints: [Constraint] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            let opText = token.prefix { operatorCharacters.contains($0) }
            var operand = token.dropFirst(opText.count)
            var op: Operator?
            if !opText.isEmpty {
                // "=" is accepted as a synonym of "==".
                guard let known = opText == "=" ? .equal : Operator(rawValue: String(opText)) else {
                    return .failure(.unknownOperator(String(opText)))
                }
                op = known
                if operand.isEmpty {
                    // ">= 1.2": the version is the next token, unless that starts with an operator itself.
                    guard index < tokens.count, let first = tokens[index].first, !operatorCharacters.contains(first)
                    else { return .failure(.missingVersion(after: String(opText))) }
                    operand = tokens[index]
                    index += 1
                }
            }
            switch constraint(op, operand) {
            case .success(let constraint): constraints.append(constraint)
            case .failure(let reason): return .failure(reason)
            }
        }
        return .success(constraints)
    }

    /// One constraint from its operator (nil when bare) and its operand, a version, a wildcard or a build.
    private static func constraint(_ op: Operator?, _ operand: Substring) -> Result<Constraint, ParseError.Reason> {
        if operand.contains("(") || operand.contains(")") {
            let inner = operand.dropFirst().dropLast()
            guard op == nil, operand.hasPrefix("("), operand.hasSuffix(")"), !inner.isEmpty, !inner.contains("("), !inner.contains(")")
            else { return .failure(.malformedBuild(token: (op?.rawValue ?? "") + operand)) }
            return .success(.build(String(inner)))
        }
        guard operand.contains("*") else {
            return Version.parse(operand).map { .comparison(op ?? .equal, $0) }
        }
        if operand == "*" { return .failure(.bareWildcard) }
        let parts = operand.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.last == "*", !parts.dropLast().contains("*") else {
            return .failure(.misplacedWildcard(token: String(operand)))
        }
        switch op {
        case nil, .equal?, .notEqual?: break
        case let ordering?: return .failure(.wildcardAfterOrdering(ordering))
        }
        // The prefix parses like a version ("17" of "17.*"); reuse its checks, naming the whole operand.
        let prefixText = operand.dropLast(2)
        if prefixText.isEmpty { return .failure(.bareWildcard) }
        return Version.parse(prefixText)
            .map { .wildcard(prefix: $0.components, negated: op == .notEqual) }
            .mapError { reason in
                switch reason {
                case .emptyComponent: .emptyComponent(token: String(operand))
                case .tooManyComponents: .tooManyComponents(token: String(operand))
                default: reason
                }
            }
    }
}
