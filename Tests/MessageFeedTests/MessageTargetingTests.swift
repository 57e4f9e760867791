@testable import MessageFeed
import Foundation
import TestFixtures
import Testing

@Suite("MessageTargeting")
struct MessageTargetingTests {
    private let now = feedEpoch

    private func messages(_ feed: String) throws -> [RemoteMessage] {
        let decoded = try FeedDecoder.decode(feed)
        #expect(decoded.issues.isEmpty, "\(decoded.issues)")
        return decoded.messages
    }

    private func select(
        _ messages: [RemoteMessage], _ context: MessageContext = .seedApp, lastId: Int = 0,
        at date: Date? = nil, installation: String = "installation-1"
    ) -> RemoteMessage? {
        MessageTargeting.select(messages, context: context, now: date ?? now, lastMessageId: lastId, installationId: installation)
    }

    // MARK: - The seed's rules

    @Test("a message shows while its id is greater than lastMessageId")
    func idRule() throws {
        let feed = try messages(Feeds.seed)
        #expect(select(feed, lastId: 0)?.id == 1)
        #expect(select(feed, lastId: 1) == nil)
        #expect(select(feed, lastId: 7) == nil)
        #expect(select(feed, .seedApp.with(), lastId: 0) != nil)
        var otherApp = MessageContext.seedApp
        otherApp.bundleIdentifier = "com.createchsol.MyWineCellar"
        #expect(select(feed, otherApp) == nil)
    }

    @Test(
        "app and OS version lists compare numerically",
        arguments: [
            ("1.0", "17.2", true), ("1.0.0", "17.2.0", true), ("1.0", "17.0.1", true), ("1.0", "17.1", false),
            ("1.1", "17.2", false), ("1.0-beta", "17.2 (21C62)", true), ("beta", "17.2", false),
        ])
    func versionLists(app: String, os: String, shown: Bool) throws {
        let feed = try messages(Feeds.multipleApplications)
        #expect((select(feed, .seedApp.with(appVersion: app, osVersion: os)) != nil) == shown)
    }

    @Test("the cancel idiom: osVersions [\"0\"] or appVersions [\"0\"] matches nothing")
    func cancelIdiom() throws {
        for key in ["osVersions", "appVersions"] {
            let feed = try messages(Feeds.of(Feeds.message(id: 3, #""\#(key)": ["0"]"#)))
            #expect(select(feed) == nil)
            #expect(select(feed, .seedApp.with(appVersion: "0", osVersion: "0")) != nil)  // only a "0" device would see it
        }
        let empty = try FeedDecoder.decode(Feeds.of(Feeds.message(id: 3, #""osVersions": []"#))).messages
        #expect(select(empty) == nil)
    }

    @Test("cancelled messages are never selected")
    func cancelled() throws {
        let feed = try messages(Feeds.of(Feeds.message(id: 3, #""cancelled": true"#), Feeds.message(id: 2)))
        #expect(select(feed)?.id == 2)
    }

    // MARK: - Selection

    @Test("among eligible messages the highest priority wins, then the highest id")
    func selectionOrder() throws {
        let feed = try messages(
            Feeds.of(
                Feeds.message(id: 4), Feeds.message(id: 9), Feeds.message(id: 5, #""priority": 2"#),
                Feeds.message(id: 6, #""priority": 2"#), Feeds.message(id: 12, bundleId: "other", #""priority": 9"#),
                Feeds.message(id: 7, #""priority": -1"#)
            ))
        #expect(select(feed)?.id == 6)
        #expect(select(feed, lastId: 6)?.id == 9)  // 5 and 6 are too old now
        #expect(select(feed, lastId: 9) == nil)
    }

    // MARK: - Dates

    @Test("startsAt is inclusive and endsAt exclusive, on the injected date")
    func dateWindow() throws {
        let feed = try messages(Feeds.of(Feeds.message(id: 1, #""startsAt": "2026-03-01T12:00:00Z", "endsAt": "2026-03-02T12:00:00+00:00""#)))
        #expect(select(feed, at: now.addingTimeInterval(-1)) == nil)
        #expect(select(feed, at: now) != nil)
        #expect(select(feed, at: now.addingTimeInterval(86_399)) != nil)
        #expect(select(feed, at: now.addingTimeInterval(86_400)) == nil)
    }

    // MARK: - Locales

    @Test(
        "locales match by language-tag prefix, case-insensitively, with _ and - alike",
        arguments: [
            ("en", "en_GB", true), ("en", "en-US", true), ("EN", "en", true), ("en", "eng", false), ("en-GB", "en_GB", true),
            ("en-US", "en_GB", false), ("pt_BR", "pt-br", true), ("de", "de_DE@calendar=gregorian", true), ("de", "C", false),
            ("zh-Hant", "zh_Hant_TW", true), ("zh-TW", "zh-Hant_TW", true), ("zh-Hant", "zh_TW", true), ("zh-Hant-TW", "zh_TW", true),
            ("zh-Hans", "zh_TW", false), ("zh-TW", "zh_CN", false), ("zh-Hans", "zh-Hans_CN", true), ("zh-Hans", "zh", true),
            ("zh-HK", "zh-Hant_HK", true), ("sr-Latn", "sr_RS", false), ("en-US-posix", "en_US_POSIX", true),
        ])
    func locales(tag: String, locale: String, shown: Bool) throws {
        let feed = try messages(Feeds.of(Feeds.message(id: 1, #""locales": ["\#(tag)"]"#)))
        #expect((select(feed, .seedApp.with(locale: locale)) != nil) == shown)
    }

    // MARK: - Rollout

    @Test("rollout buckets are SHA-256 of \"messageId:installationId\", first 8 bytes big-endian, mod 100")
    func rolloutBucketIsStable() {
        // Values from Python: int.from_bytes(hashlib.sha256(b"7:installation-1").digest()[:8], "big") % 100
        #expect(MessageTargeting.rolloutBucket(installationId: "installation-1", messageId: 7) == 82)
        #expect(MessageTargeting.rolloutBucket(installationId: "A", messageId: 1) == 63)
        for _ in 0..<3 {  // the same answer every time, in every process
            #expect(MessageTargeting.rolloutBucket(installationId: "installation-1", messageId: 7) == 82)
        }
    }

    @Test("rollout: the same installation always gets the same answer; about the right share overall")
    func rolloutShare() throws {
        let feed = try messages(Feeds.of(Feeds.message(id: 42, #""rolloutPercent": 30"#)))
        let first = select(feed, installation: "install-7") != nil
        #expect((0..<10).allSatisfy { _ in (select(feed, installation: "install-7") != nil) == first })
        let shown = (0..<1_000).filter { select(feed, installation: "install-\($0)") != nil }.count
        #expect((250...350).contains(shown), "\(shown) of 1000 installations at 30%")
        let none = try messages(Feeds.of(Feeds.message(id: 42, #""rolloutPercent": 0"#)))
        let all = try messages(Feeds.of(Feeds.message(id: 42, #""rolloutPercent": 100"#)))
        #expect((0..<200).allSatisfy { select(none, installation: "install-\($0)") == nil })
        #expect((0..<200).allSatisfy { select(all, installation: "install-\($0)") != nil })
    }

    // MARK: - Explain

    @Test("explain lists every check of every message with its reason")
    func explain() throws {
        let feed = try messages(
            Feeds.of(
                Feeds.message(
                    id: 3,
                    #"""
                    "appVersions": [">=1.0 <2"], "osVersions": ["17.*"], "locales": ["de", "en"], "rolloutPercent": 80,
                    "startsAt": "2026-03-01T00:00:00Z", "endsAt": "2026-04-01T00:00:00Z"
                    """#),
                Feeds.message(id: 2, bundleId: "other", #""cancelled": true, "appVersions": ["0"], "rolloutPercent": 10"#)
            ))
        let report = MessageTargeting.explain(feed, context: .seedApp, now: now, lastMessageId: 2, installationId: "installation-1")
        #expect(report.selected?.id == 3)
        #expect(
            report.evaluations[0].checks.map(\.description) == [
                #"pass: bundleId ("com.createchsol.AppAlertExample" == "com.createchsol.AppAlertExample")"#,
                "pass: id > lastMessageId (3 > 2)",
                "pass: cancelled (not cancelled)",
                "pass: startsAt (started 2026-03-01T00:00:00Z, now is 2026-03-01T12:00:00Z)",
                "pass: endsAt (ends 2026-04-01T00:00:00Z, now is 2026-03-01T12:00:00Z)",
                #"pass: appVersions (1.0 matches [">=1.0 <2"])"#,
                #"pass: osVersions (17.2 matches ["17.*"])"#,
                #"pass: locales (en_US matches "en")"#,
                "pass: rolloutPercent (bucket 6 < 80)",
            ])
        #expect(
            report.evaluations[1].failedChecks.map(\.summary) == [
                #"bundleId ("other" == "com.createchsol.AppAlertExample")"#.replacingOccurrences(of: "==", with: "!="),
                "id > lastMessageId (2 is not > 2)",
                "cancelled (cancelled in the feed)",
                #"appVersions (1.0 matches none of ["0"])"#,
                "rolloutPercent (bucket 86 is not < 10)",
            ])
        #expect(report.description.hasSuffix("selected: message 3 at $[0]"))
        #expect(report.description.contains("message 2 at $[1]: not eligible\n  fail: bundleId"))
    }
}
