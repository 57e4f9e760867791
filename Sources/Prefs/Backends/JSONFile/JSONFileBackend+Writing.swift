import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    func apply(_ changes: Changeset) throws {
        if flushInterval != nil {
            // Filtered only when it declares: a copy of the change set at every write costs a set some 1.5%.
            if changes.declarations.isEmpty { return addPending(changes) }
            return addPending(withoutRecordedDeclarations(changes))
        }
        try applyInTransaction(changes)
    }

    /// Coalesced: `changes` join the pending ones, and the document, until the next flush writes them.
    private func addPending(_ changes: Changeset) {
        notePendingWas(in: document, for: changes, after: pending)
        pending.merge(changes)
        document.apply(changes)
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
        // Filtered only when it declares, as in `apply(_:)`; under the lock, against the document just read again.
        if changes.declarations.isEmpty { return try commitUnderLock(changes) }
        try commitUnderLock(withoutRecordedDeclarations(changes))
    }

    /// Writes `changes` (with any pending ones) and releases the lock ``beginTransaction()`` took.
    private func commitUnderLock(_ changes: Changeset) throws {
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
    /// value, or for a pending (coalesced) change the value it replaced (``pendingWas``, which holds only what was there:
    /// a pending key it does not hold replaced nothing). On every set: one lookup per key, and a digest only for a key
    /// the journal has not changed yet.
    private func firstChangeDigests(of record: Changeset) -> JSONJournal.RecordDigests {
        var was = JSONJournal.RecordDigests()
        record.values.forEachName { name, _ in
            guard journal.was.values[name.name] == nil else { return }
            let digest =
                pending.values.contains(name)  // an empty table answers without hashing: a durable write's case
                ? pendingWas.values[name.name] ?? JSONJournal.digest(StoredValue?.none)
                : JSONJournal.digest(document.values[name.name])
            was.values.append(JSONJournal.KeyDigest(key: name.name, digest: digest))
        }
        func declarationDigest(_ key: String) {
            let digest =
                pending.declares(key)
                ? pendingWas.declarations[key] ?? JSONJournal.digest(KeyDeclaration?.none)
                : JSONJournal.digest(document.declarations[key])
            was.declarations.append(JSONJournal.KeyDigest(key: key, digest: digest))
        }
        for key in record.declarations.keys where journal.was.declarations[key] == nil { declarationDigest(key) }
        for key in record.removedDeclarations where record.declarations[key] == nil && journal.was.declarations[key] == nil {
            declarationDigest(key)
        }
        return was
    }

    /// `changes` without the declarations the document already records alike. The store gives a key's first write in
    /// a process its declaration without reading the recorded one first (``recordsOnlyChangedDeclarations``): it is
    /// compared here, under the lock when the write is durable, and one recorded alike is no change to write. Its
    /// callers call it only for changes that declare (a change set passed through unchanged is a copy).
    func withoutRecordedDeclarations(_ changes: Changeset) -> Changeset {
        var unchanged: [String] = []
        for (key, declaration) in changes.declarations where !changes.removedDeclarations.contains(key) {
            if document.declarations.decodedValue(forKey: key) == declaration { unchanged.append(key) }
        }
        guard !unchanged.isEmpty else { return changes }
        var changed = changes
        for key in unchanged { changed.declarations.removeValue(forKey: key) }
        return changed
    }

    /// Records, for the keys of `changes` that the journal has not changed and `earlier` (the changes pending before
    /// them) does not hold, a digest of what `committed` holds for them, when it holds something: what the record that
    /// writes them replaces. A pending key without one here or in the journal's replaced nothing
    /// (``firstChangeDigests(of:)``): a new key's first set records no digest, and the table stays as small as the
    /// keys that were there.
    func notePendingWas(in committed: JSONStoreDocument, for changes: Changeset, after earlier: Changeset = Changeset()) {
        let journalWas = journal.was
        changes.values.forEachName { name, _ in
            // The pending table's lookup reuses the key's hash: a key set again while pending hashes nothing here.
            guard !earlier.values.contains(name), journalWas.values[name.name] == nil else { return }
            assert(pendingWas.values[name.name] == nil, "a key with a digest of what it replaced is pending")
            if let value = committed.values[name.name] { pendingWas.values[name.name] = JSONJournal.digest(value) }
        }
        func note(_ key: String) {
            guard !earlier.declares(key), journalWas.declarations[key] == nil, let declaration = committed.declarations[key] else { return }
            pendingWas.declarations[key] = JSONJournal.digest(declaration)
        }
        for key in changes.declarations.keys { note(key) }
        for key in changes.removedDeclarations where changes.declarations[key] == nil { note(key) }
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
