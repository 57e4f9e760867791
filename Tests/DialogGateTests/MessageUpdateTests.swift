@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// "Update available" as a message kind: a recommended version with "skip this version", a minimum version below which
/// the update is required (no skip, shown at every refresh), and no loop while the app store does not serve the version
/// yet in the user's region: shown only once the version has been out for the feed's `minimumAgeSeconds`.
@Suite("MessageCenter: update available")
@MainActor
struct MessageUpdateTests {
    let clock = TestClock(feedEpoch)
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// An update entry released at the clock's start, shown three days later.
    func update(recommended: String? = "2.4", minimum: String? = "2.0", id: Int = 9, extra: String = "") -> String {
        let versions = [recommended.map { #""recommendedVersion": "\#($0)""# }, minimum.map { #""minimumVersion": "\#($0)""# }].compactMap { $0 }
        let released = ISO8601.format(feedEpoch)
        return Feeds.wrapped(
            id: id,
            #""link": {"title": "App Store", "url": "https://apps.apple.com/app/id1"}, "update": {\#(versions.joined(separator: ", ")), "releasedAt": "\#(released)", "minimumAgeSeconds": 259200}"#
                + extra)
    }

    func launch(_ server: TestFeedServer, appVersion: String, gate: DialogGate? = nil) throws -> MessageCenter {
        MessageCenter(
            feedURL: server.url, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), context: .seedApp.with(appVersion: appVersion),
            options: .unhurried, gate: gate, clock: clock.function, random: { 0 })
    }

    @Test("recommended: not before the version is 3 days old; shown again after Update (the user may not have updated); skipped until a later version")
    func recommended() async throws {
        let server = try TestFeedServer(Feeds.of(update()))
        let early = try launch(server, appVersion: "2.1")
        await early.refresh()
        #expect(early.pendingMessage == nil, "the store may not serve 2.4 in every region yet")
        #expect(early.lastReport?.evaluations.first?.check(.update)?.detail.hasSuffix("not before 2026-03-04T12:00:00Z") == true)

        clock.advance(by: .seconds(3 * 86_400))
        let center = try launch(server, appVersion: "2.1")
        await center.refresh()
        let message = try #require(center.pendingMessage)
        #expect(!center.isRequiredUpdate(message))
        #expect(center.acknowledge(.link, for: message) == URL(string: "https://apps.apple.com/app/id1"))
        await center.flush()
        #expect(center.lastMessageId == 0, "an update is shown by its versions: no lastMessageId")

        let again = try launch(server, appVersion: "2.1")
        await again.refresh()
        let shownAgain = try #require(again.pendingMessage)
        again.acknowledge(.skipVersion, for: shownAgain)
        await again.flush()
        #expect(try again.prefs.storedValue(forKey: "lastMessageId.skippedVersion")?.json == .string("2.4"))

        let skipped = try launch(server, appVersion: "2.1")
        await skipped.refresh()
        #expect(skipped.pendingMessage == nil)
        #expect(skipped.lastReport?.evaluations.first?.check(.update)?.detail.hasPrefix("2.1 is below the recommended 2.4, but 2.4 was skipped") == true)

        server.publish(Feeds.of(update(recommended: "2.5")))
        let later = try launch(server, appVersion: "2.1")
        await later.refresh()
        #expect(later.pendingMessage?.id == 9, "a later version is recommended: shown again")

        let current = try launch(server, appVersion: "2.5")
        await current.refresh()
        #expect(current.pendingMessage == nil, "up to date")
    }

    @Test("required below the minimum: no skip, shown at every refresh whatever its caps and the display frequency")
    func required() async throws {
        let server = try TestFeedServer(Feeds.of(update(extra: #", "maxImpressions": 1"#)))
        clock.advance(by: .seconds(3 * 86_400))
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "1.5", displayFrequency: .oncePerSession, clock: clock.function)
        try #require(try gate.claim(Dialog("review")).presentation).finish(.dismiss)
        let center = try launch(server, appVersion: "1.5", gate: gate)
        for answer in [MessageCenter.Acknowledgement.skipVersion, .confirm, .link] {
            await center.refresh()
            let message = try #require(center.pendingMessage, "shown again after \(answer)")
            #expect(center.isRequiredUpdate(message))
            center.acknowledge(answer, for: message)
            await center.flush()
        }
        await center.refresh()
        center.dismissWithoutAcknowledging()
        await center.refresh()
        #expect(center.pendingMessage?.id == 9)
        #expect(try prefs.storedValue(forKey: "lastMessageId.skippedVersion") == nil, "a required update cannot be skipped")
        #expect(center.lastReport?.evaluations.first?.check(.displayFrequency)?.detail == "a required update: shown whatever the display frequency")
    }

    @Test("a recommended update counts toward the display frequency and its own caps, as any message")
    func recommendedTakesPart() async throws {
        let server = try TestFeedServer(Feeds.of(update(extra: #", "maxImpressions": 1"#)))
        clock.advance(by: .seconds(3 * 86_400))
        let center = try launch(server, appVersion: "2.1")
        await center.refresh()
        #expect(center.pendingMessage?.id == 9)
        center.dismissWithoutAcknowledging()
        await center.refresh()
        #expect(center.pendingMessage == nil, "maxImpressions 1")
    }
}
