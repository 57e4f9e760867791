import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PrefsSupport

/// The store's backend behind a lock: one thread at a time uses it.
///
/// Not a `Locked<any StoreBackend>`: a transaction hands the backend to the caller's closure and returns
/// the closure's (possibly non-`Sendable`) result, which `Mutex.withLock`'s `sending` rules reject.
///
/// The lock knows which thread holds it, so a call into the store from inside a transaction body (or from a
/// handler the store called while holding it) is recognised at once instead of waiting for itself for ever:
/// reads are served with the backend the caller already holds, writes throw ``PrefsError/reentrantCall(store:operation:)``.
/// App code the store notices it must call while holding the lock (`onDiagnostic`) waits in ``UserCallbacks`` until
/// the lock is released.
///
/// After every call that held it, the lock hands what the backend noticed to the store (``reportDiagnostics(_:)``)
/// and schedules the backend's idle work (``StoreBackend/idleWorkDelay``): one place, whatever the call.
// @unchecked Sendable: `backend`, `report` and `idleWorkScheduled` are read and written only by the thread holding
// `lock` (the thread recorded in `owner`); `owner` is behind a lock of its own.
final class BackendLock: @unchecked Sendable {
    private let lock = NSLock()
    private var backend: (any StoreBackend)?
    private let storage: Prefs.Storage
    /// Where the backend's reports go (the store's diagnostics); set once, by the store.
    private var report: (@Sendable ([Prefs.Diagnostic.Kind]) -> Void)?
    /// Whether a run of the backend's idle work is scheduled.
    private var idleWorkScheduled = false
    /// The thread holding `lock`. Only that thread ever writes its own identity here, so a thread that reads its
    /// own identity knows it holds the lock.
    private let owner = Locked<UInt?>(nil)

    init(_ backend: any StoreBackend, storage: Prefs.Storage) {
        self.backend = backend
        self.storage = storage
    }

    /// Sends what the backend reports after each call to `report`.
    func reportDiagnostics(_ report: @escaping @Sendable ([Prefs.Diagnostic.Kind]) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        self.report = report
    }

    /// Runs the backend's idle work (see ``StoreBackend/doIdleWork()``), and schedules the next run it asks for.
    func runIdleWork() {
        let again =
            (try? locked { backend -> Duration? in
                let again = backend.doIdleWork()
                idleWorkScheduled = again != nil  // then the call's end schedules nothing more
                return again
            }) ?? nil
        if let again { Background.after(again) { [weak self] in self?.runIdleWork() } }
    }

    /// Whether the calling thread holds the lock (it is inside a transaction body or a backend call of this store).
    var isHeldByCurrentThread: Bool {
        let me = Self.currentThread
        return owner.withLock { $0 == me }
    }

    /// Runs `body` with the open backend; throws ``PrefsError/closed(store:)`` after ``close(_:)``.
    /// Called from a thread that already holds the lock (a transaction body calling the store), it throws
    /// ``PrefsError/reentrantCall(store:operation:)`` instead of waiting for itself.
    /// With `timeout`, waits at most that long for the lock (at process exit, where another thread may hold it for ever).
    func withBackend<Result>(
        _ operation: String = #function,
        waitingAtMost timeout: Duration? = nil,
        _ body: (any StoreBackend) throws -> Result
    ) throws -> Result {
        if isHeldByCurrentThread { throw PrefsError.reentrantCall(store: storage.description, operation: operation) }
        return try locked(timeout: timeout) { backend in try body(backend) }
    }

    /// Runs `body` with the open backend; from a thread that already holds the lock, with the backend it holds
    /// (for reads that are safe in the middle of that thread's transaction).
    func withBackendAllowingReentry<Result>(_ body: (any StoreBackend) throws -> Result) throws -> Result {
        if isHeldByCurrentThread {
            guard let backend else { throw PrefsError.closed(store: storage.description) }
            return try body(backend)
        }
        return try locked(body)
    }

    /// Runs `body` with the backend, then releases it; later calls throw ``PrefsError/closed(store:)``.
    func close(_ operation: String = #function, _ body: (any StoreBackend) throws -> Void) throws {
        if isHeldByCurrentThread { throw PrefsError.reentrantCall(store: storage.description, operation: operation) }
        try UserCallbacks.deferring {
            lock.lock()
            try holding {
                guard let backend else { return }
                defer {
                    backend.close()
                    self.backend = nil
                }
                try body(backend)
            }
        }
    }

    private func locked<Result>(timeout: Duration? = nil, _ body: (any StoreBackend) throws -> Result) throws -> Result {
        try UserCallbacks.deferring {
            if let timeout {
                guard lock.lock(before: Date(timeIntervalSinceNow: timeout.timeInterval)) else {
                    throw PrefsError.lockTimeout(path: storage.description, seconds: timeout.timeInterval, heldInThisProcess: true)
                }
            } else {
                lock.lock()
            }
            return try holding {
                guard let backend else { throw PrefsError.closed(store: storage.description) }
                return try body(backend)
            }
        }
    }

    /// Runs `body` with `lock` taken by the caller, then what follows every call (``afterCall()``), then releases it.
    private func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        let me = Self.currentThread
        owner.withLock { $0 = me }
        defer {
            afterCall()
            owner.withLock { $0 = nil }
            lock.unlock()
        }
        return try body()
    }

    /// Hands the backend's reports to the store and schedules its idle work. Holding `lock`.
    private func afterCall() {
        guard let backend else { return }
        let kinds = backend.takeReports()
        if !kinds.isEmpty { report?(kinds) }
        guard !idleWorkScheduled, let delay = backend.idleWorkDelay else { return }
        idleWorkScheduled = true
        Background.after(delay) { [weak self] in self?.runIdleWork() }
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
