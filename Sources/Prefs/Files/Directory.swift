import Foundation
import PrefsSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder held open by its descriptor, found once by ``resolve(file:creatingFolders:)`` under the ``TrustRule``.
/// Every operation on its entries goes through the descriptor (`openat`, `renameat`, `unlinkat`, `fstatat`), never
/// through the folder's path again, so what anyone does to the path afterwards does not change which folder a store
/// reads and writes (as Go's `os.Root`, Rust's cap-std and systemd's `chase()` hold a directory).
///
/// What is opened is checked with `fstat` on its descriptor, never with a second lookup of the name. Links at an entry's
/// name are never followed once the path is resolved: a link found there is refused (``PrefsError/untrustedLink(path:owner:)``
/// when another user owns it), and in a shared folder so is any entry another user owns
/// (``PrefsError/untrustedFile(path:owner:)``).
package final class Directory: Sendable {
    /// On Linux `O_PATH`: search permission is all it needs, and nothing is read through it.
    let descriptor: Int32
    /// The folder's path as it was resolved: absolute, without links, `.` or `..`. For messages, and for SQLite, which
    /// opens its files by name (every folder on it passed the rule: no other user can change what it names).
    package let path: String
    /// Sticky and writable by others (such as /tmp): an entry is used only when root or this user owns it.
    let isShared: Bool

    init(descriptor: Int32, path: String, isShared: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.isShared = isShared
    }

    deinit { close(descriptor) }

    /// The path of the entry `name`, for messages.
    func path(of name: String) -> String {
        path == "/" ? "/" + name : path + "/" + name
    }

    /// The flags a folder is held with.
    #if os(Linux)
    static let holdFlags = Directory.openPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    /// `O_PATH`, which the Glibc module does not export (glibc declares it under `_GNU_SOURCE` only).
    static let openPath: Int32 = 0o10_000_000
    #else
    static let holdFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    #endif

    // MARK: - Entries

    /// What is at `name` now, a link not followed (`fstatat` with `AT_SYMLINK_NOFOLLOW`); nil when nothing is.
    func status(of name: String) throws(PrefsError) -> stat? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path(of: name), operation: "stat", errno: errno)
        }
        return info
    }

    /// Opens `name` with `flags` (plus `O_NOFOLLOW | O_CLOEXEC | O_NOCTTY`) and returns the descriptor with the status
    /// of what it opened; nil when nothing is at the name and `flags` has no `O_CREAT`. A link at the name is refused
    /// (see ``refuseLink(_:operation:)``), and in a shared folder anything another user owns (checked on the opened
    /// descriptor, so a file swapped in between cannot pass for another).
    func open(_ name: String, _ flags: Int32, mode: mode_t = 0o600, operation: String = "open") throws(PrefsError) -> (descriptor: Int32, info: stat)? {
        let fd = openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT, flags & O_CREAT == 0 { return nil }
            // ELOOP, or with O_CREAT on some kernels EACCES: a link there is named as such.
            try refuseLink(name, operation: operation)
            throw .io(path: path(of: name), operation: operation, errno: code)
        }
        var info = stat()
        do throws(PrefsError) {
            guard fstat(fd, &info) == 0 else { throw .io(path: path(of: name), operation: "fstat", errno: errno) }
            try TrustRule.checkEntry(info, inShared: isShared, path: path(of: name))
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
    }

    /// Throws for the link at `name`, which is never followed: ``PrefsError/untrustedLink(path:owner:)`` when another
    /// user owns it, else `ELOOP` with `operation`. Returns when no link is there (any longer).
    func refuseLink(_ name: String, operation: String) throws(PrefsError) {
        guard let info = try status(of: name), info.st_mode & S_IFMT == S_IFLNK else { return }
        try TrustRule.checkLink(info, path: path(of: name))
        throw .io(path: path(of: name), operation: "\(operation) (a symbolic link stands at this name; not followed)", errno: ELOOP)
    }

    /// Opens the regular file `name` for reading, or returns nil when nothing is there; the caller closes the
    /// descriptor. Anything but a regular file is refused as ``FileSystem/openRegularFile(_:)`` refuses it: from its
    /// status before it is opened, and from the opened descriptor (never blocking: `O_NONBLOCK`, cleared again).
    func openRegularFile(_ name: String) throws(PrefsError) -> (descriptor: Int32, info: stat)? {
        if let info = try status(of: name) {
            // Another user's entry first: a FIFO they planted beside a store is theirs, not a damaged store file.
            try TrustRule.checkEntry(info, inShared: isShared, path: path(of: name))
            if info.st_mode & S_IFMT != S_IFLNK {
                try FileSystem.requireRegularFile(info, path: path(of: name))  // a FIFO or a device is never opened
            }
        }
        guard let (fd, info) = try open(name, O_RDONLY | O_NONBLOCK) else { return nil }
        do throws(PrefsError) {
            try FileSystem.requireRegularFile(info, path: path(of: name))
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw .io(path: path(of: name), operation: "fcntl", errno: errno) }
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
    }

    /// The whole content of the regular file `name` and its stamp, or nil when nothing is there.
    func contents(of name: String) throws(PrefsError) -> (Data, FileSystem.Stamp)? {
        guard let (fd, info) = try openRegularFile(name) else { return nil }
        defer { close(fd) }
        return (try FileSystem.readAll(fd, size: Int(info.st_size), path: path(of: name)), FileSystem.Stamp(info))
    }

    /// The status of what is at `name`, or nil when nothing is: as ``status(of:)``, but a link is refused (see
    /// ``refuseLink(_:operation:)``), never followed, and so is another user's entry in a shared folder.
    func trustedStatus(of name: String) throws(PrefsError) -> stat? {
        guard let info = try status(of: name) else { return nil }
        if info.st_mode & S_IFMT == S_IFLNK { try refuseLink(name, operation: "open") }
        try TrustRule.checkEntry(info, inShared: isShared, path: path(of: name))
        return info
    }

    /// The stamp of what is at `name` (see ``trustedStatus(of:)``), or nil when nothing is there.
    func stamp(of name: String) throws(PrefsError) -> FileSystem.Stamp? {
        try trustedStatus(of: name).map(FileSystem.Stamp.init)
    }

    /// In a shared folder, the owner of the entry at `name` (a link not followed) when it is another user's: one they
    /// put there, which is never read, written, replaced, renamed or removed. Nil when nothing is there, when root or
    /// this user owns it, and in a folder that is not shared.
    func foreignOwner(of name: String) throws(PrefsError) -> UInt32? {
        guard isShared, let info = try status(of: name), !TrustRule.isTrusted(owner: info.st_uid) else { return nil }
        return UInt32(info.st_uid)
    }

    /// Throws what the trust rule says of another user's entry at `name` in a shared folder
    /// (``PrefsError/untrustedFile(path:owner:)``, or for a link ``PrefsError/untrustedLink(path:owner:)``), before it
    /// would be replaced or renamed: in a sticky folder only root and the folder's owner could, and they must not.
    func refuseForeignEntry(_ name: String) throws(PrefsError) {
        guard isShared, let info = try status(of: name) else { return }
        try TrustRule.checkEntry(info, inShared: true, path: path(of: name))
    }

    /// Whether a regular file is at `name` (a link is not followed).
    func holdsRegularFile(_ name: String) -> Bool {
        (try? status(of: name)).flatMap { $0 }.map { $0.st_mode & S_IFMT == S_IFREG } ?? false
    }

    // MARK: - Replacing

    /// Replaces `name` atomically, as ``FileSystem/replace(_:with:sync:keepingMode:trace:)`` did by path: a temporary
    /// file created in this folder (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), optionally fsynced, renamed over the
    /// name (`renameat`: whatever is at the name, a link included, is replaced, never followed; in a shared folder, not
    /// another user's entry, see ``refuseForeignEntry(_:)``), and the folder optionally fsynced. With `keepingMode`, the mode of a regular file of this user's at the name is kept, less its
    /// group and other write bits. Returns the new file's stamp, from its own descriptor.
    @discardableResult
    func replace(_ name: String, with data: Data, sync: Bool, keepingMode: Bool = true, trace: FileSystem.Trace? = nil) throws(PrefsError) -> FileSystem.Stamp {
        try refuseForeignEntry(name)
        let temporaryName = "\(name).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let temporary = path(of: temporaryName)
        let fd = openat(descriptor, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: temporary, operation: "create", errno: errno) }
        defer { close(fd) }
        do throws(PrefsError) {
            if keepingMode, let existing = try? status(of: name), existing.st_mode & S_IFMT == S_IFREG, existing.st_uid == geteuid() {
                let mode = existing.st_mode & 0o755
                if mode != 0o600, fchmod(fd, mode) != 0 { throw PrefsError.io(path: temporary, operation: "fchmod", errno: errno) }
            }
            if let failure = data.withUnsafeBytes({ FileSystem.writeFully(fd, $0) }) {
                throw PrefsError.io(path: temporary, operation: "write", errno: failure)
            }
            trace?.observe(.wrote(path: temporary, data: data))
            if sync {
                if fsync(fd) != 0 { throw PrefsError.io(path: temporary, operation: "fsync", errno: errno) }
                trace?.observe(.syncedFile(path: temporary))
            }
        } catch {
            unlinkat(descriptor, temporaryName, 0)
            throw error
        }
        guard renameat(descriptor, temporaryName, descriptor, name) == 0 else {
            let code = errno
            unlinkat(descriptor, temporaryName, 0)
            throw .io(path: path(of: name), operation: "rename", errno: code)
        }
        trace?.observe(.renamed(from: temporary, to: path(of: name)))
        if sync { try self.sync(trace: trace) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(path: path(of: name), operation: "fstat", errno: errno) }
        return FileSystem.Stamp(info)
    }

    /// `fsync` of the folder, through a read-only descriptor of it opened relative to the held one (an `O_PATH`
    /// descriptor cannot be synced).
    func sync(trace: FileSystem.Trace? = nil) throws(PrefsError) {
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path, operation: "open directory", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(path: path, operation: "fsync directory", errno: errno) }
        trace?.observe(.syncedDirectory(path))
    }

    /// The names in the folder (without `.` and `..`); empty when it cannot be listed.
    func names() -> [String] {
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        guard let stream = fdopendir(fd) else {
            close(fd)
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the entry `name` (a link itself, never its target); nothing there is no error.
    func remove(_ name: String) throws(PrefsError) {
        guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else {
            throw .io(path: path(of: name), operation: "remove", errno: errno)
        }
    }

    /// Removes `NAME.tmp-*` files of this user's left by ``replace(_:with:sync:keepingMode:trace:)`` in a process killed
    /// mid-write. Call it only while holding the store's writer lock.
    func removeTemporaryLeftovers(of name: String) {
        let prefix = name + ".tmp-"
        for entry in names() where entry.hasPrefix(prefix) {
            guard let info = try? status(of: entry), info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            unlinkat(descriptor, entry, 0)  // a leftover holds no committed data
        }
    }

    /// Renames the regular file `name` aside, byte for byte, as `NAME.corrupt-YYYYMMDDTHHMMSSZ` (or another `label` than
    /// `corrupt`); returns the new path.
    func moveAside(_ name: String, label: String = "corrupt", now: Date = Date()) throws(PrefsError) -> String {
        try refuseForeignEntry(name)
        let stamp = FileSystem.corruptStamp(now)
        var destination = "\(name).\(label)-\(stamp)"
        var suffix = 1
        while try status(of: destination) != nil {
            destination = "\(name).\(label)-\(stamp)-\(suffix)"
            suffix += 1
        }
        guard renameat(descriptor, name, descriptor, destination) == 0 else {
            throw .io(path: path(of: name), operation: "rename aside", errno: errno)
        }
        return path(of: destination)
    }

    // MARK: - Links

    /// The target of the link at `name` when it may be followed (root or this user owns it), read from a descriptor of
    /// the link itself on Linux; nil when no link is at the name (any longer).
    func readTrustedLink(_ name: String) throws(PrefsError) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        var info = stat()
        #if os(Linux)
        let fd = openat(descriptor, name, Directory.openPath | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path(of: name), operation: "open link", errno: errno)
        }
        defer { close(fd) }
        guard fstat(fd, &info) == 0 else { throw .io(path: path(of: name), operation: "fstat", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFLNK else { return nil }
        try TrustRule.checkLink(info, path: path(of: name))
        let count = readlinkat(fd, "", &buffer, buffer.count - 1)
        #else
        // Without O_PATH: the link's status, then its target. Only root or this user could replace a link they own,
        // in a folder that passed the rule.
        guard let found = try status(of: name), found.st_mode & S_IFMT == S_IFLNK else { return nil }
        info = found
        try TrustRule.checkLink(info, path: path(of: name))
        let count = readlinkat(descriptor, name, &buffer, buffer.count - 1)
        #endif
        guard count > 0 else { throw .io(path: path(of: name), operation: "readlink", errno: count == 0 ? ENOENT : errno) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the folder is in Linux's /proc, where links such as `/proc/self/fd/1` stand for open files rather than
    /// name paths: they are opened, never read as paths.
    var isProcessFileSystem: Bool {
        #if os(Linux)
        var info = stat(), proc = stat()
        return fstat(descriptor, &info) == 0 && stat("/proc", &proc) == 0 && info.st_dev == proc.st_dev
        #else
        return false
        #endif
    }
}

/// `close(2)`, for types that have a `close()` of their own.
func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
