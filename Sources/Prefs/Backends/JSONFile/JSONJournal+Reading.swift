import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONJournal {
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
}
