import DialogGate
import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// `MessageSelection` through the public API only (no `@testable import`), as an app's own tests use it.
@Suite("MessageSelection")
struct MessageSelectionTests {
    let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "17.2", localeIdentifier: "en_US")
    /// 2026-03-01T12:00:00Z.
    let now = Date(timeIntervalSince1970: 1_772_366_400)

    /// A message of `com.example.app` with the required fields, at `feedIndex` in the feed.
    func message(
        _ id: Int, at feedIndex: Int, bundleId: String = "com.example.app", appVersions: [String]? = nil, cancelled: Bool = false,
        startsAt: Date? = nil, priority: Int = 0, rolloutPercent: Int? = nil
    ) -> RemoteMessage {
        RemoteMessage(
            id: id, bundleId: bundleId, title: "Title \(id)", text: "Text \(id)", confirmLabel: "OK", appVersions: appVersions,
            cancelled: cancelled, startsAt: startsAt, priority: priority, rolloutPercent: rolloutPercent, feedIndex: feedIndex)
    }

    @Test("selects the highest priority among the eligible messages, then the highest id")
    func selectsByPriorityThenId() {
        let messages = [message(3, at: 0), message(4, at: 1, priority: 1), message(6, at: 2, priority: 1), message(5, at: 3)]
        let selection = MessageSelection(messages, context: context, now: now, lastMessageId: 2, installationId: "A1B2C3D4")
        #expect(selection.message?.id == 6)
        #expect(selection.eligible.map(\.id) == [3, 4, 6, 5])
        #expect(selection.reasons(against: 3).isEmpty)
    }

    @Test("says which rules a message fails, with the values compared, and prints every check")
    func reasonsAgainstAMessage() {
        let messages = [
            message(1, at: 0),
            message(3, at: 1, bundleId: "com.example.other"),
            message(4, at: 2, appVersions: [">=3.0"]),
            message(5, at: 3, cancelled: true, startsAt: now.addingTimeInterval(86_400)),
            message(6, at: 4),
        ]
        let selection = MessageSelection(messages, context: context, now: now, lastMessageId: 2, installationId: "A1B2C3D4")
        #expect(selection.message?.id == 6)
        #expect(selection.eligible.map(\.id) == [6])
        #expect(selection.reasons(against: 1) == ["id > lastMessageId (1 is not > 2)"])
        #expect(selection.reasons(against: 3) == [#"bundleId ("com.example.other" != "com.example.app")"#])
        #expect(selection.reasons(against: 4) == [#"appVersions (2.1 matches none of [">=3.0"])"#])
        #expect(
            selection.reasons(against: 5) == [
                "cancelled (cancelled in the feed)", "startsAt (starts 2026-03-02T12:00:00Z, now is 2026-03-01T12:00:00Z)",
            ])
        #expect(selection.reasons(against: 6).isEmpty)
        #expect(selection.reasons(against: 99).isEmpty)
        let lines = selection.description.split(separator: "\n")
        #expect(lines.first == "message 1 at $[0]: not eligible")
        #expect(lines.last == "selected: message 6 at $[4]")
        #expect(lines.count == 5 * 10 + 1)  // a header and nine rules per message, then the selection
    }

    @Test("a passed-over id stays eligible; when none is eligible, nothing is selected")
    func passedOverAndNothingEligible() {
        let messages = [message(2, at: 0), message(3, at: 1)]
        let passedOver = MessageSelection(messages, context: context, now: now, lastMessageId: 3, passedOver: [2], installationId: "A1B2C3D4")
        #expect(passedOver.message?.id == 2)
        let none = MessageSelection(messages, context: context, now: now, lastMessageId: 3, installationId: "A1B2C3D4")
        #expect(none.message == nil)
        #expect(none.eligible.isEmpty)
        #expect(none.description.hasSuffix("selected: none"))
    }

    @Test("a rollout places the same installation in the same bucket every time, and each message in its own")
    func rolloutIsStablePerInstallation() {
        let messages = (1...40).map { message($0, at: $0 - 1, rolloutPercent: 50) }
        let first = MessageSelection(messages, context: context, now: now, lastMessageId: 0, installationId: "A1B2C3D4")
        let again = MessageSelection(messages, context: context, now: now, lastMessageId: 0, installationId: "A1B2C3D4")
        #expect(first == again)
        // Forty 50% rollouts, each bucket drawn apart: this installation is in some and out of others.
        #expect(!first.eligible.isEmpty && first.eligible.count < 40)
        let outside = messages.filter { !first.eligible.contains($0) }
        for message in outside {
            let reasons = first.reasons(against: message.id)
            #expect(reasons.count == 1 && reasons[0].hasPrefix("rolloutPercent (bucket "), "\(reasons)")
        }
    }

    @Test("selects what a MessageCenter on the same feed, store and clock presents")
    @MainActor
    func agreesWithMessageCenter() async throws {
        let directory = try TemporaryDirectory()
        let feed = directory.file("messages.json")
        try Data(
            """
            [
              {"id": 7, "bundleId": "com.example.app", "title": "Title 7", "text": "Text 7", "confirmLabel": "OK", "priority": 2, "rolloutPercent": 50},
              {"id": 8, "bundleId": "com.example.app", "title": "Title 8", "text": "Text 8", "confirmLabel": "OK", "priority": 1},
              {"id": 9, "bundleId": "com.example.app", "title": "Title 9", "text": "Text 9", "confirmLabel": "OK", "priority": 3, "cancelled": true}
            ]
            """.utf8
        ).write(to: feed)
        let messages = [
            message(7, at: 0, priority: 2, rolloutPercent: 50), message(8, at: 1, priority: 1), message(9, at: 2, cancelled: true, priority: 3),
        ]
        var selected: Set<Int> = []
        for installation in 1...8 {  // installations in message 7's rollout and out of it
            let prefs = try Prefs(.memory)
            try prefs.set("installation-\(installation)", for: MessageCenter.installationIdKey)
            let now = self.now
            let center = MessageCenter(feedURL: feed, prefs: prefs, context: context, options: FeedOptions(timeout: .seconds(120)), clock: { now })
            await center.refresh()
            #expect(center.lastError == nil)
            let selection = MessageSelection(
                messages, context: context, now: now, lastMessageId: center.lastMessageId, installationId: center.installationId())
            #expect(center.pendingMessage?.id == selection.message?.id)
            #expect(selection.message?.id == (selection.eligible.contains { $0.id == 7 } ? 7 : 8))
            if let id = selection.message?.id { selected.insert(id) }
        }
        #expect(selected == [7, 8])
    }
}
