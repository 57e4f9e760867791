import Foundation
import Prefs
import PrefsSupport

/// A clock the test moves by hand, with the two faces a machine's clock has: the wall clock DialogGate decides by
/// (``now``, ``function``) and the monotonic clock a store measures its bounds by (``store``). ``advance(by:)`` moves
/// both forward; set back (a negative advance, ``set(_:)``), only the wall clock moves, as when a user sets the time.
package final class TestClock: Sendable {
    private let current: Locked<Date>
    private let monotonic = StoreClock.Manual()
    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }
    package var now: Date { current.withLock { $0 } }
    package func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
        monotonic.advance(by: .seconds(seconds))
    }
    package func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
        monotonic.advance(by: duration)
    }
    package func set(_ date: Date) { current.withLock { $0 = date } }
    package var function: @Sendable () -> Date { { self.now } }
    /// The monotonic face, for a store's options (`PostgreSQLOptions.clock`).
    package var store: StoreClock { StoreClock(monotonic) }
}
