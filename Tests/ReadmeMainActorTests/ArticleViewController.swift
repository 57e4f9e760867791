// swift-format-ignore-file
// (The articles' lines, verbatim: the formatter would rewrap them.)
// Every swift block of the README and the DocC articles, pasted into a view controller as an iOS developer pastes it:
// this target's code is main-actor isolated by default (`-default-isolation MainActor`, as a new Xcode 26 app target
// is), declarations sit at file level and statements inside `ArticleViewController`, a `@MainActor` class.
// `ReadmeSource` (in ReadmeTests) checks that every line of every block is in this target, in the block's order.
import DialogGate
import Foundation
import Observation
import Observation  // for withObservationTracking; SwiftUI tracks `model.value` by itself
import Prefs
import PrefsPostgreSQL
import PrefsTesting
import PrefsUserDefaults
import PrefsSync

extension Prefs.Keys {
    static let launchCount = Key<Int>("launchCount", initial: 0)
    static let username = Key<String?>("username")
}

@Observable final class SettingsModel {  // or any class or struct
    @ObservationIgnored @Pref(.username) var username  // tracked by Observation and SwiftUI all the same
}

enum Theme: String, PrefsStorable { case light, dark }  // stored as its raw value
struct Frame: Codable, PrefsStorable { var width = 800, height = 600 }  // stored as JSON

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

struct Player: Codable, PrefsStorable { var volume = 0.5, name = "" }   // a Codable Defaults.Serializable

extension Prefs.Keys {
    static let quality = Key<Double>("quality", initial: 0.8)           // Defaults: Key<Double>("quality", default: 0.8)
    static let player = Key<Player>("player", initial: Player())        // Defaults stored it as JSON text: read as it is
    static let lastOpened = Key<Date>("lastOpened") { Date.now }        // a dynamic default, computed at each read
    static let anything = Key<StoredValue?>("anything")                 // Defaults.AnySerializable
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

struct Profile: Codable, PrefsStorable { var fullName: String; var fontSize: Int }   // this release
struct ProfileV1: Codable, PrefsStorable { var name: String }                        // what release 1 stored

extension Prefs.Keys {
    static let profile = Key<Profile>("profile", initial: Profile(fullName: "", fontSize: 12), migrating: { stored in
        Profile(fullName: try stored.decode(ProfileV1.self).name, fontSize: 12)   // nil or a throw: the initial value
    })
}

extension Prefs.Keys {
    static let lastMessageId = Key<Int>("lastMessageId", initial: 0)
    static let hasSeenWelcome = Key<Bool>("hasSeenWelcome", initial: false)
}

extension Prefs.Keys {
    static let fontSize = Key<Int>("editor.fontSize", initial: 12)   // synced: it is under "editor."
}

/// A view controller holding every example: its methods are the articles' code, run on the main actor. The alert it
/// "presents" is answered by `answer`, as a user's tap would be, and recorded in `shownAlerts`.
@MainActor
final class ArticleViewController {
    let prefs: Prefs
    let gate: DialogGate
    /// The answer the user gives to the next alert.
    var answer: DialogResponse = .dismiss
    /// The messages of the alerts shown, in order (main-actor state the alert code writes).
    var shownAlerts: [String] = []

    init(prefs: Prefs) {
        self.prefs = prefs
        gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "2.1", overrides: DialogOverrides())
    }

    /// The app's alert UI: records the message and returns the user's answer.
    func showAlert(title: String?, message: String, dontRemind: Bool) async -> DialogResponse {
        shownAlerts.append(message)
        return dontRemind ? answer : .dismiss
    }

    /// The alert for a dialog, as `presentIfNeeded`'s doc comment names it.
    func showAlert(for dialog: Dialog) async -> DialogResponse {
        await showAlert(title: nil, message: dialog.id, dontRemind: true)
    }

    // MARK: - README

    /// README, the opening: compiled, not run (its fixed /tmp path would be shared by concurrent runs).
    func readmeOpening() throws {
        Prefs.standard = try Prefs(.sqlite(URL(fileURLWithPath: "/tmp/readme.sqlite")))  // once, at launch
        let prefs = Prefs.standard
        try prefs.update(.launchCount) { $0 += 1 }  // atomic, across threads and processes
        SettingsModel().username = "ada"  // writes through; survives a crash once it returns
        print(prefs[.launchCount], prefs.isStored(.username))
    }

    /// README, Sync: one device's change, pushed.
    func readmeSync() async throws -> StoredValue? {
        let transport = InProcessSyncTransport()   // in tests; in an app, PostgreSQLSyncTransport(url) or a service of your own
        let sync = try SyncEngine(prefs: prefs, transport: transport, namespaces: ["editor."])
        try prefs.set(14, for: .fontSize)
        try await sync.sync()                      // pull, merge each key by hybrid logical clock, push
        return transport.current["editor.fontSize"]?.value
    }

    /// README, LocalDialogs.md and DialogGate.md: the generic local dialog and seed 001's mapping.
    func localDialogs() throws {
        let gate = DialogGate(prefs: prefs, appVersion: "2.1")
        let welcome = Dialog("welcome")
        if let presentation = try gate.claim(welcome).presentation {  // decides and claims in one transaction
            // … present your alert; when the user answers:
            try presentation.finish(.hideForSession)  // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
        }
        print(gate.decision(for: welcome))  // "welcome: not presented: suppressed for this session (OK)"
        let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        if let presentation = try gate.claim(dialog).presentation {
            // "Here is a message for you!"  [OK] → .hideForSession    [Never remind me] → .neverRemind
            try presentation.finish(.neverRemind)
        }
    }

    /// LocalDialogs.md: a new session when the user comes back (`answer` stands for the user's answers in between).
    func newSession(answer: (DialogGate) throws -> Void) rethrows -> DialogGate {
        var gate = DialogGate(prefs: prefs, session: DialogSession())
        func userCameBack() {  // a scene's willEnterForeground, a login
            gate = DialogGate(prefs: prefs, session: DialogSession())  // "OK" of the last visit no longer hides
        }
        try answer(gate)
        userCameBack()
        return gate
    }

    /// README and RemoteMessages.md: compiled, not run (it fetches from the network).
    @MainActor
    func launch(prefs: Prefs) async {
        let messages = MessageCenter(
            feedURL: URL(string: "https://example.github.io/AppAlert/messages.json")!,
            prefs: prefs,
            context: .current(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0"))
        await messages.refresh()  // fetch (or the last good feed) and decide
        if let message = messages.pendingMessage {  // present it with your own UI, then:
            _ = messages.acknowledge(.confirm, for: message)  // stores lastMessageId = message.id
        }
    }

    /// RemoteMessages.md: the buttons of an update alert.
    /// The buttons of an update alert: [Update], and, unless the update is required, [Later] and [Skip This Version].
    @MainActor
    func answer(_ button: String, to message: RemoteMessage, in messages: MessageCenter) -> URL? {
        switch button {
        case "Update": return messages.acknowledge(.link, for: message)  // open the App Store link it returns
        case "Skip This Version" where !messages.isRequiredUpdate(message):
            return messages.acknowledge(.skipVersion, for: message)  // hidden until a later version is recommended
        default:
            messages.dismissWithoutAcknowledging()  // "Later": shown again, within its caps
            return nil
        }
    }

    // MARK: - DialogGate

    /// LocalDialogs.md, seed 000: the present closure calls this view controller's alert code on the main actor.
    func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil) async throws {
        guard let key = dontRemindKey else {
            _ = await showAlert(title: title, message: msg, dontRemind: false)  // no key: every time, nothing stored
            return
        }
        try await gate.presentIfNeeded(Dialog(key, policy: DialogPolicy(neverRemindKey: key))) { _ in
            await showAlert(title: title, message: msg, dontRemind: true)  // your UI: [OK] → .dismiss, [Don't Remind] → .neverRemind
        }
    }

    /// LocalDialogs.md: a condition on an event and a parameter.
    func conditions() throws -> (DialogGate, Dialog) {
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

    /// StoreKit's review prompt, as the recipe calls it: counted in `shownAlerts`.
    func requestReview() {
        shownAlerts.append("review")
    }

    /// LocalDialogs.md: the review prompt, on this controller's gate.
    func reviewPrompt() throws -> Dialog {
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

    /// The app's hint UI for dialogs in order.
    func showHint(_ dialog: Dialog) async -> DialogResponse {
        await showAlert(title: nil, message: dialog.id, dontRemind: true)
    }

    /// LocalDialogs.md: dialogs in order, on this controller's gate.
    func dialogsInOrder() async throws -> [Dialog] {
        let onboarding = ["intro-library", "intro-editing", "intro-sharing"].map {
            Dialog($0, policy: DialogPolicy(maximumPresentations: 1))
        }
        if let presentation = try gate.claim(nextOf: onboarding).presentation {
            try presentation.finish(await showHint(presentation.dialog))   // intro-editing only once intro-library is done
        }
        return onboarding
    }

    /// `DialogGate.presentIfNeeded(_:isolation:present:)`'s doc comment.
    func presentWelcome() async throws {
        let welcome = Dialog("welcome")
        try await gate.presentIfNeeded(welcome) { dialog in await showAlert(for: dialog) }
    }

    /// MessageFeed.md.
    func messageContext() -> MessageContext {
        let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "18.0",
                                     localeIdentifier: "en_GB")
        print(context)  // "com.example.app 2.1 on OS 18.0, locale en_GB"
        return context
    }

    // MARK: - Prefs

    /// GettingStarted.md: compiled, not run (it opens the store in the user's config folder).
    func gettingStarted() throws {
        Prefs.standard = try Prefs(.default(identifier: "com.example.app"))  // SQLite in ~/.config/prefs
        let prefs = Prefs.standard
        prefs[.username] = "ada"  // writes through; survives a crash once it returns
        try prefs.update(.launchCount) { $0 += 1 }  // read-modify-write, atomic across processes
    }

    /// KeysAndValues.md.
    func keysAndValues() throws -> Bool {
        let neverAgain: Bool = prefs[AppKey.dialogNoMore]
        prefs[AppKey.lastMessageId] = 3
        try prefs.declare(AppKey.self)  // record every case for prefs-tool, before first use
        prefs[.theme] = .dark
        prefs[.frame] = Frame(width: 1, height: 2)
        return neverAgain
    }

    /// Observation.md: the loop ends when the store is closed.
    func observation() async {
        for await count in prefs.values(for: .launchCount) { print(count) }  // current value first, then each change

        let model = prefs.observable(.launchCount)  // Observation's Observable, for UI
        withObservationTracking { _ = model.value } onChange: { print("changed") }
    }

    /// Prefs.md, the catalog's overview.
    func overview(url: URL) throws -> Prefs {
        let prefs = try Prefs(.sqlite(url))
        try prefs.update(.launchCount) { $0 += 1 }  // atomic, across threads and processes
        print(prefs[.launchCount])  // 1
        return prefs
    }

    /// StandardStore.md, App Groups: compiled, not run (it opens the group's store in the user's config folder).
    func appGroups() throws {
        let shared = try PrefsDefaults(suiteName: "group.com.example.app")  // the app and its widget: one store
        let typed = try Prefs(.appGroup("group.com.example.app"))  // the same store, with typed keys
        _ = (shared, typed)
    }

    /// StandardStore.md, the waiting state: run by ArticleViewControllerTests with a standard store of the test's own.
    func standardStore() throws {
        let prefs = Prefs.standard  // never set: the default store, or one that waits for it
        if let reason = prefs.waitingReason {  // why: the folder, and what is wrong with it
            print("settings not available yet: \(reason)")
        }
        prefs[.launchCount] += 1  // kept in memory while it waits, committed once it opens
        try prefs.retryOpening()  // the app learned it may open: try now
    }

    /// Storage.md: compiled, not run (the last line opens the store in the user's config folder).
    func storage(url: URL) throws {
        let test = try Prefs(.memory)  // tests and previews; .memory(snapshot) starts from values
        let readable = try Prefs(.jsonFile(url))  // one sorted, indented, hand-editable JSON document
        let fast = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
        let database = try Prefs(.sqlite(url, durability: .powerLoss))  // WAL; synchronous=FULL
        let byName = try Prefs(.file(url))  // .json → JSON, .sqlite/.sqlite3/.db → SQLite, else by content
        let standard = try Prefs(.default(identifier: "com.example.app"))  // see below
        _ = (test, readable, fast, database, byName, standard)
    }

    /// Storage.md, suspended apps and shared containers: run by ArticleViewControllerTests.
    func suspension() {
        prefs.suspend()              // the app is about to be suspended: no file lock held
        print(prefs[.launchCount])   // the next call opens the file again, and reads what the widget wrote meanwhile
    }

    /// Storage.md, formats and releases: compiled, and run by ArticleViewControllerTests.
    func formats(url: URL) throws -> (Prefs, Prefs) {
        let shared = try Prefs(.jsonFile(url, formatVersion: 1))  // an app extension on release 0.1 writes it too
        let upgraded = try Prefs(.jsonFile(url, formatVersion: 2))  // every process is on 0.2 or later: the journal's speed
        return (shared, upgraded)
    }

    // MARK: - PrefsPostgreSQL

    /// PrefsPostgreSQL.md: compiled, not run (db.internal).
    func postgreSQLOverview() throws {
        let prefs = try Prefs(.postgreSQL("postgresql://app@db.internal/prefs?sslmode=verify-full", namespace: "user-42"))
        try prefs.update(.launchCount) { $0 += 1 }  // atomic across every instance of the fleet
    }

    /// PostgreSQLSetup.md: compiled, not run (db.internal).
    func postgreSQLSetup(userID: Int) throws -> Prefs {
        let url = "postgresql://prefs_app@db.internal:5432/prefs?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem"
        let prefs = try Prefs(.postgreSQL(url, namespace: "user-\(userID)"), pollInterval: .milliseconds(100))
        return prefs
    }

    /// PostgreSQLSetup.md, an app's test on the test server: compiled here, run in ReadmeTests.
    func postgreSQLTestServer() throws -> Prefs {
        let server = try TestPostgreSQLServer.shared()
        let prefs = try Prefs(.postgreSQL(server.url, namespace: "test-\(UUID())"))
        return prefs
    }

    /// PostgreSQLFleet.md, the staleness bound: compiled, not run (db.internal).
    func postgreSQLFleetBound(url: String) throws -> Prefs {
        let options = PostgreSQLOptions(stalenessBound: .milliseconds(250))
        let prefs = try Prefs(.postgreSQL(url, namespace: "user-42", options: options))
        return prefs
    }

    /// PostgreSQLFleet.md, compare-and-set on a revision: compiled, not run (it needs a server).
    func postgreSQLFleetCompareAndSet() throws {
        var count = try prefs.revisioned(.launchCount)
        while true {
            do {
                try prefs.set(count.value + 1, for: .launchCount, ifRevision: count.revision)
                break
            } catch let conflict as Prefs.RevisionConflict<Int> {
                count = conflict.current  // another instance wrote first: decide again
            }
        }
    }

    /// PostgreSQLFleet.md, automatic history retention: compiled, not run (db.internal).
    func postgreSQLFleetRetention(url: String) throws -> Prefs {
        let options = PostgreSQLOptions(historyRevisions: 1_000, historyAge: .seconds(86_400))
        let prefs = try Prefs(.postgreSQL(url, namespace: "user-42", options: options))
        return prefs
    }

    /// PostgreSQLFleet.md, namespaces and retention: compiled, not run (db.internal).
    func postgreSQLFleetNamespaces() throws {
        let database = PostgreSQLDatabase("postgresql://admin@db.internal/prefs")
        for namespace in try database.namespaces() where namespace.values == 0 { try database.deleteNamespace(namespace.name) }
        try database.deleteNamespaces(inactiveFor: .seconds(365 * 86_400))  // users gone for a year
        try database.setHistoryRetention(.seconds(7 * 86_400), for: "user-42")
        try database.prune()  // from a daily job: history past its retention, tombstones older than 30 days
    }

    // MARK: - PrefsUserDefaults

    /// ComingFromUserDefaults.md, moving from Defaults: the loop ends when the store is closed.
    func movingFromDefaults() async throws {
        prefs[.quality] = 0.5                                             // Defaults[.quality] = 0.5
        print(prefs[.player].name)                                        // the JSON text Defaults wrote, decoded
        prefs.withoutNotifyingObservers { prefs[.quality] = 1 }           // Defaults.withoutPropagation { … }
        try prefs.reset(.quality, .player)                                // Defaults.reset(.quality, .player)
        for await (quality, player) in prefs.values(for: .quality, .player) { print(quality, player.volume) }
    }

    /// ComingFromUserDefaults.md, importing the property list once.
    func importOnce(plist: URL) throws {
        let defaults = PrefsDefaults(prefs)
        if !prefs.isStored(.imported) {
            let report = try defaults.importPropertyList(at: plist)   // one transaction; unsupported values listed by key
            prefs[.imported] = report.unsupported.isEmpty
        }
    }

    /// ComingFromUserDefaults.md, importing from the running UserDefaults: compiled, not run (it would write the test
    /// runner's UserDefaults domain in the user's config folder).
    func importFromRunning(defaults: PrefsDefaults) throws {
        if !prefs.isStored(.imported) {
            let report = try defaults.importValues(from: .standard)   // what the store holds is kept; see report.keptExisting
            prefs[.imported] = report.unsupported.isEmpty
        }
    }

    // MARK: - LaunchArguments.md

    /// Shown while the user has not seen the welcome: counted, as a test's stand-in for the screen.
    var welcomesShown = 0
    func showWelcome() { welcomesShown += 1 }

    /// LaunchArguments.md, a QA launch, with the test runner's arguments (none names these keys).
    func launchArguments(url: URL) throws -> Prefs {
        let prefs = try Prefs(.sqlite(url))      // reads the app's launch arguments
        if !prefs[.hasSeenWelcome] { showWelcome() }
        if case .argument(let id) = prefs.lookup(.lastMessageId) { print("QA: messages after \(id)") }
        prefs[.hasSeenWelcome] = true            // stored; this launch still reads NO
        return prefs
    }

    /// LaunchArguments.md, which stores read them.
    func launchArgumentStores(url: URL) throws -> (preview: Prefs, fixed: Prefs) {
        let preview = try Prefs(.memory, launchArguments: ["-hasSeenWelcome", "YES"])
        let fixed = try Prefs(.sqlite(url), launchArguments: [])   // reads no argument
        return (preview, fixed)
    }

    /// ComingFromUserDefaults.md.
    func comingFromUserDefaults(url: URL) throws {
        let defaults = try PrefsDefaults(.sqlite(url))  // was: UserDefaults.standard
        if defaults.bool(forKey: "UserHasSeenMsg") { return }
        defaults.set(true, forKey: "UserHasSeenMsg")
        defaults.synchronize()
        let last = defaults.integer(forKey: "lastMessageId")
        defaults.setValue(last + 1, forKey: "lastMessageId")
    }
}
