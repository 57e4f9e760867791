import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults

/// A key renamed by the app (`formerNames`), as QA sees it through prefs-tool.
@Suite("prefs-tool and renamed keys")
struct RenameToolTests {
    static let launches = Prefs.Key<Int>("launches", initial: 0, formerNames: ["launchCounter"])

    /// A store written by version 1 (`launchCounter` = 41), then opened by version 2, which declares the rename.
    func versionTwoStore(_ file: StoreFile, in directory: TemporaryDirectory) throws -> String {
        let path = file.path(in: directory)
        let url = URL(fileURLWithPath: path)
        try Prefs(.file(url)).set(41, for: Prefs.Key<Int>("launchCounter", initial: 0))
        try Prefs(.file(url)).declare(Self.launches)
        return path
    }

    @Test("get shows the value the app reads under the new name", arguments: StoreFile.allCases)
    func getSeesFormerName(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let path = try versionTwoStore(file, in: directory)
        let result = try await tool("--store", path, "get", "launches")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "41\n")
    }

    @Test("reset of a renamed key removes the former name's value too: it never comes back", arguments: StoreFile.allCases)
    func resetSettlesFormerName(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let path = try versionTwoStore(file, in: directory)
        let result = try await tool("--store", path, "reset", "launches")
        #expect(result.status == 0, "\(result.stderr)")
        let prefs = try Prefs(.file(URL(fileURLWithPath: path)))
        #expect(prefs[Self.launches] == 0)
        #expect(try prefs.snapshot().isEmpty)
    }

    @Test("PrefsDefaults reads and removes a renamed key as the app does", arguments: StoreFile.allCases)
    func userDefaultsSeesFormerName(file: StoreFile) throws {
        let directory = try TemporaryDirectory()
        let path = try versionTwoStore(file, in: directory)
        let defaults = PrefsDefaults(try Prefs(.file(URL(fileURLWithPath: path))))
        #expect(defaults.integer(forKey: "launches") == 41)
        defaults.removeObject(forKey: "launches")
        #expect(defaults.object(forKey: "launches") as? Int == 0, "removed: the declared key's initial value, as the app reads it")
        #expect(try Prefs(.file(URL(fileURLWithPath: path))).snapshot().isEmpty)
    }

    @Test("a key's former names are recorded with its declaration and read back", arguments: StoreFile.allCases)
    func declarationsCarryFormerNames(file: StoreFile) throws {
        let directory = try TemporaryDirectory()
        let path = try versionTwoStore(file, in: directory)
        let declared = try Prefs(.file(URL(fileURLWithPath: path))).declaredKeys()
        #expect(declared["launches"]?.formerNames == ["launchCounter"])
        // Declared again without the rename (a later version dropped it): the record follows.
        try Prefs(.file(URL(fileURLWithPath: path))).declare(Prefs.Key<Int>("launches", initial: 0))
        #expect(try Prefs(.file(URL(fileURLWithPath: path))).declaredKeys()["launches"]?.formerNames == [])
    }
}
