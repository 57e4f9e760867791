import Foundation
package import PrefsJSON

/// A store in one human-readable JSON file (see ``JSONStoreDocument``).
///
/// Writers take an exclusive lock on `FILE.lock`, re-read the file when another process changed it,
/// apply their own changes key by key, and replace the file atomically. Two processes writing different
/// keys therefore both survive, and a stale copy never overwrites newer keys.
final class JSONFileBackend: PrefsBackend {
    /// The lock file beside the store: `store.json.lock`.
    static let lockSuffix = ".lock"

    struct Options: Sendable, Hashable {
        var durability: Prefs.Durability
        var writeMode: Prefs.WriteMode
        var recovery: Prefs.Recovery
        var lockTimeout: Duration
    }

    let path: String
    private let requestedPath: String
    private let options: Options
    private let lock: FileLock
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

    init(path requestedPath: String, options: Options) throws(PrefsError) {
        self.requestedPath = requestedPath
        self.path = try FileSystem.resolvingLinks(requestedPath)
        self.options = options
        self.lock = FileLock(path: path + Self.lockSuffix)
        recovered = nil
        readOnly = access(path, F_OK) == 0 ? PrefsError.readOnlyReason(path: path) : nil
        (_, recovered) = try StoreFileRecovery.open(path, recovery: options.recovery, sidecarSuffixes: [], lock: (lock, options.lockTimeout)) {
            () throws(PrefsError) in try reload()
        }
    }

    private(set) var recovered: RecoveredFile?
    /// Why this user cannot write the store, found at open; nil when it can (a write then fails with its own error).
    private let readOnly: String?

    /// The endings of the files beside the store: its lock file.
    static let sidecarSuffixes = [lockSuffix]

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

    /// Re-reads the file when its stamp changed; returns true when it did. The pending coalesced changes stay on top.
    private func reload() throws(PrefsError) -> Bool {
        let current = try FileSystem.stamp(path)
        guard current != stamp else { return false }
        if let unreadable, unreadable.stamp == current { throw unreadable.error }
        guard let (data, readStamp) = try FileSystem.contents(of: path) else {
            document = JSONStoreDocument()
            document.apply(pending)
            stamp = nil
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
        fresh.apply(pending)
        document = fresh
        stamp = readStamp
        return true
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
                FileSystem.removeTemporaryLeftovers(of: path)
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
        var next = document
        next.apply(changes)
        try write(next)
        pending = Changeset()
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
        let directory = (path as NSString).deletingLastPathComponent
        if stamp == nil { try FileSystem.createDirectory(directory) }
        stamp = try FileSystem.replace(path, with: next.encoded(), sync: options.durability == .powerLoss)
        document = next
    }

    // MARK: - Checking and closing

    func integrityProblems() throws -> [String] {
        guard let (data, _) = try FileSystem.contents(of: path) else { return [] }
        let onDisk = try JSONStoreDocument(data: data, path: path)
        return onDisk.values.keys.sorted().compactMap { key in
            onDisk.values[key].flatMap { $0.typeProblem ?? $0.shapeProblem() }.map { "$.values\(JSONPath.member(key)): \($0)" }
        }
    }

    /// The file as it is now parses as a store document (a file that does not throws
    /// ``PrefsError/corruptStore(path:reason:)``); values are not checked against their types.
    func quickCheckProblems() throws -> [String] {
        guard let (data, _) = try FileSystem.contents(of: path) else { return [] }
        _ = try JSONStoreDocument(data: data, path: path)
        return []
    }

    func close() {}
}
