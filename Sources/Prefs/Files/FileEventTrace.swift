import Foundation
import PrefsSupport

extension FileSystem {
    /// A durability-relevant step of ``replace(_:with:sync:)``, in the order it happened: what a power cut may keep
    /// or drop. Reported to ``trace`` when one is set (tests only: the simulated power cuts replay these).
    package enum FileEvent: Sendable, Equatable {
        /// `data` was written to the new file at `path` (not yet durable).
        case wrote(path: String, data: Data)
        /// `fsync` of the file at `path` returned: its content is durable.
        case syncedFile(path: String)
        /// `from` was renamed over `to` (the new name is durable only once its directory is synced).
        case renamed(from: String, to: String)
        /// `fsync` of `directory` returned: every rename in it so far is durable.
        case syncedDirectory(String)
        /// `data` was appended to the file at `path` (the JSON store's journal; not yet durable).
        case appended(path: String, data: Data)
        /// The file at `path` was cut to `length` bytes (a torn journal tail removed).
        case truncated(path: String, length: Int)
    }

    /// Receives every ``FileEvent``; nil (the default) costs one lock per replace. Set by tests only.
    package static let trace = Locked<(@Sendable (FileEvent) -> Void)?>(nil)

    static func report(_ event: @autoclosure () -> FileEvent) {
        guard let observer = trace.withLock({ $0 }) else { return }
        observer(event())
    }
}
