@testable import DialogGate
@testable import MessageFeed
@testable import MessageFeedFetching
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("MessageCenter")
@MainActor
struct MessageCenterTests {
    let clock = TestClock(feedEpoch)

    private func center(
        _ url: URL, prefs: Prefs, context: MessageContext = .seedApp, lastMessageIdKey: String = "lastMessageId",
        options: FeedOptions = .unhurried
    ) -> MessageCenter {
        MessageCenter(
            feedURL: url, prefs: prefs, context: context, lastMessageIdKey: lastMessageIdKey,
            options: options, clock: clock.function, random: { 0 })
    }

    /// A center over a feed file of `messages` (by id) and a memory store holding `lastMessageId` as given, refreshed once.
    private func refreshedCenter(messages: [Int], lastMessageId stored: StoredValue, in directory: TemporaryDirectory) async throws -> (MessageCenter, Prefs) {
        let file = directory.file("messages.json")
        try Data(Feeds.of(messages.map { Feeds.message(id: $0) }).utf8).write(to: file)
        let prefs = try Prefs(.memory)
        try prefs.setStoredValue(stored, forKey: "lastMessageId")
        let center = center(file, prefs: prefs)
        await center.refresh()
        return (center, prefs)
    }

    // MARK: - The seed's behaviour

    @Test("a message shows once; after acknowledging, not again at the next launch; a reset shows it again")
    func showsOnceAcrossLaunches() async throws {
        let directory = try TemporaryDirectory()
        let storeURL = directory.file("prefs.sqlite")
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let url = server.url("/messages.json")

        let first = center(url, prefs: try Prefs(.sqlite(storeURL)))
        await first.refresh()
        #expect(first.lastError == nil)
        let message = try #require(first.pendingMessage)
        #expect(message.id == 1 && message.title == "App Alert" && message.confirmLabel == "OK")
        #expect(first.acknowledge(.confirm, for: message) == nil)
        #expect(first.pendingMessage == nil)
        #expect(first.lastMessageId == 1)

        // A new launch: a new store instance on the same file, a new center.
        let prefs = try Prefs(.sqlite(storeURL))
        let second = center(url, prefs: prefs)
        await second.refresh()
        #expect(second.pendingMessage == nil)
        #expect(second.lastReport?.evaluations.first?.check(.id)?.summary == "id > lastMessageId (1 is not > 1)")
        #expect(prefs[Prefs.Key<Int>("lastMessageId", initial: 0)] == 1)  // the seed's key name

        try prefs.reset(second.lastMessageIdKey)
        let third = center(url, prefs: try Prefs(.sqlite(storeURL)))
        await third.refresh()
        #expect(third.pendingMessage?.id == 1)
        #expect(server.requests.count == 3)
    }

    @Test("-lastMessageId 0 starts a launch in a known state: its decisions read 0, the store keeps its value")
    func lastMessageIdLaunchArgument() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of([Feeds.message(id: 2)]).utf8).write(to: file)
        let storeURL = directory.file("prefs.sqlite")
        try Prefs(.sqlite(storeURL), launchArguments: []).setStoredValue(StoredValue(type: .int, json: .int(5)), forKey: "lastMessageId")

        let qa = center(file, prefs: try Prefs(.sqlite(storeURL), launchArguments: ["-lastMessageId", "0"]))
        #expect(qa.lastMessageId == 0, "before the first refresh too")
        await qa.refresh()
        #expect(qa.pendingMessage?.id == 2, "\(String(describing: qa.lastReport))")
        let message = try #require(qa.pendingMessage)
        qa.acknowledge(.confirm, for: message)
        await qa.flush()
        let stored = try Prefs(.sqlite(storeURL), launchArguments: []).storedValue(forKey: "lastMessageId")
        #expect(stored == StoredValue(type: .int, json: .int(5)), "the acknowledgement never lowers the stored value")

        let next = center(file, prefs: try Prefs(.sqlite(storeURL), launchArguments: []))
        await next.refresh()
        #expect(next.pendingMessage == nil, "the next launch, without the argument, reads the store")
    }

    @Test(
        "the center's first refresh declares lastMessageId, so prefs-tool lists it, and finds it to reset, before any acknowledgement; making a center writes nothing"
    )
    func declaresLastMessageId() async throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("prefs.sqlite")))
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let center = center(server.url("/messages.json"), prefs: prefs, lastMessageIdKey: "seenId")
        #expect(try prefs.declaredKeys().isEmpty, "a center that has not refreshed has written nothing")
        await center.refresh()
        #expect(try prefs.declaredKeys()["seenId"] == KeyDeclaration(type: .int, initial: .int(0)))
        #expect(try prefs.storedValue(forKey: "seenId") == nil)
    }

    @Test("a message presented but not acknowledged shows again")
    func notAcknowledgedShowsAgain() async throws {
        let directory = try TemporaryDirectory()
        let storeURL = directory.file("prefs.sqlite")
        let server = try jsonServer(Feeds.seed)
        defer { server.stop() }
        let url = server.url("/messages.json")

        let interrupted = center(url, prefs: try Prefs(.sqlite(storeURL)))
        await interrupted.refresh()
        #expect(interrupted.pendingMessage?.id == 1)
        interrupted.dismissWithoutAcknowledging()  // another modal took over
        #expect(interrupted.pendingMessage == nil)
        #expect(interrupted.lastMessageId == 0)

        // A crash: the center is simply gone (a crashed process's presentation binds nothing; MessageWindowTests).
        do {
            let crashed = center(url, prefs: try Prefs(.sqlite(storeURL)))
            await crashed.refresh()
            #expect(crashed.pendingMessage?.id == 1)
        }

        let next = center(url, prefs: try Prefs(.sqlite(storeURL)))
        await next.refresh()
        let again = try #require(next.pendingMessage)
        #expect(again.id == 1)
        #expect(next.acknowledge(.link, for: again) == nil)  // no link in the seed's message
        #expect(next.lastMessageId == 1)
    }

    @Test("osVersions [\"0\"] cancels; app and OS version lists target")
    func versionTargeting() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        let prefs = try Prefs(.memory)
        try Data(Feeds.multipleApplications.utf8).write(to: file)
        let shown = center(file, prefs: prefs)
        await shown.refresh()
        #expect(shown.pendingMessage?.id == 3)
        let otherOS = center(file, prefs: prefs, context: .seedApp.with(osVersion: "17.1"))
        await otherOS.refresh()
        #expect(otherOS.pendingMessage == nil)
        let otherApp = center(file, prefs: prefs, context: .seedApp.with(appVersion: "1.1"))
        await otherApp.refresh()
        #expect(otherApp.pendingMessage == nil)

        try Data(Feeds.multipleApplications.replacingOccurrences(of: #""osVersions": ["17.0.1", "17.2"]"#, with: #""osVersions": ["0"]"#).utf8).write(to: file)
        let cancelled = center(file, prefs: prefs)
        await cancelled.refresh()
        #expect(cancelled.pendingMessage == nil)
        #expect(cancelled.lastReport?.evaluations.first?.check(.osVersions)?.summary == #"osVersions (17.2 matches none of ["0"])"#)

        // The seed's own misspelling of the idiom: it used to be ignored with a warning, and the message showed.
        try Data(Feeds.multipleApplications.replacingOccurrences(of: #""appVersions": ["1.0"]"#, with: #""appversions": ["0"]"#).utf8).write(to: file)
        let misspelled = center(file, prefs: prefs)
        await misspelled.refresh()
        #expect(misspelled.pendingMessage == nil)
        #expect(misspelled.diagnostics.map(\.severity) == [.error])
        #expect(misspelled.diagnostics.first?.summary.hasPrefix(#"$[0].appversions: unknown key "appversions" skips the message"#) == true)
    }

    // MARK: - Acknowledging

    @Test("acknowledging the link returns its URL and stores the id")
    func acknowledgeLink() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.multipleApplications.utf8).write(to: file)
        let center = center(file, prefs: try Prefs(.memory))
        await center.refresh()
        let message = try #require(center.pendingMessage)
        #expect(center.acknowledge(.link, for: message) == URL(string: "https://www.createchsol.com"))
        #expect(center.lastMessageId == 3)
        #expect(center.pendingMessage == nil)
        #expect(center.acknowledge(.confirm, for: message) == nil)
    }

    @Test("a UI that holds the presented message acknowledges it even after the pending message was cleared")
    func acknowledgePresentedMessage() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.multipleApplications.utf8).write(to: file)
        let center = center(file, prefs: try Prefs(.memory))
        await center.refresh()
        let presented = try #require(center.pendingMessage)
        center.dismissWithoutAcknowledging()  // e.g. SwiftUI cleared the binding first
        #expect(center.acknowledge(.link, for: presented) == URL(string: "https://www.createchsol.com"))
        #expect(center.lastMessageId == 3)
        await center.refresh()
        #expect(center.pendingMessage == nil)
    }

    @Test("a refresh while message 5 is on screen does not swap it for 7: the user acknowledges 5, and 7 shows next")
    func noSwapUnderPresentation() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 5)).utf8).write(to: file)
        let center = center(file, prefs: try Prefs(.memory))
        await center.refresh()
        let presented = try #require(center.pendingMessage)
        #expect(presented.id == 5)
        try Data(Feeds.of(Feeds.message(id: 5), Feeds.message(id: 7)).utf8).write(to: file)
        await center.refresh(force: true)
        #expect(center.pendingMessage?.id == 5, "still the message on screen")
        center.acknowledge(.confirm, for: presented)
        #expect(center.lastMessageId == 5)
        await center.refresh(force: true)
        #expect(center.pendingMessage?.id == 7, "7 was never acknowledged: it shows next")

        // A pending message the publisher removed is not kept.
        try Data(Feeds.of(Feeds.message(id: 8)).utf8).write(to: file)
        await center.refresh(force: true)
        #expect(center.pendingMessage?.id == 8)
    }

    @Test(
        "a removed feed (410, or 404 as static hosting answers for a deleted file) stops showing its cached message at once",
        arguments: [404, 410])
    func removedFeed(status: Int) async throws {
        let scenario = Scenario(.ok(Feeds.seed))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let prefs = try Prefs(.memory)
        let center = center(server.url("/messages.json"), prefs: prefs)
        await center.refresh()
        #expect(center.pendingMessage?.id == 1)
        scenario.set(.status(status))
        await center.refresh(force: true)
        #expect(center.pendingMessage == nil)
        #expect(center.lastError == .feedRemoved(status: status, url: center.feedURL))
        let nextLaunch = self.center(server.url("/messages.json"), prefs: prefs)
        scenario.set(.status(503))
        await nextLaunch.refresh()
        #expect(nextLaunch.pendingMessage == nil, "not from the cache either")
    }

    /// Refreshes, acknowledges whatever is pending, and returns its id (nil when nothing is).
    private func showAndAcknowledge(_ center: MessageCenter) async -> Int? {
        await center.refresh(force: true)
        guard let message = center.pendingMessage else { return nil }
        center.acknowledge(.confirm, for: message)
        return message.id
    }

    @Test(
        "no eligible lower id is lost: acknowledging a higher id (or a higher priority) passes the lower ones over, and they show next",
        arguments: [
            ([Feeds.message(id: 3), Feeds.message(id: 5)], [5, 3]),
            ([Feeds.message(id: 5, #""priority": 0"#), Feeds.message(id: 7, #""priority": 10"#)], [7, 5]),
            ([Feeds.message(id: 2), Feeds.message(id: 9), Feeds.message(id: 4)], [9, 4, 2]),
        ])
    func lowerIdsAreNotLost(messages: [String], order: [Int]) async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of(messages).utf8).write(to: file)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        var shown: [Int] = []
        for _ in 0...order.count {
            // Each launch a new center, as a new app process has.
            if let id = await showAndAcknowledge(center(file, prefs: prefs)) { shown.append(id) }
        }
        #expect(shown == order)
        #expect(prefs[Prefs.Key<Int>("lastMessageId", initial: 0)] == order.max(), "lastMessageId keeps its seed meaning: the highest acknowledged")
        #expect(try prefs.storedValue(forKey: "lastMessageId.passedOver") == nil, "nothing passed over: no key left behind")

        try prefs.reset(Prefs.Key<Int>("lastMessageId", initial: 0))  // QA: prefs-tool reset lastMessageId
        #expect(await showAndAcknowledge(center(file, prefs: prefs)) == order.first, "a reset shows the messages again")
    }

    @Test("a lower id that starts after a higher one was acknowledged shows when it starts")
    func lowerIdStartingLater() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        let starts = ISO8601.format(feedEpoch.addingTimeInterval(86_400))
        try Data(Feeds.of(Feeds.message(id: 6, #""startsAt": "\#(starts)""#), Feeds.message(id: 7)).utf8).write(to: file)
        let prefs = try Prefs(.memory)
        #expect(await showAndAcknowledge(center(file, prefs: prefs)) == 7)
        #expect(await showAndAcknowledge(center(file, prefs: prefs)) == nil)
        clock.advance(by: 86_400)
        let center = center(file, prefs: prefs)
        #expect(await showAndAcknowledge(center) == 6)
        #expect(center.lastReport?.evaluations.first?.check(.id)?.summary == "id > lastMessageId (6 is not > 7, but was passed over unacknowledged)")
    }

    @Test("acknowledging never lowers lastMessageId; the key name is configurable")
    func monotonic() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 3)).utf8).write(to: file)
        let prefs = try Prefs(.memory)
        let center = center(file, prefs: prefs, lastMessageIdKey: "alerts.lastId")
        await center.refresh()
        let message = try #require(center.pendingMessage)
        #expect(message.id == 3)
        try prefs.set(5, for: Prefs.Key<Int>("alerts.lastId", initial: 0))  // another process acknowledged 5 meanwhile
        center.acknowledge(.confirm, for: message)
        await center.flush()
        #expect(center.lastMessageId == 5)
        #expect(prefs[Prefs.Key<Int>("alerts.lastId", initial: 0)] == 5)
        #expect(!prefs.isStored(Prefs.Key<Int>("lastMessageId", initial: 0)))
    }

    @Test(
        "a lastMessageId stored as another type is read as UserDefaults.integer would: 3.0, \"3\", \" 3 \", \"3.0\"",
        arguments: [
            try StoredValue(3.0), try StoredValue("3"), try StoredValue(" 3 "), try StoredValue("3.0"), try StoredValue(3),
        ])
    func lastMessageIdOfAnotherType(stored: StoredValue) async throws {
        let directory = try TemporaryDirectory()
        let (center, prefs) = try await refreshedCenter(messages: [2, 3], lastMessageId: stored, in: directory)
        #expect(center.pendingMessage == nil, "messages 2 and 3 were acknowledged")
        #expect(center.lastError == nil)
        #expect(center.lastMessageId == 3)
        let held = try #require(try FeedDecoder.decode(Feeds.of(Feeds.message(id: 2))).messages.first)
        center.acknowledge(.confirm, for: held)  // a UI still holding message 2
        await center.flush()
        #expect(try prefs.storedValue(forKey: "lastMessageId") == StoredValue(3), "not lowered to 2; written back as an integer")
    }

    @Test("a Boolean lastMessageId reads as 1 or 0, as UserDefaults.integer does")
    func booleanLastMessageId() async throws {
        let directory = try TemporaryDirectory()
        let (center, _) = try await refreshedCenter(messages: [1, 2], lastMessageId: try StoredValue(true), in: directory)
        #expect(center.pendingMessage?.id == 2)
        #expect(center.lastReport?.evaluations.first?.check(.id)?.summary == "id > lastMessageId (1 is not > 1)")
    }

    @Test("a store that cannot be used is lastStoreError, not a feed error")
    func storeFailureIsNotAFeedError() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of([Feeds.message(id: 3)]).utf8).write(to: file)
        let prefs = try Prefs(.memory)
        try prefs.close()
        let center = center(file, prefs: prefs)
        await center.refresh()
        #expect(center.lastError == nil, "\(String(describing: center.lastError))")
        #expect(center.lastStoreError == .closed(store: prefs.storage.description), "\(String(describing: center.lastStoreError))")
    }

    @Test(
        "a lastMessageId that is not a whole number fails closed: nothing shown, nothing written, lastError says why",
        arguments: [
            try StoredValue(3.5), try StoredValue("three"), try StoredValue(Date(timeIntervalSinceReferenceDate: 0)), try StoredValue([1, 2]),
        ])
    func unreadableLastMessageId(stored: StoredValue) async throws {
        let directory = try TemporaryDirectory()
        let (center, prefs) = try await refreshedCenter(messages: [2, 4], lastMessageId: stored, in: directory)
        #expect(center.pendingMessage == nil)
        guard case .unreadableState(key: "lastMessageId", let reason)? = center.lastError else {
            Issue.record("lastError: \(String(describing: center.lastError))")
            return
        }
        #expect(reason == "\(stored.type) \(stored.preview(limit: 40)) is not a whole number")
        #expect(center.lastError?.description.hasSuffix("no message is shown until it is reset") == true)
        #expect(center.lastMessageId == .max)

        let held = try #require(try FeedDecoder.decode(Feeds.of(Feeds.message(id: 4))).messages.first)
        center.acknowledge(.confirm, for: held)
        await center.flush()
        #expect(try prefs.storedValue(forKey: "lastMessageId") == stored, "left alone: it may stand for a higher id")

        try prefs.setStoredValue(nil, forKey: "lastMessageId")  // the documented fix: reset it
        await center.refresh()
        #expect(center.pendingMessage?.id == 4)
    }

    @Test("the installation id is created once in the store and reused")
    func installationId() async throws {
        let directory = try TemporaryDirectory()
        let storeURL = directory.file("prefs.sqlite")
        let file = directory.file("messages.json")
        try Data(Feeds.seed.utf8).write(to: file)
        let first = center(file, prefs: try Prefs(.sqlite(storeURL)))
        let id = first.installationId()
        #expect(UUID(uuidString: id) != nil)
        #expect(first.installationId() == id)
        let second = center(file, prefs: try Prefs(.sqlite(storeURL)))
        #expect(second.installationId() == id)
        #expect(try Prefs(.sqlite(storeURL))[MessageCenter.installationIdKey] == id)
    }

    // MARK: - Failures

    @Test("a bad feed entry is reported and skipped; the others are still shown")
    func badEntry() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 2), #"{"id": "9", "bundleId": "com.createchsol.AppAlertExample"}"#).utf8).write(to: file)
        let center = center(file, prefs: try Prefs(.memory))
        await center.refresh()
        #expect(center.pendingMessage?.id == 2)
        #expect(
            center.diagnostics.map(\.summary) == [
                "$[1]: missing required key \"confirmLabel\"", "$[1]: missing required key \"text\"",
                "$[1]: missing required key \"title\"", "$[1].id: expected an integer, found string",
            ])
    }

    @Test("refresh never throws: errors go to lastError, and an expired last good feed shows nothing")
    func expiredCache() async throws {
        let scenario = Scenario(.ok(Feeds.seed))
        let server = try TestHTTPServer { _ in scenario.current }
        defer { server.stop() }
        let url = server.url("/messages.json")
        let prefs = try Prefs(.memory)
        let center = center(url, prefs: prefs)
        await center.refresh()
        #expect(center.pendingMessage?.id == 1)
        scenario.set(.status(403))
        clock.advance(by: 86_400)
        await center.refresh()
        #expect(center.lastError == .httpStatus(403, url: url))
        #expect(center.lastFetch?.source == .cache)
        #expect(center.pendingMessage?.id == 1)  // the last good feed is still used
        clock.advance(by: 6 * 86_400)
        await center.refresh()
        #expect(center.lastError == .httpStatus(403, url: url))
        #expect(center.lastFetch?.source == FeedFetchResult.Source.none)
        #expect(center.pendingMessage == nil)
        #expect(center.lastReport == nil)
    }

    @Test("an insecure feed URL is refused and reported")
    func insecureURL() async throws {
        let url = try #require(URL(string: "http://example.invalid/messages.json"))
        let center = center(url, prefs: try Prefs(.memory))
        await center.refresh()
        #expect(center.lastError == .insecureURL(url))
        #expect(center.pendingMessage == nil)
        #expect(!center.isRefreshing)
    }

    @Test("MessageContext.current fills the OS version and the locale")
    func currentContext() {
        let context = MessageContext.current(bundleIdentifier: "com.example.app", appVersion: "2.1")
        let os = ProcessInfo.processInfo.operatingSystemVersion
        #expect(context.osVersion == "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)")
        #expect(context.localeIdentifier == Locale.current.identifier)
        #expect(context.bundleIdentifier == "com.example.app" && context.appVersion == "2.1")
    }
}
