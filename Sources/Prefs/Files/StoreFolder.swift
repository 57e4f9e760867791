import Foundation

/// The folder a JSON store keeps its files in (the store file, its journal, its lock file), resolved once with
/// ``Directory/resolve(file:creatingFolders:)`` and held open for the store's life; every file operation of the store
/// goes through it. A store whose folder does not exist yet finds it when it first reads after someone created it, or
/// creates it when it first writes (as it always did), then keeps it.
///
/// Not thread-safe: the store's backend, its journal and its lock use it from one thread at a time.
final class StoreFolder {
    /// The store file's name in the folder.
    let name: String
    /// The store file's path: resolved (links followed, folders checked) when its folder existed at opening, else as
    /// given, made absolute.
    let filePath: String
    /// The folder's path as given, while it does not exist.
    private let folderPath: String
    private var directory: Directory?

    /// Resolves `path`'s folder, when it exists, and follows links at `path` itself (see
    /// ``Directory/resolve(file:creatingFolders:)``); throws what the trust rule refuses.
    init(file path: String) throws(PrefsError) {
        if let (folder, name) = try Directory.resolveIfFoldersExist(file: path) {
            directory = folder
            self.name = name
            filePath = folder.path(of: name)
            folderPath = folder.path
        } else {
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            name = (absolute as NSString).lastPathComponent
            filePath = absolute
            folderPath = (absolute as NSString).deletingLastPathComponent
        }
    }

    /// The path of the file `name` beside the store file, for messages.
    func path(of name: String) -> String {
        directory?.path(of: name) ?? (folderPath == "/" ? "/" + name : folderPath + "/" + name)
    }

    /// The folder, or nil while it does not exist.
    func existing() throws(PrefsError) -> Directory? {
        if let directory { return directory }
        let (deepest, whole) = try Directory.resolveExistingPart(ofFolder: folderPath)
        guard whole else { return nil }
        directory = deepest
        return deepest
    }

    /// The folder, created (with its missing parents, mode 0700) when it does not exist.
    func created() throws(PrefsError) -> Directory {
        if let directory { return directory }
        let made = try Directory.resolve(folder: folderPath, creating: true)
        directory = made
        return made
    }
}
