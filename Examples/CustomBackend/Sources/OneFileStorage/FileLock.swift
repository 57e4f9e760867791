import Foundation
import Prefs

/// An exclusive `flock(2)` lock on a lock file, shared by every process (and every store in this one) that opens it.
final class FileLock {
    let path: String
    private var descriptor: Int32
    private var held = false

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PrefsError.io(path: path, operation: "open", errno: errno) }
    }

    /// Takes the lock, waiting up to `timeout` for another holder to release it.
    func lock(timeout: Duration = .seconds(5)) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else { throw PrefsError.io(path: path, operation: "flock", errno: code) }
            guard clock.now < deadline else {
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                throw PrefsError.lockTimeout(path: path, seconds: seconds)
            }
            usleep(1_000)
        }
        held = true
    }

    func unlock() {
        guard held else { return }
        held = false
        flock(descriptor, LOCK_UN)
    }

    /// Unlocks and closes the lock file.
    func release() {
        unlock()
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    deinit { release() }
}
