import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    func apply(_ changes: Changeset) throws {
        if flushInterval != nil {
            notePendingWas(in: document, for: changes)
            pending.merge(changes)
            document.apply(changes)
            return
        }
        try applyInTransaction(changes)
    }

    func beginTransaction() throws {
        if let readOnly { throw PrefsError.readOnlyStore(path: path, reason: readOnly) }
        try lock.lock(timeout: options.lockTimeout)
        do {
            if previousReleasesMayWrite { try lock.lockForPreviousReleases(timeout: options.lockTimeout) }
            if !removedLeftovers {
                // Only the lock holder writes temporary files, so any found now were left by a writer that died.
                try folder.existing()?.removeTemporaryLeftovers(of: folder.name)
                try folder.existing()?.removeTemporaryLeftovers(of: journal.name)
                removedLeftovers = true
            }
            if try reload() { changedSinceRefresh = true }
            // A journal another user put in its place: a write in format 2 would need it. Refused before anything is
            // written, naming them.
            if targetFormat != JSONStoreDocument.journallessFormatVersion { try folder.existing()?.refuseForeignEntry(journal.name) }
            if previousReleasesMayWrite, !lock.holdsLockForPreviousReleases {
                // The file turned out to be one release 0.1 writes: exclude its writers too, then look again.
                try lock.lockForPreviousReleases(timeout: options.lockTimeout)
                if try reload() { changedSinceRefresh = true }
            }
        } catch {
            lock.unlock()
            throw error
        }
        inTransaction = true
    }

    func commitTransaction(_ changes: Changeset) throws {
        defer {
            inTransaction = false
            lock.unlock()
        }
        var record = changes
        if !pending.isEmpty {
            record = pending
            record.merge(changes)
        }
        let sync = options.durability == .powerLoss
        if targetFormat == JSONStoreDocument.journallessFormatVersion { return try commitInFormatOne(changes, record: record) }
        guard stamp != nil, let snapshotGeneration, editedKeys.isEmpty else {
            // No snapshot yet, one without a generation (format 1, or written by hand), or one a hand edit changed
            // under the journal: write it whole, with a new generation, and a journal that continues it.
            var next = document
            next.apply(changes)
            try writeWithNewGeneration(next)
            pending = Changeset()
            pendingWas = JSONJournal.KeyDigests()
            return
        }
        guard !record.isEmpty else { return }
        loaded = loaded.with(journalApplies: false)
        try setStrayJournalAside()
        try journal.prepareForAppend(generation: snapshotGeneration, snapshot: snapshotDigest, sync: sync)
        loaded = loaded.with(journalApplies: true)
        let was = firstChangeDigests(of: record)
        try journal.append(record, was: was, sync: sync)  // the commit point
        appendedSinceOpen = true
        unfoldedSince = options.clock.uptimeNanoseconds
        document.apply(changes)  // in place: the document already holds `pending`
        pending = Changeset()
        pendingWas = JSONJournal.KeyDigests()
        if let stamp, journal.size > JSONJournal.compactionThreshold(snapshotSize: Int(stamp.size), floor: options.compactionFloor) {
            try? compact()  // the change is committed; a compaction that fails is tried again by the next write
        }
    }

    /// For the keys `record` is the first record of the journal to change, what each held in the snapshot: the committed
    /// value, or for a pending (coalesced) change the value it replaced (``pendingWas``). On every set: one lookup per
    /// key, and a digest only for a key the journal has not changed yet.
    private func firstChangeDigests(of record: Changeset) -> JSONJournal.RecordDigests {
        var was = JSONJournal.RecordDigests()
        let pendingWas = pendingWas.isEmpty ? nil : pendingWas
        for (key, _) in record.values where journal.was.values[key] == nil {  // no array of the keys
            let digest = pendingWas?.values[key] ?? JSONJournal.digest(document.values[key])
            was.values.append(JSONJournal.KeyDigest(key: key, digest: digest))
        }
        func declarationDigest(_ key: String) {
            let digest = pendingWas?.declarations[key] ?? JSONJournal.digest(document.declarations[key])
            was.declarations.append(JSONJournal.KeyDigest(key: key, digest: digest))
        }
        for key in record.declarations.keys where journal.was.declarations[key] == nil { declarationDigest(key) }
        for key in record.removedDeclarations where record.declarations[key] == nil && journal.was.declarations[key] == nil {
            declarationDigest(key)
        }
        return was
    }

    /// Records, for the pending changes' keys that the journal has not changed, a digest of what `committed` holds
    /// for them: what the record that writes them replaces.
    func notePendingWas(in committed: JSONStoreDocument, for changes: Changeset) {
        for (key, _) in changes.values where journal.was.values[key] == nil && pendingWas.values[key] == nil {
            pendingWas.values[key] = JSONJournal.digest(committed.values[key])
        }
        for key in changes.declarations.keys where journal.was.declarations[key] == nil && pendingWas.declarations[key] == nil {
            pendingWas.declarations[key] = JSONJournal.digest(committed.declarations[key])
        }
        for key in changes.removedDeclarations where journal.was.declarations[key] == nil && pendingWas.declarations[key] == nil {
            pendingWas.declarations[key] = JSONJournal.digest(committed.declarations[key])
        }
    }

    func rollbackTransaction() {
        if inTransaction {
            inTransaction = false
            lock.unlock()
        }
    }

    func flush() throws {
        guard !pending.isEmpty else { return }
        try applyInTransaction(Changeset())  // the pending changes are already in `document`
    }
}
