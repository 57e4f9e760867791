import Foundation
import PrefsSupport

/// Format 1 of the JSON store, release 0.1's: no journal, the whole file replaced on every write, under `flock` as
/// well as the mutex, so that 0.1's writers are excluded too. A store stays in format 1 unless it is opened with
/// `formatVersion: 2`; a new store is created in format 2.
///
/// Its rules, as functions of what the backend loaded (``JSONLoadedFiles``), apart from the files: which format a
/// write leaves the file in, whether 0.1's writers must be excluded, and the document a format-1 write replaces the
/// file with. ``JSONFileBackend/commitInFormatOne(_:record:)`` does the writing.
enum JSONFormatOne {
    /// Whether a writer of release 0.1 (which locks with `flock` alone) may write the file: it writes format-1
    /// files, and creates missing ones. It refuses format 2, so a format-2 store needs only the mutex.
    static func previousReleasesMayWrite(_ loaded: JSONLoadedFiles) -> Bool {
        loaded.stamp == nil || loaded.format == JSONStoreDocument.journallessFormatVersion
    }

    /// The format the next write leaves the file in: the one asked for (`requested`), else the file's own, else the
    /// newest.
    static func targetFormat(requested: Int?, _ loaded: JSONLoadedFiles) -> Int {
        if let requested { return requested }
        if loaded.stamp != nil, let format = loaded.format { return format }
        return JSONStoreDocument.formatVersion
    }

    /// The document a format-1 commit replaces the file with: `committed` with `changes` applied, in format 1; nil
    /// when the file is format 1 already, no journal applies to it and `record` (the pending changes merged with
    /// `changes`) is empty: nothing to write. Throws when a value `record` writes cannot be said in format 1.
    static func nextDocument(
        _ committed: JSONStoreDocument, changes: Changeset, record: Changeset, loaded: JSONLoadedFiles
    ) throws(PrefsError) -> JSONStoreDocument? {
        let target = JSONStoreDocument.journallessFormatVersion
        guard loaded.stamp == nil || !record.isEmpty || loaded.format != target || loaded.journalApplies else { return nil }
        var next = committed
        next.apply(changes)
        if let (key, reason) = next.formatOneProblem(among: record.values.keys) { throw PrefsError.encodingFailed(key: key, reason: reason) }
        next.formatVersion = target
        return next
    }
}
