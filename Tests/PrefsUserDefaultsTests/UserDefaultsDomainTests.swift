import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults

/// UserDefaults' domain API, Float fidelity and change notifications on PrefsDefaults, over every backend.
@Suite("PrefsDefaults: domains, Float fidelity, notifications")
struct UserDefaultsDomainTests {
    @Test("a Float reads back as Apple's UserDefaults gives it: the exact double, the same Float, its short text", arguments: Backend.allCases)
    func floatFidelity(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        fixture.defaults.set(Float(12.34), forKey: "volume")
        for defaults in [fixture.defaults, PrefsDefaults(try fixture.store.reopen())] {
            #expect(defaults.double(forKey: "volume") == Double(Float(12.34)))
            #expect(defaults.double(forKey: "volume") == 12.34000015258789)
            #expect(defaults.float(forKey: "volume") == Float(12.34))
            #expect(defaults.string(forKey: "volume") == "12.34")
        }
        fixture.defaults.set(12.34, forKey: "double")
        #expect(fixture.defaults.string(forKey: "double") == "12.34")
        #expect(fixture.defaults.double(forKey: "double") == 12.34)
    }

    @Test("the persistent domain of the store's own name is its stored values; set and remove replace them", arguments: Backend.allCases)
    func ownPersistentDomain(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = PrefsDefaults(fixture.prefs, domainName: "com.example.app")
        defaults.register(defaults: ["registered": true])
        defaults.set(3, forKey: "lastMessageId")
        let log = NotificationLog(defaults)
        #expect(defaults.persistentDomain(forName: "com.example.app")?["lastMessageId"] as? Int == 3)
        #expect(defaults.persistentDomain(forName: "com.example.app")?["registered"] == nil, "registered values are not persistent")

        defaults.setPersistentDomain(["a": 1, "b": "two"], forName: "com.example.app")
        #expect(defaults.object(forKey: "lastMessageId") == nil)
        #expect(defaults.integer(forKey: "a") == 1)
        #expect(defaults.string(forKey: "b") == "two")

        defaults.removePersistentDomain(forName: "com.example.app")  // "reset all settings"
        #expect(try fixture.prefs.snapshot().isEmpty)
        #expect(defaults.bool(forKey: "registered"))
        #expect(log.posted == [["a", "b", "lastMessageId"], ["a", "b"]], "one notification per change")
        #expect(fixture.diagnostics.isEmpty, "\(fixture.diagnostics)")
    }

    @Test("another name's persistent domain is the store at its default location; removing it empties that store")
    func otherPersistentDomain() async throws {
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.url.path]
        let set = try await ChildProcess.run("prefs-test-child", ["suite", "group.com.example.shared", "shared", "7"], environment: environment)
        #expect(set.status == 0, "\(set.stderr)")
        let read = try await ChildProcess.run("prefs-test-child", ["domain", "com.example.app", "group.com.example.shared"], environment: environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "shared=7\n")
        let again = try await ChildProcess.run("prefs-test-child", ["domain", "com.example.app", "group.com.example.shared"], environment: environment)
        #expect(again.stdout == "", "removed: an empty domain")
        let none = try await ChildProcess.run("prefs-test-child", ["domain", "com.example.app", "no.such.domain"], environment: environment)
        #expect(none.stdout == "nil\n")
    }

    @Test("volatile domains live in memory; the registration domain is register(defaults:)'s")
    func volatileDomains() throws {
        let defaults = try PrefsDefaults(.memory)
        defaults.register(defaults: ["quality": 0.8])
        #expect(defaults.volatileDomain(forName: PrefsDefaults.registrationDomain)["quality"] as? Double == 0.8)
        defaults.setVolatileDomain(["x": 1], forName: "scratch")
        #expect(defaults.volatileDomainNames == ["NSRegistrationDomain", "NSArgumentDomain", "scratch"])
        #expect(defaults.volatileDomain(forName: "scratch")["x"] as? Int == 1)
        #expect(defaults.object(forKey: "x") == nil, "a custom volatile domain is not searched, as in UserDefaults")
        defaults.setVolatileDomain(["quality": 0.5], forName: PrefsDefaults.registrationDomain)
        #expect(defaults.double(forKey: "quality") == 0.5)
        defaults.removeVolatileDomain(forName: "scratch")
        #expect(defaults.volatileDomainNames == ["NSRegistrationDomain", "NSArgumentDomain"])
        #expect(try defaults.prefs.snapshot().isEmpty, "nothing volatile is written")
    }

    @Test("PrefsDefaults(suiteName:) is the store at the default location for the name; a bad name throws why")
    func suiteName() async throws {
        #expect(throws: PrefsError.self) { _ = try PrefsDefaults(suiteName: "../escape") }
        let directory = try TemporaryDirectory()
        let result = try await ChildProcess.run(
            "prefs-test-child", ["suite", "group.com.example.app", "k", "5"], environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let path = directory.url.appendingPathComponent("prefs/group.com.example.app.sqlite").path
        #expect(result.stdout == "\(path)\n")
        #expect(try Prefs(.sqlite(URL(fileURLWithPath: path)))[Prefs.Key("k", initial: 0)] == 5)
    }

    @Test("didChangeNotification is posted once per change", arguments: Backend.allCases)
    func oneNotificationPerChange(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let log = NotificationLog(fixture.defaults)
        fixture.defaults.set(1, forKey: "a")
        fixture.defaults.set(Float(0.5), forKey: "b")
        fixture.defaults.removeObject(forKey: "a")
        fixture.defaults.set(nil, forKey: "b")
        #expect(log.posted == [["a"], ["b"], ["a"], ["b"]])
    }
}
