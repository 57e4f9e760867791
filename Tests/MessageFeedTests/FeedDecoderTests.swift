@testable import MessageFeed
import Foundation
import TestFixtures
import Testing
import PrefsJSON

@Suite("FeedDecoder")
struct FeedDecoderTests {
    // MARK: - The seed's format

    @Test("the basic feed decodes into one message with every field")
    func seedFeed() throws {
        let feed = try FeedDecoder.decode(Feeds.seed)
        #expect(feed.issues.isEmpty)
        let message = try #require(feed.messages.first)
        #expect(feed.messages.count == 1)
        #expect(message.id == 1)
        #expect(message.bundleId == "com.createchsol.AppAlertExample")
        #expect(message.title == "App Alert")
        #expect(message.text == "Warning:  There is a bug in the application and I am working on it.")
        #expect(message.confirmLabel == "OK")
        #expect(message.link == nil && message.appVersions == nil && message.osVersions == nil)
        #expect(message.cancelled == false && message.priority == 0 && message.rolloutPercent == nil)
    }

    @Test("a multi-app sample keeps links and version lists")
    func multipleApplications() throws {
        let feed = try FeedDecoder.decode(Feeds.multipleApplications)
        #expect(feed.issues.isEmpty)
        #expect(feed.messages.map(\.id) == [3, 1])
        let first = feed.messages[0]
        #expect(first.link == RemoteMessage.Link(title: "More information", url: URL(string: "https://www.createchsol.com")!))
        #expect(first.osVersions?.description == #"["17.0.1", "17.2"]"#)
        #expect(first.appVersions?.description == #"["1.0"]"#)
        #expect(feed.messages[1].bundleId == "com.createchsol.MyWineCellar")
    }

    @Test("optional targeting fields")
    func optionalFields() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(
                    id: 4,
                    #"""
                    "cancelled": true, "startsAt": "2026-03-01T00:00:00Z", "endsAt": "2026-03-02T01:00:00+01:00",
                    "priority": -2, "locales": ["en", "pt_BR"], "rolloutPercent": 25, "link": null, "appVersions": null
                    """#)))
        #expect(feed.issues.isEmpty)
        let message = try #require(feed.messages.first)
        #expect(message.cancelled)
        #expect(message.startsAt.map(ISO8601.format) == "2026-03-01T00:00:00Z")
        #expect(message.endsAt.map(ISO8601.format) == "2026-03-02T00:00:00Z")
        #expect(message.priority == -2)
        #expect(message.locales == ["en", "pt_BR"])
        #expect(message.rolloutPercent == 25)
        #expect(message.link == nil && message.appVersions == nil)
    }

    // MARK: - Bad entries are skipped, the others still work

    @Test("a bad message is skipped with its JSON path; the others are kept")
    func badMessagesSkipped() throws {
        let text = """
            [
              {"id": 1, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"},
              {"id": 2, "bundleId": "a", "title": "T", "text": "x"},
              {"id": "3", "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"},
              "not a message",
              {"id": 5, "bundleId": "a", "title": 5, "text": "x", "confirmLabel": "OK", "osVersions": "17"},
              {"id": 6, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"}
            ]
            """
        let feed = try FeedDecoder.decode(text)
        #expect(feed.messages.map(\.id) == [1, 6])
        #expect(feed.skippedIndexes == [1, 2, 3, 4])
        #expect(
            feed.issues.map(\.description) == [
                #"3:3: error: $[1]: missing required key "confirmLabel""#,
                "4:10: error: $[2].id: expected an integer, found string",
                "5:3: error: $[3]: expected an object, found string",
                "6:39: error: $[4].title: expected a string, found integer",
                "6:91: error: $[4].osVersions: expected an array of strings, found string",
            ])
    }

    @Test("an id beyond Int64 skips only its message")
    func outOfRangeId() throws {
        let text = Feeds.of(Feeds.message(id: 1), #"{"id": 99999999999999999999, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"}"#)
        let feed = try FeedDecoder.decode(text)
        #expect(feed.messages.map(\.id) == [1])
        #expect(
            feed.issues.map(\.summary) == [
                "$[1].id: 99999999999999999999 is out of range (an integer must be within -9223372036854775808...9223372036854775807)"
            ])
        #expect(feed.issues.first?.location.description == "3:8")
    }

    @Test("ids must be positive; rolloutPercent within 0...100")
    func ranges() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(id: 0), Feeds.message(id: -4), Feeds.message(id: 2, #""rolloutPercent": 101"#),
                Feeds.message(id: 3, #""rolloutPercent": 12.5"#)
            ))
        #expect(feed.messages.isEmpty)
        #expect(
            feed.issues.map(\.summary) == [
                "$[0].id: expected a positive integer, found 0",
                "$[1].id: expected a positive integer, found -4",
                "$[2].rolloutPercent: expected an integer from 0 to 100, found 101",
                "$[3].rolloutPercent: expected an integer, found number",
            ])
    }

    @Test("length caps: title 200, text 5,000, labels 100 characters")
    func lengthCaps() throws {
        let title = String(repeating: "é", count: 200)  // characters, not bytes
        let long = String(repeating: "x", count: 201)
        let feed = try FeedDecoder.decode(
            Feeds.of(
                #"{"id": 1, "bundleId": "a", "title": "\#(title)", "text": "\#(String(repeating: "y", count: 5_000))", "confirmLabel": "OK"}"#,
                #"{"id": 2, "bundleId": "a", "title": "\#(long)", "text": "x", "confirmLabel": "OK"}"#,
                #"{"id": 3, "bundleId": "a", "title": "T", "text": "\#(String(repeating: "y", count: 5_001))", "confirmLabel": "OK"}"#,
                #"{"id": 4, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "\#(String(repeating: "b", count: 101))"}"#,
                #"{"id": 5, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK", "link": {"title": "\#(long)", "url": "https://a.example"}}"#
            ))
        #expect(feed.messages.map(\.id) == [1])
        #expect(
            feed.issues.map(\.summary) == [
                "$[1].title: 201 characters, more than the maximum of 200",
                "$[2].text: 5001 characters, more than the maximum of 5000",
                "$[3].confirmLabel: 101 characters, more than the maximum of 100",
                "$[4].link.title: 201 characters, more than the maximum of 100",
            ])
    }

    @Test("a link with a refused URL is dropped; the message stays")
    func linkDropped() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(id: 1, #""link": {"title": "Open", "url": "javascript:alert(1)"}"#),
                Feeds.message(id: 2, #""link": {"title": "Open", "url": "myapp://settings"}"#),
                Feeds.message(id: 3, #""link": {"title": "Open", "url": "https:///nohost"}"#),
                Feeds.message(id: 4, #""link": {"title": "Open", "url": "http://example.com/info"}"#),
                Feeds.message(id: 5, #""link": {"title": "Open", "url": "https://www.apple.com@example.net/"}"#)
            ))
        #expect(feed.messages.map(\.id) == [1, 2, 3, 4, 5])
        #expect(feed.messages.map { $0.link?.url.absoluteString } == [nil, nil, nil, "http://example.com/info", nil])
        #expect(
            feed.issues.map(\.summary) == [
                #"$[0].link.url: link dropped: the scheme "javascript" is not allowed (allowed: http, https); the message is shown without it"#,
                #"$[1].link.url: link dropped: the scheme "myapp" is not allowed (allowed: http, https); the message is shown without it"#,
                #"$[2].link.url: link dropped: "https:///nohost" has no host; the message is shown without it"#,
                #"$[4].link.url: link dropped: "https://www.apple.com@example.net/" has a user name before its host "example.net", which makes it read as another site; the message is shown without it"#,
            ])
        let allowing = try FeedDecoder.decode(
            Feeds.of(Feeds.message(id: 2, #""link": {"title": "Open", "url": "myapp://settings"}"#)),
            options: FeedOptions(allowedLinkSchemes: ["MyApp"]))
        #expect(allowing.messages.first?.link?.url.absoluteString == "myapp://settings")
        #expect(allowing.issues.isEmpty)
    }

    @Test("a malformed link object skips the message")
    func malformedLink() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.message(id: 1, #""link": {"title": "Open"}"#), Feeds.message(id: 2, #""link": "https://a.example""#)))
        #expect(feed.messages.isEmpty)
        #expect(
            feed.issues.map(\.summary) == [
                #"$[0].link: missing required key "url""#,
                #"$[1].link: expected an object with "title" and "url", found string"#,
            ])
    }

    @Test("control characters are kept and warned about; newlines and tabs are fine")
    func controlCharacters() throws {
        let feed = try FeedDecoder.decode(Feeds.of(#"{"id": 1, "bundleId": "a", "title": "T\u0007", "text": "line 1\nline 2\tend", "confirmLabel": "OK"}"#))
        #expect(feed.messages.first?.title == "T\u{7}")
        #expect(feed.messages.first?.text == "line 1\nline 2\tend")
        #expect(feed.issues.map(\.summary) == ["$[0].title: contains the control character U+0007"])
        #expect(feed.issues.first?.severity == .warning)
    }

    @Test("dates need a time zone")
    func dates() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(id: 1, #""startsAt": "2026-03-01T10:00:00""#),
                Feeds.message(id: 2, #""endsAt": "2026-03-01""#),
                Feeds.message(id: 3, #""endsAt": "2026-13-01T00:00:00Z""#)
            ))
        #expect(feed.messages.isEmpty)
        #expect(
            feed.issues.map(\.summary) == [
                #"$[0].startsAt: "2026-03-01T10:00:00" has no time zone; add 'Z' or an offset such as +01:00"#,
                #"$[1].endsAt: "2026-03-01" is a date without a time and time zone; write e.g. 2026-03-01T00:00:00Z"#,
                #"$[2].endsAt: "2026-13-01T00:00:00Z" is not an ISO-8601 date-time: month 13 is out of range"#,
            ])
    }

    @Test("an invalid version entry matches nothing, the message and its other entries stay")
    func invalidVersionEntry() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.message(id: 1, #""appVersions": ["1.x", "2.0"]"#)))
        let message = try #require(feed.messages.first)
        #expect(message.appVersionList?.matches(Version("2")!) == true)
        #expect(feed.issues.map(\.summary) == [#"$[0].appVersions[0]: invalid version "1.x": "x" is not a number"#])
        #expect(feed.skippedIndexes.isEmpty)
    }

    @Test("duplicate keys and duplicate ids within one bundle skip the later message")
    func duplicates() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(id: 1), Feeds.message(id: 1, bundleId: "other"), Feeds.message(id: 1),
                #"{"id": 2, "id": 3, "bundleId": "a", "title": "T", "text": "x", "confirmLabel": "OK"}"#
            ))
        #expect(feed.messages.map(\.feedIndex) == [0, 1])
        #expect(
            feed.issues.map(\.summary) == [
                #"$[2].id: duplicate id 1 for bundleId "com.createchsol.AppAlertExample" (first at $[0]); this message is skipped"#,
                #"$[3].id: duplicate key "id" (first at 5:2)"#,
            ])
    }

    @Test("unknown keys are ignored with a did-you-mean warning")
    func unknownKeys() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.message(id: 1, #""appVersion": ["0"], "colour": "red""#)))
        #expect(feed.messages.count == 1)
        #expect(feed.messages.first?.appVersions == nil)
        #expect(
            feed.issues.map(\.summary) == [
                #"$[0].appVersion: unknown key "appVersion" is ignored; did you mean "appVersions"?"#,
                #"$[0].colour: unknown key "colour" is ignored"#,
            ])
    }

    @Test("a known key in the wrong case (\"appversions\": [\"0\"], the cancel idiom misspelt) skips the message: it fails closed")
    func wrongCaseKey() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.message(id: 1, #""appversions": ["0"]"#),
                Feeds.message(id: 2, #""link": {"Title": "More", "url": "https://example.com"}"#),
                Feeds.message(id: 3)))
        #expect(feed.messages.map(\.id) == [3])
        #expect(feed.skippedIndexes == [0, 1])
        #expect(
            feed.issues.map(\.description) == [
                #"2:118: error: $[0].appversions: unknown key "appversions" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean "appVersions"?"#,
                #"3:126: error: $[1].link: missing required key "title""#,
                #"3:127: error: $[1].link.Title: unknown key "Title" skips the message (keys are case-sensitive, and ignoring it could show what it restricts); did you mean "title"?"#,
            ])
    }

    @Test("a feed with a huge number of issues lists the first maximumIssues in document order, then one counting the rest")
    func issuesAreCapped() throws {
        let count = 60_000  // 5 missing keys each: 300,000 issues
        let feed = try FeedDecoder.decode("[" + Array(repeating: "{}", count: count).joined(separator: ",") + ", " + Feeds.message(id: 1) + "]")
        #expect(feed.messages.map(\.id) == [1])
        #expect(feed.skippedIndexes.count == count)
        #expect(feed.issues.count == FeedDecoder.maximumIssues + 1)
        #expect(feed.issues.prefix(5).map(\.summary) == ["bundleId", "confirmLabel", "id", "text", "title"].map { #"$[0]: missing required key "\#($0)""# })
        #expect(feed.issues[FeedDecoder.maximumIssues - 1].jsonPath == JSONPath.root / 39)
        let summary = try #require(feed.issues.last)
        #expect(summary.severity == .error)
        #expect(summary.description == "1:122: error: $: and 299800 more issues (299800 errors) not listed")  // at $[40]
        #expect(Array(feed.issues.dropLast()) == feed.issues.dropLast().sorted())
    }

    // MARK: - Whole-feed failures

    @Test(
        "invalid JSON and a non-array top level fail the whole feed",
        arguments: [
            ("[{\"id\": 1,}]", "1:11: error: $: invalid JSON: expected a string key, found '}' (trailing commas are not allowed)"),
            ("{\"id\": 1}", "1:1: error: $: expected an array of messages, found object"),
            ("", "1:1: error: $: invalid JSON: empty document"),
        ])
    func wholeFeedFailures(text: String, expected: String) {
        #expect(throws: FeedIssue.self) { try FeedDecoder.decode(text) }
        do {
            _ = try FeedDecoder.decode(text)
        } catch {
            #expect(error.description == expected)
        }
    }
}
