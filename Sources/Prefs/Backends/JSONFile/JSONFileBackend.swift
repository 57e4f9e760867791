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
/// `write(2)`, whatever the number of keys. Once the journal is four times the snapshot, or about a second after a
/// writer's last write, the writer folds it into a new snapshot (atomic replace) and starts a new journal generation.
/// Two processes writing different keys therefore both survive, and a stale copy never overwrites newer keys.
///
/// A store in format 1 (release 0.1's, see ``JSONStoreDocument``) has no journal: each write replaces the whole
/// file, under `flock` as well as the mutex, so that 0.1's writers are excluded too. It stays in format 1 unless
/// the store is opened with `formatVersion: 2`; a new store is created in format 2.
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
        /// The format the store's writes leave the file in: nil keeps an existing file's format (a new one is
        /// created in the newest); 1 or 2 converts the file at its next write.
        var formatVersion: Int?
        /// How long after a write, with no write since, a writer folds the journal into the snapshot; nil never
        /// (tests that look at the journal).
        var idleCompactionDelay: Duration? = JSONFileBackend.defaultIdleCompactionDelay
    }

    /// About a second: a person who opens the file after the app's last write sees it.
    static let defaultIdleCompactionDelay: Duration = .seconds(1)

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
    /// The format of the snapshot read; nil while there is none.
    private var snapshotFormat: Int?
    /// The size and CRC-32 of the snapshot read or written, which a journal begun on it records; nil while there is
    /// none. Computed when first asked for: a process that only reads the store never asks.
    private var snapshotDigest: JSONJournal.SnapshotDigest? {
        switch snapshot {
        case .none: return nil
        case .computed(let digest): return digest
        case .read(let data):
            let digest = JSONJournal.SnapshotDigest(data)
            snapshot = .computed(digest)
            return digest
        }
    }
    private var snapshot = SnapshotBytes.none
    private enum SnapshotBytes {
        case none
        /// The snapshot read, its digest not computed yet (its values keep the same bytes until they are decoded).
        case read(Data)
        case computed(JSONJournal.SnapshotDigest)
    }
    /// Keys a hand edit of the snapshot changed while the journal held changes to them (``JSONJournalMerge``): the
    /// edit is kept, the journal's changes to them are not applied, and the next write folds the journal.
    private var editedKeys = JSONJournalMerge.Keys()
    /// A journal beside the snapshot that does not continue it and holds changes the snapshot lacks (or cannot be
    /// read, beside no snapshot): its identity and those keys. Never applied; the next write moves it aside.
    private var strayJournal: (identity: FileIdentity?, keys: [String])?
    /// Diagnostics found since the store last asked (``takeReports()``), and the snapshot stamps of the hand edits
    /// and stray journals already reported.
    private var reports: [Prefs.Diagnostic.Kind] = []
    private var reportedEdit: FileSystem.Stamp?
    private var reportedStray: FileIdentity??
    /// Digests of what the keys of the pending (coalesced) changes held in the snapshot before them: the record that
    /// writes them says what they replaced (see ``JSONJournal/KeyDigests``).
    private var pendingWas = JSONJournal.KeyDigests()
    /// When this backend last appended a record that no compaction has folded since; nil when none.
    private var unfoldedSince: ContinuousClock.Instant?
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
        if let version = options.formatVersion, !(JSONStoreDocument.journallessFormatVersion...JSONStoreDocument.formatVersion).contains(version) {
            throw .unsupportedFormatVersion(path: requestedPath, found: version, supported: JSONStoreDocument.formatVersion)
        }
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

    func takeReports() -> [Prefs.Diagnostic.Kind] {
        defer { reports = [] }
        return reports
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
        for record in records { document.apply(record, keeping: editedKeys) }
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

    /// Re-reads the snapshot, then the journal from its start, and combines them (``JSONJournalMerge``): the journal
    /// applies when it continues the snapshot, except for keys a hand edit of the snapshot changed since.
    private func reloadAll(_ first: FileSystem.Stamp?) throws(PrefsError) -> Bool {
        var current = first
        for _ in 0..<100 {
            if let unreadable, unreadable.stamp == current { throw unreadable.error }
            guard let (data, readStamp) = try folder.existing()?.contents(of: folder.name) else {
                document = JSONStoreDocument()
                document.apply(pending)
                stamp = nil
                snapshotGeneration = nil
                snapshotFormat = nil
                snapshot = .none
                editedKeys = JSONJournalMerge.Keys()
                journalApplies = false
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
            snapshot = .read(data)  // its digest computed when asked for: by a journal that continues it, or a write
            let combined = JSONJournalMerge.combine(
                snapshot: fresh, snapshotDigest: snapshotDigest ?? JSONJournal.SnapshotDigest(data), journalGeneration: journal.generation,
                journalSnapshot: journal.snapshot, records: records, was: journal.was)
            journalApplies = combined.journalApplies
            editedKeys = combined.edited
            fresh = combined.document
            fresh.apply(pending)
            pendingWas = JSONJournal.KeyDigests()
            notePendingWas(in: combined.document, for: pending)
            document = fresh
            stamp = readStamp
            snapshotGeneration = generation
            snapshotFormat = fresh.formatVersion
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

    /// Records, for the pending changes' keys that the journal has not changed, a digest of what `committed` holds
    /// for them: what the record that writes them replaces.
    private func notePendingWas(in committed: JSONStoreDocument, for changes: Changeset) {
        for key in changes.values.keys where journal.was.values[key] == nil && pendingWas.values[key] == nil {
            pendingWas.values[key] = JSONJournal.digest(committed.values[key])
        }
        for key in changes.declarations.keys where journal.was.declarations[key] == nil && pendingWas.declarations[key] == nil {
            pendingWas.declarations[key] = JSONJournal.digest(committed.declarations[key])
        }
        for key in changes.removedDeclarations where journal.was.declarations[key] == nil && pendingWas.declarations[key] == nil {
            pendingWas.declarations[key] = JSONJournal.digest(committed.declarations[key])
        }
    }

    func refresh() throws -> Bool {
        let changed = try reload()
        defer { changedSinceRefresh = false }
        return changed || changedSinceRefresh
    }

    // MARK: - Writing

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

    /// Whether a writer of release 0.1 (which locks with `flock` alone) may write the file: it writes format-1
    /// files, and creates missing ones. It refuses format 2, so a format-2 store needs only the mutex.
    private var previousReleasesMayWrite: Bool {
        stamp == nil || snapshotFormat == JSONStoreDocument.journallessFormatVersion
    }

    /// The format the next write leaves the file in: the one asked for, else the file's own, else the newest.
    private var targetFormat: Int {
        if let requested = options.formatVersion { return requested }
        if stamp != nil, let snapshotFormat { return snapshotFormat }
        return JSONStoreDocument.formatVersion
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
        if targetFormat == JSONStoreDocument.journallessFormatVersion {
            // Format 1: the whole file, as release 0.1 writes it; a journal beside it is folded in first.
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
            return
        }
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
        journalApplies = false
        try setStrayJournalAside()
        try journal.prepareForAppend(generation: snapshotGeneration, snapshot: snapshotDigest, sync: sync)
        journalApplies = true
        let was = firstChangeDigests(of: record)
        try journal.append(record, was: was, sync: sync)  // the commit point
        appendedSinceOpen = true
        unfoldedSince = .now
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
        for key in record.values.keys where journal.was.values[key] == nil {
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

    /// Folds the journal into a new snapshot. Called under the lock, with nothing pending. A crash at any step loses
    /// nothing: before the snapshot's rename, the old snapshot and its journal hold everything; after it, the new
    /// snapshot does, and the old journal (another generation) is never applied again.
    private func compact() throws(PrefsError) {
        document.values.decodeAll()  // here, not in a copy that write(_:) would make of the tables
        document.declarations.decodeAll()
        try writeWithNewGeneration(document)
    }

    /// Replaces the snapshot by `next` in format 2 with a new generation (1), then the journal by an empty one that
    /// continues it (2). A journal that does not belong to the old snapshot and holds changes it lacks is moved aside
    /// first, never replaced.
    private func writeWithNewGeneration(_ next: JSONStoreDocument) throws(PrefsError) {
        var next = next
        let generation = JSONJournal.newGeneration()
        next.formatVersion = JSONStoreDocument.formatVersion
        next.unknownMembers[JSONStoreDocument.declaredInFullMember] = nil
        next.unknownMembers[JSONJournal.generationMember] = .string(generation)
        try setStrayJournalAside()
        try write(next)  // 1. the new snapshot; the journal is stale from here on
        snapshotGeneration = generation
        journalApplies = false
        editedKeys = JSONJournalMerge.Keys()
        unfoldedSince = nil
        // 2. an empty journal continues it (a store that has none yet gets one with its first append)
        if journal.identity == nil, try folder.existing()?.status(of: journal.name) == nil { return journal.forget() }
        try journal.reset(generation: generation, snapshot: snapshotDigest, sync: options.durability == .powerLoss)
        journalApplies = true
    }

    /// Moves a journal that does not belong to the snapshot and holds changes it lacks (``strayJournal``) aside,
    /// byte for byte, as `FILE.journal.unapplied-TIME`, and reports where; under the lock, before anything replaces it.
    private func setStrayJournalAside() throws(PrefsError) {
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

    /// Removes the journal beside a format-1 snapshot, which never applies it (a stray one is moved aside instead).
    private func removeJournal() throws(PrefsError) {
        try setStrayJournalAside()
        journal.closeDescriptor()
        journal.forget()
        try folder.existing()?.remove(journal.name)
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
        var next = next
        // Encoding needs every entry: decode them once and keep them, so that the next compaction parses nothing again
        // and the bytes of the file read are let go.
        next.values.decodeAll()
        next.declarations.decodeAll()
        let data = next.encoded()
        stamp = try folder.created().replace(folder.name, with: data, sync: options.durability == .powerLoss, trace: options.trace)
        snapshot = .computed(JSONJournal.SnapshotDigest(data))
        snapshotFormat = next.formatVersion
        document = next.formatVersion == JSONStoreDocument.journallessFormatVersion ? next.asReadBack() : next
    }

    // MARK: - Checking and closing

    /// Problems of the snapshot with its journal applied, and a journal that does not belong to the snapshot yet holds
    /// changes it lacks (acknowledged writes that no reader applies). A torn last journal record is none: a writer
    /// killed mid-append leaves one, it is never applied, and opening reports it
    /// (``Prefs/Diagnostic/Kind/journalTornTail(path:line:bytes:)``); nor is a hand edit the journal was merged with
    /// (``Prefs/Diagnostic/Kind/handEditKept(path:keys:)``).
    func integrityProblems() throws -> [String] {
        let (onDisk, problems) = try readFiles()
        guard let onDisk else { return problems }
        return problems
            + onDisk.values.keys.sorted().compactMap { key in
                onDisk.values[key].flatMap { $0.typeProblem ?? $0.shapeProblem() }.map { "$.values\(JSONPath.member(key)): \($0)" }
            }
    }

    /// The files as they are now parse as a store document and a journal (files that do not throw
    /// ``PrefsError/corruptStore(path:reason:)``), and no journal beside them holds changes nobody applies; values
    /// are not checked against their types, and a torn journal tail (never applied) is no problem.
    func quickCheckProblems() throws -> [String] {
        try readFiles().problems
    }

    /// The snapshot combined with its journal, as the files are now (nil without a snapshot), and what keeps the
    /// journal from applying.
    private func readFiles() throws(PrefsError) -> (document: JSONStoreDocument?, problems: [String]) {
        let reader = JSONJournalFile(folder: folder, name: journal.name)
        let directory = try folder.existing()
        guard let (data, _) = try directory?.contents(of: folder.name) else {
            guard try directory?.status(of: journal.name) != nil else { return (nil, []) }
            let missing = JSONJournalMerge.changesMissing(from: JSONStoreDocument(), try reader.readAll() ?? [])
            guard !missing.isEmpty else { return (nil, []) }
            return (nil, ["\(reader.path): a journal beside no store file, holding changes to \(Self.list(missing.names)) that no reader applies"])
        }
        let snapshot = try JSONStoreDocument(data: data, path: path)
        let records = try reader.readAll()
        let combined = JSONJournalMerge.combine(
            snapshot: snapshot, snapshotDigest: JSONJournal.SnapshotDigest(data), journalGeneration: reader.generation,
            journalSnapshot: reader.snapshot, records: records, was: reader.was)
        guard !combined.unapplied.isEmpty else { return (combined.document, []) }
        let why =
            snapshot.formatVersion == JSONStoreDocument.journallessFormatVersion
            ? "the store file is in format 1, which has no journal"
            : "it continues generation \(reader.generation.map(PrefsError.quoted) ?? "none"), the store file is of \(JSONJournal.generation(of: snapshot).map(PrefsError.quoted) ?? "none")"
        return (
            combined.document,
            [
                "\(reader.path): the journal does not belong to the store file (\(why)); its changes to \(Self.list(combined.unapplied.names)) are not applied (the next write moves it aside)"
            ]
        )
    }

    /// Key names for a message: quoted, the first ten, then how many more.
    static func list(_ names: [String]) -> String {
        guard !names.isEmpty else { return "no key (it cannot be read)" }
        let shown = names.prefix(10).map(PrefsError.quoted).joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }

    // MARK: - Idle compaction

    /// How long until ``compactIfIdle()`` has work: while this backend appended records no compaction folded since.
    var idleWorkDelay: Duration? {
        guard let delay = options.idleCompactionDelay, let unfoldedSince else { return nil }
        return max(.zero, delay - (.now - unfoldedSince))
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
