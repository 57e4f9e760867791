import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// A key whose Codable type changed shape between releases reads the old shape through its migration; a read never
/// writes, so the old bytes stay on disk until the key's next write stores the new shape.
@Suite("Codable migrations: old shapes on disk", .timeLimit(.minutes(2)))
struct CodableMigrationTests {
    /// What version 1 of the app stored: `name`, no font size.
    struct SettingsV1: Codable, PrefsStorable, Equatable {
        var name: String
        var since: Date
    }

    /// The shape now: `name` renamed `fullName`, and a required `fontSize`.
    struct Settings: Codable, PrefsStorable, Equatable {
        var fullName: String
        var fontSize: Int
        var since: Date
    }

    static let epoch = Date(timeIntervalSince1970: 0)
    static let since = Date(timeIntervalSince1970: 1_700_000_000)
    static let initial = Settings(fullName: "", fontSize: 12, since: epoch)
    static let version1 = Prefs.Key<SettingsV1>("settings", initial: SettingsV1(name: "", since: epoch))
    static let unmigrated = Prefs.Key<Settings>("settings", initial: initial)
    static let settings = Prefs.Key<Settings>(
        "settings", initial: initial,
        migrating: { stored in
            let old = try stored.decode(SettingsV1.self)  // the store's own decoding: `since` is an ISO-8601 string
            return Settings(fullName: old.name, fontSize: 12, since: old.since)
        })
    static let migrated = Settings(fullName: "Ada", fontSize: 12, since: since)

    /// The bytes of the store's files that hold values: the store file and a JSON store's journal, or an SQLite store's
    /// WAL (frames a write would append there first, never to the database file).
    static func valueBytes(_ path: String, _ backend: Backend) -> [String: Data] {
        let files = backend == .json ? [path, path + ".journal"] : [path, path + "-wal"]
        var bytes: [String: Data] = [:]
        for file in files { bytes[(file as NSString).lastPathComponent] = FileManager.default.contents(atPath: file) ?? Data() }
        return bytes
    }

    @Test(
        "the old shape on disk reads migrated from a fresh store, reads leave its bytes as they are, the next write stores the new shape",
        arguments: [Backend.json, .sqlite])
    func oldShapeOnDisk(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let storage = backend.storage(directory)
        let path = try #require(storage.path)
        do {
            let version1 = try Prefs(storage)
            try version1.set(SettingsV1(name: "Ada", since: Self.since), for: Self.version1)
            try version1.close()  // the JSON store folds its journal, the SQLite store its WAL: one file holds the value
        }
        let oldText = try #require(try Prefs(storage).storedValue(forKey: "settings")).jsonText
        #expect(oldText.contains("\"name\":\"Ada\""), "\(oldText)")
        let before = Self.valueBytes(path, backend)

        // Without a migration, the old shape reads as the initial value (what this feature fixes).
        let withoutMigration = try Prefs(storage)
        guard case .unreadable = withoutMigration.lookup(Self.unmigrated) else {
            Issue.record("the old shape decoded as the new one: the test proves nothing")
            return
        }

        let log = DiagnosticLog()
        let prefs = try Prefs(storage) { log.append($0) }
        #expect(prefs[Self.settings] == Self.migrated)
        #expect(prefs[Self.settings] == Self.migrated, "the migrated value is cached")
        let lookup = prefs.lookup(Self.settings)
        #expect(lookup.isStored && lookup.value == Self.migrated)
        #expect(prefs.isStored(Self.settings))
        #expect(try prefs.transaction { $0[Self.settings] } == Self.migrated)
        var values = prefs.values(for: Self.settings).makeAsyncIterator()
        #expect(await values.next() == Self.migrated, "observers read through the migration too")
        #expect(log.all.isEmpty, "a migrated value is no mismatch: \(log.all)")
        try prefs.close()
        #expect(Self.valueBytes(path, backend) == before, "a read never writes the migrated value")
        #expect(try Prefs(storage).storedValue(forKey: "settings")?.jsonText == oldText)

        // The next write of the key stores the new shape, which a key without the migration reads.
        let writer = try Prefs(storage)
        try writer.update(Self.settings) { $0.fontSize = 14 }
        try writer.close()
        let fresh = try Prefs(storage)
        let written = fresh.lookup(Self.unmigrated)
        #expect(written.isStored && written.value == Settings(fullName: "Ada", fontSize: 14, since: Self.since))
        let newText = try #require(try fresh.storedValue(forKey: "settings")).jsonText
        #expect(newText.contains("\"fullName\":\"Ada\"") && !newText.contains("\"name\""), "\(newText)")
    }

    @Test("a value neither shape reads still reads the initial value, with the migration's reason, and its bytes are kept", arguments: [Backend.json, .sqlite])
    func undecodableKept(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let storage = backend.storage(directory)
        let path = try #require(storage.path)
        do {
            let other = try Prefs(storage)
            try other.setStoredValue(StoredValue(type: .json, jsonText: #"{"title":"neither shape"}"#), forKey: "settings")
            try other.close()
        }
        let before = Self.valueBytes(path, backend)
        let log = DiagnosticLog()
        let prefs = try Prefs(storage) { log.append($0) }
        #expect(prefs[Self.settings] == Self.initial)
        guard case .unreadable(let initial, let mismatch) = prefs.lookup(Self.settings) else {
            Issue.record("expected unreadable, got \(prefs.lookup(Self.settings))")
            return
        }
        #expect(initial == Self.initial)
        #expect(mismatch.reason.contains("missing key \"fullName\""), "\(mismatch.reason)")
        #expect(mismatch.reason.contains("; the migration, reading SettingsV1: $: missing key \"name\""), "\(mismatch.reason)")
        let reported = log.all.compactMap { if case .typeMismatch(let found) = $0.kind { found } else { nil } }
        #expect(reported == [mismatch], "reported once")
        try prefs.close()
        #expect(Self.valueBytes(path, backend) == before, "bytes nothing could decode are never overwritten by a read")
        #expect(try Prefs(storage).storedValue(forKey: "settings")?.jsonText == #"{"title":"neither shape"}"#)
    }

    @Test("a migration that returns nil reads the initial value with the decoding's own mismatch")
    func migrationReturnsNil() throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("p.sqlite")))
        let key = Prefs.Key<Settings>("settings", initial: Self.initial, migrating: { _ in nil })
        try prefs.set(SettingsV1(name: "Ada", since: Self.since), for: Self.version1)
        guard case .unreadable(_, let mismatch) = try Prefs(.sqlite(directory.file("p.sqlite"))).lookup(key) else {
            Issue.record("expected unreadable")
            return
        }
        #expect(mismatch.reason == "$: missing key \"fontSize\"" || mismatch.reason == "$: missing key \"fullName\"", "\(mismatch.reason)")
    }

    /// Keys declared as enum cases migrate per case, as static keys do.
    enum AppKey: String, PrefsKeyEnum {
        case settings, volume
        var initialValue: any PrefsStorable {
            switch self {
            case .settings: CodableMigrationTests.initial
            case .volume: 0.5
            }
        }
        func migratedValue(from stored: StoredValue) throws -> (any PrefsStorable)? {
            switch self {
            case .settings:
                let old = try stored.decode(SettingsV1.self)
                return Settings(fullName: old.name, fontSize: 12, since: old.since)
            case .volume:
                // Version 1 stored the volume as a percentage string: "80%".
                let text = try stored.decode(String.self)
                guard text.hasSuffix("%"), let percent = Double(text.dropLast()) else { return nil }
                return percent / 100
            }
        }
    }

    @Test("an enum key case reads its old shape through its migration")
    func enumKeys() throws {
        let directory = try TemporaryDirectory()
        let storage = Prefs.Storage.jsonFile(directory.file("p.json"))
        do {
            let version1 = try Prefs(storage)
            try version1.set(SettingsV1(name: "Ada", since: Self.since), for: Self.version1)
            try version1.setStoredValue(StoredValue(type: .string, jsonText: #""80%""#), forKey: "volume")
        }
        let prefs = try Prefs(storage)
        let settings: Settings = prefs[AppKey.settings]
        #expect(settings == Self.migrated)
        let volume: Double = prefs[AppKey.volume]
        #expect(volume == 0.8)
        #expect(prefs.lookup(AppKey.volume, as: Double.self).isStored)
        #expect(try prefs.storedValue(forKey: "volume")?.jsonText == #""80%""#, "not written back by a read")
        prefs[AppKey.volume] = 0.9
        #expect(try Prefs(storage).storedValue(forKey: "volume") == StoredValue(0.9))
    }
}
