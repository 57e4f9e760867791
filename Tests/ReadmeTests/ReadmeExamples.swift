// The README's examples: every line of its ```swift blocks is here, in order (ReadmeSource.swift checks it),
// so a drift fails a test, and the code is compiled and run.
import DialogGate
import Foundation
import Observation   // for withObservationTracking; SwiftUI tracks `model.value` by itself
import Prefs
import PrefsTestSupport
import Testing

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

/// Stands in for the app's own alert UI in the seed 000 example.
func showAlert(title: String?, message: String, dontRemind: Bool) async -> DialogResponse {
    dontRemind ? .neverRemind : .ok
}

/// The README's opening as written: compiled, not run (its fixed /tmp path would be shared by concurrent test runs).
func readmeOpeningAsWritten() throws {
    let prefs = try Prefs(.sqlite(URL(fileURLWithPath: "/tmp/readme.sqlite")))
    try readmeOpening(prefs)
}

/// The rest of the README's opening, run by `opening()` on a store in a temporary directory.
func readmeOpening(_ prefs: Prefs) throws {
    try prefs.update(.launchCount) { $0 += 1 }   // atomic, across threads and processes
    prefs[.username] = "ada"                     // writes through; survives a crash once it returns
    print(prefs[.launchCount], prefs.isStored(.username))
}

@Suite("README examples")
struct ReadmeExamples {
    @Test("the opening example")
    func opening() throws {
        let directory = try TemporaryDirectory()
        try readmeOpening(try Prefs(.sqlite(directory.file("readme.sqlite"))))
        let reopened = try Prefs(.sqlite(directory.file("readme.sqlite")))
        #expect(reopened[.launchCount] == 1)
        #expect(reopened[.username] == "ada")
        _ = readmeOpeningAsWritten
    }

    @Test("keys and values")
    func keys() throws {
        let prefs = try Prefs(.memory)
        let neverAgain: Bool = prefs[AppKey.dialogNoMore]
        prefs[AppKey.lastMessageId] = 3
        try prefs.declare(AppKey.self)     // record every case for prefs-tool, before first use
        #expect(neverAgain == false)
        #expect(try prefs.declaredKeys()["dialog_neverAgain"]?.type == .bool)
        prefs[.theme] = .dark
        prefs[.frame] = Frame(width: 1, height: 2)
        #expect(prefs[.theme] == .dark && prefs[.frame].height == 2)
        try prefs.setStoredValue(StoredValue(type: .int, json: .int(7)), forKey: "launchCounter")
        #expect(prefs[.launches] == 7)
        try prefs.transaction { t in t[.launchCount] += 1; t[.username] = "x" }
        #expect(prefs[.launchCount] == 1)
    }

    @Test("storage")
    func storage() throws {
        let directory = try TemporaryDirectory()
        var url = directory.file("p.json")  // the README's one `url` stands for a path of the kind each line needs
        let test     = try Prefs(.memory)                                   // tests and previews; .memory(snapshot) starts from values
        let readable = try Prefs(.jsonFile(url))                            // one sorted, indented, hand-editable JSON document
        let fast     = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
        url = directory.file("p.sqlite")
        let database = try Prefs(.sqlite(url, durability: .powerLoss))      // WAL; synchronous=FULL
        url = directory.file("p.json")
        try readable.set(2, for: .launchCount)
        let byName   = try Prefs(.file(url))                                // .json → JSON, .sqlite/.sqlite3/.db → SQLite, else by content
        #expect(byName[.launchCount] == 2, "opened as the JSON file written above")
        test[.launchCount] = 1
        try fast.flush()
        try database.set(3, for: .launchCount)
        #expect(try Prefs(.file(directory.file("p.sqlite")))[.launchCount] == 3)

        // `.default(identifier:)` is the SQLite store at defaultURL; opened here under a temporary XDG_CONFIG_HOME.
        let expected = try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["HOME": "/home/ada"])
        #expect(expected.path == "/home/ada/.config/prefs/com.example.app.sqlite")
        #expect(try Prefs.Storage.default(identifier: "com.example.app").path == Prefs.Storage.defaultURL(identifier: "com.example.app").path)
        let config = try Prefs.Storage.defaultURL(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": directory.url.path])
        try Prefs(.sqlite(config)).set(4, for: .launchCount)
        #expect(try Prefs(.file(directory.file("prefs/com.example.app.sqlite")))[.launchCount] == 4)
        _ = readmeStandardStore
    }

    @Test("the JSON file example is the file the store writes")
    func jsonFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(3, for: .launchCount)
        try prefs.close()
        let document = """
            {
              "declared": {
                "launchCount": {
                  "initial": 0,
                  "type": "int"
                }
              },
              "format": "prefs",
              "formatVersion": 1,
              "values": {
                "launchCount": {
                  "type": "int",
                  "value": 3
                }
              }
            }

            """
        #expect(try String(contentsOf: url, encoding: .utf8) == document)
    }

    /// The README's loop; it ends when the store is closed.
    func printCounts(_ prefs: Prefs) async {
        for await count in prefs.values(for: .launchCount) { print(count) }   // current value first, then each change
    }

    @Test("observation")
    func observation() async throws {
        let prefs = try Prefs(.memory)
        let printing = Task { await printCounts(prefs) }
        var values = prefs.values(for: .launchCount).makeAsyncIterator()
        #expect(await values.next() == 0)
        let model = prefs.observable(.launchCount)                             // Observation's Observable, for UI
        withObservationTracking { _ = model.value } onChange: { print("changed") }
        let (changes, changed) = AsyncStream<Void>.makeStream()
        withObservationTracking { _ = model.value } onChange: { changed.yield() }
        prefs[.launchCount] = 5
        #expect(await values.next() == 5)
        var change = changes.makeAsyncIterator()
        #expect(await change.next() != nil, "onChange ran")
        #expect(model.value == 5)
        try prefs.close()
        await printing.value  // the README's for-await loop ends when the store is closed
    }

    @Test("local dialogs: the generic example and the seeds")
    func dialogs() async throws {
        let prefs = try Prefs(.memory)
        let gate = DialogGate(prefs: prefs, appVersion: "2.1")
        let welcome = Dialog("welcome")
        if gate.shouldPresent(welcome) {
            try gate.recordPresentation(of: welcome)
            // … present your alert; when the user answers:
            try gate.record(.ok, for: welcome)       // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
        }
        print(gate.decision(for: welcome))           // "welcome: not presented: suppressed for this session (OK)"
        #expect(gate.decision(for: welcome).description == "welcome: not presented: suppressed for this session (OK)")

        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        if gate.shouldPresent(dialog) {
            try gate.recordPresentation(of: dialog)
            // "Here is a message for you!"  [OK] → .ok    [Never remind me] → .neverRemind
            try gate.record(.neverRemind, for: dialog)
        }
        #expect(prefs[AppKey.dialogNoMore] as Bool)

        func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil) async throws {
            let dialog = Dialog(dontRemindKey ?? "msg:\(msg)", policy: DialogPolicy(neverRemindKey: dontRemindKey))
            try await gate.presentIfNeeded(dialog) { _ in
                await showAlert(title: title, message: msg, dontRemind: dontRemindKey != nil)   // your UI: returns .ok or .neverRemind
            }
        }
        try await displayMsg(title: "Title", msg: "Some text for a message", dontRemindKey: "UserHasSeenMsg")
        #expect(prefs[Prefs.Key("UserHasSeenMsg", initial: false)])
        #expect(!gate.shouldPresent(Dialog("UserHasSeenMsg", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))))
    }
}

/// The README's `.default` line, compiled, not run: it would create a store in the user's real configuration
/// folder. `ReadmeExamples.storage()` opens the same store under a temporary `XDG_CONFIG_HOME`.
func readmeStandardStore() throws -> Prefs {
    let standard = try Prefs(.default(identifier: "com.example.app"))   // see below
    return standard
}

@Suite("README examples: UserDefaults")
struct ReadmeUserDefaultsExamples {
    @Test("the one-line move from UserDefaults")
    func move() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("d.sqlite")
        func seed() throws {
            let defaults = try PrefsDefaults(.sqlite(url))      // was: UserDefaults.standard
            if defaults.bool(forKey: "UserHasSeenMsg") { return }
            defaults.set(true, forKey: "UserHasSeenMsg")
            defaults.synchronize()
            let last = defaults.integer(forKey: "lastMessageId")
            defaults.setValue(last + 1, forKey: "lastMessageId")
        }
        try seed()
        #expect(try PrefsDefaults(.sqlite(url)).integer(forKey: "lastMessageId") == 1)
        try seed()
        #expect(try PrefsDefaults(.sqlite(url)).integer(forKey: "lastMessageId") == 1, "the second launch returned early")
        #expect(try PrefsDefaults(.sqlite(url)).bool(forKey: "UserHasSeenMsg"))
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
    @Test("the README's feed decodes, and the seed flow shows its message once, from a file URL")
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
                "osVersions": ["17", "18.*"],
                "link": {"title": "Workaround", "url": "https://example.com/workaround"}
              }
            ]
            """
        let decoded = try FeedDecoder.decode(Data(feed.utf8))
        #expect(decoded.messages.count == 1 && decoded.issues.isEmpty)
        let directory = try TemporaryDirectory()
        let url = directory.file("messages.json")
        try Data(feed.utf8).write(to: url)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let context = MessageContext(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0", osVersion: "18.1", localeIdentifier: "en")
        let first = MessageCenter(feedURL: url, prefs: prefs, context: context)
        await first.refresh()
        let message = try #require(first.pendingMessage)
        _ = first.acknowledge(.confirm, for: message)
        let second = MessageCenter(feedURL: url, prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), context: context)
        await second.refresh()
        #expect(second.pendingMessage == nil)
        _ = launch   // the README's function compiles; it would fetch from the network, so it is not called here
    }
}
