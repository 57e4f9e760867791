import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults

/// Importing UserDefaults property lists into a store.
@Suite("Property-list import")
struct UserDefaultsImportTests {
    @Test("a domain written by Foundation's own UserDefaults imports whole, in one notification", arguments: Backend.allCases)
    func foundationSuite(backend: Backend) throws {
        let suite = "prefs-import-test-\(UUID().uuidString)"
        let file = PropertyListImport.userDefaultsFile(named: suite)
        defer { removeFile(file) }
        let foundation = try #require(UserDefaults(suiteName: suite))
        let launch = Date(timeIntervalSince1970: 1_700_000_000)  // whole seconds: XML plists keep no fraction
        foundation.set(true, forKey: "dialog_neverAgain")
        foundation.set(7, forKey: "lastMessageId")
        foundation.set(0.5, forKey: "volume")
        foundation.set("Ada", forKey: "name")
        foundation.set(launch, forKey: "lastLaunch")
        foundation.set(Data([1, 2, 3]), forKey: "token")
        foundation.set(["a", "b"], forKey: "recent")
        foundation.set(["w": 800, "title": "Main"] as [String: Any], forKey: "window")
        #expect(foundation.synchronize())
        #expect(FileManager.default.fileExists(atPath: file.path), "swift-corelibs-foundation writes $XDG_CONFIG_HOME or ~/.config/SUITE.plist")

        let fixture = try DefaultsFixture(backend)
        let defaults = fixture.defaults
        let log = NotificationLog(defaults)
        let report = try defaults.importPropertyList(at: file)
        let keys = ["dialog_neverAgain", "lastLaunch", "lastMessageId", "name", "recent", "token", "volume", "window"]
        #expect(report.imported == keys)
        #expect(report.unsupported.isEmpty)
        #expect(report.notes.isEmpty)
        #expect(report.description == "imported 8 values from \(file.path)")
        #expect(log.posted == [keys], "one notification for the whole import")

        let types = try fixture.prefs.snapshot().mapValues(\.type)
        #expect(
            types == [
                "dialog_neverAgain": .bool, "lastLaunch": .date, "lastMessageId": .int, "name": .string,
                "recent": .array(.string), "token": .data, "volume": .double, "window": .json,
            ])
        let reader = PrefsDefaults(try fixture.store.reopen())
        #expect(reader.bool(forKey: "dialog_neverAgain"))
        #expect(reader.integer(forKey: "lastMessageId") == 7)
        #expect(reader.double(forKey: "volume") == 0.5)
        #expect(reader.string(forKey: "name") == "Ada")
        #expect(reader.object(forKey: "lastLaunch") as? Date == launch)
        #expect(reader.data(forKey: "token") == Data([1, 2, 3]))
        #expect(reader.stringArray(forKey: "recent") == ["a", "b"])
        #expect(reader.dictionary(forKey: "window")?["w"] as? Int == 800)
        #expect(reader.dictionary(forKey: "window")?["title"] as? String == "Main")
        #expect(fixture.prefs[.launchCount] == 0, "typed keys are untouched")
    }

    @Test("a binary plist imports what Prefs can hold and reports every other key with its reason", arguments: Backend.allCases)
    func binaryPlist(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let url = try #require(URL(string: "https://example.com/feed?x=1#y"))
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        let domain: [String: Any] = [
            "flag": true,
            "count": 3,
            "big": UInt64.max,
            "": "empty key",
            "tab\tkey": 1,
            "huge": Data(count: 800_000),
            "homepage": try NSKeyedArchiver.archivedData(withRootObject: url as NSURL, requiringSecureCoding: true),
            "colors": try NSKeyedArchiver.archivedData(withRootObject: NSArray(array: ["red"]), requiringSecureCoding: true),
            "history": [date, "text", 1] as [Any],
        ]
        let file = fixture.store.directory.file("com.example.app.plist")
        try PropertyListSerialization.data(fromPropertyList: domain, format: .binary, options: 0).write(to: file)

        let report = try fixture.defaults.importPropertyList(at: file)
        #expect(report.imported == ["", "colors", "count", "flag", "history", "homepage", "tab\tkey"], "any name UserDefaults took")
        #expect(
            report.unsupported.map(\.description) == [
                #""big": integer 18446744073709551615 is outside Int's range and no double holds it exactly"#,
                #""huge": value for key "huge" is 1066668 bytes; the limit is 1048576"#,
            ])
        #expect(
            report.notes.map(\.description) == [
                #""colors": data archived by NSKeyedArchiver (NSArray), imported as data"#,
                #""homepage": a URL archived by NSKeyedArchiver, imported as url"#,
            ])
        let defaults = fixture.defaults
        #expect(defaults.bool(forKey: "flag"))
        #expect(defaults.integer(forKey: "count") == 3)
        #expect(defaults.url(forKey: "homepage") == url)
        #expect(try fixture.stored("homepage") == StoredValue(type: .url, json: .string(url.absoluteString)))
        #expect(try fixture.stored("colors")?.type == .data)
        let history = try #require(defaults.array(forKey: "history"))
        #expect(history[0] as? Date == date)
        #expect(history[1] as? String == "text")
        #expect(history[2] as? Int == 1)
    }

    @Test("a file that is not a property list throws an error naming it, and the store is unchanged", arguments: Backend.allCases)
    func notAPropertyList(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        fixture.defaults.set("kept", forKey: "name")
        let before = try fixture.prefs.snapshot()
        let log = NotificationLog(fixture.defaults)
        let samples: [(String, Data)] = [
            ("json.plist", Data(#"{"name": "imported"}"#.utf8)),
            ("binary.plist", Data([0x00, 0xFF, 0x13, 0x37, 0x62, 0x70])),
            ("empty.plist", Data()),
            ("truncated.plist", Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>name</key>".utf8)),
            ("openstep.plist", Data("{ name = imported; }".utf8)),
        ]
        for (name, data) in samples {
            let file = fixture.store.directory.file(name)
            try data.write(to: file)
            #expect {
                try fixture.defaults.importPropertyList(at: file)
            } throws: { error in
                guard let error = error as? PropertyListImport.Error, case .notAPropertyList(let path, _) = error else { return false }
                return path == file.path && error.description.hasPrefix("\(file.path): not a property list: ")
            }
        }
        #expect(try fixture.prefs.snapshot() == before)
        #expect(log.posted.isEmpty)
        let empty = fixture.store.directory.file("empty.plist")
        #expect(throws: PropertyListImport.Error.notAPropertyList(path: empty.path, reason: "the file is empty")) {
            try PropertyListImport.read(empty)
        }
    }

    @Test("a property list that is not a dictionary, and a missing file, throw their own errors")
    func otherFailures() throws {
        let directory = try TemporaryDirectory()
        let array = directory.file("array.plist")
        try PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .xml, options: 0).write(to: array)
        #expect(throws: PropertyListImport.Error.notADictionary(path: array.path, found: "an array")) { try PropertyListImport.read(array) }
        #expect(
            PropertyListImport.Error.notADictionary(path: array.path, found: "an array").description
                == "\(array.path): the property list holds an array, not a dictionary of defaults"
        )
        let missing = directory.file("missing.plist")
        #expect(throws: PropertyListImport.Error.unreadable(path: missing.path, reason: "no such file")) { try PropertyListImport.read(missing) }
    }

    @Test("replacingExisting: false keeps the values the store already holds", arguments: Backend.allCases)
    func keepingExisting(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let file = fixture.store.directory.file("old.plist")
        try PropertyListSerialization.data(fromPropertyList: ["name": "old", "count": 1], format: .xml, options: 0).write(to: file)
        fixture.defaults.set("new", forKey: "name")

        let kept = try fixture.defaults.importPropertyList(at: file, replacingExisting: false)
        #expect(kept.imported == ["count"])
        #expect(kept.keptExisting == ["name"])
        #expect(fixture.defaults.string(forKey: "name") == "new")
        #expect(kept.description == "imported 1 value from \(file.path)\nkept 1 existing: \"name\"")

        let replaced = try fixture.defaults.importPropertyList(at: file)
        #expect(replaced.imported == ["count", "name"])
        #expect(fixture.defaults.string(forKey: "name") == "old")
    }

    @Test("the default domain file follows XDG_CONFIG_HOME, then HOME")
    func domainLocation() {
        #if !canImport(Darwin)
        #expect(PropertyListImport.userDefaultsFile(named: "app", environment: ["XDG_CONFIG_HOME": "/cfg", "HOME": "/home/u"]).path == "/cfg/app.plist")
        #expect(
            PropertyListImport.userDefaultsFile(named: "app", environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"]).path
                == "/home/u/.config/app.plist")
        #expect(PropertyListImport.userDefaultsFile(named: "app", environment: ["HOME": "/home/u"]).path == "/home/u/.config/app.plist")
        #endif
    }

    private func removeFile(_ url: URL) {
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            Issue.record("could not remove the test's defaults file \(url.path): \(error)")
        }
    }
}
