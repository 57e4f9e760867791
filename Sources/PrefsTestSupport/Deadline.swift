@_spi(Tooling) import Prefs
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
    let race = FirstOutcome<T>()
    let work = Task<Void, Never> {
        do { race.deliver(.success(try await body())) } catch { race.deliver(.failure(error)) }
    }
    let timer = Task<Void, Never> {
        try? await Task.sleep(for: limit)
        if Task.isCancelled { return }
        race.deliver(.failure(DeadlinePassed(limit: limit, what: what)))
        work.cancel()
    }
    defer { timer.cancel() }
    return try await withCheckedThrowingContinuation { race.await($0) }
}

/// The first of several outcomes, handed to one waiter whether it arrives before or after the waiter.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State: Sendable {
        var outcome: Result<T, any Error>?
        var waiter: CheckedContinuation<T, any Error>?
    }

    private let state = Locked(State())

    func deliver(_ outcome: Result<T, any Error>) {
        state.withLock { state in
            guard state.outcome == nil else { return }
            state.outcome = outcome
            state.waiter?.resume(with: outcome)
            state.waiter = nil
        }
    }

    func await(_ waiter: CheckedContinuation<T, any Error>) {
        state.withLock { state in
            if let outcome = state.outcome { waiter.resume(with: outcome) } else { state.waiter = waiter }
        }
    }
}
