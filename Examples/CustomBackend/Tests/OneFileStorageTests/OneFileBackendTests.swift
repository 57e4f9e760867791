import Foundation
import OneFileStorage
import Prefs
import PrefsTesting
import Testing

extension Prefs.Keys {
    static let launchCount = Key<Int>("launchCount", initial: 0)
}

@Suite("One-file backend")
struct OneFileBackendTests {
    @Test("keeps what a store promises: the public conformance suite")
    func conformance() async throws {
        let directory = try TemporaryDirectory()
        await BackendConformance.check(persistsAcrossReopen: true, sharedBetweenStores: true) {
            .oneFile(directory.file("\(UUID()).json"))
        }
    }

    @Test("writes its own format, and leaves no temporary file")
    func format() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.oneFile(url))
        #expect(prefs.storage.description == ".oneFile(\(url.path.debugDescription))")
        try prefs.update(.launchCount) { $0 += 3 }
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(#""launchCount" : {"#) && text.contains(#""json" : "3""#) && text.contains(#""type" : "int""#), "\(text)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["prefs.json", "prefs.json.lock"])
    }

    @Test("a file of a newer format is refused, untouched")
    func newerFormat() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let newer = Data(#"{"formatVersion": 2, "values": {}}"#.utf8)
        try newer.write(to: url)
        #expect(throws: PrefsError.unsupportedFormatVersion(path: url.path, found: 2, supported: 1)) { try Prefs(.oneFile(url)) }
        #expect(try Data(contentsOf: url) == newer)
    }

    @Test("a change another store makes is read on refresh()")
    func refresh() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let first = try Prefs(.oneFile(url))
        let second = try Prefs(.oneFile(url))
        #expect(second[.launchCount] == 0)
        try first.set(5, for: .launchCount)
        #expect(second[.launchCount] == 0, "cached until refresh()")
        try second.refresh()
        #expect(second[.launchCount] == 5)
    }
}
