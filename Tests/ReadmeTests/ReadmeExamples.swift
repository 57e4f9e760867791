// The README's examples, verbatim where they are code, so a drift fails the build or a test.
import DialogGate
import Foundation
import Observation
import Prefs
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults
import PrefsSupport
import PrefsSync

extension Prefs.Keys {
    static let launchCount = Key<Int>("launchCount", initial: 0)
    static let username = Key<String?>("username")
}

enum Theme: String, PrefsStorable { case light, dark }            // stored as its raw value
struct Frame: Codable, PrefsStorable { var width = 800, height = 600 } // stored as JSON

extension Prefs.Keys {
    static let theme = Key<Theme>("theme", initial: .light)
    static let frame = Key<Frame>("frame", initial: Frame())
    static let launches = Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])  // a rename
}

enum AppKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain", lastMessageId
    var initialValue: any PrefsStorable {
        switch self {
        case .dialogNoMore: false
        case .lastMessageId: 0
        }
    }
}

@Observable final class SettingsModel {                 // or any class or struct
    @ObservationIgnored @Pref(.username) var username     // tracked by Observation and SwiftUI all the same
}

/// Stands in for the app's own alert UI in the seed 000 example.
func showAlert(title: String?, message: String, dontRemind: Bool) async -> DialogResponse {
    dontRemind ? .neverRemind : .dismiss
}

@Suite("README examples")
struct ReadmeExamples {
    @Test("the opening example")
    func opening() throws {
        let directory = try TemporaryDirectory()
        try withStandardStore(try Prefs(.memory)) {
            Prefs.standard = try Prefs(.sqlite(directory.file("readme.sqlite")))   // once, at launch
            let prefs = Prefs.standard
            try prefs.update(.launchCount) { $0 += 1 }   // atomic, across threads and processes
            SettingsModel().username = "ada"             // writes through; survives a crash once it returns
            print(prefs[.launchCount], prefs.isStored(.username))
            #expect(prefs[.launchCount] == 1)
        }
        #expect(try Prefs(.sqlite(directory.file("readme.sqlite")))[.username] == "ada")
    }

    @Test("keys and values")
    func keys() throws {
        let prefs = try Prefs(.memory)
        let neverAgain: Bool = prefs[AppKey.dialogNoMore]
        prefs[AppKey.lastMessageId] = 3
        try prefs.declare(AppKey.self)     // record every case for prefs-tool, before first use
        #expect(neverAgain == false)
        #expect(try ToolingChecks.declaredType(of: "dialog_neverAgain", in: prefs) == .bool)
        prefs[.theme] = .dark
        prefs[.frame] = Frame(width: 1, height: 2)
        #expect(prefs[.theme] == .dark && prefs[.frame].height == 2)
        try prefs.setStoredValue(StoredValue(7), forKey: "launchCounter")
        #expect(prefs[.launches] == 7)
        try prefs.transaction { t in t[.launchCount] += 1; t[.username] = "x" }
        #expect(prefs[.launchCount] == 1)
    }

    @Test("storage")
    func storage() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let test     = try Prefs(.memory)                                   // tests and previews; .memory(snapshot) starts from values
        let readable = try Prefs(.jsonFile(url))                            // one sorted, indented, hand-editable JSON document
        let fast     = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
        let database = try Prefs(.sqlite(directory.file("p.sqlite"), durability: .powerLoss))      // WAL; synchronous=FULL
        let byName   = try Prefs(.file(url))                                // .json → JSON, .sqlite/.sqlite3/.db → SQLite, else by content
        let standard = try Prefs.Storage.default(identifier: "com.example.app")
        _ = (test, readable, fast, database, byName)
        let expected = try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["HOME": "/home/ada"])
        #expect(expected.path == "/home/ada/.config/prefs/com.example.app.sqlite")
        #expect(standard.path?.hasSuffix("/prefs/com.example.app.sqlite") == true)
    }

    @Test("observation")
    func observation() async throws {
        let prefs = try Prefs(.memory)
        var values = prefs.values(for: .launchCount).makeAsyncIterator()
        #expect(await values.next() == 0)
        let model = prefs.observable(.launchCount)                             // Observation's Observable, for UI
        let changed = Flag()
        withObservationTracking { _ = model.value } onChange: { changed.set() }
        prefs[.launchCount] = 5
        #expect(await values.next() == 5)
        #expect(await eventually(timeout: .seconds(60)) { changed.value })
        #expect(model.value == 5)
    }

    @Test("local dialogs: the generic example, OK until the next launch, a caller-chosen Don't Remind key")
    func dialogs() async throws {
        let prefs = try Prefs(.memory)
        let gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "2.1", overrides: DialogOverrides())
        let welcome = Dialog("welcome")
        if let presentation = try gate.claim(welcome).presentation {   // decides and claims in one transaction
            try presentation.finish(.hideForSession)       // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
        }
        #expect(gate.decision(for: welcome).description == "welcome: not presented: suppressed for this session (OK)")

        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        if let presentation = try gate.claim(dialog).presentation {
            try presentation.finish(.neverRemind)
        }
        #expect(prefs[AppKey.dialogNoMore] as Bool)

        func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil) async throws {
            guard let key = dontRemindKey else {
                _ = await showAlert(title: title, message: msg, dontRemind: false)   // no key: every time, nothing stored
                return
            }
            try await gate.presentIfNeeded(Dialog(key, policy: DialogPolicy(neverRemindKey: key))) { _ in
                await showAlert(title: title, message: msg, dontRemind: true)   // your UI: [OK] → .dismiss, [Don't Remind] → .neverRemind
            }
        }
        let before = try prefs.snapshot()
        try await displayMsg(title: "Title", msg: "Some text for a message")
        #expect(try prefs.snapshot() == before, "no key: nothing stored")
        try await displayMsg(title: "Title", msg: "Some text for a message", dontRemindKey: "UserHasSeenMsg")
        #expect(prefs[Prefs.Key("UserHasSeenMsg", initial: false)])
        #expect(!gate.shouldPresent(Dialog("UserHasSeenMsg", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))))
    }
}


final class Flag: Sendable {
    private let state = Locked(false)
    func set() { state.withLock { $0 = true } }
    var value: Bool { state.withLock { $0 } }
}

@Suite("README examples: UserDefaults")
struct ReadmeUserDefaultsExamples {
    @Test("the one-line move from UserDefaults")
    func move() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("d.sqlite")
        func seed() throws -> Int {
            let defaults = try PrefsDefaults(.sqlite(url))      // was: UserDefaults.standard
            if defaults.bool(forKey: "UserHasSeenMsg") { return -1 }
            defaults.set(true, forKey: "UserHasSeenMsg")
            defaults.synchronize()
            let last = defaults.integer(forKey: "lastMessageId")
            defaults.setValue(last + 1, forKey: "lastMessageId")
            return last + 1
        }
        #expect(try seed() == 1)
        #expect(try seed() == -1)
        #expect(try PrefsDefaults(.sqlite(url)).integer(forKey: "lastMessageId") == 1)
    }
}

@MainActor
func launch(prefs: Prefs) async {
    let messages = MessageCenter(
        feedURL: URL(string: "https://example.github.io/AppAlert/messages.json")!,
        prefs: prefs,
        context: .current(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0"))
    await messages.refresh()                       // fetch (or the last good feed) and decide
    if let message = messages.pendingMessage {     // present it with your own UI, then:
        _ = messages.acknowledge(.confirm, for: message)   // stores lastMessageId = message.id
    }
}

@Suite("README examples: remote messages")
struct ReadmeMessageExamples {
    @Test("the README's feed decodes, and a remote message shows once, from a file URL")
    @MainActor
    func seedFlow() async throws {
        let feed = """
            [
              {
                "id": 1,
                "bundleId": "com.createchsol.AppAlertExample",
                "title": "App Alert",
                "text": "Warning: There is a bug in the application and I am working on it.",
                "confirmLabel": "OK",
                "appVersions": ["1.0", ">=1.2 <2.0", "17.*"],
                "osVersions": ["17.*", "18.0 (22A3354)"],
                "link": {"title": "Workaround", "url": "https://example.com/workaround"}
              }
            ]
            """
        let directory = try TemporaryDirectory()
        let url = directory.file("messages.json")
        try Data(feed.utf8).write(to: url)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let context = MessageContext(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0", osVersion: "18.0 (22A3354)", localeIdentifier: "en")
        let first = MessageCenter(feedURL: url, prefs: prefs, context: context)
        await first.refresh()
        #expect(first.diagnostics.isEmpty && first.lastError == nil)   // every field of the README's feed is valid
        let message = try #require(first.pendingMessage)
        _ = first.acknowledge(.confirm, for: message)
        let second = MessageCenter(feedURL: url, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), context: context)
        await second.refresh()
        #expect(second.pendingMessage == nil)
        _ = launch   // the README's function compiles; it would fetch from the network, so it is not called here
    }
}

@Suite("MessageFeed article")
struct MessageFeedArticleExamples {
    @Test("MessageFeed.md: a message context, reachable through `import DialogGate`, and its description")
    func contextDescription() {
        let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "18.0",
                                     localeIdentifier: "en_GB")
        print(context)     // "com.example.app 2.1 on OS 18.0, locale en_GB"
        #expect("\(context)" == "com.example.app 2.1 on OS 18.0, locale en_GB")
    }
}

/// The buttons of an update alert: [Update], and, unless the update is required, [Later] and [Skip This Version].
@MainActor
func answer(_ button: String, to message: RemoteMessage, in messages: MessageCenter) -> URL? {
    switch button {
    case "Update": return messages.acknowledge(.link, for: message)   // open the App Store link it returns
    case "Skip This Version" where !messages.isRequiredUpdate(message):
        return messages.acknowledge(.skipVersion, for: message)       // hidden until a later version is recommended
    default:
        messages.dismissWithoutAcknowledging()                        // "Later": shown again, within its caps
        return nil
    }
}

@Suite("RemoteMessages article: feed format 2")
struct RemoteMessagesFormatTwoExamples {
    /// RemoteMessages.md: a message with its own caps and conditions.
    static let conditional = """
        {
          "minimumReaderVersion": 2,
          "message": {
            "id": 12, "bundleId": "com.example.app", "title": "Teams are here", "text": "Invite your colleagues.",
            "confirmLabel": "OK", "maxImpressions": 2, "minimumIntervalSeconds": 86400,
            "conditions": {
              "launchesAtLeast": 5,
              "daysSinceFirstLaunchAtLeast": 3,
              "events": {"photoSaved": {"atLeast": 3, "withinSeconds": 2592000}},
              "parameters": {"plan": "free", "country": ["DE", "AT"]},
              "any": [{"parameters": {"cohort": "b"}}, {"launchesAtLeast": 20}]
            }
          }
        }
        """

    /// RemoteMessages.md: an update-available entry.
    static let update = """
        {
          "minimumReaderVersion": 2,
          "message": {
            "id": 20, "bundleId": "com.example.app", "title": "Update available",
            "text": "Version 2.4 fixes syncing with the watch.", "confirmLabel": "Update",
            "link": {"title": "App Store", "url": "https://apps.apple.com/app/id1234567890"},
            "minimumIntervalSeconds": 86400,
            "update": {"recommendedVersion": "2.4", "minimumVersion": "2.0", "releasedAt": "2026-03-01T00:00:00Z",
                       "minimumAgeSeconds": 259200}
          }
        }
        """

    @Test("the article's entries decode without an issue; the update shows three days after its release, and is skipped")
    @MainActor
    func formatTwo() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("messages.json")
        try Data("[\(Self.conditional), \(Self.update)]".utf8).write(to: url)
        let clock = TestClock(try ISO8601.parse("2026-03-04T00:00:00Z"))
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "2.1", parameters: ["plan": "free"], clock: clock.function)
        let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "18.0", localeIdentifier: "de_DE")
        let center = MessageCenter(feedURL: url, prefs: prefs, context: context, gate: gate, clock: clock.function)
        await center.refresh()
        #expect(center.diagnostics.isEmpty && center.lastError == nil)
        let message = try #require(center.pendingMessage)
        #expect(message.id == 20, "message 12's conditions are unmet: no launch recorded")
        #expect(answer("Skip This Version", to: message, in: center) == nil)
        await center.flush()
        #expect(try prefs.storedValue(forKey: "lastMessageId.skippedVersion")?.decode(String.self) == "2.4")
        clock.advance(by: .seconds(86_400))
        await center.refresh()
        #expect(center.pendingMessage == nil)
    }
}

extension Prefs.Keys {
    static let fontSize = Key<Int>("editor.fontSize", initial: 12)   // synced: it is under "editor."
}

@Suite("README examples: sync")
struct ReadmeSyncExamples {
    @Test("two devices: the phone's change reaches the laptop, whose initial value is never pushed")
    func sync() async throws {
        let prefs = try Prefs(.memory)
        let transport = InProcessSyncTransport()   // in tests; in an app, PostgreSQLSyncTransport(url) or a service of your own
        let sync = try SyncEngine(prefs: prefs, transport: transport, namespaces: ["editor."])
        try prefs.set(14, for: .fontSize)
        try await sync.sync()                      // pull, merge each key by hybrid logical clock, push
        let laptop = try Prefs(.memory)
        try await SyncEngine(prefs: laptop, transport: transport, namespaces: ["editor."]).sync()
        #expect(laptop[.fontSize] == 14)
    }
}
