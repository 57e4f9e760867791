import Foundation
import TestFixtures
import Prefs
import Testing
import PrefsUserDefaults

/// Damaged binary property lists are refused before swift-corelibs-foundation's reader sees them.
@Suite("Property-list import: hostile binary files")
struct PropertyListSafetyTests {
    // Sets, and sets inside archived data, are covered by FuzzRegressionTests, which found them.

    @Test("a trailer pointing outside the file is refused", arguments: [UInt64(1_000_000), UInt64.max])
    func damagedTrailer(tableOffset: UInt64) {
        var bytes = [UInt8](FuzzRegressionTests.binaryPropertyList([[0x10, 1]]))
        bytes.replaceSubrange((bytes.count - 8)..., with: withUnsafeBytes(of: tableOffset.bigEndian, Array.init))
        #expect(throws: PropertyListImport.Error.self) { _ = try PropertyListImport.read(Data(bytes), path: "damaged.plist") }
    }

    @Test("ordinary binary property lists still import")
    func ordinary() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["n": 1, "s": "x", "a": [1, 2]], format: .binary, options: 0)
        let contents = try PropertyListImport.read(data, path: "ok.plist")
        #expect(contents.values["n"] == StoredValue(type: .int, json: .int(1)))
        #expect(contents.values.count == 3)
    }
}

@Suite("Property-list import: fuzz findings")
struct PropertyListFuzzFindingTests {
    @Test("a 'bplist01' header holding a set is refused like 'bplist00' (found by the CI fuzz run)")
    func bplist01() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/PropertyList/crash-bplist01-set.plist")
        let data = try Data(contentsOf: url)
        #expect(throws: PropertyListImport.Error.self) { _ = try PropertyListImport.read(data, path: "bplist01.plist") }
    }
}
