@testable import MessageFeed
import Foundation
import TestFixtures
import Testing
import PrefsJSON

/// Feed format 2: a message's own caps, conditions on the app's usage, test devices and "update available", read only in
/// a message wrapped with the reader version it needs, so that release 0.2 (format 1, which ignores a member it does not
/// know) skips it instead of showing it to everyone the new members leave out.
@Suite("Feed format 2")
struct FeedFormatTwoTests {
    static let conditions = #"""
        "conditions": {"launchesAtLeast": 5, "daysSinceFirstLaunchAtLeast": 3, "daysSinceVersionFirstSeenAtLeast": 1,
          "events": {"photoSaved": {"atLeast": 2, "withinSeconds": 86400}}, "parameters": {"plan": "free", "country": ["DE", "AT"]},
          "notInFirstSession": true, "any": [{"parameters": {"cohort": "b"}}, {"launchesAtLeast": 20}]}
        """#

    @Test("a wrapped message reads every member of format 2")
    func wrapped() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.wrapped(
                    id: 4,
                    Self.conditions + #"""
                        , "maxImpressions": 3, "minimumIntervalSeconds": 86400.5, "testDevices": ["6F1C-A"],
                        "update": {"recommendedVersion": "2.4", "minimumVersion": "2.0", "releasedAt": "2026-03-01T00:00:00Z",
                                   "minimumAgeSeconds": 259200}
                        """#)))
        #expect(feed.issues.isEmpty, "\(feed.issues)")
        let message = try #require(feed.messages.first)
        #expect(message.id == 4 && message.isWrapped && message.feedPath.description == "$[0].message")
        #expect(message.maximumImpressions == 3 && message.minimumInterval == .milliseconds(86_400_500))
        #expect(message.testDevices == ["6F1C-A"])
        #expect(
            message.update
                == RemoteMessage.Update(
                    recommendedVersion: "2.4", minimumVersion: "2.0", releasedAt: try ISO8601.parse("2026-03-01T00:00:00Z"),
                    minimumAge: .seconds(259_200)))
        #expect(
            message.conditions
                == .all([
                    .launches(atLeast: 5), .daysSinceFirstLaunch(atLeast: 3), .daysSinceVersionFirstSeen(atLeast: 1),
                    .event("photoSaved", atLeast: 2, withinSeconds: 86_400), .parameter("plan", oneOf: [.string("free")]),
                    .parameter("country", oneOf: [.string("DE"), .string("AT")]), .notInFirstSession,
                    .any([.all([.parameter("cohort", oneOf: [.string("b")])]), .all([.launches(atLeast: 20)])]),
                ]))
    }

    @Test("an unknown condition name is an error with its line:column and the nearest name, and skips the message")
    func unknownCondition() throws {
        let text = Feeds.of(
            Feeds.wrapped(id: 1, #""conditions": {"launchAtLeast": 5, "any": [{"Parameters": {"plan": "free"}}]}"#),
            Feeds.wrapped(id: 2, #""conditions": {"events": {"saved": {"atLeast": 1, "within": 60}}}"#),
            Feeds.wrapped(id: 3, #""update": {"recommendedVersion": "2.4", "releasedAt": "2026-03-01T00:00:00Z", "minimumAge": 5}"#),
            Feeds.wrapped(id: 4))
        let feed = try FeedDecoder.decode(text)
        #expect(feed.messages.map(\.id) == [4])
        #expect(feed.skippedIndexes == [0, 1, 2])
        #expect(
            feed.issues.map(\.description) == [
                #"2:172: error: $[0].message.conditions.launchAtLeast: unknown condition "launchAtLeast" skips the message; did you mean "launchesAtLeast"?"#,
                #"2:201: error: $[0].message.conditions.any[0].Parameters: unknown condition "Parameters" skips the message; did you mean "parameters"?"#,
                #"3:207: error: $[1].message.conditions.events.saved.within: unknown key "within" in an event's condition skips the message"#,
                #"4:235: error: $[2].message.update.minimumAge: unknown key "minimumAge" in an update skips the message"#,
            ])
        // The linter reports the same, with the rest of a linter's findings.
        #expect(FeedLinter.lint(text).filter { $0.severity == .error }.map(\.description) == feed.issues.map(\.description))
    }

    @Test("a member of format 2 in a message that is not wrapped is an error: release 0.2 would ignore it and show the message")
    func unwrapped() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(Feeds.message(id: 1, #""conditions": {"launchesAtLeast": 5}, "testDevices": ["A"]"#), Feeds.message(id: 2)))
        #expect(feed.messages.map(\.id) == [2])
        #expect(
            feed.issues.map(\.summary) == [
                #"$[0].conditions: "conditions" is read only in a message wrapped as {"minimumReaderVersion": 2, "message": {…}} (release 0.2 would ignore it and show the message to everyone it leaves out); this message is skipped"#,
                #"$[0].testDevices: "testDevices" is read only in a message wrapped as {"minimumReaderVersion": 2, "message": {…}} (release 0.2 would ignore it and show the message to everyone it leaves out); this message is skipped"#,
            ])
    }

    @Test("a message that needs a later reader is skipped with a warning, not an error: the feed is valid for that release")
    func laterReader() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.wrapped(id: 1, readerVersion: 3, #""hologram": true"#), Feeds.message(id: 2)))
        #expect(feed.messages.map(\.id) == [2])
        #expect(feed.skippedIndexes == [0])
        #expect(
            feed.issues.map(\.description) == [
                #"2:26: warning: $[0].minimumReaderVersion: the message needs a feed reader of version 3 (this release reads 2): it is skipped here, and a later release shows it"#
            ])
    }

    @Test("release 0.2's reader (format 1) skips a wrapped message, so a condition never reaches an audience it leaves out")
    func olderReleaseSkipsIt() throws {
        let text = Feeds.of(Feeds.wrapped(id: 5, #""conditions": {"parameters": {"plan": "free"}}"#), Feeds.message(id: 2))
        let asOlderRelease = try FeedDecoder.decode(Data(text.utf8), readerVersion: 1)
        #expect(asOlderRelease.messages.map(\.id) == [2])
        #expect(asOlderRelease.skippedIndexes == [0])
        #expect(asOlderRelease.issues.map(\.summary).contains(#"$[0]: missing required key "id""#))
        // Unwrapped, the same message is what release 0.2 would show to everyone: this release refuses it instead.
        let unwrapped = Feeds.of(Feeds.message(id: 5, #""conditions": {"parameters": {"plan": "free"}}"#))
        #expect(try FeedDecoder.decode(Data(unwrapped.utf8), readerVersion: 1).messages.map(\.id) == [5])
        #expect(try FeedDecoder.decode(unwrapped).messages.isEmpty)
    }

    @Test("values are checked: counts of 0 or more, seconds, versions of digits and dots, a release date")
    func values() throws {
        let feed = try FeedDecoder.decode(
            Feeds.of(
                Feeds.wrapped(id: 1, #""maxImpressions": -1"#),
                Feeds.wrapped(id: 2, #""conditions": {"launchesAtLeast": "5"}"#),
                Feeds.wrapped(id: 3, #""update": {"recommendedVersion": "2.4-beta", "releasedAt": "2026-03-01T00:00:00Z"}"#),
                Feeds.wrapped(id: 4, #""update": {"recommendedVersion": "2.4"}"#),
                Feeds.wrapped(id: 5, #""update": {"releasedAt": "2026-03-01T00:00:00Z"}"#),
                Feeds.wrapped(id: 6, #""minimumIntervalSeconds": -5"#),
                Feeds.wrapped(id: 7, #""conditions": {"parameters": {"country": []}}"#)))
        #expect(feed.messages.isEmpty)
        #expect(
            feed.issues.map(\.summary) == [
                "$[0].message.maxImpressions: expected an integer of 0 or more, found -1",
                "$[1].message.conditions.launchesAtLeast: expected an integer, found string",
                #"$[2].message.update.recommendedVersion: "2.4-beta" is not a release version: digits and dots, such as "2.4" or "2.4.1""#,
                #"$[3].message.update: missing required key "releasedAt""#,
                #"$[4].message.update: an update names "recommendedVersion", "minimumVersion" or both"#,
                "$[5].message.minimumIntervalSeconds: expected a number of seconds from 0 to 1e19, found -5.0",
                "$[6].message.conditions.parameters.country: an empty list of values matches no installation; remove the parameter to match every one",
            ])
    }

    @Test("lint warns about what can never show: no test device, maxImpressions 0, a minimum above the recommended version")
    func lintWarnings() {
        let issues = FeedLinter.lint(
            Feeds.of(
                Feeds.wrapped(id: 1, #""testDevices": []"#), Feeds.wrapped(id: 2, #""maxImpressions": 0"#),
                Feeds.wrapped(
                    id: 3, #""update": {"recommendedVersion": "2.4", "minimumVersion": "3.0", "releasedAt": "2026-03-01T00:00:00Z"}"#)))
        #expect(
            issues.map(\.summary) == [
                "$[0].message.testDevices: an empty testDevices list matches no installation: the message is never shown; remove the key to target every one",
                "$[1].message.maxImpressions: maxImpressions 0 never shows the message",
                "$[2].message.update.minimumVersion: minimumVersion 3.0 is above recommendedVersion 2.4: every version the update recommends is required; recommend the minimum or a later version",
            ])
    }

    // MARK: - Targeting

    @Test("testDevices: only the listed installations (ignoring case), inside any rollout")
    func testDevices() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.wrapped(id: 1, #""testDevices": ["6f1c2a9e-0000"], "rolloutPercent": 0"#)))
        func report(_ installation: String) -> TargetingReport {
            MessageTargeting.explain(feed.messages, context: .seedApp, now: feedEpoch, lastMessageId: 0, installationId: installation)
        }
        let qa = report("6F1C2A9E-0000")
        #expect(qa.selected?.id == 1)
        #expect(qa.evaluations[0].check(.testDevices)?.summary == "testDevices (installation 6F1C2A9E-0000 is one of 1 test device)")
        #expect(qa.evaluations[0].check(.rolloutPercent)?.passed == true)
        let other = report("0B7D0000-1111")
        #expect(other.selected == nil)
        #expect(other.evaluations[0].check(.testDevices)?.summary == "testDevices (installation 0B7D0000-1111 is not one of 1 test device)")
    }

    @Test("an update shows below its version, once released long enough ago; a skipped version hides it, a required one never")
    func updateRule() throws {
        let update = #""update": {"recommendedVersion": "2.4", "minimumVersion": "2.0", "releasedAt": "2026-03-01T00:00:00Z", "minimumAgeSeconds": 259200}"#
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.wrapped(id: 9, update)))
        let released = try ISO8601.parse("2026-03-01T00:00:00Z")
        func check(_ version: String, days: Double, skipped: String? = nil) -> TargetingCheck? {
            MessageTargeting.explain(
                feed.messages, context: .seedApp.with(appVersion: version), now: released.addingTimeInterval(days * 86_400), lastMessageId: 100,
                installationId: "A", state: MessageTargeting.State(skippedVersion: skipped)
            ).evaluations[0].check(.update)
        }
        #expect(
            check("2.1", days: 3)?.description
                == "pass: update (2.1 is below the recommended 2.4; released 2026-03-01T00:00:00Z, shown since 2026-03-04T00:00:00Z)")
        #expect(
            check("2.1", days: 2.9)?.description
                == "fail: update (2.1 is below the recommended 2.4; released 2026-03-01T00:00:00Z, not before 2026-03-04T00:00:00Z)")
        #expect(check("2.4-beta.2", days: 3)?.passed == true)
        #expect(check("2.4", days: 3)?.summary.hasPrefix("update (2.4 is not below the recommended 2.4;") == true)
        #expect(check("2.1", days: 3, skipped: "2.4")?.summary.hasPrefix("update (2.1 is below the recommended 2.4, but 2.4 was skipped;") == true)
        #expect(check("1.9", days: 3, skipped: "2.4")?.summary.hasPrefix("update (1.9 is below the minimum 2.0: required, no skip;") == true)
        #expect(check("1.9", days: 3, skipped: "2.4")?.passed == true)
        #expect(check("1.9", days: 1)?.passed == false, "a required update waits for the release's age too: no loop")
        // Shown whatever lastMessageId: an update is shown by its versions, not its id.
        #expect(
            MessageTargeting.explain(
                feed.messages, context: .seedApp.with(appVersion: "2.1"), now: released.addingTimeInterval(3 * 86_400), lastMessageId: 100,
                installationId: "A"
            ).selected?.id == 9)
        #expect(feed.messages[0].update?.isRequired(forAppVersion: "1.9.9") == true)
        #expect(feed.messages[0].update?.isRequired(forAppVersion: "2.0") == false)
        #expect(feed.messages[0].update?.isRequired(forAppVersion: "2.0-rc.1") == true)
    }

    @Test("conditions that cannot be judged (no store) fail closed; a forced message is selected whatever its checks")
    func conditionsFailClosed() throws {
        let feed = try FeedDecoder.decode(Feeds.of(Feeds.wrapped(id: 3, #""conditions": {"launchesAtLeast": 1}"#), Feeds.message(id: 2)))
        let report = MessageTargeting.explain(feed.messages, context: .seedApp, now: feedEpoch, lastMessageId: 2, installationId: "A")
        #expect(report.selected == nil)
        #expect(report.evaluations[0].check(.conditions)?.summary == "conditions (not judged without the store's usage (a MessageCenter judges them))")
        let forced = MessageTargeting.explain(
            feed.messages, context: .seedApp, now: feedEpoch, lastMessageId: 2, installationId: "A", state: MessageTargeting.State(forcedMessageId: 2))
        #expect(forced.selected?.id == 2 && forced.forced)
        #expect(forced.description.hasSuffix("selected: message 2 at $[1] (forced by a QA override)"))
    }
}
