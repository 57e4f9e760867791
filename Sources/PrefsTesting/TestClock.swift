import Foundation
import PrefsSupport

/// A clock a test moves by hand, so that a test of "not again for a week" takes no week and no sleep.
///
/// Give its ``function`` to everything that asks for the current date (`DialogGate`, `MessageCenter`), then
/// ``advance(by:)-(Duration)`` it past a snooze, an interval or a cache age. It has the two faces a machine's clock
/// has: the wall clock the decisions read (``now``), and a monotonic clock that only moves forward (a store's freshness
/// bounds read that one). ``advance(by:)-(Duration)`` moves both; ``set(_:)`` moves the wall clock alone, as a user who
/// sets the device's time does, so a test can check what happens when the clock goes back.
///
/// ```swift
/// let clock = TestClock()
/// let gate = DialogGate(prefs: try Prefs(.memory), clock: clock.function)
/// try gate.record(.remindLaterAfter(.seconds(3 * 86_400)), for: rateApp)
/// clock.advance(by: .seconds(3 * 86_400))
/// gate.decision(for: rateApp).shouldPresent   // true
/// ```
public final class TestClock: Sendable {
    private let current: Locked<Date>
    private let monotonic = StoreClock.Manual()

    /// A clock that reads `start` until it is moved. The default start is a fixed date (2027-01-15T08:00:00Z), so
    /// that a test's dates are the same on every run.
    ///
    /// ```swift
    /// let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
    /// ```
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Locked(start)
    }

    /// The date the clock reads now.
    ///
    /// ```swift
    /// clock.now   // the start, until the clock is moved
    /// ```
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock forward by `duration` (both faces). A negative duration moves the wall clock back and leaves
    /// the monotonic one where it is.
    ///
    /// ```swift
    /// clock.advance(by: .seconds(90))
    /// ```
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
        monotonic.advance(by: duration)
    }

    /// Moves the clock forward by `seconds` (both faces); a negative amount moves the wall clock back only.
    ///
    /// ```swift
    /// clock.advance(by: 24 * 60 * 60)   // a day
    /// ```
    public func advance(by seconds: TimeInterval) {
        advance(by: Duration.seconds(seconds))
    }

    /// Sets the wall clock to `date`, earlier or later, as a user who changes the device's time; the monotonic face
    /// does not move.
    ///
    /// ```swift
    /// clock.set(clock.now.addingTimeInterval(-3600))   // the user set the time back an hour
    /// ```
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }

    /// The clock as the function DialogGate and MessageCenter take for the current date.
    ///
    /// ```swift
    /// let center = MessageCenter(feedURL: url, prefs: prefs, context: context, clock: clock.function)
    /// ```
    public var function: @Sendable () -> Date { { self.now } }

    /// The monotonic face, for a store's options (`PostgreSQLOptions.clock`).
    package var store: StoreClock { StoreClock(monotonic) }
}
