import Foundation
import PrefsSupport

/// What a JSON store's backend last read of its files, or wrote: the snapshot's stamp, journal generation, format and
/// bytes (for their digest), the keys a hand edit changed under the journal, and whether the journal continues the
/// snapshot. One immutable value, replaced whole by every load, reload and write, so that no two of its parts ever
/// describe different files. Two changes replace it with one member changed: the snapshot's digest once it is
/// computed (``with(snapshot:)``), and whether the journal applies while a write appends to it (``with(journalApplies:)``).
///
/// The document read is kept beside it (``JSONFileBackend/document``), not in it: its entries are decoded in place on
/// their first read, and a write applies its changes in place.
struct JSONLoadedFiles {
    /// The stamp of the snapshot read or written; nil while the file does not exist.
    let stamp: FileSystem.Stamp?
    /// The snapshot's journal generation (its `journalGeneration` member); nil without one.
    let generation: String?
    /// The snapshot's format; nil while there is none.
    let format: Int?
    /// The snapshot's bytes, or their digest once computed.
    let snapshot: SnapshotBytes
    /// Keys a hand edit of the snapshot changed while the journal held changes to them (``JSONJournalMerge``).
    let editedKeys: JSONJournalMerge.Keys
    /// Whether the journal read continues the snapshot read (same generation), so its records are in the document.
    let journalApplies: Bool

    /// No file: nothing read, nothing written.
    static let none = JSONLoadedFiles(
        stamp: nil, generation: nil, format: nil, snapshot: .none, editedKeys: JSONJournalMerge.Keys(), journalApplies: false)

    enum SnapshotBytes {
        case none
        /// The snapshot read, its digest not computed yet (its values keep the same bytes until they are decoded).
        case read(Data)
        case computed(JSONJournal.SnapshotDigest)
    }

    /// The same files, the snapshot's bytes replaced (by their digest).
    func with(snapshot: SnapshotBytes) -> JSONLoadedFiles {
        JSONLoadedFiles(stamp: stamp, generation: generation, format: format, snapshot: snapshot, editedKeys: editedKeys, journalApplies: journalApplies)
    }

    /// The same files, the journal applying or not.
    func with(journalApplies: Bool) -> JSONLoadedFiles {
        JSONLoadedFiles(stamp: stamp, generation: generation, format: format, snapshot: snapshot, editedKeys: editedKeys, journalApplies: journalApplies)
    }
}
