import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PrefsSupport
import Synchronization

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
///
/// It also keeps the store's suspension (``Prefs/suspend()``): ``suspend(_:)`` has the backend release its file locks,
/// the work the store does by itself (``withBackendUnlessSuspended(_:_:)``: polls, idle work, a scheduled flush) then
/// leaves the backend alone, and the next call of any other kind resumes it first (see ``onResume(_:then:)``).
// @unchecked Sendable: `backend`, `report`, `resume`, `afterResume` and the idle work's state are read and written
// only by the thread holding `lock` (the thread recorded in `owner`); `owner` and `suspended` are atomic, written only
// by the thread holding `lock`.
final class BackendLock: @unchecked Sendable {
    private let lock = NSLock()
    private var backend: (any StoreBackend)?
    private let storage: Prefs.Storage
    /// Where the backend's reports go (the store's diagnostics); set once, by the store.
    private var report: (@Sendable ([Prefs.Diagnostic.Kind]) -> Void)?
    /// Whether a run of the backend's idle work is scheduled, and the suspensions so far (a run scheduled before the
    /// last one does nothing).
    private var idleWorkScheduled = false
    private var idleWorkGeneration: UInt64 = 0
    /// The thread holding `lock`, 0 when none. Only that thread ever writes its own identity here (and 0 before it
    /// releases `lock`), and a thread sees its own writes in order, so a thread that reads its own identity knows it
    /// holds the lock; any other value says it does not. Atomic, not behind a lock: three locks fewer per call.
    private let owner = Atomic<UInt>(0)
    /// Whether the store is suspended: written holding `lock`, read without it by cached reads (``isSuspended``).
    private let suspended = Atomic<Bool>(false)
    /// What the first call after ``suspend(_:)`` runs, holding the lock, before its own work (the store's refresh),
    /// and, when that returns true, what runs once the lock is released (telling observers).
    private var resume: ((any StoreBackend) -> Bool)?
    private var afterResume: (@Sendable () -> Void)?

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

    /// Sets how a call resumes a suspended store: `resume` runs first, holding the lock, and when it returns true,
    /// `then` runs once the lock is released.
    func onResume(_ resume: @escaping (any StoreBackend) -> Bool, then: @escaping @Sendable () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        self.resume = resume
        afterResume = then
    }

    /// Runs the backend's idle work (see ``StoreBackend/doIdleWork()``), and schedules the next run it asks for.
    /// A run scheduled before the store was suspended (an older `generation`) does nothing: the first call after the
    /// suspension schedules the work again.
    func runIdleWork(generation: UInt64) {
        let again =
            (try? locked(resuming: false) { backend -> Duration? in
                guard generation == idleWorkGeneration else { return nil }
                let again = backend.doIdleWork()
                idleWorkScheduled = again != nil  // then the call's end schedules nothing more
                return again
            }) ?? nil
        if let again { storage.clock.after(again) { [weak self] in self?.runIdleWork(generation: generation) } }
    }

    /// Whether the store is suspended (``suspend(_:)``) and no call has resumed it yet. Read without the lock.
    @inline(__always)
    var isSuspended: Bool { suspended.load(ordering: .acquiring) }

    /// Runs `prepare` (the store's flush), then has the backend release the locks it holds on its files
    /// (``StoreBackend/suspend()``); until the next call, ``withBackendUnlessSuspended(_:_:)`` leaves it alone.
    /// When `prepare` throws, nothing is suspended. Nothing happens to a closed store, or one suspended already.
    func suspend(_ operation: String = #function, _ prepare: (any StoreBackend) throws -> Void) throws {
        if isHeldByCurrentThread { throw PrefsError.reentrantCall(store: storage.description, operation: operation) }
        try UserCallbacks.deferring {
            lock.lock()
            try holding {
                guard let backend, !suspended.load(ordering: .relaxed) else { return }
                try prepare(backend)
                backend.suspend()
                suspended.store(true, ordering: .releasing)
                idleWorkScheduled = false  // a run scheduled before does nothing (see `runIdleWork(generation:)`)
                idleWorkGeneration &+= 1
            }
        }
    }

    /// Runs `body` with the open backend, unless the store is suspended: then nil, without touching the backend. For
    /// the work the store does by itself (a poll, a scheduled flush), which must not take back the locks that
    /// ``suspend(_:)`` released.
    func withBackendUnlessSuspended<Result>(
        _ operation: String = #function,
        waitingAtMost timeout: Duration? = nil,
        _ body: (any StoreBackend) throws -> Result
    ) throws -> Result? {
        if isHeldByCurrentThread { throw PrefsError.reentrantCall(store: storage.description, operation: operation) }
        do {
            return try locked(timeout: timeout, resuming: false) { backend in try body(backend) }
        } catch is StoreSuspended {
            return nil
        }
    }

    /// Whether the calling thread holds the lock (it is inside a transaction body or a backend call of this store).
    var isHeldByCurrentThread: Bool {
        let me = Self.currentThread
        return owner.load(ordering: .acquiring) == me
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

    /// Runs `body` holding the lock. A suspended store is resumed first (``onResume(_:then:)``); with `resuming` false,
    /// it is left suspended and ``StoreSuspended`` is thrown instead.
    private func locked<Result>(
        timeout: Duration? = nil, resuming: Bool = true, _ body: (any StoreBackend) throws -> Result
    ) throws -> Result {
        var resumedWithChanges = false
        defer { if resumedWithChanges { afterResume?() } }  // the lock released, and the callbacks it deferred run
        return try UserCallbacks.deferring {
            if let timeout {
                guard lock.lock(before: Date(timeIntervalSinceNow: timeout.timeInterval)) else {
                    throw PrefsError.lockTimeout(path: storage.description, seconds: timeout.timeInterval, heldInThisProcess: true)
                }
            } else {
                lock.lock()
            }
            return try holding {
                guard let backend else { throw PrefsError.closed(store: storage.description) }
                if suspended.load(ordering: .relaxed) {  // only written holding the lock
                    guard resuming else { throw StoreSuspended() }
                    resumedWithChanges = resume?(backend) ?? false
                    // Cleared once the store caught up, so a cached read that sees it clear reads what the resume found.
                    suspended.store(false, ordering: .releasing)
                }
                return try body(backend)
            }
        }
    }

    /// Thrown inside ``locked(timeout:resuming:_:)`` for a call that does not resume a suspended store.
    private struct StoreSuspended: Error {}

    /// Runs `body` with `lock` taken by the caller, then what follows every call (``afterCall()``), then releases it.
    private func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        let me = Self.currentThread
        owner.store(me, ordering: .releasing)
        defer {
            afterCall()
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        return try body()
    }

    /// Hands the backend's reports to the store and schedules its idle work. Holding `lock`.
    private func afterCall() {
        guard let backend else { return }
        let kinds = backend.takeReports()
        if !kinds.isEmpty { report?(kinds) }
        guard !idleWorkScheduled, !suspended.load(ordering: .relaxed), let delay = backend.idleWorkDelay else { return }
        idleWorkScheduled = true
        let generation = idleWorkGeneration
        storage.clock.after(delay) { [weak self] in self?.runIdleWork(generation: generation) }
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
