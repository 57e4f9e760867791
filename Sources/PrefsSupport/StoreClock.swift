import Dispatch
import Synchronization

/// The clock a store measures its bounds by (how long a cached read stays fresh: ``BackendFreshness``): the system's
/// monotonic clock, or in tests a ``Manual`` one that the test advances by hand, so that a bound passes without the
/// test sleeping.
///
/// Waits in the kernel (a socket's `poll(2)`, a file lock) keep real time: a clock that stood still would never end
/// them.
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

    package static func == (lhs: StoreClock, rhs: StoreClock) -> Bool {
        lhs.manual.map(ObjectIdentifier.init) == rhs.manual.map(ObjectIdentifier.init)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(manual.map(ObjectIdentifier.init))
    }

    /// A clock that moves only when told to.
    package final class Manual: Sendable {
        private let now: Atomic<UInt64>

        /// Starts at the system's uptime (any start would do but 0, which a bound reads as "check now").
        package init() {
            now = Atomic(DispatchTime.now().uptimeNanoseconds)
        }

        package var uptimeNanoseconds: UInt64 {
            now.load(ordering: .acquiring)
        }

        /// Moves the clock forward by `duration` (a negative one is ignored: the clock is monotonic).
        package func advance(by duration: Duration) {
            guard duration > .zero else { return }
            let (seconds, attoseconds) = duration.components
            now.add(UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000), ordering: .releasing)
        }
    }
}
