import Foundation
@_spi(Tooling) import Prefs

/// A check of a binary property list's object table, made before Foundation parses it.
///
/// swift-corelibs-foundation crashes (a null dereference bridging `NSSet`) on a binary property list that holds a
/// set, so a 46-byte file could kill the importing process. UserDefaults never writes sets; Prefs refuses them here.
/// Found by the fuzzer (`Fuzz/`).
enum BinaryPropertyListScan {
    enum Verdict: Equatable {
        /// Not a binary property list (XML, or anything else): nothing to check here.
        case notBinary
        /// A binary property list whose table checks out and holds no set.
        case safe
        /// A binary property list with a set object.
        case containsSet
        /// A binary property list whose trailer or offset table points outside the file.
        case malformed(String)
    }

    static func scan(_ data: Data) -> Verdict {
        let bytes = [UInt8](data)
        // Foundation reads any "bplist0x" header as a binary property list, not only version 00.
        guard bytes.starts(with: Array("bplist".utf8)) else { return .notBinary }
        guard bytes.count >= 8 + 32 else { return .malformed("too short for a binary property list") }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        guard (1...8).contains(offsetSize) else { return .malformed("offset size \(offsetSize) in the trailer") }
        guard let count = integer(bytes, at: trailer + 8, size: 8),
            let table = integer(bytes, at: trailer + 24, size: 8)
        else { return .malformed("trailer") }
        let (tableLength, overflow) = count.multipliedReportingOverflow(by: offsetSize)
        guard !overflow, table >= 8, table <= trailer, tableLength <= trailer - table else {
            return .malformed("the offset table lies outside the file")
        }
        for index in 0..<count {
            guard let offset = integer(bytes, at: table + index * offsetSize, size: offsetSize), offset >= 8, offset < table else {
                return .malformed("object \(index) lies outside the file")
            }
            if bytes[offset] >> 4 == 0xC || bytes[offset] >> 4 == 0xB { return .containsSet }  // set, ordered set
        }
        return .safe
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, or nil when it does not fit an Int.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }
}
