import Foundation

/// The one rule for every wait DialogGate and the feed fetcher keep (a snooze, a minimum interval, a display
/// frequency, a never-remind expiry, an impression interval, a feed's max-age and maximum cache age, a backoff) when
/// the clock moves back.
///
/// A wait of `length` recorded at `start` ends at `start + length`. While the clock reads earlier than `start` (it was
/// set back since), the wait ends `length` after the moment the clock was first seen behind `start` (the *anchor*,
/// stored beside the recorded time): it neither ends at once nor waits out the jump. Once the clock is past `start`
/// again (set right), `start + length` applies. The recorded times are never rewritten.
///
/// ```swift
/// let anchor = ClockRule.anchor(stored.anchor, behind: stored.start, now: now)   // store it when it changed
/// if now < ClockRule.end(of: length, from: stored.start, anchor: anchor, now: now) { /* still waiting */ }
/// ```
package enum ClockRule {
    /// The anchor to keep for a wait recorded at `start`: nil while the clock is at or past `start`; while it is behind,
    /// `current` (when it was first seen behind), or `now` when there is none yet or the clock went back further still.
    package static func anchor(_ current: Date?, behind start: Date?, now: Date) -> Date? {
        guard let start, now < start else { return nil }
        guard let current, current <= now else { return now }
        return current
    }

    /// When a wait of `length` seconds recorded at `start` ends, seen at `now` with the stored `anchor` (see
    /// ``anchor(_:behind:now:)``; nil, while the clock is behind, counts as seen behind just now).
    package static func end(of length: TimeInterval, from start: Date, anchor: Date?, now: Date) -> Date {
        let length = max(0, length)
        guard now < start else { return start.addingTimeInterval(length) }
        return (self.anchor(anchor, behind: start, now: now) ?? now).addingTimeInterval(length)
    }
}
