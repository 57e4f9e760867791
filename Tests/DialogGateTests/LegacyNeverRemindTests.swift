@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults

/// Never-remind keys written by older code (seed 000's `UserHasSeenMsg`, seed 001's `dialog_neverAgain`):
/// read as `UserDefaults.bool(forKey:)` reads them, listed, and cleared by every reset.
@Suite("Local dialogs: never-remind keys written by older code")
struct LegacyNeverRemindTests {
    let directory: TemporaryDirectory
    let clock = TestClock()
    let intro = Dialog("intro", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))

    init() throws {
        directory = try TemporaryDirectory()
    }

    var path: String { directory.file("app.sqlite").path }

    func launch(appVersion: String = "1.0", overrides: DialogOverrides = DialogOverrides()) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(URL(fileURLWithPath: path))), session: DialogSession(), appVersion: appVersion,
            overrides: overrides, clock: clock.function)
    }

    /// The store as older code left it: only the key.
    func olderCode(wrote value: StoredValue) throws {
        try Prefs(.sqlite(URL(fileURLWithPath: path))).setStoredValue(value, forKey: "UserHasSeenMsg")
    }

    static let trueValues: [StoredValue] = [
        StoredValue(type: .bool, json: .bool(true)), StoredValue(type: .string, json: .string("YES")),
        StoredValue(type: .string, json: .string("true")), StoredValue(type: .string, json: .string(" yes ")),
        StoredValue(type: .string, json: .string("1")), StoredValue(type: .int, json: .int(1)),
        StoredValue(type: .double, json: .double(1.0)), StoredValue(type: .int, json: .int(-3)),
    ]
    static let falseValues: [StoredValue] = [
        StoredValue(type: .bool, json: .bool(false)), StoredValue(type: .string, json: .string("NO")),
        StoredValue(type: .string, json: .string("false")), StoredValue(type: .string, json: .string("0")),
        StoredValue(type: .int, json: .int(0)), StoredValue(type: .double, json: .double(0)),
        StoredValue(type: .string, json: .string("maybe")), StoredValue(type: .json, json: .array([.bool(true)])),
    ]

    @Test("a value UserDefaults.bool(forKey:) reads as true hides the dialog, and the reason names the key", arguments: trueValues)
    func readAsTrue(value: StoredValue) throws {
        try olderCode(wrote: value)
        #expect(PrefsDefaults(try Prefs(.sqlite(URL(fileURLWithPath: path)))).bool(forKey: "UserHasSeenMsg"), "the seed's own read agrees")
        let decision = try launch().decision(for: intro)
        #expect(decision.reasons == [.legacyNeverRemind(key: "UserHasSeenMsg")])
        #expect(decision.description == "intro: not presented: never remind (legacy key UserHasSeenMsg)")
    }

    @Test("a value UserDefaults.bool(forKey:) reads as false hides nothing", arguments: falseValues)
    func readAsFalse(value: StoredValue) throws {
        try olderCode(wrote: value)
        #expect(!PrefsDefaults(try Prefs(.sqlite(URL(fileURLWithPath: path)))).bool(forKey: "UserHasSeenMsg"))
        #expect(try launch().decision(for: intro).reasons == [.eligible(shown: 0, limit: nil)])
    }

    @Test("PrefsDefaults.set(1, forKey:), as old code wrote it, hides the dialog")
    func writtenThroughPrefsDefaults() throws {
        PrefsDefaults(try Prefs(.sqlite(URL(fileURLWithPath: path)))).set(1, forKey: "UserHasSeenMsg")
        #expect(!(try launch().shouldPresent(intro)))
    }

    @Test("a key only older code wrote is listed with its value once the app decided, and reset(ids) clears it")
    func listedAndResetByID() throws {
        try olderCode(wrote: StoredValue(type: .string, json: .string("YES")))
        let gate = try launch()
        #expect(!gate.shouldPresent(intro))
        let state = try #require(try gate.states().first)
        #expect(state.id == "intro")
        #expect(state.record?.neverRemindKey == "UserHasSeenMsg")
        #expect(state.legacyValue == StoredValue(type: .string, json: .string("YES")))
        #expect(state.legacyNeverRemind)
        try gate.reset(["intro"])
        #expect(try gate.prefs.storedValue(forKey: "UserHasSeenMsg") == nil)
        #expect(try launch().shouldPresent(intro))
    }

    @Test("resetAll clears a key only older code wrote")
    func resetAll() throws {
        try olderCode(wrote: StoredValue(type: .int, json: .int(1)))
        let gate = try launch()
        #expect(!gate.shouldPresent(intro))
        try gate.resetAll()
        #expect(try gate.states().isEmpty)
        #expect(try launch().shouldPresent(intro))
    }

    @Test("prefs-tool dialogs shows the key and its value; dialogs reset ID and --all clear it", arguments: [["intro"], ["--all"]])
    func prefsTool(reset: [String]) async throws {
        try olderCode(wrote: StoredValue(type: .string, json: .string("YES")))
        #expect(!(try launch().shouldPresent(intro)))
        let list = try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs"])
        #expect(list.stdout == "intro\tshown 0\tlegacy key \"UserHasSeenMsg\" = \"YES\" (never remind)\n", "\(list.stderr)")
        let json = try JSON.parse(try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs", "list", "--json"]).stdout)
        #expect(json["intro"]?["neverRemindKey"] == .string("UserHasSeenMsg"))
        #expect(json["intro"]?["neverRemindKeyValue"] == .string("YES"))
        let result = try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs", "reset"] + reset)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try launch().decision(for: intro).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(try launch().prefs.storedValue(forKey: "UserHasSeenMsg") == nil)
    }

    @Test("under a policy that resets on a new app version, a never-remind only older code wrote ends with the next version")
    func versionChange() throws {
        let whatsNew = Dialog("whatsnew", policy: DialogPolicy(resetsOn: .newVersion, neverRemindKey: "UserHasSeenMsg"))
        try olderCode(wrote: StoredValue(type: .bool, json: .bool(true)))
        #expect(try launch(appVersion: "1.0").decision(for: whatsNew).reasons == [.legacyNeverRemind(key: "UserHasSeenMsg")])
        let upgraded = try launch(appVersion: "1.1")
        #expect(upgraded.decision(for: whatsNew).reasons == [.resetByAppVersionChange(from: "1.0", to: "1.1"), .eligible(shown: 0, limit: nil)])
        try #require(try upgraded.claim(whatsNew).presentation).finish(.dismiss)
        #expect(try upgraded.prefs.storedValue(forKey: "UserHasSeenMsg") == nil, "the old answer is removed with the old record")
        #expect(try launch(appVersion: "1.1").shouldPresent(whatsNew))
    }

    /// Reported: after an upgrade from the seed apps, `prefs-tool dialogs reset --all` left a legacy key that the app
    /// had not asked about yet, so the dialog stayed hidden.
    @Test("declared dialogs: prefs-tool lists and reset --all clears a legacy key the app has not asked about yet")
    func declaredBeforeTheFirstDecision() async throws {
        try olderCode(wrote: StoredValue(type: .string, json: .string("YES")))
        let app = try launch()
        try app.declare([intro, Dialog("rate-app")])
        let list = try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs"])
        #expect(list.stdout == "intro\tshown 0\tlegacy key \"UserHasSeenMsg\" = \"YES\" (never remind)\nrate-app\tshown 0\n", "\(list.stderr)")
        let reset = try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs", "reset", "--all"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(try app.prefs.storedValue(forKey: "UserHasSeenMsg") == nil)
        #expect(app.decision(for: intro).reasons == [.eligible(shown: 0, limit: nil)], "the dialog shows again")
    }

    @Test("declaring writes once, keeps what a record holds, and leaves another id's record alone")
    func declareIsIdempotent() throws {
        let gate = try launch()
        try #require(try gate.claim(intro).presentation).finish(.dismiss)
        let before = try gate.prefs.snapshot()
        try gate.declare([intro])
        #expect(try gate.prefs.snapshot() == before, "a recorded dialog is not written again")
        try gate.declare([Dialog("intro")])  // a policy without the key: the recorded key is kept, so resets still clear it
        #expect(try gate.states().first?.record?.neverRemindKey == "UserHasSeenMsg")
        #expect(try gate.states().first?.record?.presentations == 1)
    }

    @Test("a decision under a QA override does not adopt the key")
    func overridesAdoptNothing() throws {
        try olderCode(wrote: StoredValue(type: .bool, json: .bool(true)))
        _ = try launch(overrides: DialogOverrides(mode: .showAll)).decision(for: intro)
        #expect(try launch().prefs.storedValue(forKey: DialogRecord.storeKeyName(for: "intro")) == nil)
    }

    /// A launch as QA's scheme starts it: the store reads `arguments` above what it holds.
    func qaLaunch(_ arguments: [String]) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(URL(fileURLWithPath: path)), launchArguments: arguments), session: DialogSession(), appVersion: "1.0",
            clock: clock.function)
    }

    @Test("-UserHasSeenMsg NO shows a dialog answered never remind, for that launch only, and stores nothing of it")
    func argumentShowsForOneLaunch() throws {
        let presentation = try #require(try launch().claim(intro).presentation)
        try presentation.finish(.neverRemind)
        #expect(try launch().decision(for: intro).reasons.contains { if case .neverRemind = $0 { true } else { false } })

        let qa = try qaLaunch(["-UserHasSeenMsg", "NO"])
        #expect(qa.decision(for: intro).shouldPresent)
        try #require(try qa.claim(intro).presentation).finish(.dismiss)

        let next = try launch()
        #expect(next.decision(for: intro).reasons.contains { if case .neverRemind = $0 { true } else { false } })
        #expect(try next.prefs.storedValue(forKey: "UserHasSeenMsg")?.isTruthy == true, "the answer is kept")
    }

    @Test("-UserHasSeenMsg YES hides a dialog never answered, for that launch only, and adopts nothing")
    func argumentHidesForOneLaunch() throws {
        let qa = try qaLaunch(["-UserHasSeenMsg", "YES"])
        #expect(qa.decision(for: intro).reasons == [.legacyNeverRemind(key: "UserHasSeenMsg")])
        #expect(try qa.claim(intro).presentation == nil)
        #expect(try qaLaunch(["-UserHasSeenMsg", "maybe"]).decision(for: intro).shouldPresent, "no Bool: the store decides")

        let next = try launch()
        #expect(try next.prefs.storedValue(forKey: "UserHasSeenMsg") == nil)
        #expect(try next.prefs.storedValue(forKey: DialogRecord.storeKeyName(for: "intro")) == nil)
        #expect(next.decision(for: intro).shouldPresent)
    }
}
