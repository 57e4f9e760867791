@testable import MessageFeed
import Foundation
import TestFixtures
import Testing
import PrefsJSON

@Suite("FeedLinter")
struct FeedLinterTests {
    private func lint(_ text: String, now: Date? = nil) -> [String] {
        FeedLinter.lint(text, now: now).map(\.description)
    }

    @Test("the sample feeds are clean")
    func seedFeedsAreClean() {
        #expect(lint(Feeds.seed).isEmpty)
        #expect(lint(Feeds.multipleApplications).isEmpty)
    }

    @Test("a typo'd key gets a did-you-mean; http links and past endsAt are warned about")
    func typicalMistakes() {
        let text = """
            [
              {
                "id": 3,
                "bundleId": "com.example.app",
                "title": "Maintenance",
                "text": "Tonight",
                "confirmLabel": "OK",
                "appVersion": ["0"],
                "link": {"title": "Status", "url": "http://status.example.com"},
                "endsAt": "2026-02-01T00:00:00Z"
              }
            ]
            """
        #expect(
            lint(text, now: feedEpoch) == [
                #"8:5: warning: $[0].appVersion: unknown key "appVersion" is ignored; did you mean "appVersions"?"#,
                "9:40: warning: $[0].link.url: the link uses http; use https so the page cannot be altered on the way",
                "10:15: warning: $[0].endsAt: endsAt 2026-02-01T00:00:00Z is in the past (now is 2026-03-01T12:00:00Z): the message is no longer shown",
            ])
        #expect(lint(text).count == 2)  // without `now`, nothing is "past"

        // The seed's own misspelling of the cancel idiom: only the case differs, so it is an error that skips the message.
        #expect(
            lint(text.replacingOccurrences(of: #""appVersion""#, with: #""appversions""#), now: feedEpoch) == [
                #"8:5: error: $[0].appversions: unknown key "appversions" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean "appVersions"?"#
            ])
    }

    @Test("errors with paths and line:column, in document order")
    func errors() {
        let text = """
            [
              {"id": 1, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "osVersions": ["17.x", "18.0"]},
              {"id": 1, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "title": "U"},
              {"id": 2.5, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "rolloutPercent": 150},
              {"id": 4, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "startsAt": "2026-03-01T10:00:00"},
              {"id": 1, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "locales": ["en US"]},
              {"id": 1, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"}
            ]
            """
        #expect(
            lint(text) == [
                #"2:94: error: $[0].osVersions[0]: invalid version "17.x": "x" is not a number"#,
                #"3:79: error: $[1].title: duplicate key "title" (first at 3:30)"#,
                "4:10: error: $[2].id: expected an integer, found number",
                "4:99: error: $[2].rolloutPercent: expected an integer from 0 to 100, found 150",
                #"5:91: error: $[3].startsAt: "2026-03-01T10:00:00" has no time zone; add 'Z' or an offset such as +01:00"#,
                #"6:91: error: $[4].locales[0]: "en US" is not a language tag like "en" or "pt-BR""#,
                #"7:10: error: $[5].id: duplicate id 1 for bundleId "a" (first at $[0]); this message is skipped"#,
            ])
    }

    @Test("messages that can never match are warned about")
    func neverMatches() {
        let text = Feeds.of(
            Feeds.message(id: 1, #""cancelled": true"#),
            Feeds.message(id: 2, #""startsAt": "2026-03-02T00:00:00Z", "endsAt": "2026-03-01T00:00:00Z""#),
            Feeds.message(id: 3, #""osVersions": []"#),
            Feeds.message(id: 4, #""appVersions": ["0"]"#),
            Feeds.message(id: 5, #""locales": [], "rolloutPercent": 0"#)
        )
        let issues = FeedLinter.lint(text)
        #expect(issues.allSatisfy { $0.severity == .warning })
        #expect(
            issues.map(\.summary) == [
                "$[0].cancelled: message 1 is cancelled: it is never shown",
                "$[1].endsAt: endsAt 2026-03-01T00:00:00Z is not after startsAt 2026-03-02T00:00:00Z: the message is never shown",
                "$[2].osVersions: an empty osVersions list matches no version: the message is never shown; remove the key to target every version",
                #"$[3].appVersions: appVersions ["0"] matches no real version: this is the cancel idiom, the message is never shown"#,
                "$[4].locales: an empty locales list matches no locale: the message is never shown; remove the key to target every locale",
                "$[4].rolloutPercent: rolloutPercent 0 shows the message to no installation",
            ])
    }

    @Test("a message placed after a higher live id of its app is warned about: added after that id was acknowledged, it is skipped")
    func lowerIdsCanBeSkipped() {
        func message(_ id: Int, _ bundle: String, _ extra: String = "") -> String {
            #"{"id": \#(id), "bundleId": "\#(bundle)", "title": "t", "text": "x", "confirmLabel": "OK""# + extra + "}"
        }
        let text =
            "[\n"
            + [
                message(6, "a", #", "startsAt": "2026-12-01T00:00:00Z""#),
                message(7, "a", #", "priority": 10"#),
                message(9, "a", #", "cancelled": true"#),
                message(4, "a"),
                message(9, "b"),
                message(5, "b"),
            ].joined(separator: ",\n") + "\n]"
        #expect(
            lint(text).filter { !$0.contains("cancelled") } == [
                "5:8: warning: $[3].id: message 4 comes after message 7 for the same app but has a lower id: if it was added after 7, "
                    + "an installation that acknowledged 7 first never sees it; give a new message an id above 7",
                "7:8: warning: $[5].id: message 5 comes after message 9 for the same app but has a lower id: if it was added after 9, "
                    + "an installation that acknowledged 9 first never sees it; give a new message an id above 9",
            ], "6 before 7 is passed over, not lost; a cancelled 9 is never acknowledged")
    }

    /// Reported: 8,000 messages (701 KB) took 13–20 s to lint (the order check compared every pair); one pass now.
    @Test("a generated feed of 8,000 messages for 4 apps: every message placed after a higher id of its app, and only those")
    func largeFeed() {
        // Message i is for app i % 4, with id 100000 + i; every 100th (i = 99, 199, …) has the low id i / 100 + 1 instead,
        // so it comes after a higher id of its app: the one 4 places before it.
        let messages = (0..<8_000).map { index in
            let id = index % 100 == 99 ? index / 100 + 1 : 100_000 + index
            return #"{"id":\#(id),"bundleId":"com.ex.a\#(index % 4)","title":"T\#(index)","text":"Text \#(index)","confirmLabel":"OK"}"#
        }
        let text = "[" + messages.joined(separator: ",\n") + "]"
        let issues = FeedLinter.lint(text)
        #expect(issues.count == 80)
        #expect(issues.allSatisfy { $0.severity == .warning && $0.message.hasPrefix("message ") })
        #expect(issues.map(\.path) == (0..<80).map { "$[\($0 * 100 + 99)].id" })
        #expect(issues.first?.summary.hasPrefix("$[99].id: message 1 comes after message 100095 for the same app") == true)
        #expect(issues.last?.summary.hasPrefix("$[7999].id: message 80 comes after message 107995 for the same app") == true)
    }

    @Test("invalid JSON is one error with the parser's line and column")
    func invalidJSON() {
        #expect(
            lint("[\n  {\"id\": 1\n   \"bundleId\": \"a\"}\n]") == [
                #"3:4: error: $: invalid JSON: expected ',' or '}' after object member, found '"'"#
            ])
        #expect(lint(#"{"messages": []}"#) == ["1:1: error: $: expected an array of messages, found object"])
    }

    @Test("lint lists the first maximumIssues in document order, its own warnings included, then one counting the rest")
    func issuesAreCapped() {
        let cancelled = Feeds.message(id: 1, #""cancelled": true"#)
        let text = "[" + ([cancelled] + Array(repeating: "{}", count: 100)).joined(separator: ",") + "]"
        let issues = FeedLinter.lint(text)
        #expect(issues.count == FeedDecoder.maximumIssues + 1)
        #expect(issues.first?.summary == "$[0].cancelled: message 1 is cancelled: it is never shown", "added after the decoder's issues, still first")
        #expect(issues[1].summary == #"$[1]: missing required key "bundleId""#)
        #expect(issues.last?.summary == "$: and 301 more issues (301 errors) not listed")
        #expect(issues.last?.severity == .error)

        let warningsOnly = "[" + (1...300).map { Feeds.message(id: $0, #""cancelled": true"#) }.joined(separator: ",") + "]"
        let warnings = FeedLinter.lint(warningsOnly)
        #expect(warnings.count == FeedDecoder.maximumIssues + 1)
        #expect(warnings.last?.summary == "$: and 100 more issues not listed")
        #expect(warnings.last?.severity == .warning, "no error hidden: lint without --strict still passes")
    }

    @Test("did-you-mean picks the nearest known key, or none when nothing is close; only the case differing is an error")
    func didYouMean() {
        let text = Feeds.of(
            Feeds.message(
                id: 1,
                #""bundleID": "x", "confirmlabel": "OK", "startAt": "2026-03-01T00:00:00Z", "rollout": 5, "link": {"title": "T", "uri": "https://a.example", "url": "https://a.example"}"#
            ))
        #expect(
            FeedLinter.lint(text).map { "\($0.severity): \($0.message)" } == [
                "error: unknown key \"bundleID\" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean \"bundleId\"?",
                "error: unknown key \"confirmlabel\" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean \"confirmLabel\"?",
                "warning: unknown key \"startAt\" is ignored; did you mean \"startsAt\"?",
                "warning: unknown key \"rollout\" is ignored",
                "warning: unknown key \"uri\" is ignored; did you mean \"url\"?",
            ])
    }
}
