import Prefs
import PrefsSupport

/// An awaited event that did not happen within its generous limit (a hang guard, not a timing assert).
public struct DeadlinePassed: Error, CustomStringConvertible {
    public var limit: Duration
    public var what: String
    public var description: String { "\(what) did not happen within \(limit)" }
}

/// The result of `body`, or ``DeadlinePassed`` once `limit` passes first: a test awaiting an event that never
/// comes fails instead of hanging the suite. `body` is cancelled then, and left to finish in the background
/// (an await that ignores cancellation cannot be ended from outside).
///
/// ```swift
/// let value = try await withDeadline(.seconds(60), "the timer's flush") { await changes.next() }
/// ```
public func withDeadline<T: Sendable>(
    _ limit: Duration = .seconds(60), _ what: String = "the awaited event", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await PrefsSupport.Deadline.run(limit, orThrow: { DeadlinePassed(limit: $0, what: what) }, body)
}
