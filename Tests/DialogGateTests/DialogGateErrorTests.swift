import DialogGate
import Foundation
import Prefs
import PrefsTesting
import Testing

/// Every DialogGate call that writes throws one typed error: the rules' refusal, an ended presentation, or the store's
/// own error, which says what failed and where.
@Suite("DialogGate: typed errors")
struct DialogGateErrorTests {
    @Test("a closed store's error comes out of every writing call as .store, naming the store")
    func closedStore() throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let gate = DialogGate(prefs: prefs, session: DialogSession(), clock: TestClock().function)
        let tips = Dialog("tips")
        try prefs.close()
        let calls: [(String, () throws(DialogGateError) -> Void)] = [
            ("claim", { () throws(DialogGateError) in _ = try gate.claim(tips) }),
            ("recordPresentation", { () throws(DialogGateError) in try gate.recordPresentation(of: tips) }),
            ("record", { () throws(DialogGateError) in try gate.record(.neverRemind, for: tips) }),
            ("declare", { () throws(DialogGateError) in try gate.declare([tips]) }),
            ("reset ids", { () throws(DialogGateError) in try gate.reset(["tips"]) }),
            ("reset dialogs", { () throws(DialogGateError) in try gate.reset([tips]) }),
            ("resetAll", { () throws(DialogGateError) in try gate.resetAll() }),
        ]
        for (name, call) in calls {
            do {
                try call()
                Issue.record("\(name) did not throw on a closed store")
            } catch {
                guard case .store(.closed(let store)) = error else {
                    Issue.record("\(name) threw \(error), not .store(.closed)")
                    continue
                }
                #expect(store.contains("app.sqlite"), "\(name): \(store)")
            }
        }
    }

    @Test("a never-remind key the store refuses is .store(.invalidKeyName), and nothing is claimed")
    func invalidLegacyKey() throws {
        let gate = DialogGate(prefs: try Prefs(.memory), session: DialogSession(), clock: TestClock().function)
        let dialog = Dialog("intro", policy: DialogPolicy(neverRemindKey: "bad\u{0}name"))
        #expect {
            _ = try gate.claim(dialog)
        } throws: { error in
            guard case .store(.invalidKeyName(let name, _)) = error as? DialogGateError else { return false }
            return name == "bad\u{0}name"
        }
        #expect(gate.decision(for: Dialog("intro")).shouldPresent)
    }

    @Test("finishing a presentation twice is .presentationEnded; the first answer stands")
    func endedTwice() throws {
        let gate = DialogGate(prefs: try Prefs(.memory), session: DialogSession(), clock: TestClock().function)
        let intro = Dialog("intro")
        guard case .granted(let presentation) = try gate.claim(intro) else {
            Issue.record("the first claim was declined")
            return
        }
        try presentation.finish(.neverRemind)
        #expect(throws: DialogGateError.presentationEnded(dialogID: "intro")) { try presentation.cancel() }
        #expect(!gate.decision(for: intro).shouldPresent)
    }
}
