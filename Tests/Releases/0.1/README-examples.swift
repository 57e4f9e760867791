// The Swift examples of release 0.1's README (`git show 3b44638:README.md`), each block in a function of its own so
// that they typecheck together, compiled against this release by ReadmeTests' PreviousReadmeTests: an app written
// from the previous README still builds. Where this release breaks one, the block carries the migration the
// changelog gives (CHANGELOG.md, "Upgrading from 0.1.0"), marked `// 0.2:`; a deprecated spelling compiles with its warning.
import DialogGate
import Foundation
import Observation
import Prefs
import PrefsUserDefaults  // 0.2: PrefsDefaults is in the PrefsUserDefaults product

// README: the opening example.
extension Prefs.Keys {
    static let launchCount = Key<Int>("launchCount", initial: 0)
    static let username = Key<String?>("username")
}

func opening() throws {
    let prefs = try Prefs(.sqlite(URL(fileURLWithPath: "/tmp/readme.sqlite")))
    try prefs.update(.launchCount) { $0 += 1 }  // atomic, across threads and processes
    prefs[.username] = "ada"  // writes through; survives a crash once it returns
    print(prefs[.launchCount], prefs.isStored(.username))
}

// Keys and values: static typed keys.
enum Theme: String, PrefsStorable { case light, dark }  // stored as its raw value
struct Frame: Codable, PrefsStorable { var width = 800, height = 600 }  // stored as JSON

extension Prefs.Keys {
    static let theme = Key<Theme>("theme", initial: .light)
    static let frame = Key<Frame>("frame", initial: Frame())
    static let launches = Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])  // a rename
}

// Keys and values: enum keys.
enum AppKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain", lastMessageId
    var initialValue: any PrefsStorable {
        switch self {
        case .dialogNoMore: false
        case .lastMessageId: 0
        }
    }
}

func enumKeys(prefs: Prefs) throws {
    let neverAgain: Bool = prefs[AppKey.dialogNoMore]
    prefs[AppKey.lastMessageId] = 3
    try prefs.declare(AppKey.self)  // record every case for prefs-tool, before first use
    _ = neverAgain
}

// Storage.
func storage(url: URL) throws {
    let test = try Prefs(.memory)  // tests and previews; .memory(snapshot) starts from values
    let readable = try Prefs(.jsonFile(url))  // one sorted, indented, hand-editable JSON document
    let fast = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
    let database = try Prefs(.sqlite(url, durability: .powerLoss))  // WAL; synchronous=FULL
    let byName = try Prefs(.file(url))  // .json → JSON, .sqlite/.sqlite3/.db → SQLite, else by content
    let standard = try Prefs(.default(identifier: "com.example.app"))  // see below
    _ = (test, readable, fast, database, byName, standard)
}

// Observation.
func observation(prefs: Prefs) async {
    for await count in prefs.values(for: .launchCount) { print(count) }  // current value first, then each change

    let model = prefs.observable(.launchCount)  // Observation's Observable, for UI
    withObservationTracking {
        _ = model.value
    } onChange: {
        print("changed")
    }
}

// Coming from UserDefaults.
func comingFromUserDefaults(url: URL) throws {
    let defaults = try PrefsDefaults(.sqlite(url))  // was: UserDefaults.standard
    if defaults.bool(forKey: "UserHasSeenMsg") { return }
    defaults.set(true, forKey: "UserHasSeenMsg")
    defaults.synchronize()
    let last = defaults.integer(forKey: "lastMessageId")
    defaults.setValue(last + 1, forKey: "lastMessageId")
}

// DialogGate: local dialogs.
func localDialogs(prefs: Prefs) throws {
    let gate = DialogGate(prefs: prefs, appVersion: "2.1")
    let welcome = Dialog("welcome")
    if gate.shouldPresent(welcome) {
        try gate.recordPresentation(of: welcome)
        // … present your alert; when the user answers:
        try gate.record(.ok, for: welcome)  // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
    }
    print(gate.decision(for: welcome))  // "welcome: not presented: suppressed for this session (OK)"
}

func seed001(gate: DialogGate) throws {
    let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
    if gate.shouldPresent(dialog) {
        try gate.recordPresentation(of: dialog)
        // "Here is a message for you!"  [OK] → .ok    [Never remind me] → .neverRemind
        try gate.record(.neverRemind, for: dialog)
    }
}

func showAlert(title: String?, message: String, dontRemind: Bool) async -> DialogResponse { .ok }

func seed000(gate: DialogGate) {
    func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil) async throws {
        let dialog = Dialog(dontRemindKey ?? "msg:\(msg)", policy: DialogPolicy(neverRemindKey: dontRemindKey))
        try await gate.presentIfNeeded(dialog) { _ in
            await showAlert(title: title, message: msg, dontRemind: dontRemindKey != nil)  // your UI: returns .ok or .neverRemind
        }
    }
    _ = displayMsg
}

// DialogGate: remote messages.
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

// The README's text: "acknowledge(.confirm)" acknowledged the pending message.
@MainActor
func acknowledgePending(messages: MessageCenter) {
    _ = messages.acknowledge(.confirm)  // deprecated in 0.2: acknowledge(_:for:) with the message presented
}
