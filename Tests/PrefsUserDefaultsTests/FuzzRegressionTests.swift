import Foundation
import TestFixtures
import Prefs
import Testing
import PrefsUserDefaults

/// Inputs the fuzzers (Fuzz/) found crashing the library, each reduced to its smallest form.
/// Each also lives in `Fuzz/Corpus/<target>/` so the fuzzers start from it.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// A binary property list (`bplist00`) of `objects` (one-byte references and offsets), rooted at object 0.
    static func binaryPropertyList(_ objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]  // unused, offset size 1, reference size 1
        bytes += withUnsafeBytes(of: UInt64(objects.count).bigEndian, Array.init)  // object count
        bytes += [UInt8](repeating: 0, count: 8)  // top object: 0
        bytes += withUnsafeBytes(of: UInt64(table).bigEndian, Array.init)  // offset table
        return Data(bytes)
    }

    static let setOfOne: [[UInt8]] = [[0xC1, 1], [0x10, 1]]  // {1}
    static let dictionaryWithSet: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x61], [0xC1, 3], [0x10, 1]]  // {"a": {1}}

    /// swift-corelibs-foundation's PropertyListSerialization dereferences null bridging a set in a binary
    /// property list (SIGSEGV in `NSSet._bridgeToSwift`), so importing a 46-byte file killed the process.
    /// Found by Fuzz/Targets/PropertyList.swift (Fuzz/Corpus/PropertyList/crash-set-in-defaults.plist).
    @Test("a binary property list holding a set is refused with an error, not a crash", arguments: [setOfOne, dictionaryWithSet])
    func binaryPropertyListWithSet(objects: [[UInt8]]) {
        #expect {
            _ = try PropertyListImport.read(Self.binaryPropertyList(objects), path: "set.plist")
        } throws: { error in
            guard case PropertyListImport.Error.notAPropertyList(let path, let reason)? = error as? PropertyListImport.Error else { return false }
            return path == "set.plist" && reason.contains("set")
        }
    }

    /// An `NSKeyedArchiver` archive of an `NSURL` whose `$class` UID (99) points past its four objects:
    /// swift-corelibs-foundation's `NSKeyedUnarchiver` traps (index out of range), so importing a defaults
    /// file holding it killed the process. Found by Fuzz/Targets/PropertyList.swift
    /// (Fuzz/Corpus/PropertyList/crash-archive-uid-out-of-range.plist).
    static let archiveWithUIDOutOfRange = Data(
        base64Encoded: """
            YnBsaXN0MDDUAQIDBAUGFhlZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKkBwgPEFUkbnVsbNMJCgsM\
            DQ5WJGNsYXNzV05TLmJhc2VbTlMucmVsYXRpdmWAY4AAgAJfEBNodHRwczovL2V4YW1wbGUuY29t0hESExRYJGNsYXNzZXNaJGNsYXNzbmFtZaIU\
            FVVOU1VSTFhOU09iamVjdNEXGFRyb290gAESAAGGoAgRGyQpMkRJT1ZdZXFzdXeNkpumqa+4u8DCAAAAAAAAAQEAAAAAAAAAGgAAAAAAAAAAAAAA\
            AAAAAMc=
            """)

    @Test("an archived URL whose UIDs point past its objects is imported as data, not a crash")
    func archiveWithUIDOutOfRange() throws {
        let archive = try #require(Self.archiveWithUIDOutOfRange)
        let file = try PropertyListSerialization.data(fromPropertyList: ["homepage": archive], format: .binary, options: 0)
        let contents = try PropertyListImport.read(file, path: "archive.plist")
        #expect(contents.values["homepage"]?.type == .data)
    }

    /// The same set, inside a data value that looks like an NSKeyedArchiver archive: the value is kept as data.
    @Test("data holding a binary property list with a set is imported as data, not a crash")
    func archivedDataWithSet() throws {
        let inner = Self.binaryPropertyList(Self.setOfOne)
        let outer = try PropertyListSerialization.data(fromPropertyList: ["blob": inner], format: .binary, options: 0)
        let contents = try PropertyListImport.read(outer, path: "nested.plist")
        #expect(contents.values["blob"] == StoredValue(type: .data, json: .string(inner.base64EncodedString())))
    }
}
