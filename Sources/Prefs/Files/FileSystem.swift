import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import PrefsJSON

/// The few POSIX file operations the file-backed stores need, with errors that name the path.
package enum FileSystem {
    /// The paths among `paths` where something exists now (links not followed).
    static func existing(_ paths: [String]) -> [String] {
        paths.filter { path in
            var info = stat()
            return lstat(path, &info) == 0
        }
    }

    /// Identity of a file's current content: changes whenever another process replaces or rewrites it.
    package struct Stamp: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64  // nanoseconds
        var changed: Int64  // nanoseconds
    }

    /// The stamp of `path`, or nil when it does not exist.
    static func stamp(_ path: String) throws(PrefsError) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path, operation: "stat", errno: errno)
        }
        return Stamp(info)
    }

    /// The whole content of `path`, or nil when it does not exist. Throws for anything but a regular file
    /// (see ``openRegularFile(_:)``).
    package static func contents(of path: String) throws(PrefsError) -> (Data, Stamp)? {
        guard let (fd, info) = try openRegularFile(path) else { return nil }
        defer { close(fd) }
        var data = Data(count: Int(info.st_size))
        var total = 0
        let capacity = data.count
        let failure: Int32? = data.withUnsafeMutableBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            while total < capacity {
                let count = read(fd, base + total, capacity - total)
                if count < 0 { if errno == EINTR { continue }; return errno }
                if count == 0 { break }
                total += count
            }
            return nil
        }
        if let failure { throw .io(path: path, operation: "read", errno: failure) }
        // A file that grew while being read: read the rest.
        var chunk = [UInt8](repeating: 0, count: 65536)
        data.count = total
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 { if errno == EINTR { continue }; throw .io(path: path, operation: "read", errno: errno) }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<count])
        }
        return (data, Stamp(info))
    }

    /// The first `count` bytes of `path` (fewer for a shorter file), or nil when it does not exist. Throws for
    /// anything but a regular file (see ``openRegularFile(_:)``).
    static func prefix(of path: String, count: Int) throws(PrefsError) -> Data? {
        guard let (fd, _) = try openRegularFile(path) else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        var total = 0
        while total < count {
            let got = buffer.withUnsafeMutableBytes { pointer -> Int in
                guard let base = pointer.baseAddress else { return 0 }
                return read(fd, base + total, count - total)
            }
            if got < 0 { if errno == EINTR { continue }; throw .io(path: path, operation: "read", errno: errno) }
            if got == 0 { break }
            total += got
        }
        return Data(buffer[0..<total])
    }

    /// Opens `path` for reading, or returns nil when it does not exist; the caller closes the descriptor.
    ///
    /// A store is a regular file. Anything else at the path would hang or never end a read (a FIFO waits for a
    /// writer, `/dev/zero` never ends), so it is refused with ``PrefsError/corruptStore(path:reason:)`` naming its
    /// kind, before it is opened when `stat` already tells, and otherwise from the opened descriptor: the open
    /// never blocks (`O_NONBLOCK`, cleared again for the regular file) and never makes a terminal the controlling
    /// one. A directory fails as reading it always did, with `EISDIR`.
    static func openRegularFile(_ path: String) throws(PrefsError) -> (descriptor: Int32, info: stat)? {
        var info = stat()
        if stat(path, &info) == 0 { try requireRegularFile(info, path: path) }  // a failure is the open's to report
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path, operation: "open", errno: errno)
        }
        do throws(PrefsError) {
            guard fstat(fd, &info) == 0 else { throw .io(path: path, operation: "fstat", errno: errno) }
            try requireRegularFile(info, path: path)  // replaced by something else since the stat above
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw .io(path: path, operation: "fcntl", errno: errno) }
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
    }

    /// Throws unless `info` is a regular file's: ``PrefsError/corruptStore(path:reason:)`` naming what is there
    /// instead, or for a directory ``PrefsError/io(path:operation:errno:)`` with `EISDIR`.
    static func requireRegularFile(_ info: stat, path: String) throws(PrefsError) {
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw .io(path: path, operation: "read", errno: EISDIR)
        case S_IFIFO: kind = "a FIFO"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "file type \(String(info.st_mode & S_IFMT, radix: 8))"
        }
        throw .corruptStore(path: path, reason: "not a regular file (\(kind))")
    }

    /// Whether `path` is, or links to, a regular file.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Replaces `path` atomically: writes a temporary file beside it, optionally fsyncs it, renames it over `path`,
    /// and optionally fsyncs the directory. Readers see the old or the new content, never a mix.
    ///
    /// The temporary file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600, so no other user can open
    /// it, ever, and a link planted at its name is refused. With `keepingMode`, an existing file's mode is kept when
    /// the current user owns it, less its group and other write bits (a store another user could rewrite is not
    /// private); a file another user owned becomes 0600, as a new one is.
    @discardableResult
    package static func replace(
        _ path: String, with data: Data, sync: Bool, keepingMode: Bool = true, trace: Trace? = nil
    ) throws(PrefsError) -> Stamp {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: temporary, operation: "create", errno: errno) }
        do throws(PrefsError) {
            defer { close(fd) }
            var existing = stat()
            if keepingMode, stat(path, &existing) == 0, existing.st_uid == geteuid() {
                let mode = existing.st_mode & 0o755
                if mode != 0o600, fchmod(fd, mode) != 0 { throw PrefsError.io(path: temporary, operation: "fchmod", errno: errno) }
            }
            try writeAll(fd, data, path: temporary)
            trace?.observe(.wrote(path: temporary, data: data))
            if sync {
                if fsync(fd) != 0 { throw PrefsError.io(path: temporary, operation: "fsync", errno: errno) }
                trace?.observe(.syncedFile(path: temporary))
            }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .io(path: path, operation: "rename", errno: code)
        }
        trace?.observe(.renamed(from: temporary, to: path))
        if sync { try syncDirectory(directory, trace: trace) }
        guard let stamp = try Self.stamp(path) else { throw .io(path: path, operation: "stat", errno: ENOENT) }
        return stamp
    }

    /// Writes `data` to `path` in place when it is a character device or a FIFO (following links, so `/dev/stdout`
    /// reaches the pipe or terminal behind it) owned by this user or root; false, writing nothing, for a regular file,
    /// a directory or no file. Any other file (another user's FIFO or device, a socket, a block device) throws: it is
    /// neither written nor replaced (root could otherwise rename a file over a device node).
    static func writeInPlaceIfStream(_ path: String, _ data: Data) throws(PrefsError) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFREG || kind == S_IFDIR { return false }
        guard kind == S_IFCHR || kind == S_IFIFO, info.st_uid == geteuid() || info.st_uid == 0 else {
            throw .io(path: path, operation: "write (not a regular file, nor a pipe or terminal of this user's)", errno: EPERM)
        }
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        try writeAll(fd, data, path: path)
        return true
    }

    private static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(PrefsError) {
        if let failure = data.withUnsafeBytes({ writeFully(fd, $0) }) { throw .io(path: path, operation: "write", errno: failure) }
    }

    /// The link count and size of the file open at `fd`; (0, 0) when they cannot be read (as for a file with no links
    /// left: the caller then looks at the path). On Linux this is `statx` asked for those two and no time: since Linux
    /// 6.13, reading a file's modification or change time makes its next write stamp a fine-grained time and dirty the
    /// inode, which made each journal append after an `fstat` cost twice a plain `write(2)` (2.9–3.2 µs against 1.0–1.2
    /// µs on this project's machine).
    static func linksAndSize(_ fd: Int32) -> (links: UInt64, size: Int) {
        #if os(Linux)
        if let statx = Statx.function, MemoryLayout<Statx.Buffer>.size == 256 {
            var buffer = Statx.Buffer()
            let code = withUnsafeMutableBytes(of: &buffer) { statx(fd, "", Statx.emptyPath, Statx.nlinkAndSize, $0.baseAddress!) }
            if code == 0 { return (UInt64(buffer.nlink), Int(buffer.size)) }
        }
        #endif
        var info = stat()
        guard fstat(fd, &info) == 0 else { return (0, 0) }
        return (UInt64(info.st_nlink), Int(info.st_size))
    }

    /// Writes every byte of `buffer` to `fd`, retrying short writes and `EINTR`; the `errno` of a failure, or nil.
    static func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let count = write(fd, base + offset, buffer.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += count
        }
        return nil
    }

    /// Removes `PATH.tmp-*` files left by ``replace(_:with:sync:)`` in a process killed mid-write.
    /// Call it only while holding the store's writer lock.
    static func removeTemporaryLeftovers(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink((directory as NSString).appendingPathComponent(name))  // a leftover holds no committed data
        }
    }

    static func syncDirectory(_ directory: String, trace: Trace? = nil) throws(PrefsError) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: directory, operation: "open directory", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(path: directory, operation: "fsync directory", errno: errno) }
        trace?.observe(.syncedDirectory(directory))
    }

    /// Creates `directory` and its parents with mode 0700 when missing.
    static func createDirectory(_ directory: String) throws(PrefsError) {
        guard !directory.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            // The underlying POSIX error is an NSError on Apple platforms and a Swift error on Linux.
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
            let code = underlying.map { Int32(truncatingIfNeeded: ($0 as NSError).code) } ?? EIO
            throw .io(path: directory, operation: "create directory", errno: code)
        }
    }

    /// Follows symbolic links: a store at a link is the store at its target (the link stays a link). A cycle gives
    /// `path` itself back, and opening it then reports `ELOOP`. A link that another user planted in a shared sticky
    /// directory is refused (see ``checkLinkIsTrusted(_:)``).
    static func resolvingLinks(_ path: String) throws(PrefsError) -> String {
        try resolvingTrustedLinks(path) ?? path
    }

    /// Follows symbolic links until `path` names something that is not a link (or does not exist); nil for a cycle
    /// or a chain of more than 32 links.
    package static func resolvingLinksIfFinite(_ path: String) -> String? {
        try? resolvingLinks(path, trusting: { _ throws(PrefsError) in })
    }

    /// ``resolvingLinksIfFinite(_:)``, refusing every link that ``checkLinkIsTrusted(_:)`` refuses.
    package static func resolvingTrustedLinks(_ path: String) throws(PrefsError) -> String? {
        try resolvingLinks(path, trusting: checkLinkIsTrusted)
    }

    private static func resolvingLinks(_ path: String, trusting check: (String) throws(PrefsError) -> Void) throws(PrefsError) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        var current = path
        for _ in 0..<32 {
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return current }
            try check(current)
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        return nil
    }

    /// Throws unless the symbolic link at `link` may be followed. Prefs resolves a store's links itself (its
    /// sidecar files go beside the target), so the kernel's `fs.protected_symlinks` never sees those links; this
    /// applies its rule, whatever the setting: in a directory that is sticky and world-writable (such as /tmp),
    /// only a link owned by the current user or by root is followed. Anyone can plant a link there, and following
    /// it would let them choose which file a store, an export or a lock writes (as root: any file).
    package static func checkLinkIsTrusted(_ link: String) throws(PrefsError) {
        var info = stat(), parent = stat()
        let directory = (link as NSString).deletingLastPathComponent
        guard lstat(link, &info) == 0, info.st_mode & S_IFMT == S_IFLNK,
            stat(directory.isEmpty ? "." : directory, &parent) == 0
        else { return }
        let shared = parent.st_mode & S_ISVTX != 0 && parent.st_mode & S_IWOTH != 0
        guard shared, info.st_uid != geteuid(), info.st_uid != 0 else { return }
        throw .untrustedLink(path: link, owner: info.st_uid)
    }

    /// Moves an unreadable file aside, byte for byte, as `NAME.corrupt-YYYYMMDDTHHMMSSZ` (or another `label` than
    /// `corrupt`); returns the new path.
    static func moveAside(_ path: String, label: String = "corrupt", now: Date = Date()) throws(PrefsError) -> String {
        let stamp = ISO8601.format(now, fractionDigits: 0)
            .replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        var destination = "\(path).\(label)-\(stamp)"
        var suffix = 1
        while access(destination, F_OK) == 0 {
            destination = "\(path).\(label)-\(stamp)-\(suffix)"
            suffix += 1
        }
        guard rename(path, destination) == 0 else { throw .io(path: path, operation: "rename aside", errno: errno) }
        return destination
    }
}

extension FileSystem.Stamp {
    init(_ info: stat) {
        self.init(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        )
    }
}

#if os(Linux)
/// `statx(2)`, which the Glibc module does not export (glibc declares it only under `_GNU_SOURCE`), found with `dlsym`.
private enum Statx {
    typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32
    static let function: Function? = dlsym(nil, "statx").map { unsafeBitCast($0, to: Function.self) }
    static let emptyPath: Int32 = 0x1000  // AT_EMPTY_PATH
    static let nlinkAndSize: UInt32 = 0x4 | 0x200  // STATX_NLINK | STATX_SIZE

    /// `struct statx` (256 bytes): the fields read here, at their offsets, and padding.
    struct Buffer {
        var mask: UInt32 = 0, blockSize: UInt32 = 0, attributes: UInt64 = 0
        var nlink: UInt32 = 0, uid: UInt32 = 0, gid: UInt32 = 0, mode: UInt16 = 0, spare: UInt16 = 0
        var inode: UInt64 = 0, size: UInt64 = 0
        var rest:
            (
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }
}
#endif
