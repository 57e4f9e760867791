import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONJournal {
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

    /// Closes the line `writer` holds from `start` on (a JSON object's text without its closing brace) with its
    /// checksum and a newline.
    private static func seal(_ writer: inout JSONWriter, from start: Int) {
        let crc = writer.withOutput { crc32(UnsafeRawBufferPointer(rebasing: $0[start...])) }
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
        let start = writer.count
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
}
