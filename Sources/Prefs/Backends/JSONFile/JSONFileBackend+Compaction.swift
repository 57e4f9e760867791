import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    /// Folds the journal into a new snapshot. Called under the lock, with nothing pending. A crash at any step loses
    /// nothing: before the snapshot's rename, the old snapshot and its journal hold everything; after it, the new
    /// snapshot does, and the old journal (another generation) is never applied again.
    func compact() throws(PrefsError) {
        document.values.decodeAll()  // here, not in a copy that write(_:) would make of the tables
        document.declarations.decodeAll()
        try writeWithNewGeneration(document)
    }

    /// Replaces the snapshot by `next` in format 2 with a new generation (1), then the journal by an empty one that
    /// continues it (2). A journal that does not belong to the old snapshot and holds changes it lacks is moved aside
    /// first, never replaced.
    func writeWithNewGeneration(_ next: JSONStoreDocument) throws(PrefsError) {
        var next = next
        let generation = JSONJournal.newGeneration()
        next.formatVersion = JSONStoreDocument.formatVersion
        next.unknownMembers[JSONStoreDocument.declaredInFullMember] = nil
        next.unknownMembers[JSONJournal.generationMember] = .string(generation)
        try setStrayJournalAside()
        try write(next, generation: generation)  // 1. the new snapshot; the journal is stale from here on
        unfoldedSince = nil
        // 2. an empty journal continues it (a store that has none yet gets one with its first append; in a shared folder
        // at once, so that no other user can put one there first)
        if journal.identity == nil, let directory = try folder.existing(), !directory.isShared, try directory.status(of: journal.name) == nil {
            return journal.forget()
        }
        try journal.reset(generation: generation, snapshot: snapshotDigest, sync: options.durability == .powerLoss)
        loaded = loaded.with(journalApplies: true)
    }

    /// Moves a journal that does not belong to the snapshot and holds changes it lacks (``strayJournal``) aside,
    /// byte for byte, as `FILE.journal.unapplied-TIME`, and reports where; under the lock, before anything replaces it.
    func setStrayJournalAside() throws(PrefsError) {
        guard let stray = strayJournal else { return }
        strayJournal = nil
        guard let directory = try folder.existing(), let info = try directory.status(of: journal.name),
            stray.identity == nil || stray.identity == FileIdentity(info)
        else { return }
        let aside = try directory.moveAside(journal.name, label: "unapplied")
        journal.closeDescriptor()
        journal.forget()
        reports.append(.journalNotApplied(path: journal.path, keys: stray.keys, movedTo: aside))
    }

    /// Replaces the file with `next` and makes it the committed document, of journal generation `generation` (nil: none),
    /// which no journal continues yet. Called under the lock.
    func write(_ next: JSONStoreDocument, generation: String?) throws(PrefsError) {
        var next = next
        // Encoding needs every entry: decode them once and keep them, so that the next compaction parses nothing again
        // and the bytes of the file read are let go.
        next.values.decodeAll()
        next.declarations.decodeAll()
        let data = next.encoded()
        let stamp = try folder.created().replace(folder.name, with: data, sync: options.durability == .powerLoss, trace: options.trace)
        loaded = JSONLoadedFiles(
            stamp: stamp, generation: generation, format: next.formatVersion, snapshot: .computed(JSONJournal.SnapshotDigest(data)),
            editedKeys: JSONJournalMerge.Keys(), journalApplies: false)
        document = next.formatVersion == JSONStoreDocument.journallessFormatVersion ? next.asReadBack() : next
    }

    // MARK: - Idle compaction

    /// How long until ``doIdleWork()`` has work: while this backend appended records no compaction folded since.
    var idleWorkDelay: Duration? {
        guard let delay = options.idleCompactionDelay, let unfoldedSince else { return nil }
        let idle = Duration.nanoseconds(Int64(clamping: options.clock.uptimeNanoseconds &- unfoldedSince))
        return max(.zero, delay - idle)
    }

    /// Folds the journal into the snapshot once the writer has been idle for the delay, so that the file a person
    /// opens is current. Returns how long to wait before asking again (a write came since, or the lock was busy), or
    /// nil when there is nothing more to do. Never throws: a fold that fails is tried again by the next write.
    func doIdleWork() -> Duration? {
        guard let remaining = idleWorkDelay else { return nil }
        guard remaining <= .zero else { return remaining }
        guard pending.isEmpty, (try? lock.lock(timeout: .milliseconds(50))) != nil else { return options.idleCompactionDelay }
        defer { lock.unlock() }
        // What another process wrote since this store last looked is in the document now: the store's next refresh
        // must say so (its cache holds the values from before), as it does after a write's reload.
        let reloaded: Bool?
        do { reloaded = try reload() } catch { reloaded = nil }  // unreadable now: fold nothing; a refresh reports it
        if reloaded == true { changedSinceRefresh = true }
        guard reloaded != nil, stamp != nil, journalApplies, journal.hasRecords, targetFormat != JSONStoreDocument.journallessFormatVersion else {
            unfoldedSince = nil
            return nil
        }
        do {
            try compact()
        } catch {
            return options.idleCompactionDelay
        }
        return nil
    }
}
