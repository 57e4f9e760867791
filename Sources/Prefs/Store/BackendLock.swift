import Foundation

/// The store's backend behind a lock: one thread at a time uses it.
///
/// Not a `Locked<any PrefsBackend>`: a transaction hands the backend to the caller's closure and returns
/// the closure's (possibly non-`Sendable`) result, which `Mutex.withLock`'s `sending` rules reject.
// @unchecked Sendable: `backend` is read and written only between `lock.lock()` and `lock.unlock()`.
final class BackendLock: @unchecked Sendable {
    private let lock = NSLock()
    private var backend: (any PrefsBackend)?
    private let storage: Prefs.Storage

    init(_ backend: any PrefsBackend, storage: Prefs.Storage) {
        self.backend = backend
        self.storage = storage
    }

    /// Runs `body` with the open backend; throws ``PrefsError/closed(store:)`` after ``close(_:)``.
    func withBackend<Result>(_ body: (any PrefsBackend) throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard let backend else { throw PrefsError.closed(store: storage.description) }
        return try body(backend)
    }

    /// Runs `body` with the backend, then releases it; later calls throw ``PrefsError/closed(store:)``.
    func close(_ body: (any PrefsBackend) throws -> Void) rethrows {
        lock.lock()
        defer { lock.unlock() }
        guard let backend else { return }
        defer {
            backend.close()
            self.backend = nil
        }
        try body(backend)
    }
}
