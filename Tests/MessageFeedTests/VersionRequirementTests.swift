import Testing
@testable import MessageFeed
import PrefsJSON

@Suite("VersionRequirement")
struct VersionRequirementTests {
    private func v(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Version {
        try #require(Version(text), sourceLocation: sourceLocation)
    }

    /// The versions among `candidates` that `requirement` matches.
    private func matching(_ requirement: String, _ candidates: [String]) throws -> [String] {
        let parsed = try VersionRequirement(parsing: requirement)
        return try candidates.filter { try parsed.matches(v($0)) }
    }

    private let ladder = ["1", "1.1", "1.2", "1.2.0", "1.2.1", "1.10", "2", "2.0.0.1", "3"]

    // MARK: - Forms

    @Test("an exact version matches itself with zero padding only")
    func exact() throws {
        #expect(try matching("1.2", ladder) == ["1.2", "1.2.0"])
        #expect(try matching("16", ["16", "16.0", "16.0.0", "16.0.1", "1.6", "160"]) == ["16", "16.0", "16.0.0"])
        #expect(try matching("1.9", ["1.9", "1.10", "1.90"]) == ["1.9"])
    }

    @Test(
        "every operator",
        arguments: [
            ("==1.2", ["1.2", "1.2.0"]),
            ("=1.2", ["1.2", "1.2.0"]),
            ("!=1.2", ["1", "1.1", "1.2.1", "1.10", "2", "2.0.0.1", "3"]),
            ("<1.2", ["1", "1.1"]),
            ("<=1.2", ["1", "1.1", "1.2", "1.2.0"]),
            (">1.2", ["1.2.1", "1.10", "2", "2.0.0.1", "3"]),
            (">=1.2", ["1.2", "1.2.0", "1.2.1", "1.10", "2", "2.0.0.1", "3"]),
            (">= 1.2", ["1.2", "1.2.0", "1.2.1", "1.10", "2", "2.0.0.1", "3"]),
        ])
    func operators(requirement: String, expected: [String]) throws {
        #expect(try matching(requirement, ladder) == expected)
    }

    @Test("a conjunction needs every part; ranges are exact at their boundaries")
    func conjunctions() throws {
        #expect(try matching(">=1.2 <2.0", ladder) == ["1.2", "1.2.0", "1.2.1", "1.10"])
        #expect(try matching(">1.2 <=2", ladder) == ["1.2.1", "1.10", "2"])
        #expect(try matching(">=1.2  <2.0 !=1.10", ladder) == ["1.2", "1.2.0", "1.2.1"])
        #expect(try matching("\t>= 1.2\n< 2.0 ", ladder) == ["1.2", "1.2.0", "1.2.1", "1.10"])
        // Just below and just above each bound.
        #expect(
            try matching(">=17.0.1 <17.2", ["17", "17.0.0.9", "17.0.1", "17.1.99", "17.2", "17.2.0.1"])
                == ["17.0.1", "17.1.99"])
        // An empty range matches nothing.
        #expect(try matching(">2 <1", ladder) == [])
    }

    @Test("wildcards match leading components, zero padded")
    func wildcards() throws {
        let candidates = ["17", "17.0", "17.4.1", "170", "18", "16.9", "1.7"]
        #expect(try matching("17.*", candidates) == ["17", "17.0", "17.4.1"])
        #expect(try matching("1.2.*", ["1.2", "1.2.0", "1.2.9.9", "1.20", "1.3", "1"]) == ["1.2", "1.2.0", "1.2.9.9"])
        #expect(try matching("17.0.*", ["17", "17.0.5", "17.4"]) == ["17", "17.0.5"])
        #expect(try matching("==17.*", candidates) == ["17", "17.0", "17.4.1"])
        #expect(try matching("!=17.*", candidates) == ["170", "18", "16.9", "1.7"])
        #expect(try matching("17.* !=17.0.1", ["17", "17.0.1", "17.0.2"]) == ["17", "17.0.2"])
    }

    @Test("17.* and 17.0.* are different requirements although 17 == 17.0")
    func wildcardPrefixIdentity() throws {
        #expect(try VersionRequirement(parsing: "17.*") != VersionRequirement(parsing: "17.0.*"))
        #expect(try VersionRequirement(parsing: "17") == VersionRequirement(parsing: "17.0"))
    }

    @Test(
        "description is the normalized text and parses back",
        arguments: [
            ("1.2", "1.2"), ("=1.2", "1.2"), ("== 1.2", "1.2"), (">= 1.2   <2.0", ">=1.2 <2.0"),
            ("17.*", "17.*"), ("!= 17.*", "!=17.*"), ("2.0028", "2.28"), (" !=3 ", "!=3"),
        ])
    func normalized(text: String, expected: String) throws {
        let requirement = try VersionRequirement(parsing: text)
        #expect(requirement.description == expected)
        #expect(try VersionRequirement(parsing: requirement.description) == requirement)
    }

    // MARK: - Errors

    @Test(
        "bad requirements fail with a reason naming the offending token",
        arguments: [
            ("1.x", #""1.x": "x" is not a number"#),
            (">=", #"">=": missing version after ">=""#),
            (">= <2", #"">= <2": missing version after ">=""#),
            ("*", #""*": a wildcard needs at least one leading number, like "17.*""#),
            (">=*", #"">=*": a wildcard needs at least one leading number, like "17.*""#),
            (".*", #"".*": a wildcard needs at least one leading number, like "17.*""#),
            ("", #""": empty requirement; write a version like "1.2", a wildcard like "17.*" or comparisons like ">=1.2 <2.0""#),
            ("  ", #""  ": empty requirement; write a version like "1.2", a wildcard like "17.*" or comparisons like ">=1.2 <2.0""#),
            ("1.", #""1.": "1." has an empty component"#),
            (".1", #"".1": ".1" has an empty component"#),
            ("1..2", #""1..2": "1..2" has an empty component"#),
            ("1..*", #""1..*": "1..*" has an empty component"#),
            ("v1", #""v1": "v1" is not a number"#),
            ("1.2-beta", #""1.2-beta": "2-beta" is not a number"#),
            ("-1", #""-1": "-1" is not a number"#),
            ("1e3", #""1e3": "1e3" is not a number"#),
            (">=1.2,<2.0", #"">=1.2,<2.0": "2,<2" is not a number"#),
            ("99999999999999999999999", #""99999999999999999999999": "99999999999999999999999" is too large; a version component has at most 9 digits"#),
            (">=1.10000000000", #"">=1.10000000000": "10000000000" is too large; a version component has at most 9 digits"#),
            ("1.2.3.4.5.6.7.8.9", #""1.2.3.4.5.6.7.8.9": "1.2.3.4.5.6.7.8.9" has more than 8 components"#),
            ("=>1", #""=>1": "=>" is not an operator; use ==, =, !=, <, <=, > or >="#),
            ("!1", #""!1": "!" is not an operator; use ==, =, !=, <, <=, > or >="#),
            ("<>1", #""<>1": "<>" is not an operator; use ==, =, !=, <, <=, > or >="#),
            ("1.*.2", #""1.*.2": "*" may only be the last component, but "1.*.2" has it elsewhere"#),
            ("17*", #""17*": "*" may only be the last component, but "17*" has it elsewhere"#),
            ("<17.*", #""<17.*": a wildcard can only follow == or !=, not "<"; compare with a version instead, like "<17""#),
            (">=1 <", #"">=1 <": missing version after "<""#),
        ])
    func errors(text: String, message: String) {
        #expect {
            try VersionRequirement(parsing: text)
        } throws: { error in
            (error as? VersionRequirement.ParseError)?.description == message
        }
        do {
            _ = try VersionRequirement(parsing: text)
        } catch {
            #expect(error.description == message)
            #expect(error.text == text)
        }
    }

    @Test("typed reasons are available to a linter")
    func reasons() {
        #expect(throws: VersionRequirement.ParseError(text: "1.x", reason: .notANumber("x"))) {
            try VersionRequirement(parsing: "1.x")
        }
    }
}

@Suite("VersionList")
struct VersionListTests {
    private func v(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Version {
        try #require(Version(text), sourceLocation: sourceLocation)
    }

    private let realistic = ["0.1", "0.0.1", "1", "1.0", "1.2.3", "16.7.2", "17.0.1", "17.2", "18.0", "999999999"]

    @Test("matches when any entry matches")
    func any() throws {
        let list: VersionList = ["1.2", ">=1.4 <2.0", "17.*"]
        #expect(try list.matches(v("1.2.0")))
        #expect(try list.matches(v("1.9")))
        #expect(try list.matches(v("17.4.1")))
        #expect(try !list.matches(v("1.3")))
        #expect(try !list.matches(v("2.0")))
    }

    @Test("the cancel idiom [\"0\"] matches nothing realistic")
    func cancelIdiom() throws {
        let cancelled = VersionList(parsing: ["0"])
        #expect(cancelled.invalidEntries.isEmpty)
        for text in realistic {
            #expect(try !cancelled.matches(v(text)), "\(text)")
        }
        // It is the exact version 0, nothing more.
        #expect(try cancelled.matches(v("0.0")))
    }

    @Test("an empty list matches nothing")
    func empty() throws {
        let list = VersionList(parsing: [])
        #expect(list.entries.isEmpty)
        for text in realistic + ["0"] {
            #expect(try !list.matches(v(text)), "\(text)")
        }
    }

    @Test("bad entries are reported by index and match nothing; the others still work")
    func badEntries() throws {
        let list = VersionList(parsing: ["1.x", "17.*", ">=", "1.2"])
        #expect(list.invalidEntries.map(\.index) == [0, 2])
        #expect(
            list.invalidEntries.map { $0.error?.description } == [
                #""1.x": "x" is not a number"#, #"">=": missing version after ">=""#,
            ])
        #expect(list.invalidEntries.map(\.text) == ["1.x", ">="])
        #expect(list.requirements.map(\.description) == ["17.*", "1.2"])
        #expect(list.entries.map { $0.requirement == nil } == [true, false, true, false])
        #expect(try list.matches(v("17.3")))
        #expect(try list.matches(v("1.2")))
        #expect(try !list.matches(v("1")))
        // A list of only bad entries matches nothing.
        #expect(try !VersionList(parsing: ["1.2-beta", "*"]).matches(v("1.2")))
    }

    @Test("description shows normalized entries and marks invalid ones")
    func description() {
        #expect(VersionList(parsing: ["= 1.2", "1.x", ">= 1 <2"]).description == #"["1.2", "1.x" (invalid), ">=1 <2"]"#)
        #expect(VersionList(parsing: []).description == "[]")
    }

    @Test("a running version with a suffix is read leniently before matching")
    func lenientRunningVersion() throws {
        let list: VersionList = ["17.*"]
        #expect(Version("17.0 (21A329)") == nil)
        let running = try #require(Version(lenient: "17.0 (21A329)"))
        #expect(list.matches(running))
        let beta = try #require(Version(lenient: "1.2-beta"))
        #expect(VersionList(parsing: ["1.2"]).matches(beta))
    }
}
