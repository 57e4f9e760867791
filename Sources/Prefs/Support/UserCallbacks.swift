#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Calls into app code (`onDiagnostic`) that the store notices while it holds one of its locks, held back until the
/// lock is released, so the app's handler may call the store without waiting for itself.
///
/// A scope is per thread: ``deferring(_:)`` opens one around code that takes a lock; ``run(_:)`` inside it queues the
/// callback, and the outermost scope runs the queue, in order, once its body (and so the lock) is done. Outside any
/// scope, ``run(_:)`` calls at once.
enum UserCallbacks {
    /// The calling thread's open scope: an unretained `Queue`, or nil.
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    private final class Queue {
        var callbacks: [() -> Void] = []
    }

    /// Runs `body`; callbacks queued on this thread while it runs are called after it returns (or throws).
    static func deferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        if pthread_getspecific(slot) != nil { return try body() }  // an outer scope runs them
        let queue = Queue()
        pthread_setspecific(slot, Unmanaged.passUnretained(queue).toOpaque())
        defer {
            pthread_setspecific(slot, nil)
            for callback in queue.callbacks { callback() }
        }
        return try withExtendedLifetime(queue) { try body() }
    }

    /// Calls `callback` now, or when the calling thread's open scope ends.
    static func run(_ callback: @escaping () -> Void) {
        if let raw = pthread_getspecific(slot) {
            Unmanaged<Queue>.fromOpaque(raw).takeUnretainedValue().callbacks.append(callback)
        } else {
            callback()
        }
    }
}
