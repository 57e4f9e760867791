import Foundation
import Prefs
import PrefsSupport

/// A clock the test moves by hand.
package final class TestClock: Sendable {
    private let current: Locked<Date>
    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }
    package var now: Date { current.withLock { $0 } }
    package func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    package func set(_ date: Date) { current.withLock { $0 = date } }
    package var function: @Sendable () -> Date { { self.now } }
}
