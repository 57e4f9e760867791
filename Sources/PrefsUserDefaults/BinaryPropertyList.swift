import Foundation
import Prefs

/// A bounds-checked reader for binary property lists (`bplist00`): just the object kinds an `NSKeyedArchiver`
/// archive of a URL uses.
///
/// Property-list files come from other programs, and swift-corelibs-foundation's `NSKeyedUnarchiver` traps
/// (index out of range) following a UID past `$objects` (found by Fuzz/Targets/PropertyList.swift). This reader
/// never traps: every offset, length and reference is checked, and anything malformed reads as nil.
///
/// Layout (CFBinaryPList.c): the objects, an offset table, and a 32-byte trailer holding the offset size, the
/// reference size, the object count, the top object and the offset table's position.
///
/// ```swift
/// let list = BinaryPropertyList(data)
/// if let list, case .dictionary(let members)? = list.object(list.top) { … }
/// ```
struct BinaryPropertyList {
    enum Object: Equatable {
        case string(String)
        /// An `NSKeyedArchiver` reference into `$objects`.
        case uid(Int)
        /// Element object references.
        case array([Int])
        /// String keys → value object references.
        case dictionary([String: Int])
        case set
        case other
    }

    private let bytes: [UInt8]
    private let offsets: [Int]
    private let referenceSize: Int
    /// The root object's index.
    let top: Int

    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.starts(with: Array("bplist0".utf8)), case .success(let table) = Table.read(bytes),
            (1...8).contains(table.referenceSize), table.top < table.offsets.count
        else { return nil }
        self.bytes = bytes
        self.offsets = table.offsets
        self.referenceSize = table.referenceSize
        self.top = table.top
    }

    /// A binary property list's trailer and offset table, checked: the one reading of them, shared by this reader
    /// and ``BinaryPropertyListScan``.
    struct Table {
        var referenceSize: Int
        var top: Int
        /// Each object's offset, each checked to lie between the header and the offset table.
        var offsets: [Int]

        /// The table of `bytes`, or what is wrong with it.
        static func read(_ bytes: [UInt8]) -> Result<Table, Malformed> {
            guard bytes.count >= 8 + 32 else { return .failure(Malformed("too short for a binary property list")) }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            guard (1...8).contains(offsetSize) else { return .failure(Malformed("offset size \(offsetSize) in the trailer")) }
            guard let count = integer(bytes, at: trailer + 8, size: 8), let top = integer(bytes, at: trailer + 16, size: 8),
                let table = integer(bytes, at: trailer + 24, size: 8)
            else { return .failure(Malformed("trailer")) }
            let (tableLength, overflow) = count.multipliedReportingOverflow(by: offsetSize)
            guard !overflow, table >= 8, table <= trailer, tableLength <= trailer - table else {
                return .failure(Malformed("the offset table lies outside the file"))
            }
            var offsets: [Int] = []
            offsets.reserveCapacity(count)
            for index in 0..<count {
                guard let offset = integer(bytes, at: table + index * offsetSize, size: offsetSize), offset >= 8, offset < table else {
                    return .failure(Malformed("object \(index) lies outside the file"))
                }
                offsets.append(offset)
            }
            return .success(Table(referenceSize: Int(bytes[trailer + 7]), top: top, offsets: offsets))
        }
    }

    /// What is wrong with a binary property list's table.
    struct Malformed: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The object at `index` of the offset table, one level deep (containers hold references); nil if malformed.
    func object(_ index: Int) -> Object? {
        guard offsets.indices.contains(index) else { return nil }
        let position = offsets[index]
        let kind = bytes[position] >> 4, low = Int(bytes[position] & 0x0F)
        switch kind {
        case 0x8:
            return Self.integer(bytes, at: position + 1, size: low + 1).map(Object.uid)
        case 0x5, 0x6:
            return string(index).map(Object.string)
        case 0xA:
            guard let (count, start) = length(low, after: position), let elements = references(count, at: start) else { return nil }
            return .array(elements)
        case 0xD:
            guard let (count, start) = length(low, after: position), count <= Int.max / 2,
                let references = references(2 * count, at: start)
            else { return nil }
            var members: [String: Int] = [:]
            for member in 0..<count {
                guard let key = string(references[member]) else { return nil }  // not object(): no recursion
                members[key] = references[count + member]
            }
            return .dictionary(members)
        case 0xB, 0xC:
            return .set
        default:
            return .other
        }
    }

    /// The string at `index` (ASCII `0x5_` or UTF-16 `0x6_`), or nil.
    private func string(_ index: Int) -> String? {
        guard offsets.indices.contains(index) else { return nil }
        let position = offsets[index]
        let kind = bytes[position] >> 4
        guard kind == 0x5 || kind == 0x6, let (count, start) = length(Int(bytes[position] & 0x0F), after: position) else { return nil }
        if kind == 0x5 {
            guard count <= bytes.count - start else { return nil }
            let text = bytes[start..<(start + count)]
            return text.allSatisfy { $0 < 0x80 } ? String(decoding: text, as: UTF8.self) : nil
        }
        guard count <= (bytes.count - start) / 2 else { return nil }
        let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
        return String(decoding: units, as: UTF16.self)
    }

    /// A container's or string's length: in the marker's low nibble, or (0xF) in the integer object after it.
    private func length(_ low: Int, after marker: Int) -> (count: Int, start: Int)? {
        guard low == 0xF else { return (low, marker + 1) }
        guard marker + 1 < bytes.count, bytes[marker + 1] >> 4 == 0x1 else { return nil }
        let size = 1 << Int(bytes[marker + 1] & 0x0F)
        guard size <= 8, let count = Self.integer(bytes, at: marker + 2, size: size) else { return nil }
        return (count, marker + 2 + size)
    }

    private func references(_ count: Int, at start: Int) -> [Int]? {
        guard count >= 0, start <= bytes.count, count <= (bytes.count - start) / referenceSize else { return nil }
        var result: [Int] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            guard let reference = Self.integer(bytes, at: start + index * referenceSize, size: referenceSize) else { return nil }
            result.append(reference)
        }
        return result
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, or nil past the end or beyond `Int.max`.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard (1...8).contains(size), offset >= 0, offset <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }
}
