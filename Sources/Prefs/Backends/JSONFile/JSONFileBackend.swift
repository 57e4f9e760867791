import Foundation
internal import PrefsJSON
import PrefsSupport

#if canImport(Glibc)
import Glibc
private let closeFile = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let closeFile = Darwin.close
#endif

/// A store in one human-readable JSON file (see ``JSONStoreDocument``) and its journal (see ``JSONJournal``).
///
/// Writers take an exclusive lock on `FILE.lock`, catch up with what other processes wrote (the journal's new records,
/// or the whole file after a compaction), and append their change set to the journal as one line: a set costs one
/// `write(2)`, whatever the number of keys. Once the journal is four times the snapshot, the writer folds it into a new
/// snapshot (atomic replace) and starts a new journal generation. Two processes writing different keys therefore both
/// survive, and a stale copy never overwrites newer keys.
final class JSONFileBackend: PrefsBackend {
    /// The lock file beside the store: `store.json.lock`.
    static let lockSuffix = ".lock"

    struct Options: Sendable {
        var durability: Prefs.Durability
        var writeMode: Prefs.WriteMode
        var recovery: Prefs.Recovery
        var lockTimeout: Duration
        /// The journal size below which a write never compacts (``JSONJournal/compactionThreshold(snapshotSize:floor:)``).
        var compactionFloor = JSONJournal.defaultCompactionFloor
        /// Where the store's file events go, for the simulated power cuts; nil otherwise.
        var trace: FileSystem.Trace?
    }

    let path: String
    private let requestedPath: String
    /// The store's folder, held open: every file operation goes through it (see ``StoreFolder``).
    private let folder: StoreFolder
    private let options: Options
    private let lock: FileLock
    /// The journal beside the snapshot, `FILE.journal`.
    let journal: JSONJournalFile
    /// The journal generation of the snapshot read (its `journalGeneration` member); nil without one.
    private var snapshotGeneration: String?
    /// Whether the journal read continues the snapshot read (same generation), so its records are in `document`.
    private var journalApplies = false
    /// Whether this backend appended to the journal since it was opened (it then compacts when closed).
    private var appendedSinceOpen = false
    /// The committed document, with pending coalesced changes applied on top.
    private var document = JSONStoreDocument()
    /// The stamp of the file `document` was read from or written as; nil while the file does not exist.
    private var stamp: FileSystem.Stamp?
    /// Changes accepted in coalesced mode and not yet written.
    private var pending = Changeset()
    private var inTransaction = false
    private var removedLeftovers = false
    /// Set when a write's re-read under the lock found another process's change; the next `refresh()` reports it,
    /// so the store drops what it cached from before that change.
    private var changedSinceRefresh = false
    /// The stamp of a file version that could not be read, with the error it gave: the same version is not parsed
    /// (and reported) again on every poll, only once it changes.
    private var unreadable: (stamp: FileSystem.Stamp, error: PrefsError)?
    /// A descriptor open on the snapshot `stamp` describes, and its link count then: a check for another process's
    /// change is then an `fstat`, not a path lookup (see ``snapshotStamp()``); -1 without one.
    private var snapshotDescriptor: Int32 = -1
    private var snapshotLinks: UInt64 = 0
    private var snapshotDescriptorIdentity: FileIdentity?
    #if os(Linux)
    /// Watches the snapshot and journal a writer holds open, so that its next check is one cheap `ioctl`. Made the first
    /// time this store holds both open, so only writers have one: each is an inotify instance, of which a user has 128
    /// by default. Without one (none left), checks take the long way.
    private var replacementWatch: FileReplacementWatch?
    private var replacementWatchUnavailable = false
    #endif

    init(path requestedPath: String, options: Options) throws(PrefsError) {
        self.requestedPath = requestedPath
        let folder = try StoreFolder(file: requestedPath)
        self.folder = folder
        self.path = folder.filePath
        self.options = options
        self.lock = FileLock(folder: folder, name: folder.name + Self.lockSuffix)
        self.journal = JSONJournalFile(folder: folder, name: folder.name + JSONJournal.suffix, trace: options.trace)
        recovered = nil
        readOnly = access(path, F_OK) == 0 ? PrefsError.readOnlyReason(path: path) : nil
        // An unreadable snapshot or journal (a bad line before good ones) moves both aside, and the store starts empty.
        (_, recovered) = try StoreFileRecovery.open(
            folder, recovery: options.recovery, sidecarSuffixes: [JSONJournal.suffix], lock: (lock, options.lockTimeout)
        ) {
            () throws(PrefsError) in try reload()
        }
        if journalApplies, journal.tail != .clean {
            // An incomplete last line may be an append in progress: look again holding the writer lock.
            if case .incomplete = journal.tail, (try? lock.lock(timeout: options.lockTimeout)) != nil {
                defer { lock.unlock() }
                _ = try? reload()
            }
            if journalApplies, journal.tail != .clean { tornJournalTail = journal.tail }
        }
    }

    /// A torn last journal record found on opening (a writer died mid-append): not applied, removed by the next write.
    private(set) var tornJournalTail: JSONJournal.Tail?

    private(set) var recovered: RecoveredFile?

    var openingReport: [Prefs.Diagnostic.Kind] {
        var kinds = recovered.map { [$0.diagnosticKind] } ?? []
        if let torn = tornJournalTail, let line = torn.line {
            kinds.append(.journalTornTail(path: journal.path, line: line, bytes: torn.bytes))
        }
        return kinds
    }
    /// Why this user cannot write the store, found at open; nil when it can (a write then fails with its own error).
    private let readOnly: String?

    /// The endings of the files beside the store: its lock file and its journal.
    static let sidecarSuffixes = [lockSuffix, JSONJournal.suffix]

    var files: [String] { FileSystem.existing([path] + Self.sidecarSuffixes.map { path + $0 }) }

    var description: String { ".jsonFile(\(JSON.string(requestedPath).serialized()))" }

    var flushInterval: Duration? {
        if case .coalesced(let interval) = options.writeMode { return interval }
        return nil
    }

    // MARK: - Reading

    func value(forKey key: String) -> StoredValue? { document.values[key] }
    func allValues() -> [String: StoredValue] { document.values }
    func declarations() -> [String: KeyDeclaration] { document.declarations }

    /// Catches up with the files: the journal's new records when only they changed, the snapshot and the whole journal
    /// when the snapshot or the journal was replaced. Returns true when anything changed. The pending coalesced changes
    /// stay on top.
    private func reload() throws(PrefsError) -> Bool {
        #if os(Linux)
        if stamp != nil, let watch = replacementWatch, watch.isQuiet(), let records = try journal.readAppended() {
            return applyNew(records)  // only appends since the last check: the journal's new records, found by size
        }
        // Watch the files held now, then check them: a change made after this point is reported next time.
        if snapshotDescriptor >= 0, let snapshot = snapshotDescriptorIdentity, let appending = journal.appendDescriptor,
            let watch = writerWatch()
        {
            watch.watch(snapshot: (snapshotDescriptor, snapshot), journal: appending)
        } else {
            replacementWatch?.stop()
        }
        do {
            let changed = try reloadChecking()
            // The watch vouches only for the files the store holds after the check.
            if let watch = replacementWatch, let watched = watch.watched,
                watched != [snapshotDescriptorIdentity, journal.appendDescriptor?.identity]
            {
                watch.stop()
            }
            return changed
        } catch {
            replacementWatch?.stop()
            throw error
        }
        #else
        return try reloadChecking()
        #endif
    }

    #if os(Linux)
    /// The writer's watch, made on first use; nil when the system has no inotify instance to give.
    private func writerWatch() -> FileReplacementWatch? {
        if replacementWatch == nil, !replacementWatchUnavailable {
            replacementWatch = FileReplacementWatch()
            replacementWatchUnavailable = replacementWatch == nil
        }
        return replacementWatch
    }
    #endif

    /// ``reload()`` by the files' status: the snapshot's (see ``snapshotStamp()``), then the journal's.
    private func reloadChecking() throws(PrefsError) -> Bool {
        let current = try snapshotStamp()
        if current == stamp {
            guard current != nil else { return false }  // no snapshot: a journal beside it is a leftover, never read
            if let records = try journal.readNew() { return applyNew(records) }
        }
        return try reloadAll(current)
    }

    /// Applies records read from the journal since the last read; returns whether any changed the document.
    private func applyNew(_ records: [Changeset]) -> Bool {
        guard journalApplies, !records.isEmpty else { return false }
        for record in records { document.apply(record) }
        if !pending.isEmpty { document.apply(pending) }
        return true
    }

    /// The snapshot's stamp now, nil when there is none. When the file read last is still the one at the path,
    /// unchanged, its open descriptor says so, without a path lookup: a file renamed over or removed has one link
    /// fewer, and a file written in place has another size or time. Otherwise the path's `stat`, and a descriptor is
    /// kept for next time when the path still holds the file read.
    private func snapshotStamp() throws(PrefsError) -> FileSystem.Stamp? {
        var info = stat()
        if snapshotDescriptor >= 0, fstat(snapshotDescriptor, &info) == 0, UInt64(info.st_nlink) == snapshotLinks, FileSystem.Stamp(info) == stamp {
            return stamp
        }
        closeSnapshotDescriptor()
        guard let directory = try folder.existing() else { return nil }
        let current = try directory.stamp(of: folder.name)
        if let current, current == stamp, let (fd, opened) = try? directory.open(folder.name, O_RDONLY | O_NONBLOCK) {
            if FileSystem.Stamp(opened) == current {
                snapshotDescriptor = fd
                snapshotLinks = UInt64(opened.st_nlink)
                snapshotDescriptorIdentity = FileIdentity(opened)
            } else {
                _ = closeFile(fd)
            }
        }
        return current
    }

    private func closeSnapshotDescriptor() {
        if snapshotDescriptor >= 0 { _ = closeFile(snapshotDescriptor) }
        snapshotDescriptor = -1
        snapshotDescriptorIdentity = nil
    }

    deinit { closeSnapshotDescriptor() }

    /// Re-reads the snapshot, then the journal from its start, applying the journal when it continues the snapshot.
    private func reloadAll(_ first: FileSystem.Stamp?) throws(PrefsError) -> Bool {
        var current = first
        for _ in 0..<100 {
            if let unreadable, unreadable.stamp == current { throw unreadable.error }
            guard let (data, readStamp) = try folder.existing()?.contents(of: folder.name) else {
                document = JSONStoreDocument()
                document.apply(pending)
                stamp = nil
                snapshotGeneration = nil
                journalApplies = false
                journal.forget()
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
            if records != nil, journal.generation != generation {
                // Another generation: a journal already folded into this snapshot, unless a compaction replaced the
                // snapshot since it was read (then read both again).
                current = try folder.existing()?.stamp(of: folder.name)
                if current != readStamp { continue }
            }
            journalApplies = records != nil && generation != nil && journal.generation == generation
            if journalApplies, let records {
                for record in records { fresh.apply(record) }
            }
            fresh.apply(pending)
            document = fresh
            stamp = readStamp
            snapshotGeneration = generation
            return true
        }
        throw .io(path: path, operation: "read (replaced on every attempt)", errno: EAGAIN)
    }

    func refresh() throws -> Bool {
        let changed = try reload()
        defer { changedSinceRefresh = false }
        return changed || changedSinceRefresh
    }

    // MARK: - Writing

    func apply(_ changes: Changeset) throws {
        if flushInterval != nil {
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
            if !removedLeftovers {
                // Only the lock holder writes temporary files, so any found now were left by a writer that died.
                try folder.existing()?.removeTemporaryLeftovers(of: folder.name)
                try folder.existing()?.removeTemporaryLeftovers(of: journal.name)
                removedLeftovers = true
            }
            if try reload() { changedSinceRefresh = true }
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
        guard stamp != nil, let snapshotGeneration else {
            // No snapshot yet, or one without a generation (written by hand or by an earlier release): write it whole,
            // with a new generation. A journal left beside it is of another generation, so it is never applied.
            var next = document
            next.apply(changes)
            let generation = JSONJournal.newGeneration()
            next.unknownMembers[JSONJournal.generationMember] = .string(generation)
            try write(next)
            snapshotGeneration = generation
            journalApplies = false
            pending = Changeset()
            return
        }
        guard !record.isEmpty else { return }
        let sync = options.durability == .powerLoss
        journalApplies = false
        try journal.prepareForAppend(generation: snapshotGeneration, sync: sync)
        journalApplies = true
        try journal.append(record, sync: sync)  // the commit point
        appendedSinceOpen = true
        document.apply(changes)  // in place: the document already holds `pending`
        pending = Changeset()
        if let stamp, journal.size > JSONJournal.compactionThreshold(snapshotSize: Int(stamp.size), floor: options.compactionFloor) {
            try? compact()  // the change is committed; a compaction that fails is tried again by the next write
        }
    }

    /// Folds the journal into a new snapshot. Called under the lock, with nothing pending. A crash at any step loses
    /// nothing: before the snapshot's rename, the old snapshot and its journal hold everything; after it, the new
    /// snapshot does, and the old journal (another generation) is never applied again.
    private func compact() throws(PrefsError) {
        let generation = JSONJournal.newGeneration()
        var next = document
        next.unknownMembers[JSONJournal.generationMember] = .string(generation)
        try write(next)  // 1. the new snapshot; the journal is stale from here on
        snapshotGeneration = generation
        journalApplies = false
        try journal.reset(generation: generation, sync: options.durability == .powerLoss)  // 2. an empty journal continues it
        journalApplies = true
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

    /// Replaces the file with `next` and makes it the committed document. Called under the lock.
    private func write(_ next: JSONStoreDocument) throws(PrefsError) {
        stamp = try folder.created().replace(folder.name, with: next.encoded(), sync: options.durability == .powerLoss, trace: options.trace)
        document = next
    }

    // MARK: - Checking and closing

    /// Problems of the snapshot with its journal applied. A torn last journal record is none: a writer killed
    /// mid-append leaves one, it is never applied, and opening reports it (``Prefs/Diagnostic/Kind/journalTornTail(path:line:bytes:)``).
    func integrityProblems() throws -> [String] {
        guard let onDisk = try readFiles() else { return [] }
        return onDisk.values.keys.sorted().compactMap { key in
            onDisk.values[key].flatMap { $0.typeProblem ?? $0.shapeProblem() }.map { "$.values\(JSONPath.member(key)): \($0)" }
        }
    }

    /// The files as they are now parse as a store document and a journal (files that do not throw
    /// ``PrefsError/corruptStore(path:reason:)``); values are not checked against their types, and a torn journal
    /// tail (never applied) is no problem.
    func quickCheckProblems() throws -> [String] {
        _ = try readFiles()
        return []
    }

    /// The snapshot with its journal applied, as the files are now; nil without a snapshot.
    private func readFiles() throws(PrefsError) -> JSONStoreDocument? {
        guard let (data, _) = try folder.existing()?.contents(of: folder.name) else { return nil }
        var onDisk = try JSONStoreDocument(data: data, path: path)
        let reader = JSONJournalFile(folder: folder, name: journal.name)
        guard let records = try reader.readAll(), let generation = JSONJournal.generation(of: onDisk), reader.generation == generation else {
            return onDisk
        }
        for record in records { onDisk.apply(record) }
        return onDisk
    }

    /// Folds the journal into the snapshot when this backend wrote to it, so that after a normal close the snapshot
    /// alone is current (when no other process writes). Skipped, harmlessly, when the lock is busy or the fold fails.
    func close() {
        defer {
            journal.closeDescriptor()
            closeSnapshotDescriptor()
            #if os(Linux)
            replacementWatch = nil
            #endif
        }
        guard appendedSinceOpen, pending.isEmpty, (try? lock.lock(timeout: min(options.lockTimeout, .milliseconds(200)))) != nil else { return }
        defer { lock.unlock() }
        guard (try? reload()) != nil, stamp != nil, journalApplies, journal.hasRecords else { return }
        try? compact()
    }
}
