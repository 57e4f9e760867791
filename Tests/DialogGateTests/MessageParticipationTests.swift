@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Remote messages take part with local dialogs: a message shown uses up the gate's display frequency as a dialog does
/// (an announcement and a review prompt are not shown on the same launch), and the feed gives a message its own caps and
/// conditions on the inputs of a dialog's conditions. Each launch is a new store instance, gate, session and center on
/// one SQLite file, against a real feed on loopback, with a clock moved by hand.
@Suite("MessageCenter: messages take part with dialogs")
@MainActor
struct MessageParticipationTests {
    let clock = TestClock(feedEpoch)
    let directory: TemporaryDirectory
    let review = Dialog("review")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// One launch: the app's gate (its own session, as a new process has) and its center with that gate.
    func launch(
        _ server: TestFeedServer, frequency: DisplayFrequency = .oncePerSession, appVersion: String = "1.0", withGate: Bool = true
    ) throws -> (gate: DialogGate, center: MessageCenter) {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let gate = DialogGate(
            prefs: prefs, session: DialogSession(), appVersion: appVersion, displayFrequency: frequency, clock: clock.function)
        let center = MessageCenter(
            feedURL: server.url, prefs: prefs, context: .seedApp.with(appVersion: appVersion), options: .unhurried,
            gate: withGate ? gate : nil, clock: clock.function, random: { 0 })
        return (gate, center)
    }

    @Test("an announcement shown at launch: the review prompt waits for another launch (oncePerSession)")
    func messageFirst() async throws {
        let server = try TestFeedServer(Feeds.of(Feeds.message(id: 1)))
        let (gate, center) = try launch(server)
        await center.refresh()
        let message = try #require(center.pendingMessage)
        #expect(gate.decision(for: review).reasons == [.anotherDialogThisSession])
        #expect(try gate.claim(review).presentation == nil)
        center.acknowledge(.confirm, for: message)
        await center.flush()

        let next = try launch(server)
        #expect(try next.gate.claim(review).presentation != nil, "a new launch: the prompt may show")
    }

    @Test("a review prompt shown at launch: the announcement waits for another launch, and the report says why")
    func dialogFirst() async throws {
        let server = try TestFeedServer(Feeds.of(Feeds.message(id: 1)))
        let (gate, center) = try launch(server)
        try #require(try gate.claim(review).presentation).finish(.dismiss)
        await center.refresh()
        #expect(center.pendingMessage == nil)
        let check = try #require(center.lastReport?.evaluations.first?.check(.displayFrequency))
        #expect(check.description == "fail: displayFrequency (a dialog was presented in this session already)")

        let next = try launch(server)
        await next.center.refresh()
        #expect(next.center.pendingMessage?.id == 1)
        #expect(
            next.center.lastReport?.evaluations.first?.check(.displayFrequency)?.description
                == "pass: displayFrequency (none presented in this session)")
    }

    @Test("once a day across launches: a message shown holds back every dialog of the store for a day, and the reverse")
    func everyDay() async throws {
        let server = try TestFeedServer(Feeds.of(Feeds.message(id: 1), Feeds.message(id: 2)))
        let day = DisplayFrequency.every(.seconds(86_400))
        let first = try launch(server, frequency: day)
        await first.center.refresh()
        first.center.acknowledge(.confirm, for: try #require(first.center.pendingMessage))
        await first.center.flush()

        clock.advance(by: .seconds(3_600))
        let second = try launch(server, frequency: day)
        #expect(!second.gate.decision(for: review).shouldPresent)
        await second.center.refresh()
        #expect(second.center.pendingMessage == nil, "message 1 was shown an hour ago")

        clock.advance(by: .seconds(86_400))
        let third = try launch(server, frequency: day)
        try #require(try third.gate.claim(review).presentation).finish(.dismiss)
        await third.center.refresh()
        #expect(third.center.pendingMessage == nil, "the review prompt was shown a moment ago")
        clock.advance(by: .seconds(86_400))
        await third.center.refresh()
        #expect(third.center.pendingMessage?.id == 1)
    }

    @Test("without a gate, a message shown still counts: the store's session, and dialoggate.lastPresentation for every process")
    func withoutGate() async throws {
        let server = try TestFeedServer(Feeds.of(Feeds.message(id: 1)))
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let center = MessageCenter(feedURL: server.url, prefs: prefs, context: .seedApp, options: .unhurried, clock: clock.function)
        await center.refresh()
        #expect(center.pendingMessage?.id == 1)
        // The app's gate made without a session: the process's session on the store, which the center used too.
        let gate = DialogGate(prefs: prefs, displayFrequency: .oncePerSession, clock: clock.function)
        #expect(gate.decision(for: review).reasons == [.anotherDialogThisSession])
        #expect(try prefs.storedValue(forKey: "dialoggate.lastPresentation") != nil)
        let daily = DialogGate(prefs: prefs, session: DialogSession(), displayFrequency: .every(.seconds(86_400)), clock: clock.function)
        #expect(daily.decision(for: review).reasons.contains { if case .displayFrequency = $0 { true } else { false } })
    }

    @Test("a message shown in another process (an app extension) holds back this process's dialogs for the interval")
    func otherProcess() async throws {
        let feed = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 7)).utf8).write(to: feed)
        let path = directory.file("app.sqlite").path
        _ = try Prefs(.sqlite(directory.file("app.sqlite")))
        let shown = try await ChildProcess.run("dialoggate-test-child", ["message", "sqlite", path, feed.path, "-", "-", "dismiss"])
        #expect(shown.stdout == "pending 7\nfinished\n", "\(shown.stderr)")
        // The child ran on the real clock: so does this gate.
        let gate = DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), displayFrequency: .every(.seconds(3_600)))
        #expect(gate.decision(for: review).reasons.contains { if case .displayFrequency = $0 { true } else { false } })
    }

    // MARK: - A message's own caps and conditions

    @Test("a message's own maxImpressions and minimumIntervalSeconds, over the center's default (every refresh)")
    func ownCaps() async throws {
        let server = try TestFeedServer(
            Feeds.of(Feeds.wrapped(id: 3, #""maxImpressions": 2"#), Feeds.wrapped(id: 5, #""minimumIntervalSeconds": 86400"#)))
        var shown: [Int?] = []
        for _ in 0..<4 {
            let (_, center) = try launch(server, frequency: .unlimited)
            await center.refresh()
            shown.append(center.pendingMessage?.id)
            center.dismissWithoutAcknowledging()
            await center.flush()
            clock.advance(by: .seconds(3_600))
        }
        // 5 once (then not within a day), 3 twice (its cap), then nothing until 5's day has passed.
        #expect(shown == [5, 3, 3, nil])
        clock.advance(by: .seconds(86_400))
        let (_, center) = try launch(server, frequency: .unlimited)
        await center.refresh()
        #expect(center.pendingMessage?.id == 5)
    }

    @Test("conditions on launches and on parameters the app sets (plan, country), judged as a dialog's, each unmet one explained")
    func conditions() async throws {
        let server = try TestFeedServer(
            Feeds.of(
                Feeds.wrapped(
                    id: 4, #""conditions": {"launchesAtLeast": 3, "parameters": {"plan": "free", "country": ["DE", "AT"]}}"#)))
        func launchWith(country: String) async throws -> MessageCenter {
            let (gate, center) = try launch(server)
            try gate.recordLaunch()
            gate.setParameter("plan", "free")
            gate.setParameter("country", .string(country))
            await center.refresh()
            return center
        }
        let first = try await launchWith(country: "DE")
        #expect(first.pendingMessage == nil)
        #expect(first.lastReport?.evaluations.first?.check(.conditions)?.detail == "not met: launches ≥ 3 (now 1)")
        _ = try await launchWith(country: "DE")
        let third = try await launchWith(country: "FR")
        #expect(third.pendingMessage == nil)
        #expect(
            third.lastReport?.evaluations.first?.check(.conditions)?.detail
                == #"not met: any of (country = "DE"; country = "AT") (now country = "DE": "FR"; country = "AT": "FR")"#)
        let fourth = try await launchWith(country: "AT")
        #expect(fourth.pendingMessage?.id == 4)
        #expect(
            fourth.lastReport?.evaluations.first?.check(.conditions)?.detail
                == #"launches ≥ 3 (now 4); plan = "free" (now "free"); country = "DE" (now "AT"); country = "AT" (now "AT")"#)
    }

    @Test("conditions on donated events and on days since the first launch; a stored parameter seen by a center without a gate")
    func eventsAndDays() async throws {
        let server = try TestFeedServer(
            Feeds.of(
                Feeds.wrapped(
                    id: 6,
                    #""conditions": {"daysSinceFirstLaunchAtLeast": 2, "events": {"photoSaved": {"atLeast": 2, "withinSeconds": 604800}}, "parameters": {"cohort": "b"}}"#
                )))
        let (gate, _) = try launch(server)
        try gate.recordLaunch()
        try gate.storeParameter("cohort", "b")
        for _ in 0..<2 { try gate.donate("photoSaved") }
        let early = try launch(server, withGate: false)
        await early.center.refresh()
        #expect(early.center.lastReport?.evaluations.first?.check(.conditions)?.detail == "not met: days since first launch ≥ 2 (now 0 days)")
        clock.advance(by: .seconds(2 * 86_400))
        let later = try launch(server, withGate: false)
        await later.center.refresh()
        #expect(later.center.pendingMessage?.id == 6)
        clock.advance(by: .seconds(7 * 86_400))
        let stale = try launch(server, withGate: false)
        await stale.center.refresh()
        #expect(stale.center.pendingMessage == nil, "the donations left their 7-day window")
    }
}
