@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport

/// Regressions found by review: version resets with a legacy key, ids that are not key names, dates
/// beyond what the store can write, overlapping presentations, and empty resets.
@Suite("Local dialogs: edge cases")
struct LocalDialogEdgeTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A "launch": a new store on the same file and a new session, as a new app process has.
    func launch(appVersion: String? = "1.0") throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(),
            appVersion: appVersion, overrides: DialogOverrides(), clock: clock.function)
    }

    @Test(
        "hashed ids in NFC and NFD spellings are one dialog: never remind on one hides the other",
        arguments: [
            ("msg:Caf\u{E9}\nsecond line", "msg:Cafe\u{301}\nsecond line"),
            (String(repeating: "x", count: 250) + "\u{E9}", String(repeating: "x", count: 250) + "e\u{301}"),
        ])
    func hashedIdsAcrossSpellings(composed: String, decomposed: String) throws {
        #expect(DialogRecord.storeKeyName(for: composed) == DialogRecord.storeKeyName(for: decomposed))
        #expect(DialogRecord.storeKeyName(for: composed).hasPrefix(DialogRecord.hashedKeyPrefix))
        let gate = try launch()
        try gate.recordPresentation(of: Dialog(composed))
        try gate.record(.neverRemind, for: Dialog(composed))
        #expect(!(try launch()).shouldPresent(Dialog(decomposed)))
        #expect(try launch().states().count == 1)
    }

    @Test("a version reset removes the legacy never-remind key, so the old answer does not come back after the next presentation")
    func versionResetClearsLegacyKey() throws {
        let dialog = Dialog("w", policy: DialogPolicy(resetsOn: .newVersion, neverRemindKey: "w_never"))
        let v1 = try launch(appVersion: "1.0")
        try v1.recordPresentation(of: dialog)
        try v1.record(.neverRemind, for: dialog)
        #expect(!v1.shouldPresent(dialog))

        let v2 = try launch(appVersion: "2.0")
        #expect(v2.decision(for: dialog).reasons == [.resetByAppVersionChange(from: "1.0", to: "2.0"), .eligible(shown: 0, limit: nil)])
        try v2.recordPresentation(of: dialog)
        #expect(v2.decision(for: dialog).reasons == [.eligible(shown: 1, limit: nil)])
        #expect(try v2.prefs.storedValue(forKey: "w_never") == nil, "removed in the transaction that started the new record")
        try v2.record(.dismiss, for: dialog)
        #expect(try launch(appVersion: "2.0").shouldPresent(dialog))

        try v2.record(.neverRemind, for: dialog)
        #expect(try launch(appVersion: "2.0").decision(for: dialog).reasons == [.neverRemind(since: clock.now)])
        #expect(v2.prefs[Prefs.Key("w_never", initial: false)], "a never-remind in the new version writes the key again")
    }

    @Test(
        "seed 000's Dialog(\"msg:\\(msg)\") works for a message that is not a valid key name: hashed key, listed and reset",
        arguments: [
            "Line 1\nLine 2", "Trailing space ", String(repeating: "x", count: 300), " leading\ttab",
        ])
    func idThatIsNotAKeyName(message: String) async throws {
        let dialog = Dialog("msg:\(message)")
        let gate = try launch()
        var shown = 0
        try await gate.presentIfNeeded(dialog) { _ in
            shown += 1; return .neverRemind
        }
        #expect(shown == 1)
        let name = DialogRecord.storeKeyName(for: dialog.id)
        #expect(name.hasPrefix(DialogRecord.hashedKeyPrefix) && name.count == DialogRecord.hashedKeyPrefix.count + 16)
        #expect(name == DialogRecord.storeKeyName(for: dialog.id), "stable")

        let next = try launch()
        #expect(next.decision(for: dialog).reasons == [.neverRemind(since: clock.now)])
        let states = try next.states()
        #expect(states.map(\.id) == [String(name.dropFirst(DialogRecord.keyPrefix.count))])
        #expect(states.first?.dialogID == dialog.id)
        #expect(states.first?.record?.presentations == 1)

        try next.reset(states.map(\.id))  // as `prefs-tool dialogs reset h.…` does
        #expect(try next.states().isEmpty)
        #expect(try launch().shouldPresent(dialog))
        try next.record(.hideForSession, for: dialog)
        try next.reset([dialog.id])
        #expect(next.shouldPresent(dialog), "reset by the id itself clears the session's OK too")
    }

    @Test("a plain id keeps its readable key, and its record keeps the id")
    func plainKeyUnchanged() throws {
        let gate = try launch()
        try gate.recordPresentation(of: Dialog("welcome"))
        #expect(DialogRecord.storeKeyName(for: "welcome") == "dialogs.welcome")
        #expect(try gate.prefs.storedValue(forKey: "dialogs.welcome")?.decode(DialogRecord.self).id == "welcome")
        #expect(try gate.states().map(\.dialogID) == ["welcome"])
    }

    @Test("a record under the key of another id (a hash collision) is not used, nor listed under the wrong id")
    func hashCollision() throws {
        let gate = try launch()
        let dialog = Dialog("msg:a\nb")
        var foreign = DialogRecord()
        foreign.id = "msg:other\nid"
        foreign.neverRemindSince = clock.now
        try gate.prefs.set(foreign, for: DialogRecord.storeKey(for: dialog.id))
        #expect(gate.shouldPresent(dialog))
        try gate.recordPresentation(of: dialog)
        #expect(gate.decision(for: dialog).reasons == [.eligible(shown: 1, limit: nil)])
        #expect(try gate.states().map(\.dialogID) == [dialog.id])
    }

    @Test(
        "remind later beyond what a date can store snoozes until Date.distantFuture; the record, never-remind included, stays readable",
        arguments: [
            DialogResponse.remindLaterAfter(.seconds(Int64.max)),
            .remindLater(until: Date(timeIntervalSinceReferenceDate: 1e300)),
            .remindLater(until: Date(timeIntervalSinceReferenceDate: .infinity)),
            .remindLater(until: Date(timeIntervalSinceReferenceDate: .nan)),
        ])
    func hugeSnooze(response: DialogResponse) throws {
        let dialog = Dialog("snooze")
        let gate = try launch()
        try gate.record(.neverRemind, for: dialog)
        let since = clock.now
        clock.advance(by: 60)
        try gate.record(response, for: dialog)
        let next = try launch()
        #expect(next.decision(for: dialog).reasons == [.neverRemind(since: since), .snoozed(until: .distantFuture)])
        #expect(try next.states().first?.record?.snoozedUntil == .distantFuture)
    }

    @Test("remind later at a date far in the past stores Date.distantPast and snoozes nothing")
    func hugePastSnooze() throws {
        let dialog = Dialog("past")
        let gate = try launch()
        try gate.record(.remindLater(until: Date(timeIntervalSinceReferenceDate: -1e300)), for: dialog)
        #expect(try launch().decision(for: dialog).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(try gate.states().first?.record?.snoozedUntil == .distantPast)
    }

    @Test("presentIfNeeded called again while the dialog is being presented returns not presented; it presents once")
    func concurrentPresentIfNeeded() async throws {
        let gate = try launch()
        let dialog = Dialog("welcome")
        let presentations = Locked(0)
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await gate.presentIfNeeded(dialog) { _ in
                presentations.withLock { $0 += 1 }
                enteredContinuation.yield()
                for await _ in release { break }  // the alert stays up until the test releases it
                return .dismiss
            }
        }
        for await _ in entered { break }
        let second = try await gate.presentIfNeeded(dialog) { _ in
            presentations.withLock { $0 += 1 }
            return .dismiss
        }
        #expect(!second.shouldPresent)
        #expect(second.description == "welcome: not presented: already being presented")
        #expect(gate.decision(for: dialog).reasons == [.alreadyPresenting], "a decision sees the presentation on screen")
        #expect(try gate.states().first?.record?.presentations == 0, "counted when answered")
        releaseContinuation.yield()
        #expect(try await first.value.shouldPresent)
        #expect(presentations.withLock { $0 } == 1)

        let third = try await gate.presentIfNeeded(dialog) { _ in .hideForSession }
        #expect(third.shouldPresent, "once the first presentation ended, it may be presented again")
        #expect(try gate.states().first?.record?.presentations == 2)
    }

    @Test("a presenter that throws still ends the presentation")
    func throwingPresenter() async throws {
        struct Interrupted: Error {}
        let gate = try launch()
        let dialog = Dialog("welcome")
        await #expect(throws: Interrupted.self) { try await gate.presentIfNeeded(dialog) { _ in throw Interrupted() } }
        #expect(try await gate.presentIfNeeded(dialog) { _ in .hideForSession }.shouldPresent)
    }

    @Test(
        "DIALOGGATE_OVERRIDE: modes in any case; a quoted id keeps its commas, semicolons and spaces",
        arguments: [
            ("SHOW-ALL", DialogOverrides(mode: .showAll), nil),
            ("Hide-All ; force=a, b", DialogOverrides(mode: .hideAll, forced: ["a", "b"]), nil),
            (#"force="msg:Hello, world""#, DialogOverrides(forced: ["msg:Hello, world"]), nil),
            (#"FORCE="a;b",  " padded " ,"say \"hi\"";show-all"#, DialogOverrides(mode: .showAll, forced: ["a;b", " padded ", #"say "hi""#]), nil),
            ("show-all;bogus", DialogOverrides(mode: .showAll), "bogus"),
        ] as [(String, DialogOverrides, String?)])
    func overridesFromEnvironment(value: String, expected: DialogOverrides, unrecognized: String?) {
        let (overrides, rest) = DialogOverrides.fromEnvironment(["DIALOGGATE_OVERRIDE": value])
        #expect(overrides == expected)
        #expect(rest == unrecognized)
    }

    /// Reported: "2.0-beta.3" and "2.0" were one version, so a never-remind answered in the beta survived the release.
    @Test(
        "the version reset is a choice: .newRelease, .newVersion (a pre-release and its release are two) or .newBuild",
        arguments: [
            ("2.0-beta.3", "2.0", DialogPolicy.VersionChange.newRelease, false),
            ("2.0-beta.3", "2.0", .newVersion, true),
            ("2.0-beta.3", "2.0-beta.4", .newVersion, true),
            ("2.0b3", "2.0-B3", .newVersion, false),
            ("2.0 (145)", "2.0 (146)", .newVersion, false),
            ("2.0 (145)", "2.0 (146)", .newBuild, true),
            ("2.0+145", "2.0 (145)", .newBuild, false),
            ("2.0", "2.0.0", .newBuild, false),
            ("2.0", "2.1 (1)", .newRelease, true),
            ("nightly", "Nightly", .newRelease, true),
        ])
    func versionResetChoice(old: String, new: String, change: DialogPolicy.VersionChange, resets: Bool) throws {
        let dialog = Dialog("whatsnew", policy: DialogPolicy(resetsOn: change))
        try launch(appVersion: old).record(.neverRemind, for: dialog)
        #expect(try launch(appVersion: new).shouldPresent(dialog) == resets)
    }

    @Test("reset of no ids changes nothing: other dialogs' OK in this session stays")
    func resetNothing() throws {
        let gate = try launch()
        let dialog = Dialog("a")
        try gate.record(.hideForSession, for: dialog)
        try gate.reset([String]())
        try gate.reset([Dialog]())
        #expect(gate.decision(for: dialog).reasons == [.suppressedForSession])
    }
}
