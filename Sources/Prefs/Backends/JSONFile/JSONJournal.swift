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

    /// A new generation: 64 random bits in hex.
    static func newGeneration() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
