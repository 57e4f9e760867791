import Foundation
import PrefsSupport

/// A hybrid logical clock's reading (Kulkarni et al., "Logical Physical Clocks", 2014): the device's wall-clock time in
/// milliseconds, a counter that orders events within one millisecond (or while the wall clock lags a time already
/// seen), and the device's id, which breaks the last tie. Sync decides every conflict by it: the greater timestamp wins.
///
/// Timestamps compare by milliseconds, then counter, then device id; their text form (``description``) sorts the same
/// way byte for byte, so a server can compare them as text (PostgreSQL's `COLLATE "C"`).
///
/// ```swift
/// let stamp = HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 2, device: "phone")
/// stamp.description                        // "001800000000000-0000000002-phone"
/// HybridTimestamp(stamp.description) == stamp   // true
/// ```
public struct HybridTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The physical part: milliseconds since 1970 as the clock that made (or last merged) the timestamp read them.
    public var milliseconds: Int64
    /// Orders timestamps whose ``milliseconds`` are equal.
    public var counter: UInt32
    /// The device that made the timestamp: 1 to 64 ASCII letters, digits, `.`, `_` or `-`.
    public var device: String

    /// A timestamp with these parts (nothing is checked: ``SyncEngine`` refuses a device id ``isValidDevice(_:)``
    /// refuses).
    ///
    /// ```swift
    /// let stamp = HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 0, device: "laptop")
    /// ```
    public init(milliseconds: Int64, counter: UInt32, device: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.device = device
    }

    /// Reads the text form (``description``); nil for anything else.
    ///
    /// ```swift
    /// HybridTimestamp("001800000000000-0000000002-phone")?.counter   // 2
    /// ```
    public init?(_ description: String) {
        let bytes = Array(description.utf8)
        guard bytes.count > 27, bytes[15] == UInt8(ascii: "-"), bytes[26] == UInt8(ascii: "-"),
            bytes[0..<15].allSatisfy({ $0 >= 48 && $0 <= 57 }), bytes[16..<26].allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let milliseconds = Int64(String(decoding: bytes[0..<15], as: UTF8.self)),
            let counter = UInt32(String(decoding: bytes[16..<26], as: UTF8.self))
        else { return nil }
        let device = String(decoding: bytes[27...], as: UTF8.self)
        guard Self.isValidDevice(device) else { return nil }
        self.init(milliseconds: milliseconds, counter: counter, device: device)
    }

    /// The text form: 15 digits of milliseconds, 10 of counter and the device id, joined by `-`. Fixed widths, so that
    /// text order is timestamp order.
    ///
    /// ```swift
    /// HybridTimestamp(milliseconds: 5, counter: 1, device: "a").description   // "000000000000005-0000000001-a"
    /// ```
    public var description: String {
        let millis = String(max(0, milliseconds))
        let count = String(counter)
        return String(repeating: "0", count: max(0, 15 - millis.count)) + millis + "-"
            + String(repeating: "0", count: max(0, 10 - count.count)) + count + "-" + device
    }

    /// Orders by milliseconds, then counter, then device id (bytewise).
    ///
    /// ```swift
    /// HybridTimestamp(milliseconds: 1, counter: 9, device: "b") < HybridTimestamp(milliseconds: 2, counter: 0, device: "a")   // true
    /// ```
    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        if lhs.milliseconds != rhs.milliseconds { return lhs.milliseconds < rhs.milliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return Array(lhs.device.utf8).lexicographicallyPrecedes(Array(rhs.device.utf8))
    }

    /// Whether `device` may name a device: 1 to 64 ASCII letters, digits, `.`, `_` or `-`.
    ///
    /// ```swift
    /// HybridTimestamp.isValidDevice("phone-1")   // true
    /// HybridTimestamp.isValidDevice("")          // false
    /// ```
    public static func isValidDevice(_ device: String) -> Bool {
        (1...64).contains(device.utf8.count)
            && device.utf8.allSatisfy { byte in
                (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45 || byte == 46 || byte == 95
            }
    }
}

/// The hybrid logical clock of one device: the rules of Kulkarni et al. for a local event (``tick()``) and for a
/// message received (``receive(_:)``), over an injected wall clock. A received timestamp more than `maximumSkew` ahead of
/// the wall clock is refused, not adopted: a device whose clock is a year ahead would otherwise drag every clock it
/// reaches a year ahead, and win every conflict until then.
package final class HybridClock: Sendable {
    package let device: String
    package let maximumSkew: Duration
    private let wallClock: @Sendable () -> Date
    private let last: Locked<HybridTimestamp>

    package init(device: String, wallClock: @escaping @Sendable () -> Date, maximumSkew: Duration, last: HybridTimestamp?) {
        self.device = device
        self.wallClock = wallClock
        self.maximumSkew = maximumSkew
        self.last = Locked(HybridTimestamp(milliseconds: last?.milliseconds ?? 0, counter: last?.counter ?? 0, device: device))
    }

    package var physicalNow: Int64 {
        Int64((wallClock().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The last timestamp made or merged.
    package var current: HybridTimestamp { last.withLock { $0 } }

    /// A local event: `l' = max(l, pt)`; the counter goes on from `l`'s when `l` is still ahead or equal, else restarts.
    package func tick() -> HybridTimestamp {
        let now = physicalNow
        return last.withLock { last in
            if now > last.milliseconds {
                last = HybridTimestamp(milliseconds: now, counter: 0, device: device)
            } else {
                last = HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter &+ 1, device: device)
            }
            return last
        }
    }

    /// How far `remote` is ahead of this device's wall clock beyond ``maximumSkew``, in milliseconds; nil when it is
    /// within bounds.
    package func excessSkew(of remote: HybridTimestamp) -> Int64? {
        let (seconds, attoseconds) = maximumSkew.components
        let bound = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let ahead = remote.milliseconds - physicalNow
        return ahead > bound ? ahead : nil
    }

    /// A received timestamp: `l' = max(l, m, pt)`, the counter going on from whichever of `l` and `m` set `l'`. The
    /// caller checks ``excessSkew(of:)`` first.
    package func receive(_ remote: HybridTimestamp) {
        let now = physicalNow
        last.withLock { last in
            let top = max(last.milliseconds, remote.milliseconds, now)
            let counter: UInt32
            if top == last.milliseconds && top == remote.milliseconds {
                counter = max(last.counter, remote.counter) &+ 1
            } else if top == last.milliseconds {
                counter = last.counter &+ 1
            } else if top == remote.milliseconds {
                counter = remote.counter &+ 1
            } else {
                counter = 0
            }
            last = HybridTimestamp(milliseconds: top, counter: counter, device: device)
        }
    }
}
