import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The folders a store lives in, for tools: created, checked and made private under the trust rule the stores apply
// (see the security section of <doc:Promises>).
extension Prefs.Storage {
    /// Creates the missing folders of the store file at `path`, each by this process (`mkdirat`, mode 0700), checking
    /// every folder that exists by the trust rule, as a new store's folders are created (what `prefs-tool --create-dirs`
    /// does). A folder someone else created first is used only when it passes the rule.
    ///
    /// ```swift
    /// try Prefs.Storage.createFolders(of: "/tmp/qa/run-1/store.json")   // /tmp/qa and run-1: mode 0700, this user's
    /// ```
    ///
    /// Throws ``PrefsError/untrustedFolder(path:owner:mode:)``, ``PrefsError/untrustedLink(path:owner:)`` for the first
    /// folder or link the rule refuses, ``PrefsError/io(path:operation:errno:)`` for a folder that cannot be created.
    package static func createFolders(of path: String) throws(PrefsError) {
        _ = try Directory.resolve(file: path, creatingFolders: true)
    }

    /// Checks the folders of the file at `path` that exist, and the links at `path`, by the trust rule, creating
    /// nothing: throws what opening a store there would throw for them. For tools that note a new store's files before
    /// opening it, to remove them again by name (which is safe only on folders no other user can change).
    package static func checkFolders(of path: String) throws(PrefsError) {
        _ = try Directory.resolveIfFoldersExist(file: path)
    }

    /// Creates a new folder that only this user can enter (mode 0700) in the folder at `parent`, named `prefix` and
    /// random characters, as `mkdtemp` does, after checking `parent` and the folders above it by the trust rule (the
    /// temporary directory may be shared, as /tmp, but not another user's); returns its path.
    package static func makePrivateFolder(in parent: String, prefix: String) throws(PrefsError) -> String {
        let folder = try Directory.resolve(folder: parent)
        let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for _ in 0..<100 {
            let name = prefix + String((0..<10).map { _ in characters.randomElement() ?? "x" })
            if mkdirat(folder.descriptor, name, 0o700) == 0 { return folder.path(of: name) }
            guard errno == EEXIST else { throw .io(path: folder.path(of: name), operation: "create folder", errno: errno) }
        }
        throw .io(path: folder.path(of: prefix + "…"), operation: "create folder", errno: EEXIST)
    }

    #if !canImport(Darwin)
    /// Throws ``PrefsError/unusableFolder(path:reason:)`` unless `folder`, the configuration directory that `variable`
    /// (whose value is `value`) chose, can hold stores: the part of it that exists passes the trust rule, and its deepest
    /// existing folder is not one other users can write, sticky or not (the XDG Base Directory specification expects
    /// these folders to be the user's own).
    static func checkConfigDirectory(_ folder: URL, variable: String, value: String) throws(PrefsError) {
        let deepest: Directory
        do {
            deepest = try Directory.resolveExistingPart(ofFolder: folder.path).deepest
        } catch {
            throw .unusableFolder(path: folder.path, reason: "\(variable) (\(value)) chose it, and \(error)")
        }
        guard deepest.isShared else { return }
        var info = stat()
        _ = fstat(deepest.descriptor, &info)
        let place = deepest.path == folder.path ? "it is" : "\(deepest.path) is"
        throw .unusableFolder(
            path: folder.path,
            reason: "\(variable) (\(value)) chose it, and \(place) a folder other users can write (mode \(String(format: "%04o", info.st_mode & 0o7777)))")
    }
    #endif
}
