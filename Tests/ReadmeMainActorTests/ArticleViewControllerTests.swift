import DialogGate
import Foundation
import Prefs
import PrefsTesting
import PrefsUserDefaults
import Testing

/// The examples, run on the main actor from `ArticleViewController` on temporary stores. Those that would touch a
/// shared or real location (a fixed /tmp path, the user's config folder, a production database) are compiled only:
/// ReadmeTests runs the same code elsewhere.
@Suite("The articles' examples, from a @MainActor view controller")
@MainActor
struct ArticleViewControllerTests {
    @Test("StandardStore.md: the standard store waits for a folder that cannot be made, and opens on retry")
    func standardStore() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.file("blocker")
        try Data("a file where a folder should be".utf8).write(to: blocker)
        let config = blocker.appendingPathComponent("config")
        let store = Prefs.openDefault(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": config.path])
        #expect(store.waitingReason != nil)
        try FileManager.default.removeItem(at: blocker)  // the folder can be made now
        try withStandardStore(store) { try ArticleViewController(prefs: try Prefs(.memory)).standardStore() }
        #expect(store.waitingReason == nil)
        #expect(try Prefs(.sqlite(config.appendingPathComponent("prefs/com.example.app.sqlite")))[.launchCount] == 1)
        _ = ArticleViewController.appGroups
    }

    @Test("README, Sync: the change is pushed, from the main actor")
    func readmeSync() async throws {
        let controller = ArticleViewController(prefs: try Prefs(.memory))
        #expect(try await controller.readmeSync() == (try StoredValue(14)))
    }

    @Test("README, LocalDialogs.md, KeysAndValues.md and Prefs.md, run on the main actor")
    func localDialogsAndKeys() throws {
        let prefs = try Prefs(.memory)
        let controller = ArticleViewController(prefs: prefs)
        try controller.localDialogs()
        #expect(prefs[AppKey.dialogNoMore] as Bool)
        #expect(try controller.keysAndValues() == true, "read after localDialogs() answered Never remind")
        #expect(prefs[AppKey.lastMessageId] as Int == 3)
        #expect(prefs[.theme] == .dark && prefs[.frame].height == 2)
        try prefs.setStoredValue(StoredValue(type: .json, jsonText: #"{"name":"Ada"}"#), forKey: "profile")
        #expect(prefs[.profile].fullName == "Ada", "KeysAndValues.md's changed shapes")
        controller.suspension()
        #expect(prefs[.launchCount] == 0)

        let directory = try TemporaryDirectory()
        #expect(try controller.overview(url: directory.file("p.sqlite"))[.launchCount] == 1)
        #expect(controller.messageContext().description == "com.example.app 2.1 on OS 18.0, locale en_GB")
        let tips = Dialog("tips")
        let back = try controller.newSession { gate in
            try #require(try gate.claim(tips).presentation).finish(.hideForSession)
            #expect(!gate.shouldPresent(tips))
        }
        #expect(back.shouldPresent(tips), "a new session after the user came back asks again")
        let (shared, upgraded) = try controller.formats(url: directory.file("formats.json"))
        try upgraded.set(1, for: .launchCount)
        try shared.refresh()
        #expect(shared[.launchCount] == 1)
        _ = controller.readmeOpening
        _ = controller.gettingStarted
        _ = controller.storage(url:)
        _ = controller.launch(prefs:)
        _ = controller.postgreSQLOverview
        _ = controller.postgreSQLSetup(userID:)
        _ = controller.postgreSQLFleetBound(url:)
        _ = controller.postgreSQLFleetCompareAndSet
        _ = controller.postgreSQLFleetNamespaces
    }

    @Test("LocalDialogs.md, a caller-chosen Don't Remind key: the present closure runs the view controller's alert code; Don't Remind holds")
    func displayMsg() async throws {
        let prefs = try Prefs(.memory)
        let controller = ArticleViewController(prefs: prefs)
        try await controller.displayMsg(title: "Title", msg: "no key")
        #expect(try prefs.snapshot().isEmpty, "no key: nothing stored")
        try await controller.displayMsg(title: "Title", msg: "first", dontRemindKey: "UserHasSeenMsg")
        controller.answer = .neverRemind
        try await controller.displayMsg(title: "Title", msg: "second", dontRemindKey: "UserHasSeenMsg")
        try await controller.displayMsg(title: "Title", msg: "third", dontRemindKey: "UserHasSeenMsg")
        #expect(controller.shownAlerts == ["no key", "first", "second"])
        #expect(PrefsDefaults(prefs).bool(forKey: "UserHasSeenMsg"), "the seed's own read sees Don't Remind")

        try await controller.presentWelcome()
        try await controller.presentWelcome()
        #expect(controller.shownAlerts.suffix(1) == ["welcome"], "Never remind me, answered on the main actor, holds")
    }

    @Test("LocalDialogs.md, conditions, the review prompt and dialogs in order, on the main actor")
    func conditionsReviewAndOrder() async throws {
        let controller = ArticleViewController(prefs: try Prefs(.memory))
        let (gate, exportTip) = try controller.conditions()
        #expect(gate.decision(for: exportTip).reasons.count == 1, "5 photos saved in 30 days, not 1")
        _ = try controller.reviewPrompt()
        #expect(controller.shownAlerts.isEmpty, "never in the first session")
        for _ in 0..<3 { _ = try await controller.dialogsInOrder() }
        #expect(controller.shownAlerts == ["intro-library", "intro-editing", "intro-sharing"])
    }

    @Test("Observation.md on the main actor: the loop ends when the store is closed")
    func observation() async throws {
        let prefs = try Prefs(.memory)
        prefs[.launchCount] = 2
        try prefs.close()
        await ArticleViewController(prefs: prefs).observation()
    }

    @Test("LaunchArguments.md on the main actor")
    func launchArguments() throws {
        let directory = try TemporaryDirectory()
        let controller = ArticleViewController(prefs: try Prefs(.memory))
        let prefs = try controller.launchArguments(url: directory.file("app.sqlite"))
        #expect(controller.welcomesShown == 1 && prefs[.hasSeenWelcome])
        let stores = try controller.launchArgumentStores(url: directory.file("app.sqlite"))
        #expect(stores.preview[.hasSeenWelcome] && stores.fixed[.hasSeenWelcome])
    }

    @Test("ComingFromUserDefaults.md on the main actor")
    func comingFromUserDefaults() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("defaults.sqlite")
        let controller = ArticleViewController(prefs: try Prefs(.memory))
        try controller.comingFromUserDefaults(url: url)
        try controller.comingFromUserDefaults(url: url)  // returns at once: the key is set
        let defaults = try PrefsDefaults(.sqlite(url))
        #expect(defaults.bool(forKey: "UserHasSeenMsg"))
        #expect(defaults.integer(forKey: "lastMessageId") == 1)
    }

    @Test("ComingFromUserDefaults.md, moving from Defaults and importing once, on the main actor")
    func movingFromDefaults() async throws {
        let directory = try TemporaryDirectory()
        let plist = directory.file("com.example.app.plist")
        let domain: [String: Any] = ["quality": 0.25, "player": #"{"name":"Ada","volume":0.75}"#, "sessions": 7]
        try PropertyListSerialization.data(fromPropertyList: domain, format: .binary, options: 0).write(to: plist)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let controller = ArticleViewController(prefs: prefs)
        try controller.importOnce(plist: plist)
        #expect(prefs[.player].name == "Ada" && prefs[.quality] == 0.25 && prefs[.sessions] == 7 && prefs[.imported])

        let run = Task { try await controller.movingFromDefaults() }
        #expect(await eventually { !prefs.isStored(.player) })
        try prefs.close()
        try await run.value
    }
}
