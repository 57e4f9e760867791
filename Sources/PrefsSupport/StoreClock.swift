import Dispatch
import Synchronization

/// The clock a store measures its bounds by (how long a cached read stays fresh: ``BackendFreshness``): the system's
/// monotonic clock, or in tests a ``Manual`` one that the test advances by hand, so that a bound passes without the
/// test sleeping.
///
/// The store's timers (a coalesced flush, an observer's poll tick, a JSON store's idle fold, a waiting standard store's
/// retry) run ``after(_:_:)`` on this clock: on a ``Manual`` one, when the test advances it past their deadline, on the
/// advancing thread, so a test of "flushed a second later" neither sleeps nor races. Waits in the kernel (a socket's
/// `poll(2)`, a file lock, an inotify read) keep real time: a clock that stood still would never end them.
///
/// ```swift
/// let manual = StoreClock.Manual()
/// var options = PostgreSQLOptions(stalenessBound: .milliseconds(200))
/// options.clock = StoreClock(manual)
/// manual.advance(by: .milliseconds(300))  // the store's next read checks the server
/// ```
package struct StoreClock: Sendable, Hashable {
    /// Nil: the system's clock.
    private let manual: Manual?

    /// The system's monotonic clock (`DispatchTime`'s uptime). The default.
    package static let system = StoreClock(manual: nil)

    /// A clock that reads `manual`.
    package init(_ manual: Manual) {
        self.manual = manual
    }

    private init(manual: Manual?) {
        self.manual = manual
    }

    /// Now, in nanoseconds since an arbitrary start (never 0); only differences mean something. Lock-free: a store
    /// reads it before every cached read that has a bound.
    @inline(__always)
    package var uptimeNanoseconds: UInt64 {
        guard let manual else { return DispatchTime.now().uptimeNanoseconds }
        return manual.uptimeNanoseconds
    }

    /// Runs `work` once `delay` has passed on this clock: on Dispatch's global queue for the system clock (not in a Swift
    /// task, so an app that blocks the cooperative pool cannot starve the store's timers), or, on a ``Manual`` clock,
    /// on the thread whose ``Manual/advance(by:)`` moves it past the deadline.
    package func after(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
        guard let manual else {
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay.timeInterval, execute: work)
            return
        }
        manual.schedule(after: delay, work)
    }

    package static func == (lhs: StoreClock, rhs: StoreClock) -> Bool {
        lhs.manual.map(ObjectIdentifier.init) == rhs.manual.map(ObjectIdentifier.init)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(manual.map(ObjectIdentifier.init))
    }

    /// A clock that moves only when told to.
    package final class Manual: Sendable {
        private let now: Atomic<UInt64>
        /// Work waiting for the clock to reach its deadline, in the order it was scheduled.
        private let pending = Locked<[(deadline: UInt64, work: @Sendable () -> Void)]>([])

        /// Starts at the system's uptime (any start would do but 0, which a bound reads as "check now").
        package init() {
            now = Atomic(DispatchTime.now().uptimeNanoseconds)
        }

        package var uptimeNanoseconds: UInt64 {
            now.load(ordering: .acquiring)
        }

        /// Moves the clock forward by `duration` (a negative one is ignored: the clock is monotonic), then runs, on this
        /// thread and in deadline order, the work scheduled to run by the new time (and work that work schedules, if it
        /// is due too).
        package func advance(by duration: Duration) {
            guard duration > .zero else { return }
            let (seconds, attoseconds) = duration.components
            let reached = now.add(UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000), ordering: .releasing).newValue
            while let next = takeDue(by: reached) { next() }
        }

        /// How many timers wait for the clock to move.
        package var pendingCount: Int {
            pending.withLock { $0.count }
        }

        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
            let (seconds, attoseconds) = max(delay, .zero).components
            let deadline = uptimeNanoseconds &+ UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
            pending.withLock { $0.append((deadline, work)) }
        }

        /// The earliest work due by `time`, removed from the pending list.
        private func takeDue(by time: UInt64) -> (@Sendable () -> Void)? {
            pending.withLock { pending in
                guard let index = pending.indices.filter({ pending[$0].deadline <= time }).min(by: { pending[$0].deadline < pending[$1].deadline })
                else { return nil }
                return pending.remove(at: index).work
            }
        }
    }
}
