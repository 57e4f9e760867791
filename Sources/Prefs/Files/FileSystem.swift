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

    /// The whole content of `path`, or nil when it does not exist. Throws for anything but a regular file
    /// (see ``openRegularFile(_:)``). For documents a user names (an import); a store reads its files through its
    /// ``Directory``.
    package static func contents(of path: String) throws(PrefsError) -> (Data, Stamp)? {
        guard let (fd, info) = try openRegularFile(path) else { return nil }
        defer { close(fd) }
        return (try readAll(fd, size: Int(info.st_size), path: path), Stamp(info))
    }

    /// Everything readable from `fd`, a regular file `size` bytes long when it was opened (a file that grew while being
    /// read is read to its new end).
    static func readAll(_ fd: Int32, size: Int, path: String) throws(PrefsError) -> Data {
        var data = Data(count: size)
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
        // A file that grew while being read: read the rest, through a buffer on the stack (a 64 KiB array made for
        // it at every read, though it almost never holds a byte, took 16 page faults at a launch's first read).
        data.count = total
        let grown: Int32? = withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { chunk -> Int32? in
            guard let base = chunk.baseAddress else { return nil }
            while true {
                let count = read(fd, base, chunk.count)
                if count < 0 { if errno == EINTR { continue }; return errno }
                if count == 0 { return nil }
                data.append(UnsafeRawBufferPointer(start: base, count: count).assumingMemoryBound(to: UInt8.self))
            }
        }
        if let grown { throw .io(path: path, operation: "read", errno: grown) }
        return data
    }

    /// The first `count` bytes of the file open at `fd` (fewer for a shorter file).
    static func prefix(of fd: Int32, count: Int, path: String) throws(PrefsError) -> Data {
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

    /// Follows symbolic links until `path` names something that is not a link (or does not exist); nil for a cycle
    /// or a chain of more than 32 links.
    package static func resolvingLinksIfFinite(_ path: String) -> String? {
        try? resolvingLinks(path, trusting: { _ throws(PrefsError) in })
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

    /// The time stamp of a file moved aside: `YYYYMMDDTHHMMSSZ`.
    static func corruptStamp(_ now: Date) -> String {
        ISO8601.format(now, fractionDigits: 0).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
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
