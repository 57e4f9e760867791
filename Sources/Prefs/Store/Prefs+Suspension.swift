import Foundation
import PrefsSupport

extension Prefs {
    /// Releases every lock the store holds on its files, until the next call on it, which resumes it by itself: for
    /// an app about to be suspended, whose store lives in a container it shares with its extensions (an App Group).
    ///
    /// ```swift
    /// prefs.suspend()       // no file lock held: the system may suspend the app
    /// prefs[.launchCount]   // the next call opens the file again, and sees what others wrote meanwhile
    /// ```
    ///
    /// iOS ends an app suspended while it holds a file lock in a shared container (exception `0xdead10cc`). An SQLite
    /// store's open connection holds two even when idle (read locks on the database and on its `-shm` index, SQLite's
    /// WAL locks): `suspend()` writes what is pending, then closes the connection. A JSON store holds no lock between
    /// calls. Memory, custom and PostgreSQL stores hold no file lock (a PostgreSQL store's connections stay open: a
    /// socket is no file lock, and other stores of the server share them).
    ///
    /// Until the next call, every store leaves its backend alone: no poll for other processes' changes, no background
    /// work, so observers hear nothing while suspended. The next call of any kind (a read, a write, ``refresh()``, a
    /// new observer) resumes the store: it reopens what it closed and looks for other processes' writes (observers are
    /// told of them) before it does its own work; callers on several threads at once resume it once.
    ///
    /// Where UIKit is (iOS, tvOS, visionOS), every store suspends itself when the app moves to the background
    /// (`UIApplication.didEnterBackgroundNotification`). A call made after that (work in a background task) resumes it:
    /// call `suspend()` again once that work is done, and in an app extension, which gets no such notification.
    ///
    /// A failure is reported as a ``Diagnostic`` (`writeFailed`, during `suspend()`), and the store then stays as it
    /// is: when pending writes cannot be written, and when called inside one of the store's transaction bodies.
    public func suspend() {
        do {
            try io.suspend("suspend()") { backend in try backend.flush() }
        } catch PrefsError.closed {
            return  // closed: nothing is held
        } catch {
            report(Diagnostic(key: nil, kind: .writeFailed(error, during: "suspend()"), store: storage.description))
        }
    }

    /// Resumes a suspended store from a read the cache could answer: any call through the backend lock resumes it.
    /// Inside a call that holds the lock (a transaction body, the resume's own refresh), the read goes on as it is.
    @inline(never)
    func resumeForRead() {
        guard !io.isHeldByCurrentThread else { return }
        do {
            try io.withBackend("resume") { _ in }
        } catch {
            return  // closed: a closed store reads initial values; no other error comes from an empty body
        }
    }

    /// What the first call after ``suspend()`` does first, holding the backend lock: the backend's refresh (which
    /// reopens what the suspension closed, and reports a change when it did), dropping the cache when anything may
    /// have changed. Returns whether the coalescing observers are to be told, once the lock is released. A failure is
    /// reported, and the cache served as it is.
    func catchUpAfterSuspension(_ backend: any StoreBackend) -> Bool {
        do {
            guard try backend.refresh() else { return false }
            invalidateCache()
            deliverInOrder(nil)
            return true
        } catch {
            report(Diagnostic(key: nil, kind: .refreshFailed(error, during: "resume after suspend()"), store: storage.description))
            return false
        }
    }

    /// Has the backend lock resume the store as ``catchUpAfterSuspension(_:)`` says and, where UIKit is, suspends the
    /// store when the app moves to the background. Called once, by `init`.
    func prepareSuspension() {
        io.onResume({ [weak self] backend in self?.catchUpAfterSuspension(backend) ?? false }, then: { [weak self] in self?.notifyObservers(of: nil) })
        #if canImport(UIKit)
        backgroundSuspension.start { [weak self] in self?.suspend() }
        #endif
    }
}

#if canImport(UIKit)
/// Suspends a store (``Prefs/suspend()``) whenever the app moves to the background, until the store is released.
// @unchecked Sendable: `token` is written once, by `start`, called from the store's `init` before the store is shared.
final class BackgroundSuspension: @unchecked Sendable {
    private var token: (any NSObjectProtocol)?

    /// `UIApplication.didEnterBackgroundNotification`'s name, spelled out: the constant is isolated to the main actor
    /// in Swift 6, which a store made on any thread cannot reach synchronously (swiftlang/swift#59484).
    static let didEnterBackground = Notification.Name("UIApplicationDidEnterBackgroundNotification")

    func start(_ suspend: @escaping @Sendable () -> Void) {
        token = NotificationCenter.default.addObserver(forName: Self.didEnterBackground, object: nil, queue: nil) { _ in suspend() }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }
}
#endif
