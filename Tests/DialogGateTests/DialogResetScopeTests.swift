@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// A version reset split (`DialogPolicy.resetClears`): the answers (never remind, snooze), the history (presentation
/// count, launches and donations the conditions count), or both, as before.
@Suite("Local dialogs: what a version reset clears")
struct DialogResetScopeTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func launch(_ version: String) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), appVersion: version, overrides: DialogOverrides(),
            clock: clock.function)
    }

    @Test("the default clears both, as before: never remind and the count")
    func defaultClearsAll() throws {
        let tips = Dialog("tips", policy: DialogPolicy(maximumPresentations: 2, resetsOn: .newRelease, neverRemindKey: "tips_never"))
        let gate = try launch("1.0")
        try #require(try gate.claim(tips).presentation).finish(.neverRemind)
        #expect(
            try launch("2.0").decision(for: tips).reasons == [.resetByAppVersionChange(from: "1.0", to: "2.0"), .eligible(shown: 0, limit: 2)])
    }

    @Test(".answers: never remind and snooze go, the count stays")
    func answersOnly() throws {
        let tips = Dialog(
            "tips", policy: DialogPolicy(maximumPresentations: 3, resetsOn: .newRelease, neverRemindKey: "tips_never", resetClears: .answers))
        let gate = try launch("1.0")
        try #require(try gate.claim(tips).presentation).finish(.dismiss)
        try #require(try gate.claim(tips).presentation).finish(.neverRemind)
        #expect(!gate.shouldPresent(tips))
        let updated = try launch("2.0")
        #expect(updated.decision(for: tips).reasons == [.resetByAppVersionChange(from: "1.0", to: "2.0"), .eligible(shown: 2, limit: 3)])
        try #require(try updated.claim(tips).presentation).finish(.dismiss)
        #expect(updated.decision(for: tips).reasons == [.presentationLimitReached(shown: 3, limit: 3)])
        #expect(try updated.prefs.storedValue(forKey: "tips_never") == nil, "the legacy key went with the answer")
    }

    @Test(".history: the count starts over and launches and donations count from the new version; never remind holds")
    func historyOnly() throws {
        func policy(neverRemindKey: String?) -> DialogPolicy {
            DialogPolicy(
                maximumPresentations: 1, resetsOn: .newRelease, neverRemindKey: neverRemindKey, resetClears: .history,
                conditions: .all([.launches(atLeast: 2), .event("saved", atLeast: 2)]))
        }
        let rate = Dialog("rate", policy: policy(neverRemindKey: nil))
        let never = Dialog("never", policy: policy(neverRemindKey: "never_key"))
        for _ in 0..<2 {
            let gate = try launch("1.0")
            try gate.recordLaunch()
            try gate.donate("saved")
        }
        let old = try launch("1.0")
        try #require(try old.claim(rate).presentation).finish(.dismiss)
        try #require(try old.claim(never).presentation).finish(.neverRemind)

        clock.advance(by: 86_400)
        let updated = try launch("1.1-beta.1")  // the same release as 1.1, counted from its first launch
        try updated.recordLaunch()
        try updated.donate("saved")
        #expect(
            updated.decision(for: rate).reasons == [
                .historyResetByAppVersionChange(from: "1.0", to: "1.1-beta.1"),
                .conditionUnmet(.launches(atLeast: 2), current: #"1 in "1.1-beta.1""#),
                .conditionUnmet(.event("saved", atLeast: 2), current: #"1 in "1.1-beta.1""#),
            ])
        clock.advance(by: 86_400)
        let release = try launch("1.1")
        try release.recordLaunch()
        try release.donate("saved")
        #expect(release.decision(for: rate).reasons == [.historyResetByAppVersionChange(from: "1.0", to: "1.1"), .eligible(shown: 0, limit: 1)])
        let neverReasons = release.decision(for: never).reasons
        #expect(neverReasons.contains { if case .neverRemind = $0 { true } else { false } }, "never remind holds: \(neverReasons)")
        #expect(try release.prefs.storedValue(forKey: "never_key") != nil, "the legacy key is kept with the answer")
    }

    @Test("the presentations presentedFewerThan counts survive every version reset")
    func presentationsSurviveResets() throws {
        let cap = DialogCondition.presentedFewerThan(2, within: .seconds(365 * 86_400))
        let rate = Dialog("rate", policy: DialogPolicy(maximumPresentations: 1, resetsOn: .newRelease, conditions: cap))
        try #require(try launch("1.0").claim(rate).presentation).finish(.dismiss)
        clock.advance(by: 86_400)
        try #require(try launch("2.0").claim(rate).presentation).finish(.dismiss)
        clock.advance(by: 86_400)
        let decision = try launch("3.0").decision(for: rate)
        #expect(!decision.shouldPresent)
        #expect(decision.reasons.first == .resetByAppVersionChange(from: "2.0", to: "3.0"))
        #expect(decision.reasons.dropFirst().first.map { if case .conditionUnmet(cap, _) = $0 { true } else { false } } == true, "\(decision)")
    }
}
