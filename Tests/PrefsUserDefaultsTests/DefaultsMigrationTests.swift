import Foundation
import PrefsJSON
import PrefsTestSupport
import PrefsUserDefaults
import TestFixtures
import Testing

@_spi(Tooling) import Prefs

extension Prefs.Keys {
    fileprivate static let quality = Key<Double>("quality", initial: 0.8)
    fileprivate static let showTips = Key<Bool>("showTips", initial: true)
    fileprivate static let greeting = Key<String>("greeting", initial: "hello")
    fileprivate static let visits = Key<Int>("visits", initial: 3)
    fileprivate static let motto = Key<String?>("motto")
}

/// What code moving from Defaults (sindresorhus/Defaults) and from `@AppStorage` (and swift-sharing's `.appStorage`)
/// relies on, restated against Prefs on every backend: their tests' intent, none of their code.
@Suite("Coming from Defaults and @AppStorage")
struct DefaultsMigrationTests {
    // MARK: - Initial values through UserDefaults' API

    @Test("after declare, the getters read a key's initial value while nothing is stored, here and in another process", arguments: Backend.allCases)
    func declaredInitialValues(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        try fixture.prefs.declare(.quality, .showTips, .greeting, .motto)
        #expect(defaults.double(forKey: "quality") == 0.8)
        #expect(defaults.bool(forKey: "showTips"))
        #expect(defaults.string(forKey: "greeting") == "hello")
        #expect(defaults.object(forKey: "quality") as? Double == 0.8)
        #expect(defaults.object(forKey: "motto") == nil, "a nil initial value reads as absent")
        let all = defaults.dictionaryRepresentation()
        #expect(Set(all.keys) == ["quality", "showTips", "greeting"])
        #expect(try fixture.prefs.snapshot().isEmpty, "nothing is written for them")

        if backend.isShared {
            let other = PrefsDefaults(try fixture.store.reopen())
            #expect(other.double(forKey: "quality") == 0.8, "another process reads the declaration recorded in the store")
            #expect(other.bool(forKey: "showTips"))
        }

        defaults.set(0.5, forKey: "quality")
        #expect(defaults.double(forKey: "quality") == 0.5)
        defaults.removeObject(forKey: "quality")
        #expect(defaults.double(forKey: "quality") == 0.8, "the initial value shows through again")
        defaults.register(defaults: ["quality": 0.9])
        #expect(defaults.double(forKey: "quality") == 0.9, "a registered value comes before the initial value")
    }

    @Test("with a @Pref or a values(for:) stream on a key, the getters read its initial value", arguments: Backend.allCases)
    func observedInitialValues(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let visits = Pref(.visits, store: fixture.prefs)
        #expect(fixture.defaults.integer(forKey: "visits") == 3)
        #expect(fixture.defaults.string(forKey: "visits") == "3")
        visits.wrappedValue = 4
        #expect(fixture.defaults.integer(forKey: "visits") == 4)

        let stream = fixture.prefs.values(for: .greeting)
        #expect(fixture.defaults.string(forKey: "greeting") == "hello")
        _ = stream
    }
}
