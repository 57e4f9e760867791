/// A version as a running app or OS reports it: its release (a dotted numeric ``Version``), then optionally a
/// pre-release and a build, in the forms apps use.
///
/// - `2.0` is release 2.0; `2.0.0` is the same release.
/// - `2.0-beta.3` and `2.0b3` are pre-release `beta.3` / `b3` of release 2.0 (a pre-release comes before its release).
/// - `2.0 (145)`, `2.0(145)` and `2.0+145` are build `145` of release 2.0; `17.0 (21A329)` is build `21A329` of 17.0;
///   `2.0-rc.1 (145)` has both.
///
/// Feed targeting matches an entry's version against the release, so a pre-release targets as the release it leads to
/// (`2.0-beta.3` matches `"2.0"` and `">=2.0"`), and an entry's build token (`"2.0 (145)"`, `"(145)"`) against the
/// build. DialogGate's version reset (`DialogPolicy.resetsOn`) compares the parts its choice names.
///
/// ```swift
/// RunningVersion("2.0-beta.3 (145)")   // release 2.0, pre-release "beta.3", build "145"
/// RunningVersion("beta")               // nil: no leading number
/// ```
package struct RunningVersion: Sendable, Hashable, CustomStringConvertible {
    /// The numeric release: `2.0` of `2.0-beta.3 (145)`.
    package var release: Version
    /// The pre-release, without its `-`: `beta.3`; nil for a release.
    package var preRelease: String?
    /// The build: `145` of `2.0 (145)` or `2.0+145`; nil when none is given.
    package var build: String?

    /// A release without pre-release or build.
    init(release: Version) {
        self.release = release
    }

    /// Reads a running version; nil when it does not start with a number (see ``Version/init(lenient:)``). What follows
    /// the release and is neither a pre-release nor a build is ignored.
    package init?(_ text: String) {
        let bytes = Array(Version.trimmingWhitespace(text[...]).utf8)
        guard let (release, end) = Version.leading(bytes) else { return nil }
        self.release = release
        var rest = bytes[end...]
        func isIdentifier(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || Version.digitValue(byte) != nil
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        func string(_ slice: ArraySlice<UInt8>) -> String? {
            slice.isEmpty ? nil : String(decoding: slice, as: UTF8.self)
        }
        // A pre-release: "-beta.3", or letters right after the numbers ("2.0b3").
        if let first = rest.first, first == UInt8(ascii: "-") || (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z") {
            let start = first == UInt8(ascii: "-") ? rest.startIndex + 1 : rest.startIndex
            let stop = rest[start...].firstIndex { !isIdentifier($0) } ?? rest.endIndex
            preRelease = string(rest[start..<stop])
            rest = rest[stop...]
        }
        // A build: "+145", or "(145)" after optional spaces.
        let afterSpaces = rest.drop { $0 == UInt8(ascii: " ") }
        if rest.first == UInt8(ascii: "+") {
            let start = rest.startIndex + 1
            build = string(rest[start..<(rest[start...].firstIndex { !isIdentifier($0) } ?? rest.endIndex)])
        } else if afterSpaces.first == UInt8(ascii: "("), let close = afterSpaces.firstIndex(of: UInt8(ascii: ")")) {
            build = string(afterSpaces[(afterSpaces.startIndex + 1)..<close]).map { String(Version.trimmingWhitespace($0[...])) }
            if build?.isEmpty == true { build = nil }
        }
    }

    /// Whether the pre-releases are the same, ignoring case (`Beta` and `beta`).
    package func hasSamePreRelease(as other: RunningVersion) -> Bool {
        preRelease?.lowercased() == other.preRelease?.lowercased()
    }

    /// `2.0-beta.3 (145)`: the release as written, then the pre-release and the build.
    package var description: String {
        release.description + (preRelease.map { "-" + $0 } ?? "") + (build.map { " (\($0))" } ?? "")
    }
}
