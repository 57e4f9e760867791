/// A dotted numeric version such as `17.0.1` or `1.2`, as found in app and OS version targeting.
///
/// Versions compare component by component, numerically, and missing components count as zero:
/// `17 == 17.0 == 17.0.0`, `1.10 > 1.9`, `2.0028 < 3.0` (`2.0028` is major 2, minor 28).
/// Equality and hashing agree with that order, so `Version("17")` and `Version("17.0.0")` are equal and
/// hash alike.
///
/// Parsing is strict on purpose: digits and dots only, 1 to 8 components of at most 9 digits each
/// (so a component always fits an `Int`, on every platform), with leading and trailing whitespace ignored.
/// Pre-release or build suffixes (`1.2-beta`, `17.0 (21A329)`) are rejected; for a *running* version that
/// carries one, use ``init(lenient:)``.
///
/// ```swift
/// let ios = Version("17.0.1")!
/// ios > Version("17")!           // true
/// Version("1.10")! > Version("1.9")!   // true
/// Version("1.2-beta")           // nil
/// ```
package struct Version: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The most components a version may have (`1.2.3.4.5.6.7.8`).
    ///
    /// ```swift
    /// Version("1.2.3.4.5.6.7.8.9")   // nil: more than Version.maximumComponentCount
    /// ```
    static let maximumComponentCount = 8

    /// The most digits one component may have, so that it always fits an `Int` without overflow.
    ///
    /// ```swift
    /// Version("999999999")    // 999999999
    /// Version("1000000000")   // nil: 10 digits
    /// ```
    static let maximumComponentDigits = 9

    /// The numeric components as written: `Version("17.0")!.components == [17, 0]`.
    ///
    /// Trailing zeros are kept here (and in ``description``) even though they do not affect comparison.
    ///
    /// ```swift
    /// Version("17.0")!.components   // [17, 0]
    /// ```
    let components: [Int]

    /// Parses a strict dotted numeric version; nil unless the text is 1 to 8 dot-separated runs of 1 to 9
    /// ASCII digits, optionally surrounded by whitespace.
    ///
    /// Leading zeros inside a component are allowed and do not change its value (`2.0028` is `2.28`).
    /// `""`, `"1."`, `".1"`, `"1..2"`, `"v1"`, `"1.2-beta"`, `"-1"`, `"1e3"` and numbers too large for a
    /// component are all nil.
    ///
    /// ```swift
    /// Version(" 17.0 ")?.components   // [17, 0]
    /// Version("1e3")                  // nil
    /// ```
    package init?(_ text: String) {
        guard case .success(let version) = Version.parse(Version.trimmingWhitespace(text[...])) else { return nil }
        self = version
    }

    /// Makes a version from numeric components; nil unless there are 1 to 8 components, each in
    /// `0...999_999_999`.
    ///
    /// ```swift
    /// Version(components: [17, 4, 1])?.description   // "17.4.1"
    /// Version(components: [-1])                        // nil
    /// ```
    init?(components: [Int]) {
        guard (1...Version.maximumComponentCount).contains(components.count),
            components.allSatisfy({ (0...Version.largestComponent).contains($0) })
        else { return nil }
        self.components = components
    }

    /// Reads the leading dotted numeric prefix of a running version string, ignoring whatever follows.
    ///
    /// Meant for versions reported by the app or the OS, which may carry a suffix: `"1.2-beta"` reads as
    /// `1.2`, `"17.0 (21A329)"` as `17.0`, `"1."` as `1`. Leading whitespace is skipped. Reading stops at
    /// the first character that does not continue the pattern, or after 8 components. Returns nil when the
    /// text does not start with a digit (`"v1.2"`, `"beta"`, `""`) or when a component in the prefix is
    /// longer than 9 digits; a caller that gets nil should treat version lists as not matching.
    ///
    /// ```swift
    /// Version(lenient: "17.0 (21A329)")   // 17.0
    /// Version(lenient: "1.2-beta")        // 1.2
    /// Version(lenient: "beta")            // nil
    /// ```
    package init?(lenient text: String) {
        guard let (version, _) = Version.leading(Array(Version.trimmingWhitespace(text[...]).utf8)) else { return nil }
        self = version
    }

    /// The dotted numeric prefix of `bytes` as ``init(lenient:)`` reads it, with the count of bytes it spans.
    static func leading(_ bytes: [UInt8]) -> (Version, end: Int)? {
        var components: [Int] = []
        var index = 0
        while components.count < Version.maximumComponentCount {
            let start = index
            var value = 0
            while index < bytes.count, let digit = Version.digitValue(bytes[index]) {
                // Stop accumulating past the limit; the length check below rejects the component.
                if index - start < Version.maximumComponentDigits { value = value * 10 + digit }
                index += 1
            }
            let length = index - start
            if length == 0 { break }
            guard length <= Version.maximumComponentDigits else { return nil }
            components.append(value)
            // Continue only over a dot that is followed by another digit.
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "."), Version.digitValue(bytes[index + 1]) != nil
            else { break }
            index += 1
        }
        guard !components.isEmpty else { return nil }
        return (Version(checked: components), index)
    }

    /// The components joined by dots, as written apart from leading zeros: `"17.0"`, `"2.28"` for `2.0028`.
    ///
    /// ```swift
    /// Version("17.0")!.description   // "17.0"
    /// ```
    package var description: String {
        components.map(String.init).joined(separator: ".")
    }

    /// The component at `index`, or 0 past the end (the zero padding used by comparison).
    ///
    /// ```swift
    /// Version("17")![component: 2]   // 0
    /// ```
    subscript(component index: Int) -> Int {
        index < components.count ? components[index] : 0
    }

    /// Whether two versions are equal once the shorter is padded with zeros: `17 == 17.0.0`.
    ///
    /// ```swift
    /// Version("17")! == Version("17.0.0")!   // true
    /// ```
    package static func == (lhs: Version, rhs: Version) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Orders versions component by component, numerically, padding the shorter with zeros.
    ///
    /// ```swift
    /// Version("1.9")! < Version("1.10")!   // true
    /// ```
    package static func < (lhs: Version, rhs: Version) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the components without trailing zeros, so equal versions (`17`, `17.0`) hash alike.
    ///
    /// ```swift
    /// Set([Version("17")!, Version("17.0")!]).count   // 1
    /// ```
    package func hash(into hasher: inout Hasher) {
        hasher.combine(significantComponents)
    }

    // MARK: - Internals

    static let largestComponent = 999_999_999

    /// The components with trailing zeros dropped (`[17, 0, 0]` → `[17]`, `[0]` → `[]`).
    var significantComponents: ArraySlice<Int> {
        let end = (components.lastIndex { $0 != 0 } ?? -1) + 1
        return components[..<end]
    }

    /// -1, 0 or 1 as `lhs` is below, equal to or above `rhs`.
    static func compare(_ lhs: Version, _ rhs: Version) -> Int {
        for index in 0..<max(lhs.components.count, rhs.components.count) {
            let left = lhs[component: index], right = rhs[component: index]
            if left != right { return left < right ? -1 : 1 }
        }
        return 0
    }

    /// Parses a strict version token (already trimmed), saying why it is not one.
    static func parse(_ token: Substring) -> Result<Version, VersionRequirement.ParseError.Reason> {
        if token.isEmpty { return .failure(.empty) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        var components: [Int] = []
        components.reserveCapacity(parts.count)
        for part in parts {
            switch parseComponent(part) {
            case .success(let value): components.append(value)
            case .failure(.emptyComponent): return .failure(.emptyComponent(token: String(token)))
            case .failure(let reason): return .failure(reason)
            }
        }
        guard components.count <= maximumComponentCount else {
            return .failure(.tooManyComponents(token: String(token)))
        }
        return .success(Version(checked: components))
    }

    /// Parses one component: 1 to 9 ASCII digits. An empty part reports `.emptyComponent` with an empty
    /// token, which ``parse(_:)`` fills in.
    static func parseComponent(_ part: Substring) -> Result<Int, VersionRequirement.ParseError.Reason> {
        if part.isEmpty { return .failure(.emptyComponent(token: "")) }
        var value = 0
        for byte in part.utf8 {
            guard let digit = digitValue(byte) else { return .failure(.notANumber(String(part))) }
            value = value &* 10 &+ digit  // wrapping is harmless: a long part is rejected below
        }
        guard part.utf8.count <= maximumComponentDigits else { return .failure(.numberTooLarge(String(part))) }
        return .success(value)
    }

    /// Wraps components already known to be valid.
    private init(checked components: [Int]) {
        self.components = components
    }

    /// The value of an ASCII digit byte, or nil. Only `0`–`9` count: no other Unicode digits.
    static func digitValue(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }

    /// The text without leading and trailing whitespace (spaces, tabs, newlines, other Unicode spaces).
    static func trimmingWhitespace(_ text: Substring) -> Substring {
        let start = text.firstIndex { !$0.isWhitespace } ?? text.endIndex
        let end = text[start...].lastIndex { !$0.isWhitespace }.map { text.index(after: $0) } ?? start
        return text[start..<end]
    }
}
