import Foundation
import PrefsSupport

/// The poll: while something observes the store, a run of ticks (on the storage's clock, or on a backend's change
/// listener's thread) that each look for other processes' writes. Its one job is to say which run is the live one (a
/// run's ticks stop once its generation is no longer ``running``), to count ticks, and to report a failing poll once.
///
/// A part of ``Prefs/State``: it lives under the store's one lock and takes no lock of its own.
struct Refresher {
    /// The generation of the running poll; nil while nothing observes the store (a new one on each start).
    private(set) var running: UInt64?
    /// The generation the last start gave.
    private var lastGeneration: UInt64 = 0
    /// The last poll's failure, reported once until a poll succeeds or fails differently.
    private(set) var lastFailure: String?
    /// Poll ticks run so far (for tests that need several polls to have happened).
    private(set) var ticks = 0

    /// Starts a run unless one runs: the new run's generation, nil when one already runs.
    mutating func start() -> UInt64? {
        guard running == nil else { return nil }
        lastGeneration &+= 1
        running = lastGeneration
        return lastGeneration
    }

    /// Stops the running poll: its next tick finds it is no longer the live one and ends.
    mutating func stop() {
        running = nil
    }

    /// Whether the run of `generation` is the live one.
    func isRunning(_ generation: UInt64) -> Bool {
        running == generation
    }

    /// Counts a tick that ran.
    mutating func tick() {
        ticks += 1
    }

    /// Notes a poll that succeeded: the next failure is reported, whatever it is.
    mutating func succeeded() {
        lastFailure = nil
    }

    /// Notes a poll that failed for `reason`: whether to report it (not when the last poll failed the same way).
    mutating func failed(_ reason: String) -> Bool {
        defer { lastFailure = reason }
        return lastFailure != reason
    }
}

extension Prefs {
    /// Polling with a listener: a thread of its own waits on it up to `pollInterval`, then refreshes, so another
    /// process's change is seen as soon as it is signalled, and at the next interval when a signal is lost.
    ///
    /// The listener starts listening before this returns (a first, short wait connects), so a change made after
    /// ``values(for:lossless:)->AsyncStream<Value>`` or ``observable(_:isolation:)`` returns is signalled.
    func listenForChanges(_ listener: any BackendChangeListener, generation: UInt64) {
        listener.startListening()
        let box = UncheckedListener(listener)
        let thread = Thread { [weak self, pollInterval] in
            defer { box.listener.close() }
            while true {
                _ = box.listener.wait(upTo: pollInterval)
                guard let self, self.state.withLock({ $0.refresher.isRunning(generation) }) else { return }
                self.poll()
                self.state.withLock { $0.refresher.tick() }
            }
        }
        thread.name = "Prefs.listener"
        thread.start()
    }

    /// One poll tick after `pollInterval`, then the next, for as long as this generation of polling runs.
    func schedulePoll(generation: UInt64) {
        storage.clock.after(pollInterval) { [weak self] in
            guard let self, self.state.withLock({ $0.refresher.isRunning(generation) }) else { return }
            self.poll()
            self.state.withLock { $0.refresher.tick() }
            self.schedulePoll(generation: generation)
        }
    }

    /// ``refresh()``, reporting a failure as a ``Diagnostic`` (`refreshFailed`) instead of throwing: for poll ticks and
    /// for readers that must answer anyway, from what they have. A failure is reported once, not again on every call
    /// while it stays the same.
    package func refreshReportingErrors() {
        refreshReportingErrors(onlyIfStale: false)
    }

    /// A poll tick: ``refreshReportingErrors()``, unless the store is suspended (``suspend()``), whose backend a poll
    /// leaves alone.
    func poll() {
        refreshReportingErrors(onlyIfStale: false, resuming: false)
    }

    /// Before a cached read of a store whose ``freshness`` has expired: refreshes (once, however many threads read at
    /// that moment), so that no read serves a value older than the backend's bound. A failure is reported as a
    /// diagnostic and the cache is served (the backend renews its bound either way, so reads do not all wait on a
    /// server that does not answer). Inside a transaction body of this store, the body's reads are served as they are.
    func refreshIfStale() {
        guard !io.isHeldByCurrentThread else { return }
        refreshReportingErrors(onlyIfStale: true)
    }

    private func refreshReportingErrors(onlyIfStale: Bool, resuming: Bool = true) {
        do {
            let body = { (backend: any StoreBackend) throws -> Bool in
                if onlyIfStale, !(self.freshness?.isExpired ?? false) { return false }
                let changed = try backend.refresh()
                if changed { self.invalidateCache() }
                return changed
            }
            let changed = try resuming ? io.withBackend("refresh()", body) : io.withBackendUnlessSuspended("refresh()", body) ?? false
            if changed { notifyObservers(of: nil) }
            state.withLock { $0.refresher.succeeded() }
        } catch PrefsError.closed where onlyIfStale {
            return  // a closed store reads initial values
        } catch {
            let reason = "\(error)"
            let isNew = state.withLock { $0.refresher.failed(reason) }
            if isNew { report(Diagnostic(key: nil, kind: .refreshFailed(error, during: nil), store: storage.description)) }
        }
    }
}

/// A listener handed to the one thread that uses it.
// @unchecked Sendable: created before the thread starts, then used by that thread alone.
private final class UncheckedListener: @unchecked Sendable {
    let listener: any BackendChangeListener
    init(_ listener: any BackendChangeListener) { self.listener = listener }
}
