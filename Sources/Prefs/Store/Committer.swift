import Foundation
import PrefsSupport

/// The flush of a coalesced store's writes (a JSON store's `.coalesced(interval)` mode, which holds writes in memory):
/// one flush scheduled at a time on the storage's clock however many writes come in the interval, rescheduled when it
/// fails, and none once the store is closed; the store joins ``ExitFlush`` with its first, so that what is still
/// pending at a normal exit is written then.
///
/// A part of ``Prefs/State``: it lives under the store's one lock and takes no lock of its own.
struct Committer {
    /// Whether a flush is scheduled and has not run yet.
    private(set) var flushScheduled = false
    /// Whether the store joined ``ExitFlush`` (its first scheduled flush), so that its release leaves it.
    private(set) var joinedExitFlush = false

    /// Whether to schedule a flush now: not when one is scheduled already, nor when the store is closed. Scheduling
    /// one joins ``ExitFlush``.
    mutating func scheduleFlush(storeClosed: Bool) -> Bool {
        guard !flushScheduled, !storeClosed else { return false }
        flushScheduled = true
        joinedExitFlush = true
        return true
    }

    /// The scheduled flush is due: whether it runs (not when the store was closed meanwhile, which flushed). The next
    /// write schedules another.
    mutating func flushFired(storeClosed: Bool) -> Bool {
        flushScheduled = false
        return !storeClosed
    }

    /// Joins ``ExitFlush`` without a flush scheduled (``Prefs/standard``'s store while it waits to open).
    mutating func joinExitFlush() {
        joinedExitFlush = true
    }
}

extension Prefs {
    /// Flushes the backend's pending writes `interval` from now, unless a flush is scheduled already; a flush that
    /// fails is reported and tried again an interval later.
    func scheduleFlush(after interval: Duration) {
        let schedule = state.withLock { state in state.committer.scheduleFlush(storeClosed: state.closed) }
        guard schedule else { return }
        ExitFlush.remember(self)
        storage.clock.after(interval) { [weak self] in
            guard let self, self.state.withLock({ state in state.committer.flushFired(storeClosed: state.closed) }) else { return }
            do {
                // A suspended store wrote what was pending when it was suspended: nothing to flush, and nothing resumes it.
                try self.io.withBackendUnlessSuspended("flush()") { backend in try backend.flush() }
            } catch {
                self.report(Diagnostic(key: nil, kind: .writeFailed(error, during: "background flush"), store: self.storage.description))
                self.scheduleFlush(after: interval)
            }
        }
    }
}
