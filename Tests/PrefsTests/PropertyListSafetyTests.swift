import Foundation
import Prefs
import Testing

/// Binary property lists that crash swift-corelibs-foundation's reader are refused before it sees them.
@Suite("Property-list import: hostile binary files")
struct PropertyListSafetyTests {
    /// A binary property list (`bplist00`) of `objects` with one-byte references and offsets, rooted at object 0.
    static func binaryPropertyList(_ objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]                                           // unused, offset size 1, reference size 1
        bytes += withUnsafeBytes(of: UInt64(objects.count).bigEndian, Array.init)   // object count
        bytes += [UInt8](repeating: 0, count: 8)                                    // top object: 0
        bytes += withUnsafeBytes(of: UInt64(table).bigEndian, Array.init)           // offset table
        return Data(bytes)
    }

    static let setOfOne: [[UInt8]] = [[0xC1, 1], [0x10, 1]]                                      // {1}
    static let dictionaryWithSet: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x61], [0xC1, 3], [0x10, 1]]  // {"a": {1}}

    @Test("a binary property list holding a set is refused with an error, not a crash", arguments: [setOfOne, dictionaryWithSet])
    func set(objects: [[UInt8]]) {
        #expect {
            _ = try PropertyListImport.read(Self.binaryPropertyList(objects), path: "set.plist")
        } throws: { error in
            guard case PropertyListImport.Error.notAPropertyList(let path, let reason)? = error as? PropertyListImport.Error else { return false }
            return path == "set.plist" && reason.contains("set")
        }
    }

    @Test("data holding a binary property list with a set is kept as data")
    func archivedSet() throws {
        let inner = Self.binaryPropertyList(Self.setOfOne)
        let outer = try PropertyListSerialization.data(fromPropertyList: ["blob": inner], format: .binary, options: 0)
        let contents = try PropertyListImport.read(outer, path: "nested.plist")
        #expect(contents.values["blob"] == StoredValue(type: .data, json: .string(inner.base64EncodedString())))
    }

    @Test("a trailer pointing outside the file is refused", arguments: [UInt64(1_000_000), UInt64.max])
    func damagedTrailer(tableOffset: UInt64) {
        var bytes = [UInt8](Self.binaryPropertyList([[0x10, 1]]))
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
