import DialogGate
import MessageFeedFetching
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// Stores that releases wrote with their own code, committed in `Tests/Releases/VERSION/` by that folder's
/// `make-fixtures.sh` (which builds the release from its commit), and the files of a "future" release
/// (`Tests/Releases/future/`). Each release adds its own folder; every one must read exactly, and change by nothing
/// but its own writes. A future format must be refused, untouched.
@Suite("Stores written by earlier releases, and files of a future one")
struct ReleaseFixtureTests {
    static let releases = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Releases")
    /// The clock release 0.1's fixture writer ran with: 2026-11-30T00:00:00Z.
    static let written = Date(timeIntervalSince1970: 1_795_996_800)

    enum Backend: String, CaseIterable {
        case json, sqlite

        var file: String { self == .json ? "json/store.json" : "sqlite/store.sqlite" }

        func storage(_ url: URL) -> Prefs.Storage { self == .json ? .jsonFile(url) : .sqlite(url) }
    }

    /// The keys of release 0.1's fixture writer (`Tests/Releases/0.1/ReleaseFixtureWriter.swift`), as an app on this
    /// release declares them.
    enum Keys {
        static let flag = Prefs.Key<Bool>("flag", initial: false)
        static let launchCount = Prefs.Key<Int>("launchCount", initial: 0)
        static let largest = Prefs.Key<Int>("largest", initial: 0)
        static let smallest = Prefs.Key<Int>("smallest", initial: 0)
        static let ratio = Prefs.Key<Double>("ratio", initial: 0)
        static let tiny = Prefs.Key<Double>("tiny", initial: 0)
        static let infinite = Prefs.Key<Double>("infinite", initial: 0)
        static let name = Prefs.Key<String>("name", initial: "")
        static let lastLaunch = Prefs.Key<Date>("lastLaunch", initial: Date(timeIntervalSince1970: 0))
        static let blob = Prefs.Key<Data>("blob", initial: Data())
        static let homepage = Prefs.Key<URL>("homepage", initial: URL(string: "https://example.com")!)
        static let tags = Prefs.Key<[String]>("tags", initial: [])
        static let scores = Prefs.Key<[String: Int]>("scores", initial: [:])
        static let visits = Prefs.Key<[String: [Date]]>("visits", initial: [:])
        static let nickname = Prefs.Key<String?>("nickname")
        static let theme = Prefs.Key<Theme>("theme", initial: .light)
        static let frame = Prefs.Key<WindowFrame>("frame", initial: WindowFrame(width: 800, height: 600, title: "Main"))
        /// Renamed in this version of the app: 0.1 wrote it as `launchCounter`.
        static let launches = Prefs.Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])
        static let visitCount = Prefs.Key<Int>("visitCount", initial: 0, formerNames: ["visitCounter"])
    }

    enum FixtureKey: String, PrefsKeyEnum {
        case dialogNoMore = "dialog_neverAgain"
        case greeting
        case volume

        var initialValue: any PrefsStorable {
            switch self {
            case .dialogNoMore: false
            case .greeting: String?.none
            case .volume: 0.5
            }
        }
    }

    /// Copies a fixture's files into `directory`; returns their bytes by name.
    static func copy(_ files: [String], from folder: String, into directory: TemporaryDirectory) throws -> [String: Data] {
        var bytes: [String: Data] = [:]
        for file in files {
            let data = try Data(contentsOf: releases.appendingPathComponent(folder).appendingPathComponent(file))
            let name = (file as NSString).lastPathComponent
            try data.write(to: directory.file(name))
            bytes[name] = data
        }
        return bytes
    }

    /// The files in `directory` other than a lock file (which a writer creates to lock, and SQLite's sidecars), with
    /// their bytes.
    static func files(in directory: TemporaryDirectory) throws -> [String: Data] {
        var bytes: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where !name.hasSuffix(".lock") {
            bytes[name] = try Data(contentsOf: directory.file(name))
        }
        return bytes
    }

    /// `expected.json`'s values and declarations for a backend: what 0.1 read back from the store it wrote.
    static func expected(_ backend: Backend) throws -> (values: [String: StoredValue], declared: [String: KeyDeclaration]) {
        let root = try JSON.parse(Data(contentsOf: releases.appendingPathComponent("0.1/expected.json")))
        guard case .object(let values)? = root[backend.rawValue]?["values"], case .object(let declared)? = root[backend.rawValue]?["declared"] else {
            throw PrefsError.corruptStore(path: "expected.json", reason: "no \(backend.rawValue) member")
        }
        var storedValues: [String: StoredValue] = [:]
        for (key, entry) in values {
            guard case .string(let type)? = entry["type"], let valueType = ValueType(type), let json = entry["value"] else { continue }
            storedValues[key] = StoredValue(type: valueType, json: json)
        }
        var declarations: [String: KeyDeclaration] = [:]
        for (key, entry) in declared {
            guard case .string(let type)? = entry["type"], let valueType = ValueType(type) else { continue }
            declarations[key] = KeyDeclaration(type: valueType, initial: entry["initial"])
        }
        return (storedValues, declarations)
    }

    @Test(
        "release 0.1's store: every value, declaration, dialog decision and the cached feed read exactly; reading changes no byte",
        arguments: Backend.allCases)
    @MainActor
    func releaseZeroOne(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let original = try Self.copy([backend.file], from: "0.1", into: directory)
        let url = directory.file((backend.file as NSString).lastPathComponent)
        let (values, declared) = try Self.expected(backend)
        #expect(values.count == 28 && declared.count == 26, "the fixture holds what make-fixtures.sh wrote")

        let prefs = try Prefs(backend.storage(url))
        #expect(try prefs.snapshot() == values, "every stored value, type and JSON, as 0.1 read it")
        #expect(try prefs.declaredKeys() == declared, "every declaration")
        #expect(prefs.diagnostics.isEmpty, "\(prefs.diagnostics)")
        #expect(try prefs.integrityProblems() == [])

        #expect(prefs[Keys.flag] && prefs[Keys.launchCount] == 42 && prefs[Keys.largest] == Int.max && prefs[Keys.smallest] == Int.min)
        #expect(prefs[Keys.ratio] == 0.1 && prefs[Keys.tiny] == Double.leastNonzeroMagnitude && prefs[Keys.infinite] == -Double.infinity)
        #expect(prefs[Keys.name] == "Ada \u{2713} \u{65E5}\u{672C} \u{1F600} \"quoted\"\n\ttab")
        #expect(prefs[Keys.lastLaunch] == Date(timeIntervalSince1970: 1_700_000_000.123_456_789), "a date, bit for bit")
        #expect(prefs[Keys.blob] == Data([0, 1, 2, 254, 255]))
        #expect(prefs[Keys.homepage] == URL(string: "https://user@example.com:8443/a%20b/c?q=1&r=%C3%A9#frag")!)
        #expect(prefs[Keys.tags] == ["b", "a", ""] && prefs[Keys.scores] == ["x": 1, "y": -2])
        #expect(prefs[Keys.visits] == ["home": [Self.written, Date(timeIntervalSince1970: 0.5)]])
        #expect(prefs[Keys.nickname] == "nick" && prefs[Keys.theme] == .dark)
        #expect(prefs[Keys.frame] == WindowFrame(width: 1024, height: 768, title: "Éditeur"))
        #expect(prefs[Keys.launches] == 7, "a value under the key's former name")
        #expect(prefs[Keys.visitCount] == 3, "a value 0.1 moved to the new name")
        let neverAgain: Bool = prefs[FixtureKey.dialogNoMore]
        let greeting: String? = prefs[FixtureKey.greeting]
        let volume: Double = prefs[FixtureKey.volume]
        #expect(neverAgain && greeting == "hello" && volume == 0.8, "enum keys")

        let gate = DialogGate(prefs: prefs, session: DialogSession(), appVersion: "1.0", clock: { Self.written + 3600 })
        #expect(gate.decision(for: Dialog("welcome")).reasons == [.neverRemind(since: Self.written)])
        let seed = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        #expect(!gate.shouldPresent(seed), "\(gate.decision(for: seed))")
        let rate = gate.decision(for: Dialog("rate", policy: DialogPolicy(maximumPresentations: 3)))
        #expect(!rate.shouldPresent && rate.reasons.contains(.snoozed(until: Date(timeIntervalSince1970: 4_102_444_800))), "\(rate)")
        #expect(gate.shouldPresent(Dialog("another")), "a dialog never answered")
        let states = try gate.states().map(\.id)
        #expect(Set(states).isSuperset(of: ["welcome", "dialog", "rate"]), "\(states)")

        let feed = URL(string: "https://fixtures.example/messages.json")!
        let cache = try #require(prefs[FeedCache.key(for: feed)], "the cached feed")
        #expect(cache.etag == "\"fixture-1\"" && cache.fetchedAt == Self.written && cache.maxAge == 600 && cache.body?.contains("For version 9.") == true)
        try prefs.close()
        #expect(try Self.files(in: directory) == original, "reading wrote nothing")

        // The app's next launch on this release: it decides from the cached feed (fresh for 600 s), and knows the
        // acknowledged message.
        let loader = CannedLoader { _ in FeedResponse(statusCode: 500) }
        for (version, pending) in [("1.0", nil), ("9.1", 3)] as [(String, Int?)] {
            let app = try Prefs(backend.storage(url))
            let center = MessageCenter(
                feedURL: feed, prefs: app,
                context: MessageContext(bundleIdentifier: "com.example.fixtures", appVersion: version, osVersion: "17.0", localeIdentifier: "en_US"),
                loader: loader, clock: { Self.written + 300 })
            await center.refresh()
            #expect(center.lastMessageId == 2, "message 2 was acknowledged under 0.1")
            #expect(center.pendingMessage?.id == pending, "version \(version): \(String(describing: center.lastError))")
            #expect(center.installationId() == (try app.storedValue(forKey: "dialoggate.installationId")?.json.stringValue))
        }
        #expect(loader.recorded.isEmpty, "the cache was fresh: nothing fetched")
    }

    /// Finding 2 of issue 27: 0.1 rewrote a format-1 file this release had written, and the declarations it could not
    /// say (a key's former names, a `uint` type) were lost, so this release's prefs-tool read a renamed key as its
    /// initial value. Format 1 now keeps them in `"declaredInFull"`, which 0.1 keeps as it found it.
    @Test("a format-1 file this release wrote, then 0.1 rewrote: former names and uint declarations survive, values read exactly")
    func formatOneRewrittenByZeroOne() async throws {
        let directory = try TemporaryDirectory()
        let original = try Self.copy(["json/format1-written.json", "json/format1-rewritten.json"], from: "0.1", into: directory)
        let written = try Prefs(.jsonFile(directory.file("format1-written.json")))
        let rewritten = try Prefs(.jsonFile(directory.file("format1-rewritten.json")))
        var before = try written.snapshot()
        before["rewrittenBy01"] = StoredValue(type: .int, json: .int(1))
        #expect(try rewritten.snapshot() == before, "0.1's rewrite changed nothing but its own key")
        let declared = try rewritten.declaredKeys()
        #expect(declared["launches"]?.formerNames == ["launchCounter"] && declared["big"]?.type == .uint, "\(declared)")
        #expect(try written.declaredKeys().merging(["rewrittenBy01": KeyDeclaration(type: .int, initial: .int(0))]) { $1 } == declared)
        #expect(rewritten[Prefs.Key<UInt64>("big", initial: 0)] == UInt64(Int.max))
        #expect(rewritten[Prefs.Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])] == 7)
        let path = directory.file("format1-rewritten.json").path
        let get = try await ChildProcess.run("prefs-tool", ["--store", path, "get", "launches"])
        #expect(get.stdout == "7\n", "prefs-tool reads the renamed key through its declared former name: \(get)")
        #expect(try Self.files(in: directory) == original, "reading wrote nothing")
    }

    @Test("a future release's files are refused with unsupportedFormatVersion, and left as they are")
    func futureRelease() async throws {
        let directory = try TemporaryDirectory()
        let original = try Self.copy(
            ["store.json", "journaled.json", "journaled.json.journal", "store.sqlite", "export.json"], from: "future", into: directory)
        let cases: [(Prefs.Storage, path: String, found: Int, supported: Int)] = [
            (.jsonFile(directory.file("store.json")), directory.file("store.json").path, 3, 2),
            (.jsonFile(directory.file("journaled.json")), directory.file("journaled.json.journal").path, 2, 1),
            (.sqlite(directory.file("store.sqlite")), directory.file("store.sqlite").path, 2, 1),
            (.jsonFile(directory.file("store.json"), recovery: .moveAsideAndStartEmpty), directory.file("store.json").path, 3, 2),
            (.sqlite(directory.file("store.sqlite"), recovery: .moveAsideAndStartEmpty), directory.file("store.sqlite").path, 2, 1),
        ]
        for (storage, path, found, supported) in cases {
            #expect(throws: PrefsError.unsupportedFormatVersion(path: path, found: found, supported: supported), "\(storage)") {
                _ = try Prefs(storage)
            }
        }
        let archive = directory.file("export.json")
        #expect(throws: PrefsError.unsupportedFormatVersion(path: archive.path, found: 3, supported: 2)) {
            _ = try StoreArchive.contents(of: Data(contentsOf: archive), source: archive.path)
        }
        let store = directory.file("target.json").path
        let imported = try await ChildProcess.run("prefs-tool", ["--store", store, "import", archive.path])
        #expect(imported.status == 65 && imported.stderr.contains("format version 3 is newer"), "\(imported)")
        for name in ["store.json", "journaled.json", "store.sqlite"] {
            let check = try await ChildProcess.run("prefs-tool", ["--store", directory.file(name).path, "check"])
            #expect(check.status == 65 && check.stderr.contains("is newer than this release"), "\(name): \(check)")
            let set = try await ChildProcess.run("prefs-tool", ["--store", directory.file(name).path, "set", "launchCount", "9"])
            #expect(set.status == 65, "\(name): \(set)")
        }
        #expect(try Self.files(in: directory) == original, "nothing was written, moved or created")
    }
}

extension JSON {
    fileprivate var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
