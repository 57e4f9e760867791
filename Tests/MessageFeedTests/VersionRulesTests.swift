import Foundation
import Testing
@testable import MessageFeed
import TestFixtures

/// The version rules of feed targeting: a running version's pre-release and build, build tokens in a feed, and the bare
/// major that matches one version only.
@Suite("Version rules: pre-releases, builds, bare majors")
struct VersionRulesTests {
    @Test(
        "a running version reads as release, pre-release and build, in the forms apps report",
        arguments: [
            ("2.0", "2.0", nil, nil),
            ("2.0-beta.3", "2.0", "beta.3", nil),
            ("2.0b3", "2.0", "b3", nil),
            ("2.0 (145)", "2.0", nil, "145"),
            ("2.0(145)", "2.0", nil, "145"),
            ("2.0+145", "2.0", nil, "145"),
            ("17.0 (21A329)", "17.0", nil, "21A329"),
            ("2.0-rc.1 (145)", "2.0", "rc.1", "145"),
            (" 1.4.2 ", "1.4.2", nil, nil),
            ("2.0 ()", "2.0", nil, nil),
        ] as [(String, String, String?, String?)])
    func runningVersion(text: String, release: String, preRelease: String?, build: String?) throws {
        let version = try #require(RunningVersion(text))
        #expect(version.release == Version(release))
        #expect(version.preRelease == preRelease)
        #expect(version.build == build)
    }

    /// Reported: build numbers could not be targeted ("2.0 (145)" read as 2.0).
    @Test(
        "a build in parentheses targets a build: \"2.0 (145)\" matches build 145 of 2.0 only, \"(145)\" build 145 of any version",
        arguments: [
            ("2.0 (145)", "2.0 (145)", true), ("2.0 (145)", "2.0+145", true), ("2.0 (145)", "2.0 (146)", false),
            ("2.0 (145)", "2.0", false), ("2.0 (145)", "2.1 (145)", false), ("(145)", "3.1 (145)", true),
            (">=2.0 (145)", "2.0.1 (145)", true), ("2.0", "2.0 (146)", true), ("17.0 (21A329)", "17.0 (21A329)", true),
        ])
    func buildTargeting(entry: String, running: String, matches: Bool) throws {
        let list = VersionList(parsing: [entry])
        #expect(list.invalidEntries.isEmpty)
        #expect(list.matches(try #require(RunningVersion(running))) == matches)
    }

    @Test("a pre-release targets as the release it leads to; a malformed build is an invalid entry, named")
    func preReleaseAndMalformedBuilds() throws {
        #expect(VersionList(parsing: ["2.0"]).matches(try #require(RunningVersion("2.0-beta.3"))))
        #expect(VersionList(parsing: [">=2.0"]).matches(try #require(RunningVersion("2.0-beta.3"))))
        for (entry, message) in [
            ("()", #""()": "()" is not a build; write the build in parentheses, without an operator: "2.0 (145)" or "(145)""#),
            (">=(145)", #"">=(145)": ">=(145)" is not a build; write the build in parentheses, without an operator: "2.0 (145)" or "(145)""#),
            ("2.0 (145", #""2.0 (145": "(145" is not a build; write the build in parentheses, without an operator: "2.0 (145)" or "(145)""#),
        ] {
            #expect(VersionList(parsing: [entry]).invalidEntries.first?.error?.description == message)
        }
        #expect(try VersionRequirement(parsing: "2.0  (145)").description == "2.0 (145)")
    }

    @Test("targeting explains a build: the running version is shown with it")
    func explainedBuild() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.message(id: 1, #""appVersions": ["2.0 (145)"]"#)))
        let context = MessageContext.seedApp.with(appVersion: "2.0 (146)")
        let report = MessageTargeting.explain(feed.messages, context: context, now: feedEpoch, lastMessageId: 0, installationId: "i")
        #expect(report.selected == nil)
        #expect(report.evaluations.first?.check(.appVersions)?.summary == #"appVersions (2.0 (146) matches none of ["2.0 (145)"])"#)
        let built = MessageTargeting.explain(
            feed.messages, context: context.with(appVersion: "2.0 (145)"), now: feedEpoch, lastMessageId: 0, installationId: "i")
        #expect(built.selected?.id == 1)
    }

    /// Reported: "17" in a list means exactly 17.0.0, and the article's sample ["17", "18.*"] invites the wrong reading.
    @Test("feed lint warns where a bare major is likely meant as a range, and not where the list names that major otherwise")
    func bareMajorWarning() {
        let feed = Feeds.of(
            Feeds.message(id: 1, #""osVersions": ["17", "18.*"]"#),
            Feeds.message(id: 2, #""appVersions": ["3", "3.0.1"]"#),
            Feeds.message(id: 3, #""osVersions": ["0"]"#),
            Feeds.message(id: 4, #""appVersions": ["17.0", ">=18"]"#))
        let warnings = FeedLinter.lint(feed).filter { $0.message.contains("only") }.map(\.description)
        #expect(
            warnings == [
                #"2:133: warning: $[0].osVersions[0]: "17" matches version 17.0.0 only, not 17.1 or 17.0.1; write "17.*" for every 17.x, or "17.0" if only 17.0.0 is meant"#
            ])
    }
}
