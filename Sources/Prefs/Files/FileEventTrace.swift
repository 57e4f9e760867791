import Foundation

extension FileSystem {
    /// A durability-relevant step of a store's file operations, in the order it happened: what a power cut may keep
    /// or drop. Reported to a store's ``Trace`` when it has one (the simulated power cuts replay these).
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

    /// Receives a store's ``FileEvent``s: an option of the store it is given to (``Prefs/Storage/tracingFileEvents(_:)``),
    /// not a process-wide setting, so that a traced store in a test does not see another test's files.
    package struct Trace: Sendable {
        package let observe: @Sendable (FileEvent) -> Void

        package init(_ observe: @escaping @Sendable (FileEvent) -> Void) {
            self.observe = observe
        }
    }
}
