import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    /// The value under `key`: its entry is decoded on its first read (see ``JSONStoreDocument/Values``).
    func value(forKey key: String) -> StoredValue? { document.values.decodedValue(forKey: key) }

    func allValues() -> [String: StoredValue] {
        document.values.decodeAll()
        return document.values.decoded()
    }
    func declarations() -> [String: KeyDeclaration] {
        document.declarations.decodeAll()
        return document.declarations.decoded()
    }

    /// The declaration recorded for `key`, decoded on its first read.
    func declaration(forKey key: String) -> KeyDeclaration? { document.declarations.decodedValue(forKey: key) }

    /// Re-reads the snapshot, then the journal from its start, and combines them (``JSONJournalMerge``): the journal
    /// applies when it continues the snapshot, except for keys a hand edit of the snapshot changed since.
    func reloadAll(_ first: FileSystem.Stamp?) throws(PrefsError) -> Bool {
        var current = first
        for _ in 0..<100 {
            if let unreadable, unreadable.stamp == current { throw unreadable.error }
            guard let (data, readStamp) = try folder.existing()?.contents(of: folder.name) else {
                document = JSONStoreDocument()
                document.apply(pending)
                loaded = .none
                try noteJournalBesideNoSnapshot()
                return true
            }
            var fresh: JSONStoreDocument
            do {
                fresh = try JSONStoreDocument(data: data, path: path)
                unreadable = nil
            } catch {
                unreadable = (readStamp, error)
                throw error
            }
            let generation = JSONJournal.generation(of: fresh)
            let records = try journal.readAll()
            if records != nil, generation == nil || journal.generation != generation {
                // Another generation: a journal already folded into this snapshot, unless a compaction replaced the
                // snapshot since it was read (then read both again).
                current = try folder.existing()?.stamp(of: folder.name)
                if current != readStamp { continue }
            }
            // The snapshot's digest is computed when asked for: by a journal that continues it, or a write.
            var digest: JSONJournal.SnapshotDigest?
            let combined = JSONJournalMerge.combine(
                snapshot: fresh,
                snapshotDigest: {
                    let computed = JSONJournal.SnapshotDigest(data)
                    digest = computed
                    return computed
                }(),
                journalGeneration: journal.generation, journalSnapshot: journal.snapshot, records: records, was: journal.was)
            fresh = combined.document
            fresh.apply(pending)
            pendingWas = JSONJournal.KeyDigests()
            notePendingWas(in: combined.document, for: pending)
            document = fresh
            loaded = JSONLoadedFiles(
                stamp: readStamp, generation: generation, format: fresh.formatVersion, snapshot: digest.map { .computed($0) } ?? .read(data),
                editedKeys: combined.edited, journalApplies: combined.journalApplies)
            if !combined.edited.isEmpty, reportedEdit != readStamp {
                reportedEdit = readStamp
                reports.append(.handEditKept(path: path, keys: combined.edited.names))
            }
            noteStrayJournal(combined.unapplied.isEmpty ? nil : combined.unapplied.names)
            return true
        }
        throw .io(path: path, operation: "read (replaced on every attempt)", errno: EAGAIN)
    }

    /// Records (and reports once) a journal that does not belong to the snapshot and holds changes it lacks; nil
    /// when the journal read is not one.
    private func noteStrayJournal(_ keys: [String]?) {
        guard let keys else {
            strayJournal = nil
            return
        }
        strayJournal = (journal.identity, keys)
        if reportedStray != .some(journal.identity) {
            reportedStray = .some(journal.identity)
            reports.append(.journalNotApplied(path: journal.path, keys: keys, movedTo: nil))
        }
    }

    /// A journal beside no snapshot (the file was removed, or the journal is left from another store) is never
    /// applied; one that holds changes, or cannot be read, is reported and moved aside by the next write.
    private func noteJournalBesideNoSnapshot() throws(PrefsError) {
        journal.forget()
        guard try folder.existing()?.status(of: journal.name) != nil else { return noteStrayJournal(nil) }
        let records: [Changeset]?
        do {
            records = try journal.readAll()
        } catch {
            return noteStrayJournal([])  // unreadable: kept all the same
        }
        let missing = JSONJournalMerge.changesMissing(from: JSONStoreDocument(), records ?? [])
        noteStrayJournal(missing.isEmpty ? nil : missing.names)
        journal.forget()
    }
}
