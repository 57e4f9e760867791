import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    /// Whether a writer of release 0.1 may write the file (``JSONFormatOne/previousReleasesMayWrite(_:)``).
    var previousReleasesMayWrite: Bool {
        JSONFormatOne.previousReleasesMayWrite(loaded)
    }

    /// The format the next write leaves the file in (``JSONFormatOne/targetFormat(requested:_:)``).
    var targetFormat: Int {
        JSONFormatOne.targetFormat(requested: options.formatVersion, loaded)
    }

    /// Format 1: the whole file, as release 0.1 writes it (``JSONFormatOne``); a journal beside it is folded in first.
    /// Called under the lock by ``commitTransaction(_:)``, with `record` the pending changes merged with `changes`.
    func commitInFormatOne(_ changes: Changeset, record: Changeset) throws(PrefsError) {
        guard let next = try JSONFormatOne.nextDocument(document, changes: changes, record: record, loaded: loaded) else { return }
        try write(next, generation: nil)
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
