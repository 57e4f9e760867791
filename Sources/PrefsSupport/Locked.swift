#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a `pthread_mutex_t`: the package's one lock for in-memory state.
///
/// Why not `Synchronization.Mutex`: on Linux it is built on raw `futex` system calls, which
/// ThreadSanitizer cannot see, so every correctly locked access is reported as a race and
/// `swift test --sanitize=thread` cannot tell a real race from the lock. ThreadSanitizer
/// intercepts `pthread_mutex_lock`, so with this lock its reports mean something.
///
/// The value lives in memory of its own, not in a stored property, so `body` gets it `inout` without the
/// dynamic exclusivity check a class property would cost on every access (the lock already excludes).
///
/// Like swift-nio's `NIOLockedValueBox`: not recursive, and `body` must not call back into the
/// same lock. Values returned from `body` leave the lock; they must not be references to state
/// that is still mutated under it.
// @unchecked Sendable: the value is read and written only between lock and unlock of `mutex`.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: consuming Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
