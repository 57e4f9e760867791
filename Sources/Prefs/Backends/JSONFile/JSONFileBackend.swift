import Foundation
internal import PrefsJSON
import PrefsSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
final class JSONFileBackend: StoreBackend {
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
        /// The clock the idle delay is measured on: the storage's (``Prefs/Storage/clock``).
        var clock = StoreClock.system
    }

    /// About a second: a person who opens the file after the app's last write sees it.
    static let defaultIdleCompactionDelay: Duration = .seconds(1)

    let path: String
    private let requestedPath: String
    /// The store's folder, held open: every file operation goes through it (see ``StoreFolder``).
    let folder: StoreFolder
    let options: Options
    let lock: FileLock
    /// The journal beside the snapshot, `FILE.journal`.
    let journal: JSONJournalFile
    // `@exclusivity(unchecked)` on the state a set uses: the store calls its backend from one thread at a time, under
    // its lock, so no two accesses overlap; checked, a set paid some ten runtime calls for them (900 instructions).

    /// What this backend last read of its files, or wrote (``JSONLoadedFiles``): replaced whole.
    @exclusivity(unchecked) var loaded = JSONLoadedFiles.none
    /// The journal generation of the snapshot read (its `journalGeneration` member); nil without one.
    var snapshotGeneration: String? { loaded.generation }
    /// Whether the journal read continues the snapshot read (same generation), so its records are in `document`.
    var journalApplies: Bool { loaded.journalApplies }
    /// Whether this backend appended to the journal since it was opened (it then compacts when closed).
    @exclusivity(unchecked) var appendedSinceOpen = false
    /// The format of the snapshot read; nil while there is none.
    var snapshotFormat: Int? { loaded.format }
    /// The size and CRC-32 of the snapshot read or written, which a journal begun on it records; nil while there is
    /// none. Computed when first asked for: a process that only reads the store never asks.
    var snapshotDigest: JSONJournal.SnapshotDigest? {
        switch loaded.snapshot {
        case .none: return nil
        case .computed(let digest): return digest
        case .read(let data):
            let digest = JSONJournal.SnapshotDigest(data)
            loaded = loaded.with(snapshot: .computed(digest))
            return digest
        }
    }
    /// Keys a hand edit of the snapshot changed while the journal held changes to them (``JSONJournalMerge``): the
    /// edit is kept, the journal's changes to them are not applied, and the next write folds the journal.
    var editedKeys: JSONJournalMerge.Keys { loaded.editedKeys }
    /// A journal beside the snapshot that does not continue it and holds changes the snapshot lacks (or cannot be
    /// read, beside no snapshot): its identity and those keys. Never applied; the next write moves it aside.
    var strayJournal: (identity: FileIdentity?, keys: [String])?
    /// Diagnostics found since the store last asked (``takeReports()``), and the snapshot stamps of the hand edits
    /// and stray journals already reported.
    @exclusivity(unchecked) var reports: [Prefs.Diagnostic.Kind] = []
    var reportedEdit: FileSystem.Stamp?
    var reportedStray: FileIdentity??
    /// The owner of another user's journal beside the store last reported (see ``JSONJournalFile/squatter``).
    var reportedSquatter: UInt32?
    /// Digests of what the keys of the pending (coalesced) changes held in the snapshot before them: the record that
    /// writes them says what they replaced (see ``JSONJournal/KeyDigests``).
    @exclusivity(unchecked) var pendingWas = JSONJournal.KeyDigests()
    /// When this backend last appended a record that no compaction has folded since; nil when none.
    /// When (``Options/clock``'s uptime) the journal first held records the snapshot lacks, since the last fold.
    @exclusivity(unchecked) var unfoldedSince: UInt64?
    /// The committed document, with pending coalesced changes applied on top. Kept beside ``loaded``, not in it: its
    /// entries are decoded in place on their first read, and a write applies its changes to it in place (a copy would
    /// copy every table on every write).
    @exclusivity(unchecked) var document = JSONStoreDocument()
    /// The stamp of the file `document` was read from or written as; nil while the file does not exist.
    var stamp: FileSystem.Stamp? { loaded.stamp }
    /// Changes accepted in coalesced mode and not yet written.
    @exclusivity(unchecked) var pending = Changeset()
    @exclusivity(unchecked) var inTransaction = false
    var removedLeftovers = false
    /// Set when a write's re-read under the lock found another process's change; the next `refresh()` reports it,
    /// so the store drops what it cached from before that change.
    @exclusivity(unchecked) var changedSinceRefresh = false
    /// The stamp of a file version that could not be read, with the error it gave: the same version is not parsed
    /// (and reported) again on every poll, only once it changes.
    var unreadable: (stamp: FileSystem.Stamp, error: PrefsError)?
    /// A descriptor open on the snapshot `stamp` describes, and its link count then: a check for another process's
    /// change is then an `fstat`, not a path lookup (see ``snapshotStamp()``); -1 without one.
    var snapshotDescriptor: Int32 = -1
    var snapshotLinks: UInt64 = 0
    var snapshotDescriptorIdentity: FileIdentity?
    #if os(Linux)
    /// Watches the snapshot and journal a writer holds open, so that its next check is one cheap `ioctl`. Made the first
    /// time this store holds both open, so only writers have one: two watches on the process's one inotify instance
    /// (``FileWatcher``), removed when the store closes. Without one (the system's limit reached), checks take the long way.
    var replacementWatch: FileReplacementWatch?
    var replacementWatchUnavailable = false
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
        if let owner = try folder.existing()?.foreignOwner(of: folder.name + Self.lockSuffix) {
            reports.append(.untrustedFileIgnored(path: lock.path, owner: owner))
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
    let readOnly: String?

    /// The endings of the files beside the store: its lock file and its journal.
    static let sidecarSuffixes = [lockSuffix, JSONJournal.suffix]

    var files: [String] { FileSystem.existing([path] + Self.sidecarSuffixes.map { path + $0 }) }

    var description: String { ".jsonFile(\(JSON.string(requestedPath).serialized()))" }

    var flushInterval: Duration? {
        if case .coalesced(let interval) = options.writeMode { return interval }
        return nil
    }

    /// True: a write drops the declarations the document records alike (``withoutRecordedDeclarations(_:)``), so the
    /// store does not read a key's recorded declaration before its first write (a second pass through the lock).
    var recordsOnlyChangedDeclarations: Bool { true }

    deinit { closeSnapshotDescriptor() }

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
