@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Dialogs shown in order (`claim(nextOf:)`, as TipKit's ordered TipGroup): at most one of them at a time, the first
/// not done; one shows only once every earlier one is done, in this process and across processes.
@Suite("Local dialogs: groups in order", .serialized)
struct DialogGroupTests {
    let directory: TemporaryDirectory
    let clock = TestClock()
    let onboarding = ["intro1", "intro2", "intro3"].map { Dialog($0, policy: DialogPolicy(maximumPresentations: 1)) }

    init() throws {
        directory = try TemporaryDirectory()
    }

    func launch() throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), appVersion: "1.0", overrides: DialogOverrides(),
            clock: clock.function)
    }

    @Test("one after another: each shows once the one before reached its limit; when all are done, the last one's decision")
    func inOrder() throws {
        let gate = try launch()
        for dialog in onboarding {
            #expect(gate.decision(forNextOf: onboarding).dialogID == dialog.id)
            let presentation = try #require(try gate.claim(nextOf: onboarding).presentation)
            #expect(presentation.dialog == dialog)
            try presentation.finish(.dismiss)
        }
        let done = try gate.claim(nextOf: onboarding)
        #expect(done.presentation == nil)
        #expect(done.decision.dialogID == "intro3")
        #expect(done.decision.reasons == [.presentationLimitReached(shown: 1, limit: 1)])
        #expect(try gate.claim(nextOf: []).decision == DialogDecision(dialogID: "", shouldPresent: false, reasons: []))
    }

    @Test("a dialog not done holds the others back: snoozed, OK this session, or its conditions unmet")
    func notDoneHoldsBack() throws {
        let hints = [
            Dialog("hint1"), Dialog("hint2", policy: DialogPolicy(conditions: .event("photoSaved", atLeast: 1))), Dialog("hint3"),
        ]
        let gate = try launch()
        try #require(try gate.claim(nextOf: hints).presentation).finish(.remindLaterAfter(.seconds(3_600)))
        let snoozed = try gate.claim(nextOf: hints)
        #expect(snoozed.decision.dialogID == "hint1", "hint2 waits for hint1")
        #expect(snoozed.decision.reasons == [.snoozed(until: clock.now.addingTimeInterval(3_600))])
        clock.advance(by: 3_600)
        try #require(try gate.claim(nextOf: hints).presentation).finish(.hideForSession)
        #expect(try gate.claim(nextOf: hints).decision.reasons == [.suppressedForSession])
        let next = try launch()
        #expect(try next.claim(nextOf: hints).presentation?.dialog.id == "hint1", "OK held for the session only")
        try next.record(.neverRemind, for: hints[0])  // "don't show again": done
        #expect(
            next.decision(forNextOf: hints).reasons == [.conditionUnmet(.event("photoSaved", atLeast: 1), current: "0")],
            "hint2 is next, but its condition is unmet: hint3 waits")
        try next.record(.neverRemind, for: hints[1])  // the app invalidates it: the user did what it suggested
        #expect(try next.claim(nextOf: hints).presentation?.dialog.id == "hint3")
    }

    @Test("a never-remind that expires is done until it expires; a QA override forcing a later dialog presents it")
    func expiryAndOverrides() throws {
        let dialogs = [Dialog("a", policy: DialogPolicy(neverRemindExpiry: .seconds(86_400))), Dialog("b")]
        let gate = try launch()
        try gate.record(.neverRemind, for: dialogs[0])
        #expect(gate.decision(forNextOf: dialogs).dialogID == "b")
        clock.advance(by: 86_400)
        #expect(gate.decision(forNextOf: dialogs).dialogID == "a", "a is asked again, so b waits")
        gate.overrides = DialogOverrides(forced: ["b"])
        #expect(try gate.claim(nextOf: dialogs).presentation?.dialog.id == "b")
    }

    @Test("across processes: while another process shows intro1, intro2 is not shown here; then intro2 is next")
    func acrossProcesses() async throws {
        let path = directory.file("app.sqlite").path
        let gate = try launch()
        let release = directory.file("release").path
        let (process, out, err) = try ChildProcess.start(
            "dialoggate-test-child", ["next", "sqlite", path, "intro1,intro2,intro3", "1", release, "dismiss"])
        #expect(await ChildProcess.readLine(out) == "granted intro1")
        let held = try gate.claim(nextOf: onboarding)
        #expect(held.decision.dialogID == "intro1")
        #expect(held.decision.reasons == [.alreadyPresenting])
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        let result = try await ChildProcess.finish(process, out, err)
        #expect(result.status == 0, "\(result.stderr)")
        let second = try #require(try gate.claim(nextOf: onboarding).presentation)
        #expect(second.dialog.id == "intro2")
        try second.finish(.dismiss)
        let last = try await ChildProcess.run("dialoggate-test-child", ["next", "sqlite", path, "intro1,intro2,intro3", "1", "-", "dismiss"])
        #expect(last.stdout == "granted intro3\nfinished\n", "\(last.stderr)")
    }

    @Test("four processes racing through the group: each dialog shown once, in order")
    func racingProcesses() async throws {
        let path = directory.file("app.sqlite").path
        _ = try launch()
        var shown: [String] = []
        for _ in 0..<4 {
            // Started together: each claims the next one and answers at once.
            let children = try (0..<3).map { _ in
                try ChildProcess.start("dialoggate-test-child", ["next", "sqlite", path, "intro1,intro2,intro3", "1", "-", "dismiss"])
            }
            for (process, out, err) in children {
                let result = try await ChildProcess.finish(process, out, err)
                #expect(result.status == 0, "\(result.stderr)")
                if result.stdout.hasPrefix("granted ") { shown.append(String(result.stdout.dropFirst(8).prefix { $0 != "\n" })) }
            }
        }
        #expect(shown.sorted() == ["intro1", "intro2", "intro3"])
        let records = try launch().states().compactMap(\.record)
        #expect(records.map(\.presentations) == [1, 1, 1])
        // Answered in order: each answer is read after the claim it ends, which saw the one before answered. (Not the
        // claim times: a claim reads its clock before it waits for the store's lock.)
        let answered = records.compactMap(\.lastResponseDate)
        #expect(answered.count == 3 && answered == answered.sorted(), "intro1 before intro2 before intro3")
    }
}
