import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsSupport

/// An exclusive advisory lock between processes, held on a sidecar file (`store.json.lock`, mode 0600, opened with
/// `O_NOFOLLOW`: a symbolic link at its name fails with `ELOOP`).
///
/// The lock lives on its own file because the store file is replaced by rename on every write,
/// and a lock on a replaced inode would protect nothing. `flock` locks are released by the kernel
/// when the holder dies, so a killed writer never leaves the store locked.
final class FileLock {
    let path: String
    private var descriptor: Int32 = -1
    /// The lock file's identity while this object holds the lock.
    private var held: FileIdentity?
    /// The identity of the file `descriptor` is open on (read once, when it is opened).
    private var descriptorIdentity: FileIdentity?

    /// The lock files held by stores in this process, so a timeout can say whether the holder is this process.
    private static let heldInProcess = Locked<[FileIdentity: Int]>([:])

    init(path: String) {
        self.path = path
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes the lock, waiting up to `timeout` for another process to release it.
    func lock(timeout: Duration) throws(PrefsError) {
        if descriptor < 0 {
            // Never blocks, even on a FIFO put at the path; anything but a regular file is refused (it is only locked, never read).
            // Never follows a link either: one planted at the name would make a writer create the file it points to.
            let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0o600)
            guard fd >= 0 else { throw .io(path: path, operation: "open lock file", errno: errno) }
            var info = stat()
            do throws(PrefsError) {
                guard fstat(fd, &info) == 0 else { throw .io(path: path, operation: "fstat lock file", errno: errno) }
                try FileSystem.requireRegularFile(info, path: path)
            } catch {
                close(fd)
                throw error
            }
            descriptor = fd
            descriptorIdentity = FileIdentity(info)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause: Duration = .microseconds(200)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else { throw .io(path: path, operation: "flock", errno: code) }
            guard clock.now < deadline else {
                let seconds = timeout.timeInterval
                let identity = FileIdentity(path: path)
                let inProcess = identity.map { identity in Self.heldInProcess.withLock { $0[identity] != nil } } ?? false
                throw .lockTimeout(path: path, seconds: seconds, heldInThisProcess: inProcess)
            }
            usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
            pause = min(pause * 2, .milliseconds(20))
        }
        if let identity = descriptorIdentity {
            held = identity
            Self.heldInProcess.withLock { $0[identity, default: 0] += 1 }
        }
    }

    func unlock() {
        if let held {
            Self.heldInProcess.withLock { holders in
                holders[held, default: 1] -= 1
                if holders[held] == 0 { holders[held] = nil }
            }
            self.held = nil
        }
        if descriptor >= 0 { flock(descriptor, LOCK_UN) }
    }
}
