@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

@Suite("Local dialogs")
struct LocalDialogTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A "launch": a new store on the same file and a new session, as a new app process has.
    func launch(appVersion: String? = "1.0", overrides: DialogOverrides = DialogOverrides()) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(),
            appVersion: appVersion, overrides: overrides, clock: clock.function)
    }

    /// Reported: "OK" is `.dismiss` for seed 000 and `.ok` for seed 001, and the obvious `.ok` silently hid the seed-000
    /// alert for the rest of the launch.
    @Test("two OK buttons are two named answers: hideForSession (OK for this launch) and dismiss (OK that only closes)")
    func twoOKs() throws {
        let seed001 = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        let seed000 = Dialog("Update available", policy: DialogPolicy(neverRemindKey: "Update available"))
        let gate = try launch()
        try #require(try gate.claim(seed001).presentation).finish(.hideForSession)
        try #require(try gate.claim(seed000).presentation).finish(.dismiss)
        #expect(gate.decision(for: seed001).reasons == [.suppressedForSession], "until the next launch")
        #expect(gate.shouldPresent(seed000), "seed 000's alert shows again at the next call")
        #expect(try launch().shouldPresent(seed001), "the next launch")
        let states = try gate.states()
        #expect(states.map { $0.record?.lastResponse } == ["dismiss", "ok"], "sorted by id; the stored names are those of earlier releases")
        #expect(DialogEvent.answered("dialog", .hideForSession).description == "answered dialog: ok")
    }

    @Test("OK hides the dialog for this launch only")
    func okIsSessionScoped() throws {
        let welcome = Dialog("welcome")
        let gate = try launch()
        #expect(gate.shouldPresent(welcome))
        try gate.recordPresentation(of: welcome)
        #expect(gate.shouldPresent(welcome), "presenting alone suppresses nothing: suppression starts with the answer")
        try gate.record(.hideForSession, for: welcome)
        let decision = gate.decision(for: welcome)
        #expect(!decision.shouldPresent)
        #expect(decision.reasons == [.suppressedForSession])
        #expect(decision.description == "welcome: not presented: suppressed for this session (OK)")
        #expect(try launch().shouldPresent(welcome), "a new launch shows it again")
    }

    @Test("never remind survives new launches, under the legacy key dialog_neverAgain")
    func neverRemindPersists() throws {
        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        let gate = try launch()
        try gate.recordPresentation(of: dialog)
        try gate.record(.neverRemind, for: dialog)
        let next = try launch()
        let decision = next.decision(for: dialog)
        #expect(!decision.shouldPresent)
        #expect(decision.reasons == [.neverRemind(since: clock.now)])
        #expect(next.prefs[Prefs.Key("dialog_neverAgain", initial: false)] == true, "the seed's own key is written too")
    }

    @Test("a store where older code wrote UserHasSeenMsg = true keeps the dialog hidden")
    func legacyKey() throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        try prefs.set(true, for: Prefs.Key("UserHasSeenMsg", initial: false))
        let dialog = Dialog("intro", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))
        let gate = try launch()
        #expect(gate.decision(for: dialog).reasons == [.legacyNeverRemind(key: "UserHasSeenMsg")])
        #expect(gate.decision(for: dialog).description == "intro: not presented: never remind (legacy key UserHasSeenMsg)")
        try gate.reset([dialog])
        #expect(try launch().shouldPresent(dialog))
        #expect(try Prefs(.sqlite(directory.file("app.sqlite"))).storedValue(forKey: "UserHasSeenMsg") == nil)
    }

    @Test("remind later snoozes until the date, by the injected clock")
    func remindLater() throws {
        let dialog = Dialog("rate")
        let gate = try launch()
        try gate.record(.remindLaterAfter(.seconds(3600)), for: dialog)
        let until = clock.now.addingTimeInterval(3600)
        #expect(gate.decision(for: dialog).reasons == [.snoozed(until: until)])
        clock.advance(by: 3599)
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 1)
        #expect(gate.shouldPresent(dialog))
        try gate.record(.remindLater(until: clock.now.addingTimeInterval(10)), for: dialog)
        #expect(!(try launch()).shouldPresent(dialog), "a snooze survives a new launch")
    }

    @Test("a dismiss suppresses nothing but is recorded")
    func dismiss() throws {
        let dialog = Dialog("news")
        let gate = try launch()
        try gate.recordPresentation(of: dialog)
        try gate.record(.dismiss, for: dialog)
        #expect(gate.shouldPresent(dialog))
        #expect(try gate.states().first?.record?.lastResponse == "dismiss")
    }

    @Test("a presentation limit: shown 3 of 3 times")
    func limit() throws {
        let dialog = Dialog("tips", policy: DialogPolicy(maximumPresentations: 3))
        let gate = try launch()
        for shown in 0..<3 {
            #expect(gate.decision(for: dialog).reasons == [.eligible(shown: shown, limit: 3)])
            try gate.recordPresentation(of: dialog)
        }
        let decision = try launch().decision(for: dialog)
        #expect(decision.reasons == [.presentationLimitReached(shown: 3, limit: 3)])
        #expect(decision.description == "tips: not presented: shown 3 of 3 times")
    }

    @Test("a minimum interval between presentations")
    func minimumInterval() throws {
        let dialog = Dialog("tips", policy: DialogPolicy(minimumInterval: .seconds(86_400)))
        let gate = try launch()
        try gate.recordPresentation(of: dialog)
        let shown = clock.now
        #expect(gate.decision(for: dialog).reasons == [.tooSoon(lastPresented: shown, nextAllowed: shown.addingTimeInterval(86_400))])
        clock.advance(by: 86_400)
        #expect(gate.shouldPresent(dialog))
    }

    @Test("the clock going back neither fires a snooze early nor extends it by the jump")
    func clockJumpsBack() throws {
        let dialog = Dialog("rate")
        let gate = try launch()
        try gate.record(.remindLaterAfter(.seconds(600)), for: dialog)
        clock.advance(by: 100)
        clock.advance(by: -86_400 * 365)  // a year back
        #expect(!gate.shouldPresent(dialog), "not early")
        clock.advance(by: 599)
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 1)
        #expect(gate.shouldPresent(dialog), "waits its own length from the jump, not a year")
    }

    /// A board without a real-time clock boots at an old date, then network time sets it right.
    @Test("a clock set back and then right again ends a snooze at its recorded end, never earlier")
    func clockBackThenForward() throws {
        let dialog = Dialog("rate")
        let gate = try launch()
        let answered = clock.now
        try gate.record(.remindLaterAfter(.seconds(3_600)), for: dialog)
        clock.advance(by: 100)
        clock.advance(by: -30 * 86_400)
        #expect(gate.decision(for: dialog).reasons == [.snoozed(until: clock.now.addingTimeInterval(3_600))])
        clock.advance(by: 30 * 86_400)  // set right: 100 s after the answer
        #expect(gate.decision(for: dialog).reasons == [.snoozed(until: answered.addingTimeInterval(3_600))])
        clock.set(answered.addingTimeInterval(3_599))
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 1)
        #expect(gate.shouldPresent(dialog))
    }

    @Test("while the clock stays behind, a minimum interval runs from when that was first seen; set right, from the presentation")
    func cooldownWithClockBehind() throws {
        let dialog = Dialog("tip", policy: DialogPolicy(minimumInterval: .seconds(86_400)))
        let gate = try launch()
        let shown = clock.now
        try gate.recordPresentation(of: dialog)
        clock.advance(by: -365 * 86_400)
        let seenBehind = clock.now
        #expect(gate.decision(for: dialog).reasons == [.tooSoon(lastPresented: shown, nextAllowed: seenBehind.addingTimeInterval(86_400))])
        clock.advance(by: 86_399)
        #expect(
            try launch().decision(for: dialog).reasons == [.tooSoon(lastPresented: shown, nextAllowed: seenBehind.addingTimeInterval(86_400))],
            "the anchor is stored: a new launch does not restart the wait")
        clock.advance(by: 1)
        #expect(gate.shouldPresent(dialog), "not locked for the year")
        clock.set(shown.addingTimeInterval(3_600))  // set right, an hour after the presentation
        #expect(gate.decision(for: dialog).reasons == [.tooSoon(lastPresented: shown, nextAllowed: shown.addingTimeInterval(86_400))])
        #expect(try gate.prefs[DialogRecord.storeKey(for: "tip")]?.lastPresentedReanchoredAt == nil, "the anchor is cleared once the clock is right")
    }

    @Test("a clock set back twice re-anchors at the second jump; answering again drops the anchor")
    func clockBackTwice() throws {
        let dialog = Dialog("rate")
        let gate = try launch()
        try gate.record(.remindLaterAfter(.seconds(600)), for: dialog)
        clock.advance(by: -86_400)
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 300)
        clock.advance(by: -86_400)
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 599)
        #expect(!gate.shouldPresent(dialog))
        clock.advance(by: 1)
        #expect(gate.shouldPresent(dialog))
        try gate.record(.remindLaterAfter(.seconds(600)), for: dialog)
        #expect(try gate.prefs[DialogRecord.storeKey(for: "rate")]?.snoozeReanchoredAt == nil)
        #expect(!gate.shouldPresent(dialog))
    }

    @Test("suppression resets when the app version changes, if the policy says so")
    func versionReset() throws {
        let resetting = Dialog("whatsnew", policy: DialogPolicy(resetsOn: .newVersion))
        let keeping = Dialog("intro")
        let gate = try launch(appVersion: "1.0")
        try gate.record(.neverRemind, for: resetting)
        try gate.record(.neverRemind, for: keeping)
        let upgraded = try launch(appVersion: "1.1")
        let decision = upgraded.decision(for: resetting)
        #expect(decision.shouldPresent)
        #expect(decision.reasons == [.resetByAppVersionChange(from: "1.0", to: "1.1"), .eligible(shown: 0, limit: nil)])
        #expect(!upgraded.shouldPresent(keeping))
        try upgraded.record(.neverRemind, for: resetting)
        #expect(try launch(appVersion: "1.1").decision(for: resetting).reasons == [.neverRemind(since: clock.now)])
        #expect(
            try launch(appVersion: "1.1.0").decision(for: resetting).reasons == [.neverRemind(since: clock.now)],
            "the same version spelled with a trailing .0 is no change")
    }

    @Test("QA overrides show all, hide all and force ids, through the API and the environment, without touching state")
    func overrides() throws {
        let hidden = Dialog("hidden")
        let fresh = Dialog("fresh")
        let gate = try launch()
        try gate.record(.neverRemind, for: hidden)
        let before = try gate.prefs.snapshot()
        gate.overrides = DialogOverrides(mode: .showAll)
        #expect(gate.decision(for: hidden).reasons == [.overridden(.showAll)])
        gate.overrides = DialogOverrides(mode: .hideAll, forced: ["hidden"])
        #expect(!gate.shouldPresent(fresh))
        #expect(gate.decision(for: hidden).reasons == [.forced])
        gate.overrides = DialogOverrides()
        #expect(!gate.shouldPresent(hidden))
        #expect(try gate.prefs.snapshot() == before)

        let (fromEnvironment, unrecognized) = DialogOverrides.fromEnvironment(["DIALOGGATE_OVERRIDE": "hide-all; force=a,b ;bogus"])
        #expect(fromEnvironment == DialogOverrides(mode: .hideAll, forced: ["a", "b"]))
        #expect(unrecognized == "bogus")
        #expect(DialogOverrides.fromEnvironment([:]).0 == DialogOverrides())
    }

    @Test("every dialog with state is listed and can be reset one by one or all at once")
    func listAndReset() throws {
        let gate = try launch()
        try gate.recordPresentation(of: Dialog("a"))
        try gate.record(.neverRemind, for: Dialog("b"))
        try gate.record(.hideForSession, for: Dialog("c"))
        let states = try gate.states()
        #expect(states.map(\.id) == ["a", "b", "c"])
        #expect(states[0].record?.presentations == 1)
        #expect(states[1].record?.neverRemindSince == clock.now)
        #expect(states[2].suppressedForSession)
        try gate.reset(["b"])
        #expect(try gate.states().map(\.id) == ["a", "c"])
        #expect(gate.shouldPresent(Dialog("b")))
        try gate.resetAll()
        #expect(try gate.states().isEmpty)
        #expect(gate.shouldPresent(Dialog("c")), "reset also forgets OK in this session")
    }

    @Test("presentIfNeeded asks the app's presenter once and records the answer")
    func presentIfNeeded() async throws {
        let gate = try launch()
        let dialog = Dialog("welcome")
        var asked = 0
        try await gate.presentIfNeeded(dialog) { _ in
            asked += 1; return .hideForSession
        }
        let second = try await gate.presentIfNeeded(dialog) { _ in
            asked += 1; return .hideForSession
        }
        #expect(asked == 1)
        #expect(!second.shouldPresent)
    }
}
