import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import PrefsJSON
import PrefsSupport

/// The JSON store's journal, `FILE.journal` beside the snapshot `FILE`: JSON Lines, one self-checking line per
/// committed change set, so that a set appends one line instead of rewriting the whole document.
///
/// ```
/// {"format":"prefs-journal","formatVersion":1,"generation":"9f2c4e7a01b3d586","snapshotBytes":312,"snapshotCRC":"0d5c3a41","crc":"5d0f8a1e"}
/// {"seq":1,"values":{"launchCount":{"type":"int","value":4}},"was":{"launchCount":"fee1e64d"},"crc":"b2ae5ede"}
/// {"seq":2,"values":{"theme":null},"was":{"theme":"15fb124d"},"crc":"7bf75ac7"}
/// ```
/// - The first line is the header: the journal continues the snapshot whose `"journalGeneration"` member equals its
///   `"generation"`, a random token that every snapshot write draws anew. A journal of another generation is stale
///   (its records are folded into a newer snapshot, or the snapshot was replaced by another file) and is never applied.
///   Only a format-2 snapshot has a journal (see ``JSONStoreDocument``): a format-1 snapshot (written by release 0.1,
///   by hand, or by this release for 0.1) is the whole store. `"snapshotBytes"` and `"snapshotCRC"` record the
///   snapshot the journal began on (its size and CRC-32), so that an edit of the snapshot since is noticed.
/// - Each record holds `"seq"` (1, 2, 3… with no gap), `"values"` (a tagged value as in the snapshot, or `null` for a
///   removal), `"declared"` (declarations as in the snapshot) and `"undeclared"` (declarations removed). The first
///   record of a generation that changes a key also records what the key held in the snapshot: `"was"` (for a value)
///   and `"wasDeclared"` (for a declaration) map the key to a digest of it (``digest(_:)-(StoredValue?)``). With them a
///   reader tells which keys a hand edit of the snapshot changed: for those the edit wins over the journal.
/// - Every line ends in `,"crc":"XXXXXXXX"}`: the CRC-32 (IEEE) of the line's bytes before `,"crc":`, in lowercase hex.
///   A last line that is cut short or fails its check is a torn tail (a writer died mid-append): it was never
///   acknowledged, is never applied, and the next writer truncates it. A bad line followed by a good one is corruption,
///   ``PrefsError/corruptStore(path:reason:)`` naming the line; the file is left as it is.
///
/// Format 1 of the journal is the first released one (0.2); a reader refuses a header with a newer `"formatVersion"`.
package enum JSONJournal {
    static let suffix = ".journal"
    static let formatName = "prefs-journal"
    static let formatVersion = 1
    /// The snapshot's top-level member naming the journal generation it continues.
    static let generationMember = "journalGeneration"
    /// Compaction folds the journal into the snapshot once it is larger than ``compactionRatio`` times the snapshot
    /// and than a floor, 64 KiB by default (a store option: tests and the torture harness lower it to compact often).
    package static let defaultCompactionFloor = 64 * 1024
    /// How many times the snapshot's size the journal grows to before compaction. A compaction rewrites the whole
    /// snapshot, so its cost per set is about the snapshot's encoding cost per byte times a record's size, divided by
    /// this ratio: at 1 it was 40% of the JSON backend's time in a set at 10k keys. A larger ratio makes an open after a
    /// crash (before the close that compacts) read more journal.
    package static let compactionRatio = 4

    /// The journal size past which a write compacts, for a snapshot of `snapshotSize` bytes.
    package static func compactionThreshold(snapshotSize: Int, floor: Int = defaultCompactionFloor) -> Int {
        max(floor, compactionRatio * snapshotSize)
    }

    /// The journal generation a snapshot records; nil without one, and for a format-1 snapshot (which has no journal).
    static func generation(of document: JSONStoreDocument) -> String? {
        guard document.formatVersion > JSONStoreDocument.journallessFormatVersion else { return nil }
        if case .string(let generation)? = document.unknownMembers[generationMember], !generation.isEmpty { return generation }
        return nil
    }

    // MARK: - What a journal is based on

    /// A snapshot file as a journal's header records it: its size and CRC-32.
    struct SnapshotDigest: Sendable, Hashable {
        var bytes: Int
        var crc: UInt32

        init(bytes: Int, crc: UInt32) {
            self.bytes = bytes
            self.crc = crc
        }

        init(_ data: Data) {
            self.init(bytes: data.count, crc: crc32(data))
        }
    }

    /// For keys a journal changes, a digest of what each held in the snapshot the journal began on (see
    /// ``digest(_:)-(StoredValue?)``): from the records' `"was"` and `"wasDeclared"`, the first record that changes a
    /// key recording it.
    struct KeyDigests: Sendable, Hashable {
        var values: [String: UInt32] = [:]
        var declarations: [String: UInt32] = [:]

        var isEmpty: Bool { values.isEmpty && declarations.isEmpty }

        /// Adds the digests of `later` records for keys that have none yet (the first record that changes a key says).
        mutating func add(_ later: KeyDigests) {
            for (key, digest) in later.values where values[key] == nil { values[key] = digest }
            for (key, digest) in later.declarations where declarations[key] == nil { declarations[key] = digest }
        }

        /// Adds a record's digests for keys that have none yet (the first record that changes a key says).
        mutating func add(_ record: RecordDigests) {
            for entry in record.values where values[entry.key] == nil { values[entry.key] = entry.digest }
            for entry in record.declarations where declarations[entry.key] == nil { declarations[entry.key] = entry.digest }
        }
    }

    /// One key's digest in a record.
    struct KeyDigest: Sendable, Hashable {
        var key: String
        var digest: UInt32
    }

    /// The digests one record carries: for the keys it is the first to change, what each held in the snapshot. Arrays,
    /// not dictionaries: a set writes one, and hashes nothing for it.
    struct RecordDigests: Sendable, Hashable {
        var values: [KeyDigest] = []
        var declarations: [KeyDigest] = []

        var isEmpty: Bool { values.isEmpty && declarations.isEmpty }
    }

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

    /// A declaration's compact entry, members in sorted order as the serializer writes them:
    /// `{"formerNames":[…],"initial":…,"type":"…"}` (the bytes of `declaration.json.serialized()`, without building it).
    static func writeDeclaration(_ declaration: KeyDeclaration, into writer: inout JSONWriter) {
        writer.appendRaw("{" as StaticString)
        if !declaration.formerNames.isEmpty {
            writer.appendRaw(#""formerNames":["# as StaticString)
            for (index, name) in declaration.formerNames.enumerated() {
                if index > 0 { writer.appendRaw("," as StaticString) }
                writer.writeString(name)
            }
            writer.appendRaw("]," as StaticString)
        }
        if let initial = declaration.initial {
            writer.appendRaw(#""initial":"# as StaticString)
            writer.write(initial, depth: 0)
            writer.appendRaw("," as StaticString)
        }
        writer.appendRaw(#""type":"# as StaticString)
        writer.writeString(declaration.type.description)
        writer.appendRaw("}" as StaticString)
    }

    /// `{"type":"…","value":…}`, as records and digests write a value.
    private static func writeTagged(_ value: StoredValue, into writer: inout JSONWriter) {
        writer.appendRaw(#"{"type":"# as StaticString)
        writer.writeString(value.type.description)
        writer.appendRaw(#","value":"# as StaticString)
        writer.write(value.json, depth: 0)
        writer.appendRaw("}" as StaticString)
    }

    /// 8 lowercase hex digits.
    private static func writeHex(_ value: UInt32, into writer: inout JSONWriter) {
        var digits = (UInt64(0), UInt8(0))
        withUnsafeMutableBytes(of: &digits) { buffer in
            for index in 0..<8 {
                let digit = UInt8((value >> UInt32(28 - 4 * index)) & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            }
            writer.appendRaw(UnsafeRawBufferPointer(rebasing: buffer[0..<8]))
        }
    }

    /// The value of 8 lowercase hex digits; nil for anything else.
    private static func hexValue(_ text: some Collection<UInt8>) -> UInt32? {
        guard text.count == 8 else { return nil }
        var value: UInt32 = 0
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt32(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }

    /// A new generation: 64 random bits in hex.
    static func newGeneration() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
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

    // MARK: - Writing lines

    private static let crcPrefix = Array(#","crc":""#.utf8)
    /// `,"crc":"` + 8 hex digits + `"}`.
    private static let crcSuffixLength = crcPrefix.count + 8 + 2

    /// Closes the line `writer` holds from `start` on (a JSON object's text without its closing brace) with its
    /// checksum and a newline.
    private static func seal(_ writer: inout JSONWriter, from start: Int) {
        let crc = writer.output.withUnsafeBytes { crc32(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        writer.appendRaw(crcPrefix)
        writeHex(crc, into: &writer)
        writer.appendRaw("\"}\n" as StaticString)
    }

    /// The header line of a journal continuing the snapshot of `generation`, whose file `snapshot` describes.
    static func header(generation: String, snapshot: SnapshotDigest?) -> Data {
        var writer = JSONWriter(indentWidth: 0)
        writer.appendRaw(#"{"format":"\#(formatName)","formatVersion":\#(formatVersion),"generation":"#.utf8)
        writer.writeString(generation)
        if let snapshot {
            writer.appendRaw(#","snapshotBytes":"# as StaticString)
            writer.write(.int(snapshot.bytes), depth: 0)
            writer.appendRaw(#","snapshotCRC":""# as StaticString)
            writeHex(snapshot.crc, into: &writer)
            writer.appendRaw("\"" as StaticString)
        }
        seal(&writer, from: 0)
        return Data(writer.takeOutput())
    }

    /// A header without a snapshot digest (tools, the fuzz target).
    package static func header(generation: String) -> Data {
        header(generation: generation, snapshot: nil)
    }

    package static func record(seq: Int, changes: Changeset) -> Data {
        Data(recordBytes(seq: seq, changes: changes))
    }

    /// A record line, as ``JSONJournalFile`` appends it.
    static func recordBytes(seq: Int, changes: Changeset, was: RecordDigests = RecordDigests()) -> [UInt8] {
        var writer = JSONWriter(indentWidth: 0, capacity: 192)
        writeRecord(seq: seq, changes: changes, was: was, into: &writer)
        return writer.takeOutput()
    }

    /// Appends a record line to `writer`, sealed (no intermediate ``JSON`` objects for values, no copy of the
    /// line: this runs on every set). `was`: the digests of what keys this record is the first to change held in the
    /// snapshot.
    static func writeRecord(seq: Int, changes: Changeset, was: RecordDigests = RecordDigests(), into writer: inout JSONWriter) {
        let start = writer.output.count
        writer.appendRaw(#"{"seq":"# as StaticString)
        writer.write(.int(seq), depth: 0)
        if !changes.values.isEmpty {
            writer.appendRaw(#","values":{"# as StaticString)
            var first = true
            func entry(_ key: String, _ change: Changeset.Change) {
                if !first { writer.appendRaw("," as StaticString) }
                first = false
                writer.writeString(key)
                switch change {
                case .set(let value):
                    writer.appendRaw(":" as StaticString)
                    writeTagged(value, into: &writer)
                case .remove:
                    writer.appendRaw(#":null"# as StaticString)
                }
            }
            if changes.values.count == 1, let (key, change) = changes.values.first {
                entry(key, change)
            } else {
                for (key, change) in changes.values.sorted(by: { JSON.keyPrecedes($0.key, $1.key) }) { entry(key, change) }
            }
            writer.appendRaw("}" as StaticString)
        }
        if !changes.declarations.isEmpty {
            writer.appendRaw(#","declared":{"# as StaticString)
            for (index, (key, declaration)) in changes.declarations.sorted(by: { JSON.keyPrecedes($0.key, $1.key) }).enumerated() {
                if index > 0 { writer.appendRaw("," as StaticString) }
                writer.writeString(key)
                writer.appendRaw(":" as StaticString)
                writeDeclaration(declaration, into: &writer)
            }
            writer.appendRaw("}" as StaticString)
        }
        if !changes.removedDeclarations.isEmpty {
            writer.appendRaw(#","undeclared":"# as StaticString)
            writer.write(.array(changes.removedDeclarations.sorted().map(JSON.string)), depth: 0)
        }
        writeDigests(was.values, member: #","was":{"#, into: &writer)
        writeDigests(was.declarations, member: #","wasDeclared":{"#, into: &writer)
        seal(&writer, from: start)
    }

    /// `,"was":{"key":"1a2b3c4d",…}` (keys sorted); nothing when `digests` is empty.
    private static func writeDigests(_ digests: [KeyDigest], member: StaticString, into writer: inout JSONWriter) {
        guard !digests.isEmpty else { return }
        writer.appendRaw(member)
        func entry(_ entry: KeyDigest) {
            writer.writeString(entry.key)
            writer.appendRaw(#":""# as StaticString)
            writeHex(entry.digest, into: &writer)
            writer.appendRaw("\"" as StaticString)
        }
        if digests.count == 1 {
            entry(digests[0])
        } else {
            for (index, digest) in digests.sorted(by: { JSON.keyPrecedes($0.key, $1.key) }).enumerated() {
                if index > 0 { writer.appendRaw("," as StaticString) }
                entry(digest)
            }
        }
        writer.appendRaw("}" as StaticString)
    }

    // MARK: - Reading lines

    /// A whole journal as read from `data` (tools, the fuzz target): the header's generation (nil without a good
    /// header), the records in order, the bytes of good lines, and the first line of a torn tail. Throws
    /// ``PrefsError/corruptStore(path:reason:)`` for a bad line followed by a good one, and
    /// ``PrefsError/unsupportedFormatVersion(path:found:supported:)`` for a newer header.
    package static func read(_ data: Data, path: String) throws(PrefsError) -> (generation: String?, records: [Changeset], goodBytes: Int, tornLine: Int?) {
        let scan = try data.withUnsafeBytes { bytes in
            Result { () throws(PrefsError) in try Self.scan(bytes, firstLine: 1, lastSeq: nil, path: path) }
        }.get()
        return (scan.generation, scan.records, scan.goodBytes, scan.tail.line)
    }

    /// How the bytes after the last good line look.
    enum Tail: Sendable, Hashable {
        /// Nothing after the last good line.
        case clean
        /// A last line without its newline: a write in progress, or one that died (`bytes` long).
        case incomplete(line: Int, bytes: Int)
        /// Lines that fail their check, with no good line after them: a torn tail (`bytes` long, from `line`).
        case bad(line: Int, bytes: Int, reason: String)

        var bytes: Int {
            switch self {
            case .clean: 0
            case .incomplete(_, let bytes), .bad(_, let bytes, _): bytes
            }
        }

        var line: Int? {
            switch self {
            case .clean: nil
            case .incomplete(let line, _), .bad(let line, _, _): line
            }
        }
    }

    /// What reading a stretch of the journal found.
    struct Scan {
        /// The header's generation, when the stretch started at the beginning of the file.
        var generation: String?
        /// The header's record of the snapshot the journal began on, when the stretch started at the beginning and
        /// the header has one.
        var snapshot: SnapshotDigest?
        var records: [Changeset] = []
        /// The records' digests of what the keys they change held in the snapshot (``KeyDigests``).
        var was = KeyDigests()
        /// Bytes of good lines read, from the start of the stretch.
        var goodBytes = 0
        /// Good lines read.
        var goodLines = 0
        var lastSeq: Int
        var tail: Tail = .clean
    }

    /// Reads lines from `bytes`, the journal from byte offset of line `firstLine` (1-based) on: the header first when
    /// `lastSeq` is nil, then records numbered from `lastSeq + 1`. Throws for a newer format and for a bad line
    /// followed by a good one.
    static func scan(_ bytes: UnsafeRawBufferPointer, firstLine: Int, lastSeq: Int?, path: String) throws(PrefsError) -> Scan {
        var scan = Scan(lastSeq: lastSeq ?? 0)
        var expectHeader = lastSeq == nil
        var position = 0
        var lineNumber = firstLine
        var firstBad: (line: Int, offset: Int, reason: String)?
        while position < bytes.count {
            guard let newline = bytes[position...].firstIndex(of: 0x0A) else {
                if firstBad == nil { scan.tail = .incomplete(line: lineNumber, bytes: bytes.count - position) }
                break
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[position..<newline])
            let outcome = Result(catching: { () throws(LineProblem) -> (Changeset, RecordDigests)? in
                let members = try verified(line)
                if let firstBad {  // a line whose checksum holds, after one that failed: not a torn tail
                    throw .corruptAt(line: firstBad.line, reason: firstBad.reason)
                }
                if expectHeader { return try header(members, into: &scan) }
                return try record(members, expectedSeq: scan.lastSeq + 1)
            })
            switch outcome {
            case .success(let record):
                if let (changes, was) = record {
                    scan.records.append(changes)
                    if !was.isEmpty { scan.was.add(was) }
                    scan.lastSeq += 1
                }
                expectHeader = false
                scan.goodLines += 1
                scan.goodBytes = newline + 1
            case .failure(.corruptAt(let line, let reason)):
                throw .corruptStore(path: path, reason: "journal line \(line): \(reason), and a line whose checksum holds follows it")
            case .failure(.newerFormat(let found)):
                throw .unsupportedFormatVersion(path: path, found: found, supported: formatVersion)
            case .failure(.invalid(let reason)):
                if firstBad == nil { firstBad = (lineNumber, position, reason) }
            }
            position = newline + 1
            lineNumber += 1
        }
        if let firstBad { scan.tail = .bad(line: firstBad.line, bytes: bytes.count - firstBad.offset, reason: firstBad.reason) }
        return scan
    }

    private enum LineProblem: Error {
        case invalid(String)
        case corruptAt(line: Int, reason: String)
        case newerFormat(Int)
    }

    /// The members of a line whose checksum holds.
    private static func verified(_ line: UnsafeRawBufferPointer) throws(LineProblem) -> [String: JSON] {
        guard line.count > crcSuffixLength, line.last == UInt8(ascii: "}") else { throw .invalid("not a journal line (no checksum)") }
        let bodyEnd = line.count - crcSuffixLength
        guard line[bodyEnd..<(bodyEnd + crcPrefix.count)].elementsEqual(crcPrefix) else { throw .invalid("not a journal line (no checksum)") }
        var stored: UInt32 = 0
        for byte in line[(bodyEnd + crcPrefix.count)..<(line.count - 2)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: throw .invalid("the checksum is not 8 lowercase hex digits")
            }
            stored = stored << 4 | UInt32(digit)
        }
        let computed = crc32(UnsafeRawBufferPointer(rebasing: line[0..<bodyEnd]))
        guard computed == stored else {
            throw .invalid("checksum mismatch (the line's CRC-32 is \(String(computed, radix: 16)), it records \(String(stored, radix: 16)))")
        }
        guard case .object(let members)? = try? JSON.parse(line) else { throw .invalid("the checksum holds but the line is not a JSON object") }
        return members
    }

    private static func header(_ members: [String: JSON], into scan: inout Scan) throws(LineProblem) -> (Changeset, RecordDigests)? {
        guard case .string(formatName)? = members["format"] else { throw .invalid("expected the journal header (\"format\": \"\(formatName)\")") }
        guard case .int(let version)? = members["formatVersion"], version >= 1 else {
            throw .invalid("the header's \"formatVersion\" is not a positive integer")
        }
        guard version <= formatVersion else { throw .newerFormat(version) }
        guard case .string(let generation)? = members["generation"], !generation.isEmpty else { throw .invalid("the header's \"generation\" is not a string") }
        scan.generation = generation
        if case .int(let bytes)? = members["snapshotBytes"], case .string(let crc)? = members["snapshotCRC"], let value = hexValue(crc.utf8) {
            scan.snapshot = SnapshotDigest(bytes: bytes, crc: value)
        }
        return nil
    }

    private static func record(_ members: [String: JSON], expectedSeq: Int) throws(LineProblem) -> (Changeset, RecordDigests) {
        guard case .int(let seq)? = members["seq"] else {
            if members["format"] != nil { throw .invalid("a journal header where a record was expected") }
            throw .invalid("a record without \"seq\"")
        }
        guard seq == expectedSeq else { throw .invalid("record \(seq) where record \(expectedSeq) was expected") }
        var changes = Changeset()
        if let values = members["values"] {
            guard case .object(let entries) = values else { throw .invalid("\"values\" is not an object") }
            for (key, entry) in entries {
                if case .null = entry {
                    changes.values[key] = .remove
                } else {
                    changes.values[key] = .set(JSONStoreDocument.storedValue(from: entry))
                }
            }
        }
        if let declared = members["declared"] {
            guard case .object(let entries) = declared else { throw .invalid("\"declared\" is not an object") }
            for (key, entry) in entries {
                guard case .string(let typeName)? = entry["type"], let type = ValueType(typeName) else {
                    throw .invalid("declared\(JSONPath.member(key)).type is not a type name")
                }
                var formerNames: [String] = []
                if let member = entry["formerNames"] {
                    guard case .array(let names) = member else { throw .invalid("declared\(JSONPath.member(key)).formerNames is not an array") }
                    for name in names {
                        guard case .string(let text) = name else { throw .invalid("declared\(JSONPath.member(key)).formerNames holds a non-string") }
                        formerNames.append(text)
                    }
                }
                changes.declarations[key] = KeyDeclaration(type: type, initial: entry["initial"], formerNames: formerNames)
            }
        }
        if let undeclared = members["undeclared"] {
            guard case .array(let names) = undeclared else { throw .invalid("\"undeclared\" is not an array") }
            for name in names {
                guard case .string(let text) = name else { throw .invalid("\"undeclared\" holds a non-string") }
                changes.removedDeclarations.insert(text)
            }
        }
        var was = RecordDigests()
        if let member = members["was"] { was.values = try digests(member, name: "was") }
        if let member = members["wasDeclared"] { was.declarations = try digests(member, name: "wasDeclared") }
        return (changes, was)
    }

    /// A record's `"was"` or `"wasDeclared"`: keys mapped to 8 hex digits.
    private static func digests(_ member: JSON, name: String) throws(LineProblem) -> [KeyDigest] {
        guard case .object(let entries) = member else { throw .invalid("\"\(name)\" is not an object") }
        var digests: [KeyDigest] = []
        digests.reserveCapacity(entries.count)
        for (key, entry) in entries {
            guard case .string(let text) = entry, let digest = hexValue(text.utf8) else {
                throw .invalid("\(name)\(JSONPath.member(key)) is not 8 lowercase hex digits")
            }
            digests.append(KeyDigest(key: key, digest: digest))
        }
        return digests
    }
}
