import Foundation
import PrefsSupport

extension Prefs {
    private static let standardStore = Locked<Prefs?>(nil)

    /// The store that ``standard`` is within a task that overrides it (PrefsTesting's `withStandardStore(_:_:)`), read
    /// before the process's own; setting ``standard`` there replaces it for that task and its child tasks only.
    @TaskLocal package static var standardOverride: StandardOverride?

    /// A task's own ``standard`` (see ``standardOverride``).
    package final class StandardOverride: Sendable {
        let store: Locked<Prefs>

        package init(_ store: Prefs) {
            self.store = Locked(store)
        }
    }

    /// Runs `body` with ``standard`` being `store` in this task and the tasks it starts (not in detached tasks or
    /// other threads), without touching the process's standard store: tests running in parallel each see their own.
    package static func withStandard<Result>(_ store: Prefs, _ body: () throws -> Result) rethrows -> Result {
        try $standardOverride.withValue(StandardOverride(store), operation: body)
    }

    /// The asynchronous form of ``withStandard(_:_:)``.
    package static func withStandard<Result>(
        _ store: Prefs, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $standardOverride.withValue(StandardOverride(store), operation: body, isolation: isolation)
    }

    /// The store that ``Pref`` wrappers use when given none. Set it once at launch; tests give each test its own
    /// (PrefsTesting's `withStandardStore(_:_:)`).
    ///
    /// ```swift
    /// Prefs.standard = try Prefs(.default(identifier: "com.example.app"))   // at launch
    /// ```
    ///
    /// Until it is set, the first use opens `.default(identifier:)` with the app's bundle identifier (or, without a
    /// bundle, the process name), as `UserDefaults.standard` does. If that store cannot be opened then (its folder is
    /// missing and cannot be made, or cannot be read, as before an iOS device's first unlock), the standard store
    /// waits for it instead of forgetting: ``waitingReason`` says why, reads return initial values, writes are kept
    /// in memory, and it tries again on access (at most once a second) and when the app calls ``retryOpening()``;
    /// once it opens, the kept writes are committed where the store holds no value of its own. A diagnostic (also
    /// written to standard error) reports the wait, and any kept write that never reached the store. See
    /// <doc:StandardStore>.
    public static var standard: Prefs {
        get {
            if let override = standardOverride { return override.store.withLock { $0 } }
            return standardStore.withLock { current in
                if let current { return current }
                let made = openDefaultStandard()
                current = made
                return made
            }
        }
        set {
            if let override = standardOverride {
                override.store.withLock { $0 = newValue }
                return
            }
            standardStore.withLock { $0 = newValue }
        }
    }

    private static func openDefaultStandard() -> Prefs {
        let identifier = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        let prefs = openDefault(identifier: identifier, environment: ProcessInfo.processInfo.environment)
        if let reason = prefs.waitingReason {
            let diagnostic = Diagnostic(key: nil, kind: .refreshFailed(reason, during: DeferredBackend.waitingNote), store: prefs.storage.description)
            FileHandle.standardError.write(Data("Prefs: Prefs.standard: \(diagnostic)\n".utf8))
            #if canImport(UIKit) && !os(watchOS)
            // Protected files become readable at the first unlock after a prewarmed launch: try again then. The name is
            // UIApplication.protectedDataDidBecomeAvailableNotification's, spelled out: UIApplication is main-actor
            // isolated, and this runs wherever Prefs.standard is first read.
            NotificationCenter.default.addObserver(
                forName: Notification.Name("UIApplicationProtectedDataDidBecomeAvailable"), object: nil, queue: nil
            ) { [weak prefs] _ in
                try? prefs?.retryOpening()  // still waiting: the store says why (waitingReason, a diagnostic)
            }
            #endif
        }
        return prefs
    }

    /// The default store for `identifier` (``Storage/default(identifier:)`` under `environment`), or, when it cannot be
    /// opened now, a store that waits for it (see ``standard``), retrying at most once per `retryInterval` of `clock`.
    package static func openDefault(
        identifier: String,
        environment: [String: String],
        clock: StoreClock = .system,
        retryInterval: Duration = .seconds(1),
        onDiagnostic: (@Sendable (Diagnostic) -> Void)? = nil
    ) -> Prefs {
        let open: DeferredBackend.Opening = { () throws(PrefsError) -> any StoreBackend in
            let storage = Storage.sqlite(try Storage.defaultURL(identifier: identifier, environment: environment))
            return try PrefsError.converting { try storage.makeBackend() }
        }
        let failure: PrefsError
        do {
            let storage = Storage.sqlite(try Storage.defaultURL(identifier: identifier, environment: environment))
            return try Prefs(storage, onDiagnostic: onDiagnostic)
        } catch {
            failure = error
        }
        // The store's name while it waits: the file it will be, when the folder that holds it is known.
        let storage =
            Storage.uncheckedDefaultURL(identifier: identifier, environment: environment).map { Storage.sqlite($0) }
            ?? .backend(".default(identifier: \(PrefsError.quoted(identifier)))") { throw failure }
        let backend = DeferredBackend(label: storage.description, waitingFor: failure, retryInterval: retryInterval, clock: clock, open: open)
        let prefs = Prefs(storage: storage, backend: backend, pollInterval: .milliseconds(250), onDiagnostic: onDiagnostic)
        // At exit, a last try, then the writes still kept in memory are reported as lost.
        prefs.state.withLock { $0.committer.joinExitFlush() }
        ExitFlush.remember(prefs)
        return prefs
    }

    /// Why this store is waiting for its storage, or nil when it is open. Only ``standard``'s default store ever
    /// waits (any other store opens or throws when it is made): when it could not be opened at first use (a missing
    /// folder that cannot be made, an unreadable one), with the error naming the folder. While it waits, reads return
    /// initial values (`isStored` is false but for keys written since), writes are kept in memory and committed once it
    /// opens, and ``flush()`` (and so ``close()``) throws this reason while writes are kept.
    ///
    /// ```swift
    /// if let reason = Prefs.standard.waitingReason { log("settings not available yet: \(reason)") }
    /// ```
    public var waitingReason: PrefsError? {
        deferred?.waitingReason
    }

    /// Tries now to open the storage this store waits for (``waitingReason``), as the app learns it may be
    /// available: after the first unlock (iOS does this by itself on
    /// `UIApplication.protectedDataDidBecomeAvailableNotification`), or once it made the missing folder. When it
    /// opens, the writes kept while waiting are committed where the store holds no value of its own, every key reads
    /// the store's value, and observers are told. Throws why it still waits; does nothing on an open store.
    ///
    /// ```swift
    /// try Prefs.standard.retryOpening()
    /// ```
    public func retryOpening() throws(PrefsError) {
        guard let deferred, deferred.waitingReason != nil else { return }
        try refresh()  // a waiting store retries at once
        if let reason = deferred.waitingReason { throw reason }
    }

    /// An empty memory store, which cannot fail to open.
    convenience init(memory: Void) {
        do { try self.init(.memory) } catch { preconditionFailure("a memory store cannot fail to open: \(error)") }
    }

    /// Writes `value` for `key` without blocking the caller: the write runs on the store's writer queue (in the order
    /// the calls were made) and this returns when it is done, with its error. Use it from the main actor, where
    /// ``set(_:for:)-(_,Prefs.Key<Value>)`` or the subscript would wait for another process's lock (up to the lock or busy timeout, 5 s by
    /// default) on the main thread.
    public func write<Value: PrefsStorable>(_ value: Value, for key: Key<Value>) async throws(PrefsError) {
        let written = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, PrefsError>, Never>) in
            writer.async {
                continuation.resume(returning: Result { () throws(PrefsError) in try self.set(value, for: key) })
            }
        }
        try written.get()
    }
}
