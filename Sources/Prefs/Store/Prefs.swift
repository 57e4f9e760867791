import Foundation
internal import PrefsJSON
import PrefsSupport

/// A typed, thread-safe preferences store on memory, a JSON file or SQLite.
///
/// ```swift
/// extension Prefs.Keys {
///     static let launchCount = Key<Int>("launchCount", initial: 0)
/// }
/// let prefs = try Prefs(.sqlite(url))
/// prefs[.launchCount]                         // 0, the initial value
/// try prefs.update(.launchCount) { $0 += 1 }  // atomic, even across processes
/// prefs.isStored(.launchCount)                // true
/// ```
///
/// Reads are served from an in-memory cache; writes go through the backend before they return
/// (except in a JSON store's coalesced mode). Other processes' writes are seen on ``refresh()``, and by
/// themselves every `pollInterval` while anything observes the store. ``suspend()`` releases the store's file locks
/// until the next call.
public final class Prefs: Sendable {
    /// The largest JSON form a single value may have, in bytes (1 MiB). Preferences are small; larger data belongs in files.
    public static let maximumValueBytes = 1 << 20

    /// How deeply a single value's JSON form may nest arrays and objects (128 levels; a scalar is 0, `[1]` is 1).
    /// The stores' own files wrap each value in a few levels more, and their loaders read at most 256, so every value
    /// the store accepts can be read back.
    public static let maximumValueDepth = 128

    /// Where this store keeps its values.
    public let storage: Storage
    let pollInterval: Duration
    let onDiagnostic: (@Sendable (Diagnostic) -> Void)?
    /// The backend's bound on how old a cached value may be (PostgreSQL), checked before each cached read; nil for
    /// the stores that only this machine writes.
    let freshness: BackendFreshness?
    /// When the backend waits for a store that could not be opened yet (``standard``'s default store): why, and when it
    /// retries.
    let deferred: DeferredBackend.Status?

    /// The backend, used by one thread at a time. Lock order: `io` before `state`, never the reverse.
    let io: BackendLock
    let state: Locked<State>
    /// The serial queue of ``write(_:for:)``: writes that must not block their caller, in call order.
    let writer = DispatchQueue(label: "Prefs.writer")
    /// Where the ``ObservableValue``s not made on the main actor notify: one queue for the store, so that one
    /// `withObservationTracking` reading several of them gets its one `onChange` without two racing.
    let observationQueue = DispatchQueue(label: "Prefs.ObservableValue")
    #if canImport(UIKit)
    /// Suspends the store when the app moves to the background (see ``suspend()``).
    let backgroundSuspension = BackgroundSuspension()
    #endif

    /// Opens a store.
    ///
    /// ```swift
    /// let prefs = try Prefs(.sqlite(url))                              // reads -launchCount 5 from the app's arguments
    /// let fixed = try Prefs(.sqlite(url), launchArguments: [])         // reads none
    /// let test = try Prefs(.memory, launchArguments: ["-launchCount", "5"])
    /// ```
    ///
    /// - Parameters:
    ///   - storage: where values live, e.g. `.sqlite(url)`, `.jsonFile(url)`, `.memory`.
    ///   - pollInterval: how often the store looks for other processes' writes while something observes it.
    ///   - launchArguments: the arguments whose `-NAME VALUE` pairs this store reads above its stored values, for this
    ///     process only, never writing them (UserDefaults' argument domain; see <doc:LaunchArguments>). `nil`, the
    ///     default: the process's arguments for a store on a file or a server, none for `.memory` (a test's or a
    ///     preview's store reads what the test wrote, however the test runner was launched). `[]`: none. Given
    ///     arguments are read without a program name first (`["-launchCount", "5"]`).
    ///   - onDiagnostic: called for each ``Diagnostic``, on the thread that noticed it.
    public convenience init(
        _ storage: Storage,
        pollInterval: Duration = .milliseconds(250),
        launchArguments: [String]? = nil,
        onDiagnostic: (@Sendable (Diagnostic) -> Void)? = nil
    ) throws(PrefsError) {
        let backend = try PrefsError.converting { try storage.makeBackend() }
        // A custom backend names its storage (`Storage.custom`).
        self.init(
            storage: storage.named(by: backend), backend: backend, pollInterval: pollInterval, launchArguments: launchArguments,
            onDiagnostic: onDiagnostic)
    }

    /// A store on `backend`, which `storage` names, reading `launchArguments` (nil: the process's, unless `storage` is
    /// memory).
    init(
        storage: Storage, backend: any StoreBackend, pollInterval: Duration, launchArguments: [String]? = nil,
        onDiagnostic: (@Sendable (Diagnostic) -> Void)?
    ) {
        self.pollInterval = pollInterval
        self.onDiagnostic = onDiagnostic
        self.storage = storage
        deferred = (backend as? DeferredBackend)?.status
        freshness = backend.freshness
        io = BackendLock(backend, storage: storage)
        state = Locked(State(cache: StoreCache(limits: backend.readsCostOneLookup ? .readsCostOneLookup : nil)))
        let arguments = LaunchArguments.domain(launchArguments ?? storage.defaultLaunchArguments)
        if !arguments.isEmpty { state.withLock { $0.arguments = arguments } }
        for kind in backend.openingReport + backend.takeReports() {
            report(Diagnostic(key: nil, kind: kind, store: storage.description))
        }
        let description = storage.description
        io.reportDiagnostics { [weak self] kinds in
            for kind in kinds { self?.report(Diagnostic(key: nil, kind: kind, store: description)) }
        }
        prepareSuspension()
    }

    deinit {
        finishObservers()
        if state.withLock({ $0.committer.joinedExitFlush }) { ExitFlush.forget(ObjectIdentifier(self)) }
        do {
            try io.close { backend in try backend.flush() }
        } catch let unwritten as DeferredBackend.Unwritten {
            report(
                Diagnostic(
                    key: nil, kind: .pendingWritesDropped(keys: unwritten.keys, reason: "the store was released while it still waited: \(unwritten.reason)"),
                    store: storage.description))
        } catch {
            report(Diagnostic(key: nil, kind: .writeFailed(error, during: "flush on release"), store: storage.description))
        }
    }

    // MARK: - Diagnostics

    /// The diagnostics reported so far (the most recent 256).
    public var diagnostics: [Diagnostic] {
        state.withLock { $0.diagnostics }
    }

    /// Records a diagnostic and calls `onDiagnostic` with it: at once, or, when this thread holds one of the store's
    /// locks (inside a transaction, or delivering to an observer), as soon as it releases it, so a handler may call the store.
    package func report(_ diagnostic: Diagnostic) {
        state.withLock { state in
            state.diagnostics.append(diagnostic)
            if state.diagnostics.count > 256 { state.diagnostics.removeFirst(state.diagnostics.count - 256) }
        }
        guard let onDiagnostic else { return }
        UserCallbacks.run { onDiagnostic(diagnostic) }
    }

    /// Reports a write that could not throw to its caller, for code built on the store (DialogGate).
    package func reportWriteFailure(_ error: any Error, key: String?) {
        report(Diagnostic(key: key, kind: .writeFailed(error, during: nil), store: storage.description))
    }

    // MARK: - The argument domain

    /// The values of the launch arguments this store reads, by name, in stored form (``LaunchArguments``): what
    /// `PrefsDefaults.volatileDomain(forName: PrefsDefaults.argumentDomain)` returns.
    package var launchArgumentValues: [String: StoredValue] {
        state.withLock { $0.arguments }
    }

    /// The value of the launch argument named `name`, as given (for code that reads by name: `PrefsDefaults`' getters
    /// read it above the stored value, DialogGate's message center its `lastMessageId`); nil when none names it.
    package func launchArgumentValue(forKey name: String) -> StoredValue? {
        state.withLock { $0.arguments.isEmpty ? nil : $0.arguments[name] }
    }

    /// Replaces the launch arguments' values this store reads (`PrefsDefaults.setVolatileDomain(_:forName:)` with the
    /// argument domain): the keys they name read them from now on, and their observers see the change.
    package func setLaunchArgumentValues(_ values: [String: StoredValue]) {
        let names = state.withLock { state -> Set<String> in
            let names = Set(state.arguments.keys).union(values.keys)
            state.arguments = values
            state.reportedArguments = []
            state.cache.invalidate(names)
            return names
        }
        guard !names.isEmpty else { return }
        var changes = Changeset()
        for name in names { changes.values[name] = .remove }  // names the keys whose observers look again
        do {
            try io.withBackendAllowingReentry { _ in deliverInOrder(changes) }  // lossless observers, under the backend lock
        } catch {
            // Closed: it has no observers left.
        }
        notifyObservers(of: changes)
    }

    package func reportMismatch(_ mismatch: ValueMismatch, key: String) {
        let isNew = state.withLock { $0.reportedMismatches.insert(mismatch).inserted }
        if isNew { report(Diagnostic(key: key, kind: .typeMismatch(mismatch), store: storage.description)) }
    }
}
