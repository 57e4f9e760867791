import Foundation
import Prefs

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
        switch BinaryPropertyList.Table.read(bytes) {
        case .failure(let malformed):
            return .malformed(malformed.reason)
        case .success(let table):
            // A set or an ordered set.
            return table.offsets.contains { bytes[$0] >> 4 == 0xC || bytes[$0] >> 4 == 0xB } ? .containsSet : .safe
        }
    }
}
