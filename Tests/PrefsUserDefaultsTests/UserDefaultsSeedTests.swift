import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults

/// The seeds' UserDefaults calls, unchanged but for `let defaults = PrefsDefaults(prefs)` in place of
/// `UserDefaults.standard`: moving to Prefs takes one line.
@Suite("PrefsDefaults with the seeds' code")
struct UserDefaultsSeedTests {
    /// Seed 000: a "Don't Remind" key that suppresses an alert for good.
    final class Seed000Alerts: Sendable {
        let defaults: PrefsDefaults
        init(_ defaults: PrefsDefaults) { self.defaults = defaults }

        /// The seed's `displayMsg` with the alert replaced by `present`.
        func displayMsg(title: String?, msg: String, dontRemindKey: String? = nil, present: () -> Void) {
            if dontRemindKey != nil, defaults.bool(forKey: dontRemindKey!) == true {
                return
            }
            present()
        }

        /// Whether `displayMsg` presents the alert.
        func wouldDisplay(dontRemindKey: String?) -> Bool {
            var presented = false
            displayMsg(title: "Tip", msg: "Swipe to delete", dontRemindKey: dontRemindKey) { presented = true }
            return presented
        }

        /// What the "Don't Remind" button's handler does.
        func dontRemindTapped(dontRemindKey: String?) {
            defaults.set(true, forKey: dontRemindKey!)
            defaults.synchronize()
        }
    }

    /// Seed 001: `enum UserDefaultsKey: String` with a "never remind me" flag.
    enum UserDefaultsKey: String {
        case dialogNoMore = "dialog_neverAgain"
    }

    /// Seed 003: the last message id shown, as a computed property over UserDefaults.
    final class Seed003MessageStore: Sendable {
        let defaults: PrefsDefaults
        init(_ defaults: PrefsDefaults) { self.defaults = defaults }

        var lastMessageId: Int {
            get {
                defaults.integer(forKey: "lastMessageId")
            }
            set {
                defaults.setValue(newValue, forKey: "lastMessageId")
            }
        }
    }

    @Test("seed 000: once Don't Remind is tapped, the alert stays hidden, also after a restart", arguments: Backend.allCases)
    func seed000(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let defaults = PrefsDefaults(prefs)
        let alerts = Seed000Alerts(defaults)
        #expect(alerts.wouldDisplay(dontRemindKey: "tipSwipe"))
        #expect(alerts.wouldDisplay(dontRemindKey: nil))
        alerts.dontRemindTapped(dontRemindKey: "tipSwipe")
        #expect(!alerts.wouldDisplay(dontRemindKey: "tipSwipe"))
        #expect(alerts.wouldDisplay(dontRemindKey: nil))
        #expect(!Seed000Alerts(PrefsDefaults(try fixture.reopen())).wouldDisplay(dontRemindKey: "tipSwipe"), "after a restart")
    }

    @Test("seed 001: the never-again flag under the enum's raw value", arguments: Backend.allCases)
    func seed001(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let defaults = PrefsDefaults(prefs)
        let neverSeeBefore = defaults.bool(forKey: UserDefaultsKey.dialogNoMore.rawValue)
        #expect(neverSeeBefore == false)
        defaults.set(true, forKey: UserDefaultsKey.dialogNoMore.rawValue)
        let neverSee = defaults.bool(forKey: UserDefaultsKey.dialogNoMore.rawValue)
        #expect(neverSee)
        let typed: Bool = prefs[AppKey.dialogNoMore]
        #expect(typed, "the typed enum key of the same name reads it")
    }

    @Test("seed 003: lastMessageId starts at 0 and keeps what setValue wrote", arguments: Backend.allCases)
    func seed003(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let defaults = PrefsDefaults(prefs)
        let store = Seed003MessageStore(defaults)
        #expect(store.lastMessageId == 0)
        store.lastMessageId = 3
        #expect(store.lastMessageId == 3)
        #expect(try prefs.storedValue(forKey: "lastMessageId") == StoredValue(type: .int, json: .int(3)))
        #expect(Seed003MessageStore(PrefsDefaults(try fixture.reopen())).lastMessageId == 3)
    }
}
