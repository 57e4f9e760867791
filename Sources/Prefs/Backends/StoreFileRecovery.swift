import Foundation

/// What opening a store recovered from: where the unreadable file was moved, and why it was unreadable.
package struct RecoveredFile: Sendable, Hashable {
    package var movedTo: String
    package var reason: String
}

/// ``Prefs/Recovery/moveAsideAndStartEmpty`` for the file backends, in one place.
enum StoreFileRecovery {
    /// Runs `open`. When it finds the file's content unreadable and `recovery` allows it, renames the file (a regular
    /// file only: a FIFO or a device at the path stays, and opening fails) and its sidecars aside, byte for byte, in
    /// the store's `folder` (through its descriptor), under `lock` when there is one, and runs `open` again on the now
    /// missing file.
    static func open<Opened>(
        _ folder: StoreFolder,
        recovery: Prefs.Recovery,
        sidecarSuffixes: [String],
        lock: (FileLock, timeout: Duration)? = nil,
        _ open: () throws(PrefsError) -> Opened
    ) throws(PrefsError) -> (Opened, RecoveredFile?) {
        do {
            return (try open(), nil)
        } catch PrefsError.corruptStore(let path, let reason) where recovery == .moveAsideAndStartEmpty {
            guard let directory = try folder.existing(), directory.holdsRegularFile(folder.name) else {
                throw PrefsError.corruptStore(path: path, reason: reason)
            }
            if let lock { try lock.0.lock(timeout: lock.timeout) }
            defer { lock?.0.unlock() }
            let aside = try directory.moveAside(folder.name)
            for suffix in sidecarSuffixes where directory.holdsRegularFile(folder.name + suffix) {
                guard try directory.foreignOwner(of: folder.name + suffix) == nil else { continue }  // another user's: left alone
                _ = try directory.moveAside(folder.name + suffix)
            }
            return (try open(), RecoveredFile(movedTo: aside, reason: reason))
        }
    }
}

extension RecoveredFile {
    /// The diagnostic the store reports for it.
    var diagnosticKind: Prefs.Diagnostic.Kind { .recovered(movedTo: movedTo, reason: reason) }
}
