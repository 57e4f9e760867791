import Foundation
import PrefsTesting

/// gzip members (RFC 1952) made in the test, for servers that encode their bodies.
///
/// ```swift
/// let bomb = Gzip.zeros(count: 1 << 30)        // about 1 MB on the wire, 1 GiB decoded
/// let body = Gzip.stored(Data("[]".utf8))     // any bytes, not compressed
/// ```
package enum Gzip {
    /// `count` zero bytes, built in a few milliseconds rather than by compressing: one dynamic-Huffman deflate
    /// block (RFC 1951) with a 1-bit code for "copy 258 bytes" and a 1-bit code for distance 1, so each 258 decoded
    /// bytes cost 2 bits (about 1,030:1, as `gzip -9` does on zeros). The trailer's CRC-32 and size are right, so
    /// any decoder accepts it to the end.
    package static func zeros(count: Int) -> Data {
        precondition(count >= 1)
        var bits = BitWriter()
        // Header: magic, deflate, no flags, no time, no extra flags, OS unknown.
        bits.bytes = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        bits.write(1, count: 1)  // BFINAL
        bits.write(0b10, count: 2)  // BTYPE: dynamic Huffman
        bits.write(286 - 257, count: 5)  // HLIT: literal/length codes 0...285
        bits.write(1 - 1, count: 5)  // HDIST: one distance code
        bits.write(18 - 4, count: 4)  // HCLEN: code-length codes up to symbol 1 in the permuted order
        // Code-length code lengths, in the order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1: symbol 18 gets
        // 1 bit, symbols 1 and 2 get 2 bits (canonical codes: 18 → 0, 1 → 10, 2 → 11).
        for length in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] { bits.write(UInt32(length), count: 3) }
        // Literal/length code lengths: 0 → 2, 1...255 → 0, 256 → 2, 257...284 → 0, 285 → 1; distance 0 → 1.
        let lengthTwo = (code: UInt32(0b11), length: 2), lengthOne = (code: UInt32(0b10), length: 2), repeatZero = (code: UInt32(0), length: 1)
        bits.huffman(lengthTwo)
        bits.huffman(repeatZero); bits.write(138 - 11, count: 7)
        bits.huffman(repeatZero); bits.write(117 - 11, count: 7)  // 255 zeros
        bits.huffman(lengthTwo)
        bits.huffman(repeatZero); bits.write(28 - 11, count: 7)
        bits.huffman(lengthOne)
        bits.huffman(lengthOne)
        // Data, with canonical codes literal 0 → 10, end of block → 11, length 258 → 0, distance 1 → 0.
        let literalZero = (code: UInt32(0b10), length: 2)
        bits.huffman(literalZero)
        let copies = (count - 1) / 258
        for _ in 0..<(count - 1) % 258 { bits.huffman(literalZero) }
        bits.zeros(2 * copies)
        bits.huffman((code: 0b11, length: 2))  // end of block
        var data = Data(bits.bytes)
        for value in [crc32OfZeros(count), UInt32(truncatingIfNeeded: count)] {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// `content` in stored (uncompressed) deflate blocks.
    package static func stored(_ content: Data) -> Data {
        var data = Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
        let bytes = [UInt8](content)
        var offset = 0
        repeat {
            let length = min(65_535, bytes.count - offset)
            let final: UInt8 = offset + length == bytes.count ? 1 : 0
            data.append(final)  // BFINAL, BTYPE 00, then byte-aligned
            data.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)])
            data.append(contentsOf: bytes[offset..<(offset + length)])
            offset += length
        } while offset < bytes.count
        for value in [crc32(bytes), UInt32(truncatingIfNeeded: bytes.count)] {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// CRC-32 (as gzip computes it) of `bytes`, bit by bit: for small test bodies.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var register: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            register ^= UInt32(byte)
            for _ in 0..<8 { register = register & 1 != 0 ? (register >> 1) ^ 0xEDB8_8320 : register >> 1 }
        }
        return register ^ 0xFFFF_FFFF
    }

    /// CRC-32 (as gzip computes it) of `count` zero bytes, in O(log count): the zero-byte operator on the CRC
    /// register raised to the `count`th power by squaring, as zlib's `crc32_combine` does.
    static func crc32OfZeros(_ count: Int) -> UInt32 {
        func times(_ matrix: [UInt32], _ vector: UInt32) -> UInt32 {
            var sum: UInt32 = 0, vector = vector, index = 0
            while vector != 0 {
                if vector & 1 != 0 { sum ^= matrix[index] }
                vector >>= 1
                index += 1
            }
            return sum
        }
        func square(_ matrix: [UInt32]) -> [UInt32] { matrix.map { times(matrix, $0) } }
        var bit = [UInt32(0xEDB8_8320)] + (0..<31).map { UInt32(1) << $0 }  // one zero bit
        bit = square(square(bit))  // four zero bits
        var register: UInt32 = 0xFFFF_FFFF
        var remaining = count
        var operatorMatrix = square(bit)  // one zero byte
        while remaining > 0 {
            if remaining & 1 != 0 { register = times(operatorMatrix, register) }
            remaining >>= 1
            operatorMatrix = square(operatorMatrix)
        }
        return register ^ 0xFFFF_FFFF
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        var used = 8  // bits used in the last byte; 8 means "start a new byte"

        mutating func write(_ value: UInt32, count: Int) {
            for index in 0..<count { append(bit: (value >> index) & 1 != 0) }
        }

        /// A Huffman code, most significant bit first (RFC 1951 §3.1.1).
        mutating func huffman(_ code: (code: UInt32, length: Int)) {
            for index in stride(from: code.length - 1, through: 0, by: -1) { append(bit: (code.code >> index) & 1 != 0) }
        }

        mutating func zeros(_ count: Int) {
            var remaining = count
            while remaining > 0, used < 8 { append(bit: false); remaining -= 1 }
            bytes.append(contentsOf: repeatElement(0, count: remaining / 8))
            for _ in 0..<remaining % 8 { append(bit: false) }
        }

        private mutating func append(bit: Bool) {
            if used == 8 { bytes.append(0); used = 0 }
            if bit { bytes[bytes.count - 1] |= 1 << used }
            used += 1
        }
    }
}
