@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults

/// The seeds' own code, as they wrote it (UIKit replaced by a closure, `UserDefaults.standard` by `PrefsDefaults`),
/// run beside the DialogGate mapping the README gives, on one store: the user sees the same alerts, and each reads
/// what the other wrote.
@Suite("The seeds' flows, as the seeds wrote them")
struct SeedFlowTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    func store() throws -> Prefs {
        try Prefs(.sqlite(directory.file("app.sqlite")))
    }

    // MARK: - Seed 000

    /// Seed 000's `displayMsg`, verbatim but for `defaults` and the alert, which `tap` answers.
    struct Seed000 {
        let defaults: PrefsDefaults
        func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil, tap: (_ buttons: [String]) -> String) -> Bool {
            if dontRemindKey != nil,
                defaults.bool(forKey: dontRemindKey!) == true
            {
                return false
            }
            var buttons = ["OK"]
            if dontRemindKey != nil { buttons.append("Don't Remind") }
            if tap(buttons) == "Don't Remind" {
                defaults.set(true, forKey: dontRemindKey!)
                defaults.synchronize()
            }
            return true
        }
    }

    /// The README's mapping of seed 000 onto DialogGate.
    struct Seed000Gate {
        let gate: DialogGate
        func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil, tap: (_ buttons: [String]) -> String) async throws -> Bool {
            guard let key = dontRemindKey else {
                _ = tap(["OK"])
                return true
            }
            var shown = false
            try await gate.presentIfNeeded(Dialog(key, policy: DialogPolicy(neverRemindKey: key))) { _ in
                shown = true
                return tap(["OK", "Don't Remind"]) == "Don't Remind" ? .neverRemind : .dismiss
            }
            return shown
        }
    }

    /// One call of the script: the key, and the button the user taps if the alert shows.
    typealias Call = (key: String?, tap: String)
    static let seed000Script: [Call] = [
        (nil, "OK"), (nil, "OK"), (nil, "OK"),  // no key: every time
        ("UserHasSeenMsg", "OK"), ("UserHasSeenMsg", "OK"),  // OK suppresses nothing
        ("UserHasSeenMsg", "Don't Remind"), ("UserHasSeenMsg", "OK"),  // Don't Remind: never again
        (nil, "OK"), ("tipSwipe", "Don't Remind"), ("tipSwipe", "OK"),
    ]

    @Test("seed 000: the mapping shows the same alerts as the seed's code, call by call, and after a restart")
    func seed000SameAlerts() async throws {
        let seedDirectory = try TemporaryDirectory()
        let seed = Seed000(defaults: PrefsDefaults(try Prefs(.sqlite(seedDirectory.file("seed.sqlite")))))
        let mapped = Seed000Gate(gate: DialogGate(prefs: try store(), session: DialogSession(), overrides: DialogOverrides()))
        var seedShown: [Bool] = [], mappedShown: [Bool] = []
        for call in Self.seed000Script {
            seedShown.append(seed.displayMsg(title: "Title", msg: "Some text for a message", dontRemindKey: call.key) { _ in call.tap })
            mappedShown.append(try await mapped.displayMsg(title: "Title", msg: "Some text for a message", dontRemindKey: call.key) { _ in call.tap })
        }
        #expect(seedShown == [true, true, true, true, true, true, false, true, true, false])
        #expect(mappedShown == seedShown)

        let restarted = Seed000Gate(gate: DialogGate(prefs: try store(), session: DialogSession(), overrides: DialogOverrides()))
        for key in [nil, "UserHasSeenMsg", "tipSwipe", "other"] {
            let expected = Seed000(defaults: PrefsDefaults(try Prefs(.sqlite(seedDirectory.file("seed.sqlite")))))
                .displayMsg(title: nil, msg: "m", dontRemindKey: key) { _ in "OK" }
            #expect(try await restarted.displayMsg(title: nil, msg: "m", dontRemindKey: key) { _ in "OK" } == expected, "\(key ?? "no key")")
        }
    }

    @Test("seed 000: an alert without a key stores nothing, whatever its text")
    func seed000NoKeyStoresNothing() async throws {
        let prefs = try store()
        let mapped = Seed000Gate(gate: DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()))
        for index in 0..<50 {
            #expect(try await mapped.displayMsg(title: nil, msg: "Message \(index)\nwith a second line") { _ in "OK" })
        }
        #expect(try prefs.snapshot().isEmpty)
    }

    @Test("seed 000: the seed's code and the mapping read each other's Don't Remind")
    func seed000Interoperates() async throws {
        let prefs = try store()
        let seed = Seed000(defaults: PrefsDefaults(prefs))
        let mapped = Seed000Gate(gate: DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()))
        #expect(try await mapped.displayMsg(title: nil, msg: "m", dontRemindKey: "fromGate") { _ in "Don't Remind" })
        #expect(!seed.displayMsg(title: nil, msg: "m", dontRemindKey: "fromGate") { _ in "OK" }, "the seed reads the gate's answer")
        #expect(seed.displayMsg(title: nil, msg: "m", dontRemindKey: "fromSeed") { _ in "Don't Remind" })
        #expect(try await !mapped.displayMsg(title: nil, msg: "m", dontRemindKey: "fromSeed") { _ in "OK" }, "the gate reads the seed's answer")
    }

    // MARK: - Seed 001

    /// Seed 001's `DialogHelper` singleton: an in-memory flag, so one per launch.
    final class DialogHelper {
        var dialogDidSee = false
        func getDialogStatus() -> Bool { dialogDidSee }
        func setDialogStatus(_ flag: Bool) { dialogDidSee = flag }
    }

    enum UserDefaultsKey: String {
        case dialogNoMore = "dialog_neverAgain"
    }

    /// Seed 001's view controller: `showDialogIfNeed` and `createDialog`, verbatim but for `defaults` and the alert.
    struct Seed001 {
        let defaults: PrefsDefaults
        let shared: DialogHelper
        func showDialogIfNeed(tap: () -> String) -> Bool {
            let didSee = shared.getDialogStatus()
            let neverSee = defaults.bool(forKey: UserDefaultsKey.dialogNoMore.rawValue)
            if neverSee {
                return false
            } else {
                if didSee {
                    return false
                } else {
                    createDialog(tap: tap)
                    return true
                }
            }
        }

        func createDialog(tap: () -> String) {
            switch tap() {
            case "OK": shared.setDialogStatus(true)
            case "Never remind me": defaults.set(true, forKey: UserDefaultsKey.dialogNoMore.rawValue)
            default: break
            }
        }
    }

    @Test("seed 001: OK hides the dialog until the next launch, Never remind me for good; the mapping agrees launch by launch")
    func seed001() throws {
        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: UserDefaultsKey.dialogNoMore.rawValue))
        let seedDirectory = try TemporaryDirectory()
        // Per launch, the viewDidAppear calls and the button tapped whenever the dialog shows.
        let launches: [[String]] = [["OK", "OK"], ["OK", "OK"], ["Never remind me", "OK"], ["OK"]]
        var seedShown: [[Bool]] = [], mappedShown: [[Bool]] = []
        for taps in launches {
            let seed = Seed001(defaults: PrefsDefaults(try Prefs(.sqlite(seedDirectory.file("seed.sqlite")))), shared: DialogHelper())
            let gate = DialogGate(prefs: try store(), session: DialogSession(), overrides: DialogOverrides())
            seedShown.append(taps.map { tap in seed.showDialogIfNeed { tap } })
            mappedShown.append(
                try taps.map { tap in
                    guard let presentation = try gate.claim(dialog).presentation else { return false }
                    try presentation.finish(tap == "OK" ? .hideForSession : .neverRemind)
                    return true
                })
        }
        #expect(seedShown == [[true, false], [true, false], [true, false], [false]])
        #expect(mappedShown == seedShown)
        #expect(PrefsDefaults(try store()).bool(forKey: "dialog_neverAgain"), "the seed's own read sees the gate's answer")
    }

    // MARK: - Seed 003

    /// Seed 003's `AlertService.Message` and `showAlertIfNecessary`, verbatim but for `defaults`, the file read and the versions.
    struct Seed003 {
        struct Message: Codable {
            var id: Int = 0
            var bundleId: String = ""
            var title: String = ""
            var text: String = ""
            var confirmLabel: String = ""
            var appVersions: [String]?
            var osVersions: [String]?
        }
        let defaults: PrefsDefaults
        let feed: URL
        let bundleIdentifier = Feeds.seedBundle
        static let appVersion = "1.0"
        static let osVersion = "17.2"
        var lastMessageId: Int {
            get { defaults.integer(forKey: "lastMessageId") }
            nonmutating set { defaults.setValue(newValue, forKey: "lastMessageId") }
        }

        func showAlertIfNecessary() throws -> Int? {
            guard
                let message = try JSONDecoder().decode([Message].self, from: Data(contentsOf: feed)).first(where: {
                    $0.bundleId == bundleIdentifier
                })
            else { return nil }
            guard message.id > lastMessageId else { return nil }
            if let osVersions = message.osVersions {
                guard osVersions.contains(Self.osVersion) else { return nil }
            }
            if let appVersions = message.appVersions {
                guard appVersions.contains(Self.appVersion) else { return nil }
            }
            lastMessageId = message.id
            return message.id
        }
    }

    @Test("seed 003: shown once, not at the next launch, again after QA resets lastMessageId, cancelled by [\"0\"], targeted by versions")
    @MainActor
    func seed003() async throws {
        let feed = directory.file("messages.json")
        let seedDirectory = try TemporaryDirectory()
        let steps: [(feed: String, qaReset: Bool)] = [
            (Feeds.seed, false), (Feeds.seed, false), (Feeds.seed, true),
            (Feeds.of(Feeds.message(id: 2, #""osVersions": ["0"]"#)), false),
            (Feeds.of(Feeds.message(id: 3, #""appVersions": ["2.0"]"#)), false),
            (Feeds.of(Feeds.message(id: 4, #""appVersions": ["1.0"], "osVersions": ["17.0.1", "17.2"]"#)), false),
        ]
        var seedShown: [Int?] = [], centerShown: [Int?] = []
        for step in steps {
            try Data(step.feed.utf8).write(to: feed)
            if step.qaReset {
                for path in [seedDirectory.file("seed.sqlite").path, directory.file("app.sqlite").path] {
                    let reset = try await ChildProcess.run("prefs-tool", ["--store", path, "reset", "lastMessageId"])
                    #expect(reset.status == 0, "\(reset.stderr)")
                }
            }
            let seed = Seed003(defaults: PrefsDefaults(try Prefs(.sqlite(seedDirectory.file("seed.sqlite")))), feed: feed)
            seedShown.append(try seed.showAlertIfNecessary())
            let center = MessageCenter(feedURL: feed, prefs: try store(), context: .seedApp)
            await center.refresh()
            let shown = center.pendingMessage
            if let shown { center.acknowledge(.confirm, for: shown) }
            await center.flush()  // the write follows acknowledge; QA's prefs-tool and the seed's getter read the file
            centerShown.append(shown?.id)
        }
        #expect(seedShown == [1, nil, 1, nil, nil, 4])
        #expect(centerShown == seedShown)
        #expect(Seed003(defaults: PrefsDefaults(try store()), feed: feed).lastMessageId == 4, "the seed's getter reads the center's lastMessageId")
    }
}
