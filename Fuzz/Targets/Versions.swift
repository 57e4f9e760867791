// libFuzzer target: MessageFeed's version and range parsers.
//
// Each line of the input is tried as a `Version` (strict and lenient), a `VersionRequirement` and, all
// together, a `VersionList`. What parses must print in a form that parses back equal; equality, order and
// hashing must agree; a requirement and its reparsed description match the same versions.
@testable import MessageFeed

@_cdecl("LLVMFuzzerTestOneInput")
public func versionsTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var versions: [Version] = []
    for line in lines {
        if let version = Version(line) {
            guard Version(version.description)?.components == version.components else {
                fatalError("Version(\"\(version)\") does not reparse to the same components")
            }
            guard Version(lenient: line)?.components == version.components else {
                fatalError("Version(lenient:) reads \"\(line)\" differently from Version(_:)")
            }
            versions.append(version)
        }
        if let lenient = Version(lenient: line) {
            guard Version(lenient.description) == lenient else { fatalError("lenient \"\(line)\" → \(lenient) does not reparse strictly") }
            versions.append(lenient)
        }
        if let requirement = try? VersionRequirement(parsing: line) {
            guard !requirement.constraints.isEmpty else { fatalError("requirement \"\(line)\" has no constraints") }
            let reparsed: VersionRequirement
            do {
                reparsed = try VersionRequirement(parsing: requirement.description)
            } catch {
                fatalError("description \"\(requirement)\" of \"\(line)\" does not parse: \(error)")
            }
            guard reparsed == requirement, reparsed.description == requirement.description else {
                fatalError("\"\(line)\" → \"\(requirement)\" → \"\(reparsed)\": not equal")
            }
            for version in versions + bounds(of: requirement) where reparsed.matches(version) != requirement.matches(version) {
                fatalError("\"\(requirement)\" and its reparse disagree on \(version)")
            }
        } else {
            do {
                _ = try VersionRequirement(parsing: line)
            } catch {
                _ = error.description
            }
        }
    }
    let list = VersionList(parsing: lines)
    guard list.entries.count == lines.count else { fatalError("VersionList lost entries") }
    _ = list.description
    for version in versions {
        _ = list.matches(version)
    }
    // Equality, order and hashing agree on every pair.
    for a in versions.prefix(8) {
        for b in versions.prefix(8) {
            let relations = [a < b, a == b, b < a].filter { $0 }.count
            guard relations == 1 else { fatalError("\(a) and \(b): not exactly one of <, ==, >") }
            if a == b, a.hashValue != b.hashValue { fatalError("\(a) == \(b) but their hashes differ") }
        }
    }
    return 0
}

/// Versions around each bound of a requirement, where a reparse that moved a bound would show.
private func bounds(of requirement: VersionRequirement) -> [Version] {
    requirement.constraints.flatMap { constraint -> [Version] in
        let components: [Int]
        switch constraint {
        case .comparison(_, let version): components = version.components
        case .wildcard(let prefix, _): components = prefix
        case .build: return []  // a build number bounds no version
        }
        let last = components.count - 1
        return [components, components + [0], components + [1]].compactMap(Version.init(components:))
            + [-1, 1].compactMap { delta in
                var moved = components
                moved[last] += delta
                return Version(components: moved)
            }
    }
}
