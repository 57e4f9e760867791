import Foundation

/// A deadline for async work that may not honour cancellation promptly: the feed fetcher's requests (URLSession on
/// Linux truncates `timeoutInterval` to whole seconds, so each request races a timer of its own) and the tests' hang
/// guards.
///
/// ```swift
/// let response = try await Deadline.run(.milliseconds(300), orThrow: { FeedFetchError.timedOut(after: $0) }) {
///     try await loader.load(request, options: options)
/// }
/// ```
package enum Deadline {
    /// Runs `operation`; once `timeout` has passed, cancels it and fails with `timeoutError(timeout)`. Returns at the
    /// deadline even if the operation ignores cancellation (it is left to finish in the background). Cancelling the
    /// caller cancels the operation.
    package static func run<T: Sendable>(
        _ timeout: Duration, orThrow timeoutError: @escaping @Sendable (Duration) -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Task { try await operation() }
        let gate = ResumeOnce<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                gate.arm(continuation)
                let timer = Task {
                    do { try await Task.sleep(for: timeout) } catch { return }  // cancelled: the work finished first
                    if gate.resume(with: .failure(timeoutError(timeout))) { work.cancel() }
                }
                Task {
                    let result = await work.result
                    timer.cancel()
                    gate.resume(with: result)
                }
            }
        } onCancel: {
            work.cancel()
        }
    }
}

/// A continuation resumed by whichever of several tasks finishes first; the others find it spent.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Locked<CheckedContinuation<T, any Error>?>(nil)

    func arm(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    /// Resumes with `result` unless already resumed; true if this call resumed it.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let pending = continuation.withLock { state in
            defer { state = nil }
            return state
        }
        pending?.resume(with: result)
        return pending != nil
    }
}
