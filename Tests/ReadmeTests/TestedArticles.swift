import DialogGate
import Foundation
import Observation   // for withObservationTracking; SwiftUI tracks `model.value` by itself
import Prefs
@_spi(Harness) import PrefsTestSupport
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
        try presentation.finish(.ok)       // or .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
    }
    print(gate.decision(for: welcome))     // "welcome: not presented: suppressed for this session (OK)"
    let dialog = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
    if let presentation = try gate.claim(dialog).presentation {
        // "Here is a message for you!"  [OK] → .ok    [Never remind me] → .neverRemind
        try presentation.finish(.neverRemind)
    }
    return gate
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

@Suite("The articles' examples, run")
struct TestedArticles {
    @Test("local dialogs as the README and the article show them")
    func localDialogs() throws {
        let prefs = try Prefs(.memory)
        let gate = try localDialogAsWritten(prefs: prefs)
        #expect(gate.decision(for: Dialog("welcome")).description == "welcome: not presented: suppressed for this session (OK)")
        #expect(prefs[AppKey.dialogNoMore] as Bool)
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
