import DialogGate
import Foundation
import Prefs
import PrefsTesting
import PrefsUserDefaults
import Testing

// The seeds' flows as the seeds' own view controllers would call DialogGate and MessageCenter after the move: each
// controller is a `@MainActor` class, its alert code is main-actor state, and the closures it hands to the library are
// written as an iOS developer writes them, without `@Sendable`. UIKit's alert is replaced by `tap`, the button the
// user taps.

/// Seed 000: `displayMsg(title:msg:style:dontRemindKey:)` from `extension UIViewController`, on DialogGate.
@MainActor
final class IntroViewController {
    let gate: DialogGate
    /// The messages of the alerts presented, in order.
    var presented: [String] = []
    /// The button the user taps on the next alert.
    var tap = "OK"

    init(gate: DialogGate) { self.gate = gate }

    func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil) async throws {
        guard let key = dontRemindKey else {
            _ = present(msg, buttons: ["OK"])
            return
        }
        try await gate.presentIfNeeded(Dialog(key, policy: DialogPolicy(neverRemindKey: key))) { _ in
            present(msg, buttons: ["OK", "Don't Remind"]) == "Don't Remind" ? .neverRemind : .dismiss
        }
    }

    /// `self.present(ac, animated: true)`: the alert is shown and answered.
    private func present(_ message: String, buttons: [String]) -> String {
        presented.append(message)
        return buttons.contains(tap) ? tap : "OK"
    }
}

/// Seed 001's key enum: the case names its stored key and its initial value.
enum UserDefaultsKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain"
    var initialValue: any PrefsStorable { false }
}

/// Seed 001's view controller: `viewDidAppear` calls `showDialogIfNeed`; OK hides the dialog until the next launch
/// (DialogGate's session replaces `DialogHelper.shared`), Never remind me for good.
@MainActor
final class DialogViewController {
    let gate: DialogGate
    var alerts = 0
    var tap: DialogResponse = .hideForSession

    init(gate: DialogGate) { self.gate = gate }

    func viewDidAppear() async throws {
        try await showDialogIfNeed()
    }

    func showDialogIfNeed() async throws {
        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: UserDefaultsKey.dialogNoMore.rawValue))
        try await gate.presentIfNeeded(dialog) { _ in createDialog() }
    }

    private func createDialog() -> DialogResponse {
        alerts += 1  // "Here is a message for you!"  [OK]  [Never remind me]
        return tap
    }
}

/// Seed 003's `AlertService` as a view controller's: refresh on appearing, present the pending message, acknowledge it.
@MainActor
final class AlertViewController {
    let messages: MessageCenter
    var shown: [Int] = []
    var events: [String] = []

    init(feed: URL, prefs: Prefs) {
        messages = MessageCenter(
            feedURL: feed, prefs: prefs,
            context: MessageContext(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0", osVersion: "17.2", localeIdentifier: "en_US"))
        messages.onEvent = { event in self.events.append("\(event)") }  // main-actor state, no @Sendable
    }

    func viewDidAppear() async {
        await messages.refresh()
        if let message = messages.pendingMessage {
            shown.append(message.id)
            _ = messages.acknowledge(.confirm, for: message)
        }
    }
}

@Suite("The seeds' flows, from @MainActor view controllers")
@MainActor
struct SeedViewControllerTests {
    @Test("seed 000: a key's alert shows until Don't Remind, a keyless one every time; the seed's own read agrees")
    func seed000() async throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let controller = IntroViewController(gate: DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()))
        try await controller.displayMsg(title: "Title", msg: "a", dontRemindKey: "UserHasSeenMsg")
        controller.tap = "Don't Remind"
        try await controller.displayMsg(title: "Title", msg: "b", dontRemindKey: "UserHasSeenMsg")
        try await controller.displayMsg(title: "Title", msg: "c", dontRemindKey: "UserHasSeenMsg")
        try await controller.displayMsg(title: "Title", msg: "d")
        try await controller.displayMsg(title: "Title", msg: "e")
        #expect(controller.presented == ["a", "b", "d", "e"])
        #expect(PrefsDefaults(try Prefs(.sqlite(directory.file("app.sqlite")))).bool(forKey: "UserHasSeenMsg"))

        // Older code wrote "YES" under another key: the alert keyed by it never shows.
        PrefsDefaults(prefs).set("YES", forKey: "tipSwipe")
        try await controller.displayMsg(title: "Title", msg: "f", dontRemindKey: "tipSwipe")
        #expect(controller.presented.last == "e")

        // A key with a trailing space, as UserDefaults took it: shown until Don't Remind, then never again.
        try await controller.displayMsg(title: "Title", msg: "g", dontRemindKey: "Intro tip ")
        #expect(controller.presented.last == "g")
        try await controller.displayMsg(title: "Title", msg: "h", dontRemindKey: "Intro tip ")
        #expect(controller.presented.last == "g")
        #expect(PrefsDefaults(prefs).bool(forKey: "Intro tip "))
    }

    @Test("seed 001: OK hides the dialog until the next launch, Never remind me for good")
    func seed001() async throws {
        let directory = try TemporaryDirectory()
        // Per launch, the viewDidAppear calls and the answer whenever the dialog shows.
        let launches: [[DialogResponse]] = [[.hideForSession, .hideForSession], [.hideForSession], [.neverRemind, .hideForSession], [.hideForSession]]
        var shown: [Int] = []
        for answers in launches {
            let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
            let controller = DialogViewController(gate: DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()))
            for answer in answers {
                controller.tap = answer
                try await controller.viewDidAppear()
            }
            shown.append(controller.alerts)
        }
        #expect(shown == [1, 1, 1, 0])
        #expect(try Prefs(.sqlite(directory.file("app.sqlite")))[UserDefaultsKey.dialogNoMore] as Bool)
    }

    @Test("seed 003: the message shows once, at the first launch; the seed's getter reads its id")
    func seed003() async throws {
        let directory = try TemporaryDirectory()
        let feed = directory.file("messages.json")
        try Data(
            #"[{"id": 1, "bundleId": "com.createchsol.AppAlertExample", "title": "App Alert", "text": "A bug.", "confirmLabel": "OK", "appVersions": ["1.0"]}]"#
                .utf8
        ).write(to: feed)
        var shown: [[Int]] = []
        var events: [String] = []
        for _ in 0..<2 {
            let controller = AlertViewController(feed: feed, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))))
            await controller.viewDidAppear()
            shown.append(controller.shown)
            events += controller.events
        }
        #expect(shown == [[1], []])
        #expect(events.count == 2, "an impression and an acknowledgement, delivered on the main actor: \(events)")
        #expect(PrefsDefaults(try Prefs(.sqlite(directory.file("app.sqlite")))).integer(forKey: "lastMessageId") == 1)
    }
}
