import DialogGate
import Foundation
import Observation   // for withObservationTracking; SwiftUI tracks `model.value` by itself
import Prefs
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults

// The examples of the README and the DocC articles that the other tests do not hold line for line, each in a function
// that gives it the names it uses (`ReadmeSource` checks every line is here or there, in order). Those that would
// touch a shared or real location (a fixed /tmp path, the user's config folder) are compiled, not run; the tests
// below run the same code on temporary stores.

/// README, the opening, as written: compiled, not run (its fixed /tmp path would be shared by concurrent runs).
func readmeOpeningAsWritten() throws {
    Prefs.standard = try Prefs(.sqlite(URL(fileURLWithPath: "/tmp/readme.sqlite")))   // once, at launch
    let prefs = Prefs.standard
    try prefs.update(.launchCount) { $0 += 1 }   // atomic, across threads and processes
    SettingsModel().username = "ada"             // writes through; survives a crash once it returns
    print(prefs[.launchCount], prefs.isStored(.username))
}

/// README and LocalDialogs.md: the generic local dialog, and seed 001's mapping; DialogGate.md's first lines.
func localDialogAsWritten(prefs: Prefs) throws -> DialogGate {
    let gate = DialogGate(prefs: prefs, appVersion: "2.1")
    let welcome = Dialog("welcome")
    if let presentation = try gate.claim(welcome).presentation {   // decides and claims in one transaction
        // … present your alert; when the user answers:
        try presentation.finish(.hideForSession)       // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
    }
    print(gate.decision(for: welcome))     // "welcome: not presented: suppressed for this session (OK)"
    let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
    if let presentation = try gate.claim(dialog).presentation {
        // "Here is a message for you!"  [OK] → .hideForSession    [Never remind me] → .neverRemind
        try presentation.finish(.neverRemind)
    }
    return gate
}

/// LocalDialogs.md: a new session when the user comes back; returns the gate after `userCameBack()`.
func newSessionAsWritten(prefs: Prefs, answer: (DialogGate) throws -> Void) throws -> DialogGate {
    var gate = DialogGate(prefs: prefs, session: DialogSession())
    func userCameBack() {   // a scene's willEnterForeground, a login
        gate = DialogGate(prefs: prefs, session: DialogSession())   // "OK" of the last visit no longer hides
    }
    try answer(gate)
    userCameBack()
    return gate
}

/// LocalDialogs.md: a condition on an event and a parameter.
func conditionsAsWritten(prefs: Prefs) throws -> (DialogGate, Dialog) {
    let gate = DialogGate(prefs: prefs, appVersion: "2.1", parameters: ["isPro": false])
    try gate.recordLaunch()   // at every launch
    let exportTip = Dialog("export-tip", policy: DialogPolicy(conditions: .all([
        .event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)),   // 5 photos saved in the last 30 days
        .parameter("isPro", equals: false),
    ])))
    try gate.donate("photoSaved")   // when the user saves a photo
    print(gate.decision(for: exportTip))   // "export-tip: … condition not met: photoSaved ≥ 5 in the last 30 days (now 1)"
    return (gate, exportTip)
}

/// LocalDialogs.md: the review prompt (`requestReview` stands for StoreKit's).
func reviewPromptAsWritten(gate: DialogGate, requestReview: () -> Void) throws -> Dialog {
    let review = Dialog("review", policy: DialogPolicy(
        maximumPresentations: 1,                         // at most once per release…
        resetsOn: .newRelease, resetClears: .history,    // …a new release may ask again; "never" holds for ever
        conditions: .all([
            .launches(atLeast: 5),                       // launches and events count in this release
            .daysSinceFirstLaunch(atLeast: 3),
            .event("photoSaved", atLeast: 3),
            .notInFirstSession,
            .presentedFewerThan(1, within: .seconds(30 * 86_400)),    // not within 30 days of the last prompt
            .presentedFewerThan(3, within: .seconds(365 * 86_400)),   // at most 3 in 365 days, whatever the versions
        ])))
    try gate.recordLaunch()   // at each launch
    try gate.donate("photoSaved")   // at each significant event
    if let presentation = try gate.claim(review).presentation {   // at a good moment: after a save, not at launch
        requestReview()   // StoreKit's prompt; it never says whether it showed, so the answer is .dismiss
        try presentation.finish(.dismiss)   // an "Enjoying the app?" alert of your own may answer .neverRemind
    }
    return review
}

/// LocalDialogs.md: dialogs in order (`showHint` stands for the app's UI).
func dialogsInOrderAsWritten(gate: DialogGate, showHint: (Dialog) async -> DialogResponse) async throws -> [Dialog] {
    let onboarding = ["intro-library", "intro-editing", "intro-sharing"].map {
        Dialog($0, policy: DialogPolicy(maximumPresentations: 1))
    }
    if let presentation = try gate.claim(nextOf: onboarding).presentation {
        try presentation.finish(await showHint(presentation.dialog))   // intro-editing only once intro-library is done
    }
    return onboarding
}

/// ComingFromUserDefaults.md.
func comingFromUserDefaultsAsWritten(url: URL) throws {
    let defaults = try PrefsDefaults(.sqlite(url))      // was: UserDefaults.standard
    if defaults.bool(forKey: "UserHasSeenMsg") { return }
    defaults.set(true, forKey: "UserHasSeenMsg")
    defaults.synchronize()
    let last = defaults.integer(forKey: "lastMessageId")
    defaults.setValue(last + 1, forKey: "lastMessageId")
}

/// GettingStarted.md: compiled, not run (it opens the store in the user's config folder).
func gettingStartedAsWritten() throws {
    Prefs.standard = try Prefs(.default(identifier: "com.example.app"))   // SQLite in ~/.config/prefs
    let prefs = Prefs.standard
    prefs[.username] = "ada"                      // writes through; survives a crash once it returns
    try prefs.update(.launchCount) { $0 += 1 }    // read-modify-write, atomic across processes
}

/// Prefs.md, the catalog's overview.
func overviewAsWritten(url: URL) throws -> Prefs {
    let prefs = try Prefs(.sqlite(url))
    try prefs.update(.launchCount) { $0 += 1 }   // atomic, across threads and processes
    print(prefs[.launchCount])                   // 1
    return prefs
}

/// Storage.md: compiled, not run (the last line opens the store in the user's config folder).
func storageAsWritten(url: URL) throws {
    let test     = try Prefs(.memory)                                   // tests and previews; .memory(snapshot) starts from values
    let readable = try Prefs(.jsonFile(url))                            // one sorted, indented, hand-editable JSON document
    let fast     = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
    let database = try Prefs(.sqlite(url, durability: .powerLoss))      // WAL; synchronous=FULL
    let byName   = try Prefs(.file(url))                                // .json → JSON, .sqlite/.sqlite3/.db → SQLite, else by content
    let standard = try Prefs(.default(identifier: "com.example.app"))   // see below
    _ = (test, readable, fast, database, byName, standard)
}

/// Storage.md, suspended apps and shared containers.
func suspensionAsWritten(prefs: Prefs) {
    prefs.suspend()              // the app is about to be suspended: no file lock held
    print(prefs[.launchCount])   // the next call opens the file again, and reads what the widget wrote meanwhile
}

/// KeysAndValues.md, changed shapes.
struct Profile: Codable, PrefsStorable { var fullName: String; var fontSize: Int }   // this release
struct ProfileV1: Codable, PrefsStorable { var name: String }                        // what release 1 stored

extension Prefs.Keys {
    static let profile = Key<Profile>("profile", initial: Profile(fullName: "", fontSize: 12), migrating: { stored in
        Profile(fullName: try stored.decode(ProfileV1.self).name, fontSize: 12)   // nil or a throw: the initial value
    })
}

/// Storage.md, formats and releases: the two ends of a store's life beside release 0.1.
func formatsAsWritten(url: URL) throws -> (Prefs, Prefs) {
    let shared = try Prefs(.jsonFile(url, formatVersion: 1))     // an app extension on release 0.1 writes it too
    let upgraded = try Prefs(.jsonFile(url, formatVersion: 2))   // every process is on 0.2 or later: the journal's speed
    return (shared, upgraded)
}

/// Observation.md.
func observationAsWritten(prefs: Prefs) async {
    for await count in prefs.values(for: .launchCount) { print(count) }   // current value first, then each change

    let model = prefs.observable(.launchCount)                             // Observation's Observable, for UI
    withObservationTracking { _ = model.value } onChange: { print("changed") }
}

/// StandardStore.md, App Groups: compiled, not run (it opens the group's store in the user's config folder).
func appGroupsAsWritten() throws {
    let shared = try PrefsDefaults(suiteName: "group.com.example.app")   // the app and its widget: one store
    let typed = try Prefs(.appGroup("group.com.example.app"))            // the same store, with typed keys
    _ = (shared, typed)
}

/// StandardStore.md, the waiting state: run by `standardStoreWaiting()` with a standard store of the test's own.
func standardStoreAsWritten() throws {
    let prefs = Prefs.standard                        // never set: the default store, or one that waits for it
    if let reason = prefs.waitingReason {             // why: the folder, and what is wrong with it
        print("settings not available yet: \(reason)")
    }
    prefs[.launchCount] += 1                          // kept in memory while it waits, committed once it opens
    try prefs.retryOpening()                          // the app learned it may open: try now
}

/// StandardStore.md, a test with a standard store of its own (a test of this target, as written).
struct LaunchModel {
    @Pref(.launchCount) var launchCount
    func launched() { launchCount += 1 }
}

@Test func countsLaunches() throws {
    let store = try Prefs(.memory)                // this test's own: parallel tests never see it
    withStandardStore(store) {
        LaunchModel().launched()                  // its @Pref(.launchCount) writes to `store`
        #expect(Prefs.standard[.launchCount] == 1)
    }
}

// MARK: - LaunchArguments.md

extension Prefs.Keys {
    static let lastMessageId = Key<Int>("lastMessageId", initial: 0)
    static let hasSeenWelcome = Key<Bool>("hasSeenWelcome", initial: false)
}

/// LaunchArguments.md, a QA launch, run with the test runner's arguments (none names these keys).
func launchArgumentsAsWritten(url: URL, showWelcome: () -> Void) throws -> Prefs {
    let prefs = try Prefs(.sqlite(url))      // reads the app's launch arguments
    if !prefs[.hasSeenWelcome] { showWelcome() }
    if case .argument(let id) = prefs.lookup(.lastMessageId) { print("QA: messages after \(id)") }
    prefs[.hasSeenWelcome] = true            // stored; this launch still reads NO
    return prefs
}

/// LaunchArguments.md, which stores read them.
func launchArgumentStoresAsWritten(url: URL) throws -> (preview: Prefs, fixed: Prefs) {
    let preview = try Prefs(.memory, launchArguments: ["-hasSeenWelcome", "YES"])
    let fixed = try Prefs(.sqlite(url), launchArguments: [])   // reads no argument
    return (preview, fixed)
}

/// ComingFromUserDefaults.md, importing from the running UserDefaults: compiled, not run (`UserDefaults.standard` would
/// write the test runner's domain in the user's config folder; UserDefaultsImportProcessTests runs it in a child).
func importFromRunningAsWritten(prefs: Prefs, defaults: PrefsDefaults) throws {
    if !prefs.isStored(.imported) {
        let report = try defaults.importValues(from: .standard)   // what the store holds is kept; see report.keptExisting
        prefs[.imported] = report.unsupported.isEmpty
    }
}

@Suite("The articles' examples, run")
struct TestedArticles {
    @Test("local dialogs as the README and the article show them")
    func localDialogs() throws {
        let prefs = try Prefs(.memory)
        let gate = try localDialogAsWritten(prefs: prefs)
        #expect(gate.decision(for: Dialog("welcome")).description == "welcome: not presented: suppressed for this session (OK)")
        #expect(prefs[AppKey.dialogNoMore] as Bool)
    }

    @Test("a new session when the user comes back, as LocalDialogs.md shows it")
    func newSession() throws {
        let prefs = try Prefs(.memory)
        let tips = Dialog("tips")
        let gate = try newSessionAsWritten(prefs: prefs) { gate in
            try #require(try gate.claim(tips).presentation).finish(.hideForSession)
            #expect(!gate.shouldPresent(tips))
        }
        #expect(gate.shouldPresent(tips))
    }

    @Test("conditions, the review prompt and dialogs in order, as LocalDialogs.md shows them")
    func conditionsReviewAndOrder() async throws {
        let (gate, exportTip) = try conditionsAsWritten(prefs: try Prefs(.memory))
        #expect(gate.decision(for: exportTip).description == "export-tip: not presented: condition not met: photoSaved ≥ 5 in the last 30 days (now 1)")
        for _ in 0..<4 { try gate.donate("photoSaved") }
        #expect(gate.shouldPresent(exportTip))

        let clock = TestClock()
        let prefs = try Prefs(.memory)
        var requests: [Int] = []
        for day in 0..<7 {   // a launch a day: a new session each
            let launch = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "1.0", clock: clock.function)
            _ = try reviewPromptAsWritten(gate: launch) { requests.append(day) }
            clock.advance(by: 86_400)
        }
        #expect(requests == [4], "5 launches, 3 days and 3 events; once in this release")

        var hints: [String] = []
        let onboardingGate = DialogGate(prefs: try Prefs(.memory), session: DialogSession())
        for _ in 0..<4 {
            _ = try await dialogsInOrderAsWritten(gate: onboardingGate) { dialog in
                hints.append(dialog.id)
                return .dismiss
            }
        }
        #expect(hints == ["intro-library", "intro-editing", "intro-sharing"])
    }

    @Test("coming from UserDefaults")
    func userDefaults() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("defaults.sqlite")
        try comingFromUserDefaultsAsWritten(url: url)
        let defaults = try PrefsDefaults(.sqlite(url))
        #expect(defaults.bool(forKey: "UserHasSeenMsg"))
        #expect(defaults.integer(forKey: "lastMessageId") == 1)
        try comingFromUserDefaultsAsWritten(url: url)   // returns at once: the key is set
        #expect(defaults.integer(forKey: "lastMessageId") == 1)
    }

    @Test("the overview and the storage choices, on temporary files")
    func overviewAndStorage() throws {
        let directory = try TemporaryDirectory()
        #expect(try overviewAsWritten(url: directory.file("p.sqlite"))[.launchCount] == 1)
        _ = storageAsWritten
        _ = gettingStartedAsWritten
        _ = readmeOpeningAsWritten
    }

    @Test("the standard store as the article shows it: waiting for a folder that cannot be made, then opening on retry")
    func standardStoreWaiting() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.file("blocker")
        try Data("a file where a folder should be".utf8).write(to: blocker)
        let config = blocker.appendingPathComponent("config")
        let store = Prefs.openDefault(identifier: "com.example.app", environment: ["XDG_CONFIG_HOME": config.path])
        #expect(store.waitingReason != nil)
        try FileManager.default.removeItem(at: blocker)   // the folder can be made now
        try withStandardStore(store) { try standardStoreAsWritten() }
        #expect(store.waitingReason == nil)
        #expect(try Prefs(.sqlite(config.appendingPathComponent("prefs/com.example.app.sqlite")))[.launchCount] == 1)
        _ = appGroupsAsWritten
    }

    @Test("launch arguments as the article shows them: the runner's name none of its keys; given ones are read")
    func launchArguments() throws {
        let directory = try TemporaryDirectory()
        var shown = 0
        let prefs = try launchArgumentsAsWritten(url: directory.file("app.sqlite")) { shown += 1 }
        #expect(shown == 1 && prefs[.hasSeenWelcome])
        let stores = try launchArgumentStoresAsWritten(url: directory.file("app.sqlite"))
        #expect(stores.preview[.hasSeenWelcome] && stores.preview.lookup(.hasSeenWelcome).isStored == false)
        #expect(stores.fixed[.hasSeenWelcome] && stores.fixed.launchArgumentValues.isEmpty)
    }

    @Test("formats as the storage article shows them: formatVersion 1 writes format 1, formatVersion 2 upgrades it")
    func formats() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let (shared, upgraded) = try formatsAsWritten(url: url)
        try shared.set(1, for: .launchCount)
        #expect(try String(contentsOf: url, encoding: .utf8).contains(#""formatVersion": 1,"#))
        try upgraded.set(2, for: .launchCount)
        #expect(try String(contentsOf: url, encoding: .utf8).contains(#""formatVersion": 2,"#))
    }

    @Test("suspension as the storage article shows it: the next call reads what another store wrote meanwhile")
    func suspension() throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("p.sqlite")))
        #expect(prefs[.launchCount] == 0)
        try Prefs(.sqlite(directory.file("p.sqlite"))).set(4, for: .launchCount)   // the widget
        suspensionAsWritten(prefs: prefs)
        #expect(prefs[.launchCount] == 4)
    }

    @Test("changed shapes as the keys article shows them: release 1's profile reads migrated, and is kept until written")
    func changedShapes() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        try Prefs(.jsonFile(url)).setStoredValue(StoredValue(type: .json, jsonText: #"{"name":"Ada"}"#), forKey: "profile")
        let prefs = try Prefs(.jsonFile(url))
        #expect(prefs[.profile].fullName == "Ada" && prefs[.profile].fontSize == 12)
        #expect(try prefs.storedValue(forKey: "profile")?.jsonText == #"{"name":"Ada"}"#)
        try prefs.update(.profile) { $0.fontSize = 14 }
        #expect(try prefs.storedValue(forKey: "profile")?.jsonText == #"{"fontSize":14,"fullName":"Ada"}"#)
    }

    @Test("observation as the article shows it: the loop ends when the store is closed")
    func observation() async throws {
        let prefs = try Prefs(.memory)
        prefs[.launchCount] = 2
        try prefs.close()   // the stream gives the current value, then ends
        await observationAsWritten(prefs: prefs)
    }

    @Test("the JSON file example is the file a store writes")
    func jsonFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("p.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(3, for: .launchCount)
        let expected = """
            {
              "declared": {
                "launchCount": {
                  "initial": 0,
                  "type": "int"
                }
              },
              "format": "prefs",
              "formatVersion": 2,
              "journalGeneration": "9f2c4e7a01b3d586",
              "values": {
                "launchCount": {
                  "type": "int",
                  "value": 3
                }
              }
            }

            """
        // The generation is random: the article shows one.
        let written = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            .replacing(/"journalGeneration": "[0-9a-f]{16}"/, with: #""journalGeneration": "9f2c4e7a01b3d586""#)
        #expect(written == expected)
    }
}

// MARK: - ComingFromUserDefaults.md: moving from Defaults and from @AppStorage

struct Player: Codable, PrefsStorable { var volume = 0.5, name = "" }   // a Codable Defaults.Serializable

extension Prefs.Keys {
    static let quality = Key<Double>("quality", initial: 0.8)           // Defaults: Key<Double>("quality", default: 0.8)
    static let player = Key<Player>("player", initial: Player())        // Defaults stored it as JSON text: read as it is
    static let lastOpened = Key<Date>("lastOpened") { Date.now }        // a dynamic default, computed at each read
    static let anything = Key<StoredValue?>("anything")                 // Defaults.AnySerializable
}

/// ComingFromUserDefaults.md, moving from Defaults: the loop ends when the store is closed.
func movingFromDefaultsAsWritten(prefs: Prefs) async throws {
    prefs[.quality] = 0.5                                             // Defaults[.quality] = 0.5
    print(prefs[.player].name)                                        // the JSON text Defaults wrote, decoded
    prefs.withoutNotifyingObservers { prefs[.quality] = 1 }           // Defaults.withoutPropagation { … }
    try prefs.reset(.quality, .player)                                // Defaults.reset(.quality, .player)
    for await (quality, player) in prefs.values(for: .quality, .player) { print(quality, player.volume) }
}

extension Prefs.Keys {
    static let sessions = Key<Int>("sessions", initial: 0)   // @AppStorage("sessions") var sessions = 0
}

@Observable final class SessionModel {
    @ObservationIgnored @Pref(.sessions) var sessions   // in a SwiftUI view, @Pref refreshes it as @AppStorage does
}

extension Prefs.Keys {
    static let imported = Key<Bool>("importedUserDefaults", initial: false)
}

/// ComingFromUserDefaults.md, importing the property list once.
func importOnceAsWritten(prefs: Prefs, plist: URL) throws {
    let defaults = PrefsDefaults(prefs)
    if !prefs.isStored(.imported) {
        let report = try defaults.importPropertyList(at: plist)   // one transaction; unsupported values listed by key
        prefs[.imported] = report.unsupported.isEmpty
    }
}

@Suite("Coming from Defaults and @AppStorage, as the article shows it")
struct MovingFromDefaultsArticle {
    /// A property list as Defaults and @AppStorage leave it: Defaults' Codable as JSON text, numbers and dates as they
    /// are, swift-sharing's Codable as JSON data.
    static func writePropertyList(to url: URL) throws {
        let domain: [String: Any] = [
            "quality": 0.25,
            "player": #"{"name":"Ada","volume":0.75}"#,
            "lastOpened": Date(timeIntervalSinceReferenceDate: 700_000_000),
            "anything": 42,
            "sessions": 7,
            "playerData": try JSONEncoder().encode(Player(volume: 0.1, name: "Bob")),
        ]
        try PropertyListSerialization.data(fromPropertyList: domain, format: .xml, options: 0).write(to: url)
    }

    @Test("the property list Defaults and @AppStorage wrote is imported once, and the typed keys read it as it is")
    func importedStoredForms() throws {
        let directory = try TemporaryDirectory()
        let plist = directory.file("com.example.app.plist")
        try Self.writePropertyList(to: plist)
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        try importOnceAsWritten(prefs: prefs, plist: plist)
        #expect(prefs[.imported])
        #expect(prefs[.quality] == 0.25)
        #expect(prefs[.player].name == "Ada" && prefs[.player].volume == 0.75, "Defaults' JSON text")
        #expect(prefs[Prefs.Key<Player>("playerData", initial: Player())].name == "Bob", "@AppStorage's JSON data")
        #expect(prefs[.lastOpened] == Date(timeIntervalSinceReferenceDate: 700_000_000))
        #expect(try prefs[.anything]?.decode(Int.self) == 42)
        #expect(prefs[.sessions] == 7)
        #expect(prefs.diagnostics.isEmpty)

        try Data("not a property list".utf8).write(to: plist)
        try importOnceAsWritten(prefs: prefs, plist: plist)   // imported already: the file is not read again
    }

    @Test("moving from Defaults: the calls of the article, then the loop ends when the store is closed")
    func movingFromDefaults() async throws {
        let prefs = try Prefs(.memory)
        PrefsDefaults(prefs).set(#"{"name":"Ada","volume":0.75}"#, forKey: "player")   // as Defaults left it
        #expect(prefs[.player].name == "Ada")
        let dynamic = prefs[.lastOpened]
        #expect(prefs[.lastOpened] >= dynamic, "computed at each read")
        let run = Task { try await movingFromDefaultsAsWritten(prefs: prefs) }
        // Generous: under a sanitizer, with every suite running beside it, the task may wait long for a thread.
        #expect(await eventually(timeout: .seconds(300)) { !prefs.isStored(.player) })
        try prefs.close()
        try await run.value
    }

    @Test("moving from @AppStorage: the initial value shows through UserDefaults' API, a write through either is seen by both")
    func movingFromAppStorage() throws {
        try withStandardStore(try Prefs(.memory)) {
            Prefs.standard = try Prefs(.memory)
            let model = SessionModel()
            let defaults = PrefsDefaults(Prefs.standard)
            #expect(defaults.integer(forKey: "sessions") == 0)
            model.sessions = 3
            #expect(defaults.integer(forKey: "sessions") == 3)
            defaults.set(4, forKey: "sessions")
            #expect(model.sessions == 4)
        }
    }
}
