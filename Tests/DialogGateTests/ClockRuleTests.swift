@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// One clock rule for every wait (`ClockRule`): while the clock is behind the recorded time (set back), the wait runs its
/// whole length from when that was first seen; it neither ends at once nor waits out the jump. Each test sets the
/// injected clock back a year after the wait was recorded, on a new launch (a new gate or center on the store file).
@Suite("One clock rule: every wait, with the clock set back a year")
struct ClockRuleTests {
    static let year: TimeInterval = 365 * 86_400
    static let day: TimeInterval = 86_400
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func launch(_ frequency: DisplayFrequency = .unlimited) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), appVersion: "1.0",
            overrides: DialogOverrides(), displayFrequency: frequency, clock: clock.function)
    }

    @Test("displayFrequency .every(1 day): another dialog waits a day from when the clock was first seen behind, not at once")
    func displayFrequency() throws {
        let shown = clock.now
        try #require(try launch(.every(.seconds(86_400))).claim(Dialog("rate")).presentation).finish(.dismiss)
        clock.advance(by: -Self.year)
        let seenBehind = clock.now
        let reason = DialogReason.displayFrequency(lastPresented: shown, nextAllowed: seenBehind.addingTimeInterval(Self.day))
        #expect(try launch(.every(.seconds(86_400))).decision(for: Dialog("tips")).reasons == [reason])
        clock.advance(by: Self.day - 1)
        #expect(try launch(.every(.seconds(86_400))).claim(Dialog("tips")).decision.reasons == [reason], "the anchor is kept across launches")
        clock.advance(by: 1)
        #expect(try launch(.every(.seconds(86_400))).claim(Dialog("tips")).presentation != nil)
    }

    @Test("displayFrequency: set right again, the recorded presentation applies")
    func displayFrequencySetRight() throws {
        let shown = clock.now
        try #require(try launch(.every(.seconds(86_400))).claim(Dialog("rate")).presentation).finish(.dismiss)
        clock.advance(by: -Self.year)
        _ = try launch(.every(.seconds(86_400))).decision(for: Dialog("tips"))
        clock.set(shown.addingTimeInterval(3_600))
        #expect(
            try launch(.every(.seconds(86_400))).decision(for: Dialog("tips")).reasons == [
                .displayFrequency(lastPresented: shown, nextAllowed: shown.addingTimeInterval(Self.day))
            ])
        #expect(try launch().prefs.storedValue(forKey: "dialoggate.lastPresentation.reanchoredAt") == nil, "the anchor is dropped")
    }

    @Test("neverRemindExpiry: 180 days from when the clock was first seen behind the answer, not the jump and 180 days")
    func neverRemindExpiry() throws {
        let dialog = Dialog("backup", policy: DialogPolicy(neverRemindExpiry: .seconds(180 * 86_400)))
        let answered = clock.now
        try #require(try launch().claim(dialog).presentation).finish(.neverRemind)
        clock.advance(by: -Self.year)
        #expect(try launch().decision(for: dialog).reasons == [.neverRemind(since: answered)])
        clock.advance(by: 180 * Self.day - 1)
        #expect(try launch().decision(for: dialog).reasons == [.neverRemind(since: answered)])
        clock.advance(by: 1)
        #expect(try launch().decision(for: dialog).reasons == [.neverRemindExpired(since: answered), .eligible(shown: 1, limit: nil)])
    }

    @Test("a dialog's minimumInterval and a snooze follow the same rule")
    func minimumIntervalAndSnooze() throws {
        let tips = Dialog("tips", policy: DialogPolicy(minimumInterval: .seconds(86_400)))
        let later = Dialog("later")
        try #require(try launch().claim(tips).presentation).finish(.dismiss)
        try #require(try launch().claim(later).presentation).finish(.remindLaterAfter(.seconds(86_400)))
        clock.advance(by: -Self.year)
        let seenBehind = clock.now
        #expect(try launch().decision(for: later).reasons == [.snoozed(until: seenBehind.addingTimeInterval(Self.day))])
        #expect(!(try launch().shouldPresent(tips)))
        clock.advance(by: Self.day)
        #expect(try launch().shouldPresent(tips))
        #expect(try launch().shouldPresent(later))
    }
}

/// The impression interval of remote messages, under the same rule.
@Suite("One clock rule: a message's impression interval")
@MainActor
struct MessageClockRuleTests {
    let clock = TestClock(feedEpoch)
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A launch: refreshes a new center on the store file and dismisses what it shows; returns its id.
    func dismissedLaunch() async throws -> Int? {
        let file = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 7)).utf8).write(to: file)
        let center = MessageCenter(
            feedURL: file, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), context: .seedApp,
            impressions: ImpressionPolicy(minimumInterval: .seconds(86_400)), clock: clock.function, random: { 0 })
        await center.refresh()
        let shown = center.pendingMessage?.id
        center.dismissWithoutAcknowledging()
        return shown
    }

    @Test("once a day: with the clock set back a year, the next impression waits a day from when that was first seen")
    func impressionInterval() async throws {
        #expect(try await dismissedLaunch() == 7)
        clock.advance(by: -ClockRuleTests.year)
        #expect(try await dismissedLaunch() == nil, "not at once")
        clock.advance(by: ClockRuleTests.day - 1)
        #expect(try await dismissedLaunch() == nil, "the anchor is kept across launches")
        clock.advance(by: 1)
        #expect(try await dismissedLaunch() == 7, "nor after the jump")
    }
}
