import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    /// Whether a writer of release 0.1 (which locks with `flock` alone) may write the file: it writes format-1
    /// files, and creates missing ones. It refuses format 2, so a format-2 store needs only the mutex.
    var previousReleasesMayWrite: Bool {
        stamp == nil || snapshotFormat == JSONStoreDocument.journallessFormatVersion
    }

    /// The format the next write leaves the file in: the one asked for, else the file's own, else the newest.
    var targetFormat: Int {
        if let requested = options.formatVersion { return requested }
        if stamp != nil, let snapshotFormat { return snapshotFormat }
        return JSONStoreDocument.formatVersion
    }

    /// Format 1: the whole file, as release 0.1 writes it; a journal beside it is folded in first. Called under the
    /// lock by ``commitTransaction(_:)``, with `record` the pending changes merged with `changes`.
    func commitInFormatOne(_ changes: Changeset, record: Changeset) throws(PrefsError) {
        guard stamp == nil || !record.isEmpty || snapshotFormat != targetFormat || journalApplies else { return }
        var next = document
        next.apply(changes)
        if let (key, reason) = next.formatOneProblem(among: record.values.keys) { throw PrefsError.encodingFailed(key: key, reason: reason) }
        next.formatVersion = JSONStoreDocument.journallessFormatVersion
        try write(next)
        snapshotGeneration = nil
        journalApplies = false
        editedKeys = JSONJournalMerge.Keys()
        pending = Changeset()
        pendingWas = JSONJournal.KeyDigests()
        try removeJournal()
    }

    /// Removes the journal beside a format-1 snapshot, which never applies it (a stray one is moved aside instead).
    private func removeJournal() throws(PrefsError) {
        try setStrayJournalAside()
        journal.closeDescriptor()
        journal.forget()
        guard let directory = try folder.existing(), try directory.foreignOwner(of: journal.name) == nil else { return }  // another user's: left alone
        try directory.remove(journal.name)
    }
}
