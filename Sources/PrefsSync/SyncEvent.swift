import Foundation

/// What a ``SyncEngine`` did with a change, told to its `onEvent` callback as it happens.
///
/// ```swift
/// let engine = try SyncEngine(prefs: prefs, transport: transport, namespaces: ["editor."]) { event in
///     if case .merged(let key, let winner, let loser?, conflict: true) = event {
///         log("\(key): kept \(winner), dropped \(loser)")
///     }
/// }
/// ```
public enum SyncEvent: Sendable, Hashable, CustomStringConvertible {
    /// Two versions of `key` met and `winner` (the greater timestamp) was kept. `loser` is the version it replaced or
    /// beat (nil: the device held none: it adopts the winner). `conflict`: the loser was a local change not yet pushed,
    /// so a user's edit on this device lost to a later one elsewhere (or beat an earlier one).
    case merged(key: String, winner: SyncChange, loser: SyncChange?, conflict: Bool)
    /// A remote change was not adopted: its timestamp is ahead of this device's clock by more than the engine's
    /// maximum skew (`aheadBy`, in milliseconds). The device's own version stays until a change within bounds comes.
    case refused(SyncChange, aheadBy: Int64)
    /// A removal older than the tombstone retention was forgotten.
    case tombstoneExpired(SyncChange)

    /// One line, as `prefs-tool sync log` prints it.
    ///
    /// ```swift
    /// print(event)   // merged theme: kept string "dark" @ …-phone over string "light" @ …-laptop (conflict)
    /// ```
    public var description: String {
        switch self {
        case .merged(let key, let winner, let loser, let conflict):
            let over = loser.map { " over \($0.value.map { "\($0)" } ?? "removed") @ \($0.timestamp)" } ?? " (nothing here)"
            return "merged \(key): kept \(winner.value.map { "\($0)" } ?? "removed") @ \(winner.timestamp)\(over)\(conflict ? " (conflict)" : "")"
        case .refused(let change, let aheadBy):
            return "refused \(change): \(aheadBy) ms ahead of this device's clock"
        case .tombstoneExpired(let change):
            return "forgot the removal of \(change.key) @ \(change.timestamp)"
        }
    }
}
