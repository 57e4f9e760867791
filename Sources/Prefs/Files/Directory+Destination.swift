import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Writing a document (an export) to a path a user names: a regular file is replaced atomically in its folder; a pipe,
// a terminal or a device of this user's or root's is written in place, through the one descriptor whose status was
// checked.
extension Directory {
    /// Writes `data` to `path`: resolved once (``resolve(file:creatingFolders:)``: its folders and links pass the trust
    /// rule), then, in the folder held open:
    /// - nothing or a regular file at the name: replaced atomically with a new file of mode 0600
    ///   (``replace(_:with:sync:keepingMode:trace:)``); in a shared folder, not a file another user owns;
    /// - a FIFO or a character device owned by this user or root: opened once, its descriptor's status checked, and
    ///   written in place (a pipe, a terminal, /dev/null); anything else found open is not written;
    /// - in /proc, a link that stands for one of this process's open files (`/dev/stdout` is `/proc/self/fd/1`): that file
    ///   opened again, for appending, and written in place;
    /// - anything else (another user's FIFO or device, a socket, a block device, a folder): refused, nothing written.
    static func write(_ data: Data, toDestination path: String) throws(PrefsError) {
        let (folder, name) = try resolve(file: path)
        let target = folder.path(of: name)
        if folder.isProcessFileSystem, let info = try folder.status(of: name), info.st_mode & S_IFMT == S_IFLNK {
            return try folder.writeThroughProcessLink(name, data)
        }
        for _ in 0..<8 {
            guard let info = try folder.status(of: name) else {
                try folder.replace(name, with: data, sync: false, keepingMode: false)
                return
            }
            try TrustRule.checkEntry(info, inShared: folder.isShared, path: target)
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                try folder.replace(name, with: data, sync: false, keepingMode: false)
                return
            case S_IFLNK:
                try folder.refuseLink(name, operation: "write")  // put there since the path was resolved
            case S_IFCHR, S_IFIFO:
                guard TrustRule.isTrusted(owner: info.st_uid) else { throw Directory.notAStream(target) }
                if try folder.writeInPlace(name, data) { return }
            case S_IFDIR:
                throw .io(path: target, operation: "write", errno: EISDIR)
            default:
                throw Directory.notAStream(target)
            }
        }
        throw .io(path: target, operation: "write (what is at the name changed on every attempt)", errno: EAGAIN)
    }

    private static func notAStream(_ path: String) -> PrefsError {
        .io(path: path, operation: "write (not a regular file, nor a pipe or terminal of this user's)", errno: EPERM)
    }

    /// Opens `name` once (a link not followed) and writes `data` to it when the descriptor is a FIFO or a character
    /// device owned by this user or root; false, writing nothing, when something else was opened (it changed since it
    /// was looked at). Opening a FIFO waits for a reader, as a shell's `>` does.
    private func writeInPlace(_ name: String, _ data: Data) throws(PrefsError) -> Bool {
        guard let (fd, info) = try open(name, O_WRONLY, operation: "open") else { return false }
        defer { close(fd) }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFCHR || kind == S_IFIFO else { return false }
        guard TrustRule.isTrusted(owner: info.st_uid) else { throw Directory.notAStream(path(of: name)) }
        if let failure = data.withUnsafeBytes({ FileSystem.writeFully(fd, $0) }) { throw .io(path: path(of: name), operation: "write", errno: failure) }
        return true
    }

    /// Writes `data` through `name`, a link in /proc that stands for an open file of this process (`/proc/self/fd/1`):
    /// the file is opened again through the link (for appending, so that a `>>` redirection is kept) and written in
    /// place, whatever it is but a folder or a socket.
    private func writeThroughProcessLink(_ name: String, _ data: Data) throws(PrefsError) {
        let fd = openat(descriptor, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .io(path: path(of: name), operation: "open", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(path: path(of: name), operation: "fstat", errno: errno) }
        guard [S_IFREG, S_IFCHR, S_IFIFO].contains(info.st_mode & S_IFMT) else { throw Directory.notAStream(path(of: name)) }
        if let failure = data.withUnsafeBytes({ FileSystem.writeFully(fd, $0) }) { throw .io(path: path(of: name), operation: "write", errno: failure) }
    }
}
