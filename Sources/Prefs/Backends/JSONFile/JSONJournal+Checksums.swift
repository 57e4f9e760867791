import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONJournal {
    // MARK: - Value digests

    /// A digest of a stored value as the snapshot holds it: FNV-1a (64 bits, folded to 32) over its type's name and its
    /// JSON tree (each node's kind, an integer's or a double's 8 bytes, a string's UTF-8 bytes, an object's members
    /// in key order), or over a marker when the key holds none. Equal values have equal digests however the file
    /// spells them (indentation, member order, a hand-written value without its type), in every process; computed on a
    /// key's first change in a generation, so it reads the value's tree and writes nothing.
    static func digest(_ value: StoredValue?) -> UInt32 {
        var digest = TreeDigest()
        guard let value else {
            digest.mix(0xFE)
            return digest.value
        }
        digest.mixText(value.type.description)
        digest.mixTree(value.json)
        return digest.value
    }

    /// A digest of a key declaration as the snapshot holds it (its type, initial value and former names), as
    /// ``digest(_:)-(StoredValue?)`` digests a value.
    static func digest(_ declaration: KeyDeclaration?) -> UInt32 {
        var digest = TreeDigest()
        guard let declaration else {
            digest.mix(0xFE)
            return digest.value
        }
        digest.mixText(declaration.type.description)
        if let initial = declaration.initial { digest.mixTree(initial) } else { digest.mix(0xFD) }
        for name in declaration.formerNames { digest.mixText(name) }
        return digest.value
    }

    /// FNV-1a over a value's structure (see ``digest(_:)-(StoredValue?)``).
    private struct TreeDigest {
        private var hash = StableHash.offsetBasis

        var value: UInt32 { UInt32(truncatingIfNeeded: hash ^ (hash >> 32)) }

        mutating func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* StableHash.prime
        }

        mutating func mix64(_ number: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
        }

        /// A string's UTF-8 bytes, then a byte no UTF-8 text holds, so that two strings never run into each other.
        mutating func mixText(_ text: String) {
            for byte in text.utf8 { mix(byte) }
            mix(0xFF)
        }

        mutating func mixTree(_ json: JSON) {
            switch json {
            case .null: mix(0)
            case .bool(let flag): mix(flag ? 2 : 1)
            case .int(let number):
                mix(3)
                mix64(UInt64(bitPattern: Int64(number)))
            case .double(let number):
                mix(4)
                mix64(number.bitPattern)
            case .string(let text):
                mix(5)
                mixText(text)
            case .array(let elements):
                mix(6)
                mix64(UInt64(elements.count))
                for element in elements { mixTree(element) }
            case .object(let members):
                mix(7)
                mix64(UInt64(members.count))
                for (key, member) in members.sorted(by: { JSON.keyPrecedes($0.key, $1.key) }) {
                    mixText(key)
                    mixTree(member)
                }
            }
        }
    }

    // MARK: - CRC-32

    /// Eight tables of 256 entries for slicing-by-8: table 0 is the usual byte-at-a-time table, table k advances a
    /// byte's contribution by k more bytes of zeros.
    private static let crcTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[index] = value
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// CRC-32 (IEEE 802.3, as zlib's `crc32`), eight bytes per step.
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        crcTables.withUnsafeBufferPointer { table in
            var position = 0
            while position + 8 <= bytes.count {
                let low = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self))
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                position += 8
            }
            while position < bytes.count {
                crc = table[Int((crc ^ UInt32(bytes[position])) & 0xFF)] ^ (crc >> 8)
                position += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func crc32<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ crc32(UnsafeRawBufferPointer($0)) }) { return crc }
        return Array(bytes).withUnsafeBytes { crc32($0) }
    }

    /// The text between a line's body and its checksum, at the end of every line.
    static let crcPrefix = Array(#","crc":""#.utf8)
    /// `,"crc":"` + 8 hex digits + `"}`.
    static let crcSuffixLength = crcPrefix.count + 8 + 2
}
