import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsSupport

/// An exclusive lock between processes, on a sidecar file (`store.json.lock`, mode 0600), opened in the store's folder
/// through its descriptor (``StoreFolder``), never following a link at its name. In a shared folder, a lock file another
/// user owns is refused with ``PrefsError/untrustedFile(path:owner:)``: they could hold it for ever.
///
/// The lock lives on its own file because the store file is replaced by rename on every compaction, and a lock on a
/// replaced inode would protect nothing. A killed holder never leaves the store locked.
///
/// On Linux the lock is a robust, process-shared `pthread_mutex_t` in the file's first page, mapped by every process
/// that writes the store (as LMDB keeps its writer mutex in its lock file, and SQLite its WAL index in `-shm`): taking
/// and releasing it is two atomic operations, no system call, where `flock` costs two. When its holder dies, the next
/// locker takes it over (what the dead holder left half-written, the store finds as it always does: a torn journal
/// tail, a temporary file). Elsewhere, and on a lock file another user owns outside a shared folder, the lock is
/// `flock`, which the kernel releases when its holder dies.
///
/// Release 0.1 locked with `flock` alone. A writer of this release that may meet it on a store (one in format 1,
/// which 0.1 writes) takes `flock` too, after the mutex: ``lockForPreviousReleases(timeout:)``.
final class FileLock {
    /// The store's folder, in which the lock file is opened, and the lock file's name in it.
    private let folder: StoreFolder
    private let name: String
    /// The lock file's path, for messages.
    var path: String { folder.path(of: name) }
    private var descriptor: Int32 = -1
    /// The lock file's identity while this object holds the lock.
    private var held: FileIdentity?
    /// The identity of the file `descriptor` is open on (read once, when it is opened).
    private var descriptorIdentity: FileIdentity?
    /// The lock file's shared page, when the lock is a mutex in it.
    private var page: SharedPage?
    /// Whether this object holds `flock` besides the mutex, for release 0.1 (``lockForPreviousReleases(timeout:)``).
    private var holdsFlockForPreviousReleases = false

    /// The lock files held by stores in this process, so a timeout can say whether the holder is this process.
    private static let heldInProcess = Locked<[FileIdentity: Int]>([:])

    init(folder: StoreFolder, name: String) {
        self.folder = folder
        self.name = name
    }

    deinit {
        page?.unmap()
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes the lock, waiting up to `timeout` for another holder to release it.
    func lock(timeout: Duration) throws(PrefsError) {
        try openIfNeeded(timeout: timeout)
        if let page { return try page.lock(timeout: timeout, path: path) }
        try flockExclusive(timeout: timeout)
        if let identity = descriptorIdentity {
            held = identity
            Self.heldInProcess.withLock { $0[identity, default: 0] += 1 }
        }
    }

    /// Takes `flock` on the lock file as well, while holding the lock: what release 0.1's writers take, so that they
    /// and this one exclude each other. Where the lock is `flock` already, nothing more. Released by ``unlock()``.
    func lockForPreviousReleases(timeout: Duration) throws(PrefsError) {
        guard page != nil, !holdsFlockForPreviousReleases else { return }
        try flockExclusive(timeout: timeout)
        holdsFlockForPreviousReleases = true
        if let identity = descriptorIdentity {
            held = identity
            Self.heldInProcess.withLock { $0[identity, default: 0] += 1 }
        }
    }

    /// Whether ``lockForPreviousReleases(timeout:)`` holds `flock` now.
    var holdsLockForPreviousReleases: Bool { holdsFlockForPreviousReleases }

    func unlock() {
        if let held {
            Self.heldInProcess.withLock { holders in
                holders[held, default: 1] -= 1
                if holders[held] == 0 { holders[held] = nil }
            }
            self.held = nil
        }
        if holdsFlockForPreviousReleases {
            holdsFlockForPreviousReleases = false
            flock(descriptor, LOCK_UN)
        }
        if let page { return page.unlock() }
        if descriptor >= 0 { flock(descriptor, LOCK_UN) }
    }

    /// Opens the lock file the first time; on Linux, maps its shared page (set up under `flock` by whichever process
    /// maps it first).
    private func openIfNeeded(timeout: Duration) throws(PrefsError) {
        guard descriptor < 0 else { return }
        // Never blocks, even on a FIFO put at the path; anything but a regular file is refused (it is only locked, never read).
        // Never follows a link either: one planted at the name would make a writer create the file it points to. In a
        // shared folder, a lock file another user owns is refused (`untrustedFile`), since they could hold it for ever.
        guard let directory = try folder.existing() else { throw .io(path: path, operation: "open lock file", errno: ENOENT) }
        guard let (fd, info) = try directory.open(name, O_RDWR | O_CREAT | O_NONBLOCK, operation: "open lock file") else {
            throw .io(path: path, operation: "open lock file", errno: ENOENT)
        }
        do throws(PrefsError) {
            try FileSystem.requireRegularFile(info, path: path)
        } catch {
            close(fd)
            throw error
        }
        descriptor = fd
        descriptorIdentity = FileIdentity(info)
        #if os(Linux)
        // Only a lock file of this user's is mapped: another user could shrink theirs under the mapping (SIGBUS) or
        // scribble on the mutex. The rule depends on the file alone, so every process of this user agrees on it.
        if info.st_uid == geteuid() {
            try flockExclusive(timeout: timeout)
            defer { flock(fd, LOCK_UN) }
            page = try SharedPage.map(fd, path: path)
        }
        #endif
    }

    /// `flock(LOCK_EX)`, polling until `timeout`.
    private func flockExclusive(timeout: Duration) throws(PrefsError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause: Duration = .microseconds(200)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else { throw .io(path: path, operation: "flock", errno: code) }
            guard clock.now < deadline else {
                let identity = FileIdentity(path: path)
                let inProcess = identity.map { identity in Self.heldInProcess.withLock { $0[identity] != nil } } ?? false
                throw .lockTimeout(path: path, seconds: timeout.timeInterval, heldInThisProcess: inProcess)
            }
            usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
            pause = min(pause * 2, .milliseconds(20))
        }
    }
}

#if os(Linux)
extension FileLock {
    /// The lock file's first page, mapped shared:
    ///
    /// | offset | contents |
    /// |---|---|
    /// | 0 | the magic number: the bytes `RFSLCKH1`, written last when the page is set up |
    /// | 8 | the size of `pthread_mutex_t` on the machine that set it up |
    /// | 64 | the mutex: process-shared and robust |
    ///
    /// The magic number's last byte is the page's format version (`1`). A page of a newer version (`RFSLCKH2` to
    /// `RFSLCKH9`, from a later release that lays the page out differently) is refused with
    /// ``PrefsError/unsupportedFormatVersion(path:found:supported:)`` and left as it is: setting it up again would
    /// overwrite the mutex that release holds. A page with another magic number or mutex size (a new file, a lock file
    /// of release 0.1, which leaves it empty, or one written by something else) is set up again.
    final class SharedPage {
        static let size = 4096
        static let magic: UInt64 = 0x3148_4B43_4C53_4652  // the bytes "RFSLCKH1" (little-endian)
        /// The version this release writes: the magic number's last byte.
        static let formatVersion = 1
        /// The bytes of the magic number before its version byte ("RFSLCKH").
        private static let nameMask: UInt64 = 0x00FF_FFFF_FFFF_FFFF
        private static let mutexOffset = 64

        private let base: UnsafeMutableRawPointer
        private var mutex: UnsafeMutablePointer<pthread_mutex_t> {
            (base + Self.mutexOffset).assumingMemoryBound(to: pthread_mutex_t.self)
        }

        private init(base: UnsafeMutableRawPointer) {
            self.base = base
        }

        /// Maps the page of the lock file open at `fd`, setting it up when it is not. Called holding `flock` on it.
        static func map(_ fd: Int32, path: String) throws(PrefsError) -> SharedPage {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw .io(path: path, operation: "fstat lock file", errno: errno) }
            if info.st_size < size {
                guard ftruncate(fd, off_t(size)) == 0 else { throw .io(path: path, operation: "extend lock file", errno: errno) }
            }
            guard let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), base != MAP_FAILED else {
                throw .io(path: path, operation: "map lock file", errno: errno)
            }
            let page = SharedPage(base: base)
            let magic = base.load(as: UInt64.self)
            let mutexSize = base.load(fromByteOffset: 8, as: UInt64.self)
            let version = Int(magic >> 56) - Int(UInt8(ascii: "0"))
            if magic & nameMask == Self.magic & nameMask, version > formatVersion, version <= 9 {
                page.unmap()
                throw .unsupportedFormatVersion(path: path, found: version, supported: formatVersion)
            }
            if magic != Self.magic || mutexSize != UInt64(MemoryLayout<pthread_mutex_t>.size) {
                do throws(PrefsError) { try page.setUp(path: path) } catch {
                    page.unmap()
                    throw error
                }
            }
            return page
        }

        private func setUp(path: String) throws(PrefsError) {
            base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.mutexOffset + MemoryLayout<pthread_mutex_t>.size)
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            defer { pthread_mutexattr_destroy(&attributes) }
            pthread_mutexattr_setpshared(&attributes, Int32(PTHREAD_PROCESS_SHARED))
            pthread_mutexattr_setrobust(&attributes, Int32(PTHREAD_MUTEX_ROBUST))
            let code = pthread_mutex_init(mutex, &attributes)
            guard code == 0 else { throw .io(path: path, operation: "set up the lock", errno: code) }
            base.storeBytes(of: UInt64(MemoryLayout<pthread_mutex_t>.size), toByteOffset: 8, as: UInt64.self)
            base.storeBytes(of: Self.magic, as: UInt64.self)
        }

        func unmap() {
            munmap(base, Self.size)
        }

        /// Takes the mutex, waiting up to `timeout`; from a holder that died, too. `path` (for an error) is built only
        /// when one is thrown: every write takes this lock.
        func lock(timeout: Duration, path: @autoclosure () -> String) throws(PrefsError) {
            var code = pthread_mutex_trylock(mutex)
            if code == EBUSY {
                var deadline = timespec()
                clock_gettime(CLOCK_REALTIME, &deadline)
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
                deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
                deadline.tv_nsec = nanoseconds % 1_000_000_000
                code = pthread_mutex_timedlock(mutex, &deadline)
            }
            switch code {
            case 0:
                return
            case EOWNERDEAD:
                // The holder died: the lock is this thread's now. What it left half-done is on disk, where readers
                // and the next writer handle it as they handle any killed writer's leftovers.
                pthread_mutex_consistent(mutex)
            case ETIMEDOUT, EBUSY:
                throw .lockTimeout(path: path(), seconds: timeout.timeInterval, heldInThisProcess: heldByThisProcess)
            default:
                throw .io(path: path(), operation: "lock", errno: code)
            }
        }

        func unlock() {
            pthread_mutex_unlock(mutex)
        }

        /// Whether the thread holding the mutex (as glibc records it) is one of this process's.
        private var heldByThisProcess: Bool {
            let owner = mutex.pointee.__data.__owner
            return owner > 0 && access("/proc/self/task/\(owner)", F_OK) == 0
        }
    }
}

#endif
