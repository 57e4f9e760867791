import Foundation
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import PrefsUserDefaults
import TestFixtures
import Testing

import Prefs

extension Prefs.Keys {
    fileprivate static let quality = Key<Double>("quality", initial: 0.8)
    fileprivate static let showTips = Key<Bool>("showTips", initial: true)
    fileprivate static let greeting = Key<String>("greeting", initial: "hello")
    fileprivate static let visits = Key<Int>("visits", initial: 3)
    fileprivate static let motto = Key<String?>("motto")
    fileprivate static let settings = Key<PlayerSettings>("settings", initial: PlayerSettings())
    fileprivate static let settingsList = Key<[PlayerSettings]>("settingsList", initial: [])
    fileprivate static let settingsByName = Key<[String: PlayerSettings]>("settingsByName", initial: [:])
    fileprivate static let mood = Key<Mood>("mood", initial: .calm)
    fileprivate static let homepage = Key<URL>("homepage", initial: URL(string: "https://example.com")!)
}

/// A Codable setting, as apps keep them with Defaults' Codable bridge or `@AppStorage`.
private struct PlayerSettings: Codable, Hashable, PrefsStorable {
    var volume = 0.5
    var name = "default"
    var since = Date(timeIntervalSinceReferenceDate: 0)
}

/// swift-sharing's `RawRepresentable` identifiers: structs, not enums.
private struct IntID: RawRepresentable, Hashable, PrefsStorable { var rawValue: Int }
private struct StringID: RawRepresentable, Codable, Hashable, PrefsStorable { var rawValue: String }

/// A Codable `String` enum: Defaults stores it as JSON text (`"\"loud\""`), Prefs as its raw value.
private enum Mood: String, Codable, PrefsStorable { case calm, loud }

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

    @Test("an explicit nil (storeNil) reads as no value through the getters, hiding registered and initial values", arguments: Backend.allCases)
    func explicitNil(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let nickname = Prefs.Key<String?>("nickname", initial: "Ada")
        try fixture.prefs.declare(nickname)
        #expect(fixture.defaults.string(forKey: "nickname") == "Ada")
        fixture.defaults.register(defaults: ["nickname": "registered"])
        try fixture.prefs.storeNil(for: nickname)
        #expect(fixture.defaults.object(forKey: "nickname") == nil)
        #expect(fixture.defaults.string(forKey: "nickname") == nil)
        #expect(fixture.defaults.dictionaryRepresentation()["nickname"] == nil)
        #expect(fixture.diagnostics.isEmpty)
    }

    // MARK: - Stored forms of Codable values

    /// `JSONEncoder` as Defaults' Codable bridge and `@AppStorage` use it (Defaults sorts keys; dates are seconds).
    static func encoded<Value: Encodable>(_ value: Value, sortedKeys: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        if sortedKeys { encoder.outputFormatting = .sortedKeys }
        return try encoder.encode(value)
    }

    @Test(
        "a Codable stored as JSON data (@AppStorage) or JSON text (Defaults) reads through a Codable key; a write stores the document",
        arguments: Backend.allCases)
    func codableStoredByUserDefaultsCode(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let prefs = fixture.prefs
        let settings = PlayerSettings(volume: 0.25, name: "Ada", since: Date(timeIntervalSinceReferenceDate: 700_000_000))
        let other = PlayerSettings(volume: 1, name: "Bob", since: Date(timeIntervalSinceReferenceDate: 1))

        defaults.set(try Self.encoded(settings, sortedKeys: false), forKey: "settings")  // @AppStorage, swift-sharing
        #expect(prefs[.settings] == settings)
        #expect(prefs.lookup(.settings).isStored)
        #expect(try fixture.stored("settings")?.type == .data, "a read changes nothing")

        defaults.set(String(decoding: try Self.encoded(settings), as: UTF8.self), forKey: "settings")  // Defaults
        #expect(prefs[.settings] == settings)

        // Defaults' collections of Codable values: each element as JSON text.
        defaults.set([try Self.encoded(settings), try Self.encoded(other)].map { String(decoding: $0, as: UTF8.self) }, forKey: "settingsList")
        #expect(prefs[.settingsList] == [settings, other])
        defaults.set(["ada": String(decoding: try Self.encoded(settings), as: UTF8.self)], forKey: "settingsByName")
        #expect(prefs[.settingsByName] == ["ada": settings])

        // Defaults' Codable enum and URL: JSON text of the raw value and of the URL string.
        defaults.set(#""loud""#, forKey: "mood")
        #expect(prefs[.mood] == .loud)
        defaults.set(#""https:\/\/example.org\/a?b=c""#, forKey: "homepage")
        #expect(prefs[.homepage] == URL(string: "https://example.org/a?b=c"))

        try prefs.update(.settings) { $0.volume = 0.75 }
        #expect(try fixture.stored("settings")?.type == .json, "the next write stores the document itself")
        #expect(try fixture.store.reopen()[.settings].volume == 0.75)
        #expect(fixture.diagnostics.isEmpty)
    }

    @Test("JSON text that is not the Codable's shape still reads as the initial value, reported with the document's own reason", arguments: Backend.allCases)
    func codableMismatchStillReported(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        fixture.defaults.set(#"{"volume": "loud"}"#, forKey: "settings")
        #expect(fixture.prefs[.settings] == PlayerSettings())
        guard case .unreadable(_, let mismatch) = fixture.prefs.lookup(.settings) else {
            Issue.record("expected an unreadable value")
            return
        }
        #expect(mismatch.reason.contains("expected"), "\(mismatch.reason)")
    }

    @Test("Defaults' range form [lower, upper] is not read: the initial value, reported, the bytes kept", arguments: Backend.allCases)
    func defaultsRangeNotRead(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let range = Prefs.Key<ClosedRange<Int>>("range", initial: 0...1)
        fixture.defaults.set([1, 5], forKey: "range")
        #expect(fixture.prefs[range] == 0...1)
        guard case .unreadable = fixture.prefs.lookup(range) else {
            Issue.record("expected an unreadable value")
            return
        }
        #expect(fixture.defaults.array(forKey: "range") as? [Int] == [1, 5])
        #expect(fixture.diagnostics.count == 1)
    }

    // MARK: - swift-sharing's AppStorageKey tests, restated

    @Test("a @Pref's initial value shows through UserDefaults' API, and a UserDefaults-API write reaches the @Pref", arguments: Backend.allCases)
    func appStorageRoundTrips(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let prefs = fixture.prefs
        let store = fixture.defaults

        let bool = Pref(Prefs.Key<Bool>("bool", initial: true), store: prefs)
        #expect(store.bool(forKey: "bool"))
        store.set(false, forKey: "bool")
        #expect(!bool.wrappedValue)

        let int = Pref(Prefs.Key<Int>("int", initial: 42), store: prefs)
        #expect(store.integer(forKey: "int") == 42)
        store.set(1729, forKey: "int")
        #expect(int.wrappedValue == 1729)

        let double = Pref(Prefs.Key<Double>("double", initial: 1.2), store: prefs)
        #expect(store.double(forKey: "double") == 1.2)
        store.set(3.4, forKey: "double")
        #expect(double.wrappedValue == 3.4)

        let string = Pref(Prefs.Key<String>("string", initial: "Blob"), store: prefs)
        #expect(store.string(forKey: "string") == "Blob")
        store.set("Blob, Jr.", forKey: "string")
        #expect(string.wrappedValue == "Blob, Jr.")

        let strings = Pref(Prefs.Key<[String]>("stringArray", initial: ["Blob"]), store: prefs)
        #expect(store.stringArray(forKey: "stringArray") == ["Blob"])
        store.set(["Blob", "Blob, Jr."], forKey: "stringArray")
        #expect(strings.wrappedValue == ["Blob", "Blob, Jr."])

        let url = Pref(Prefs.Key<URL?>("url", initial: URL(fileURLWithPath: "/dev")), store: prefs)
        #expect(store.url(forKey: "url") == URL(fileURLWithPath: "/dev"))
        store.set(URL(fileURLWithPath: "/tmp/"), forKey: "url")
        #expect(url.wrappedValue == URL(fileURLWithPath: "/tmp/"))
        try url.projectedValue.prefs.storeNil(for: url.projectedValue.key)
        #expect(url.wrappedValue == nil)

        let data = Pref(Prefs.Key<Data>("data", initial: Data([4, 2])), store: prefs)
        #expect(store.data(forKey: "data") == Data([4, 2]))
        store.set(Data([1, 7, 2, 9]), forKey: "data")
        #expect(data.wrappedValue == Data([1, 7, 2, 9]))

        let date = Pref(Prefs.Key<Date>("date", initial: Date(timeIntervalSinceReferenceDate: 0)), store: prefs)
        #expect(store.object(forKey: "date") as? Date == Date(timeIntervalSinceReferenceDate: 0))
        store.set(Date(timeIntervalSince1970: 0), forKey: "date")
        #expect(date.wrappedValue == Date(timeIntervalSince1970: 0))

        let item = Pref(Prefs.Key<PlayerSettings>("codable", initial: PlayerSettings(volume: 0.42)), store: prefs)
        store.set(try JSONEncoder().encode(PlayerSettings(volume: 0.1729)), forKey: "codable")
        #expect(item.wrappedValue.volume == 0.1729, "swift-sharing's stored form: JSON data")

        let intID = Pref(Prefs.Key<IntID>("raw-representable-int", initial: IntID(rawValue: 42)), store: prefs)
        #expect(store.integer(forKey: "raw-representable-int") == 42)
        store.set(1729, forKey: "raw-representable-int")
        #expect(intID.wrappedValue == IntID(rawValue: 1729))

        let stringID = Pref(Prefs.Key<StringID>("raw-representable-string", initial: StringID(rawValue: "Blob")), store: prefs)
        #expect(store.string(forKey: "raw-representable-string") == "Blob")
        store.set("Blob, Jr.", forKey: "raw-representable-string")
        #expect(stringID.wrappedValue == StringID(rawValue: "Blob, Jr."))

        let optional = Pref(Prefs.Key<Bool?>("optional"), store: prefs)
        #expect(store.object(forKey: "optional") == nil)
        store.set(false, forKey: "optional")
        #expect(optional.wrappedValue == false)
        optional.wrappedValue = nil
        #expect(store.object(forKey: "optional") == nil)

        let optionalDefault = Pref(Prefs.Key<Bool?>("optionalDefault", initial: true), store: prefs)
        #expect(store.bool(forKey: "optionalDefault"))
        store.set(false, forKey: "optionalDefault")
        #expect(optionalDefault.wrappedValue == false)
        store.removeObject(forKey: "optionalDefault")
        #expect(optionalDefault.wrappedValue == true)
        try prefs.storeNil(for: optionalDefault.projectedValue.key)
        #expect(optionalDefault.wrappedValue == nil, "swift-sharing's nil: storeNil")
        #expect(store.object(forKey: "optionalDefault") == nil)
        #expect(fixture.diagnostics.isEmpty)
    }
}
