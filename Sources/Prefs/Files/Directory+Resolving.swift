import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Resolving a path once, component by component, from the root folder down: each folder opened relative to the one
// above it (`openat` with `O_NOFOLLOW | O_DIRECTORY`) and checked by the ``TrustRule`` from its own descriptor; a link
// read from a descriptor of the link itself, followed only when the rule trusts its owner, its target then resolved the
// same way. As systemd's `chase()` does, and for the same reason: a path checked by name and used by name again can be
// changed in between.
//
// `openat2` with `RESOLVE_NO_SYMLINKS` would resolve in one call, but it cannot follow the links the rule trusts (a
// store at a link is the store at its target) nor report each folder's owner, so every component is opened here.
extension Directory {
    /// Resolves `path`, a file's, to its folder, held open, and its name there. Links are followed, the last
    /// component's too (a store at a link is the store at its target, and its sidecar files go beside the target),
    /// except in /proc, where a link such as `/proc/self/fd/1` is left for the caller to open. A relative path starts
    /// at the current directory's absolute path, so its folders are checked as well.
    ///
    /// With `creatingFolders`, a missing folder is created (`mkdirat`, mode 0700) and then checked as any other: one
    /// that someone else created first is used only when it passes the rule.
    ///
    /// Throws ``PrefsError/untrustedFolder(path:owner:mode:)``, ``PrefsError/untrustedLink(path:owner:)`` or
    /// ``PrefsError/untrustedFile(path:owner:)`` naming the first component the rule refuses;
    /// ``PrefsError/io(path:operation:errno:)`` for a missing folder (`ENOENT`, operation `"open folder"`), a chain of
    /// more than 40 links (`ELOOP`) or a path that names a folder (`EISDIR`).
    package static func resolve(file path: String, creatingFolders: Bool = false) throws(PrefsError) -> (folder: Directory, name: String) {
        guard let found = try resolve(file: path, creatingFolders: creatingFolders, stoppingAtMissingFolder: false) else {
            throw .io(path: path, operation: "open folder", errno: ENOENT)  // not reached: a missing folder throws
        }
        return found
    }

    /// ``resolve(file:creatingFolders:)``, or nil when one of the folders does not exist (yet).
    static func resolveIfFoldersExist(file path: String) throws(PrefsError) -> (folder: Directory, name: String)? {
        try resolve(file: path, creatingFolders: false, stoppingAtMissingFolder: true)
    }

    /// Opens the folder at `path`, resolved and checked as ``resolve(file:creatingFolders:)`` resolves a file's folders;
    /// with `creating`, the missing ones are created.
    package static func resolve(folder path: String, creating: Bool = false) throws(PrefsError) -> Directory {
        var walk = try Walk(creating: creating, stoppingAtMissingFolder: false, original: path)
        _ = try walk.enter(try components(of: absolute(path)))
        return walk.current
    }

    /// The deepest folder of `path` that exists, resolved and checked (see ``resolve(file:creatingFolders:)``), and
    /// whether it is the folder at `path` itself.
    static func resolveExistingPart(ofFolder path: String) throws(PrefsError) -> (deepest: Directory, isWhole: Bool) {
        var walk = try Walk(creating: false, stoppingAtMissingFolder: true, original: path)
        let whole = try walk.enter(try components(of: absolute(path)))
        return (walk.current, whole)
    }

    private static func resolve(
        file path: String, creatingFolders: Bool, stoppingAtMissingFolder: Bool
    ) throws(PrefsError) -> (folder: Directory, name: String)? {
        var walk = try Walk(creating: creatingFolders, stoppingAtMissingFolder: stoppingAtMissingFolder, original: path)
        var (folders, name) = try splitFile(absolute(path), original: path)
        while true {
            guard try walk.enter(folders) else { return nil }
            let folder = walk.current
            guard let info = try folder.status(of: name), info.st_mode & S_IFMT == S_IFLNK, !folder.isProcessFileSystem else {
                return (folder, name)
            }
            try walk.countLink()
            guard let target = try folder.readTrustedLink(name) else {
                folders = []  // no longer a link: look at the name again
                continue
            }
            if target.hasPrefix("/") { walk.restart() }
            (folders, name) = try splitFile(target, original: folder.path(of: name))
        }
    }

    /// `path` made absolute with the current directory (`getcwd`, which has no links).
    private static func absolute(_ path: String) throws(PrefsError) -> String {
        if path.hasPrefix("/") { return path }
        guard !path.isEmpty else { throw .io(path: path, operation: "open", errno: ENOENT) }
        guard let current = getcwd(nil, 0) else { throw .io(path: path, operation: "getcwd", errno: errno) }
        defer { free(current) }
        return String(cString: current) + "/" + path
    }

    private static func components(of path: String) throws(PrefsError) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    /// A file path's folders and name; throws `EISDIR` when its last component names a folder (`..`, `/`).
    private static func splitFile(_ path: String, original: String) throws(PrefsError) -> ([String], String) {
        var parts = try components(of: path)
        guard let name = parts.popLast(), name != ".." else { throw .io(path: original, operation: "open", errno: EISDIR) }
        return (parts, name)
    }

    /// The folders walked so far, from the root down.
    private struct Walk {
        private var folders: [Directory]
        private var links = 0
        let creating: Bool
        let stoppingAtMissingFolder: Bool
        let original: String

        init(creating: Bool, stoppingAtMissingFolder: Bool, original: String) throws(PrefsError) {
            self.creating = creating
            self.stoppingAtMissingFolder = stoppingAtMissingFolder
            self.original = original
            folders = [try Walk.root()]
        }

        var current: Directory { folders[folders.count - 1] }

        /// Back to the root folder, for an absolute link target.
        mutating func restart() {
            folders.removeSubrange(1...)
        }

        /// Counts a link followed; throws `ELOOP` past 40 (Linux's limit).
        mutating func countLink() throws(PrefsError) {
            links += 1
            if links > 40 { throw .io(path: original, operation: "follow symbolic links", errno: ELOOP) }
        }

        /// Enters each of `names` in turn, following links; false when a folder is missing and the walk stops there.
        mutating func enter(_ names: [String]) throws(PrefsError) -> Bool {
            var pending = Array(names.reversed())
            while let name = pending.popLast() {
                if name == "." { continue }
                if name == ".." {
                    if folders.count > 1 { folders.removeLast() }
                    continue
                }
                let parent = current
                switch try parent.openFolder(name, creating: creating) {
                case .folder(let child):
                    folders.append(child)
                case .missing:
                    if stoppingAtMissingFolder { return false }
                    throw .io(path: parent.path(of: name), operation: "open folder", errno: ENOENT)
                case .link:
                    try countLink()
                    guard let target = try parent.readTrustedLink(name) else {
                        pending.append(name)  // no longer a link: open it again
                        continue
                    }
                    if target.hasPrefix("/") { restart() }
                    pending.append(contentsOf: target.split(separator: "/").map(String.init).reversed())
                }
            }
            return true
        }

        private static func root() throws(PrefsError) -> Directory {
            let fd = openat(AT_FDCWD, "/", Directory.holdFlags)
            guard fd >= 0 else { throw .io(path: "/", operation: "open folder", errno: errno) }
            var info = stat()
            do throws(PrefsError) {
                guard fstat(fd, &info) == 0 else { throw .io(path: "/", operation: "fstat", errno: errno) }
                return Directory(descriptor: fd, path: "/", isShared: try TrustRule.checkFolder(info, path: "/"))
            } catch {
                closeDescriptor(fd)
                throw error
            }
        }
    }

    /// What ``openFolder(_:creating:)`` found at a name.
    private enum FolderEntry {
        case folder(Directory)
        case link
        case missing
    }

    /// The folder `name` in this one, opened and checked by the rule (as an entry of this folder, then as a folder); or
    /// a link at the name; or nothing (after creating it, with `creating`: then the new folder).
    private func openFolder(_ name: String, creating: Bool) throws(PrefsError) -> FolderEntry {
        let full = path(of: name)
        for _ in 0..<8 {
            let fd = openat(descriptor, name, Directory.holdFlags)
            if fd >= 0 {
                var info = stat()
                do throws(PrefsError) {
                    guard fstat(fd, &info) == 0 else { throw .io(path: full, operation: "fstat", errno: errno) }
                    try TrustRule.checkEntry(info, inShared: isShared, path: full)
                    return .folder(Directory(descriptor: fd, path: full, isShared: try TrustRule.checkFolder(info, path: full)))
                } catch {
                    close(fd)
                    throw error
                }
            }
            let code = errno
            switch code {
            case ENOENT:
                guard creating else { return .missing }
                // Then opened and checked as any other: one made by someone else first is used only if it passes.
                if mkdirat(descriptor, name, 0o700) != 0, errno != EEXIST {
                    throw .io(path: full, operation: "create folder", errno: errno)
                }
            case ELOOP, ENOTDIR:
                guard let info = try status(of: name) else { continue }
                if info.st_mode & S_IFMT == S_IFLNK { return .link }
                if info.st_mode & S_IFMT != S_IFDIR { throw .io(path: full, operation: "open folder", errno: ENOTDIR) }
            default:
                throw .io(path: full, operation: "open folder", errno: code)
            }
        }
        throw .io(path: full, operation: "open folder (it changed on every attempt)", errno: EAGAIN)
    }
}
