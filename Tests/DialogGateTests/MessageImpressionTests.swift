@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// A message dismissed without acknowledging: shown again, but no more often than the app's impression policy allows.
@Suite("MessageCenter: impressions and events")
@MainActor
struct MessageImpressionTests {
    let clock = TestClock(feedEpoch)
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A new launch: a new center on the same store file, over the feed `messages`.
    func launch(_ messages: [Int], impressions: ImpressionPolicy) throws -> MessageCenter {
        let file = directory.file("messages.json")
        try Data(Feeds.of(messages.map { Feeds.message(id: $0) }).utf8).write(to: file)
        return MessageCenter(
            feedURL: file, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), context: .seedApp,
            impressions: impressions, clock: clock.function, random: { 0 })
    }

    /// Launches, refreshes, and dismisses what is pending without acknowledging it; returns its id.
    func dismissedLaunch(_ messages: [Int], _ impressions: ImpressionPolicy) async throws -> Int? {
        let center = try launch(messages, impressions: impressions)
        await center.refresh()
        let shown = center.pendingMessage?.id
        center.dismissWithoutAcknowledging()
        return shown
    }

    @Test("without a policy, a message never acknowledged shows at every launch")
    func unlimited() async throws {
        var shown: [Int?] = []
        for _ in 0..<5 { shown.append(try await dismissedLaunch([7], ImpressionPolicy())) }
        #expect(shown == [7, 7, 7, 7, 7])
        #expect(try Prefs(.sqlite(directory.file("app.sqlite"))).storedValue(forKey: "lastMessageId.impressions") == nil)
    }

    @Test("maximumImpressions 2: a message dismissed without acknowledging shows at two launches, then the next message")
    func cap() async throws {
        let policy = ImpressionPolicy(maximumImpressions: 2)
        var shown: [Int?] = []
        for _ in 0..<5 { shown.append(try await dismissedLaunch([3, 5], policy)) }
        #expect(shown == [5, 5, 3, 3, nil])
        let log = try Prefs(.sqlite(directory.file("app.sqlite"))).storedValue(forKey: "lastMessageId.impressions")
        #expect(log?.json["messages"]?["5"]?["count"] == .int(2))
    }

    @Test("a minimum interval between impressions: once a day")
    func interval() async throws {
        let policy = ImpressionPolicy(minimumInterval: .seconds(86_400))
        #expect(try await dismissedLaunch([7], policy) == 7)
        clock.advance(by: 3_600)
        #expect(try await dismissedLaunch([7], policy) == nil)
        clock.advance(by: 86_400 - 3_600)
        #expect(try await dismissedLaunch([7], policy) == 7)
    }

    @Test("events for analytics: an impression, a dismissal, an acknowledgement")
    func events() async throws {
        let center = try launch([7], impressions: ImpressionPolicy())
        var events: [String] = []
        center.onEvent = { events.append("\($0)") }
        await center.refresh()
        center.dismissWithoutAcknowledging()
        await center.refresh()
        let message = try #require(center.pendingMessage)
        center.acknowledge(.confirm, for: message)
        #expect(events == ["impression 7", "dismissed 7", "impression 7", "acknowledged 7 (confirm)"])
    }
}
