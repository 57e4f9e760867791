import Dispatch
import Foundation

/// Where ``MessageCenter`` reads and writes its store: off the main actor, on one serial queue for the process.
///
/// A store transaction waits for the store's writer lock while another process holds it (up to the lock or busy
/// timeout, 5 s by default); on the main actor that would freeze the app. The queue is serial and shared by every
/// center of the process, so the work runs in the order it was asked for: a refresh asked after an acknowledgement (in
/// this center or another window's) decides with it. Work not awaited (an acknowledgement's write) is waited for at a
/// normal exit (`exit(_:)`, a return from `main`) for up to two seconds, so nothing acknowledged is lost then.
enum MessageStoreWork {
    private static let queue = DispatchQueue(label: "DialogGate.MessageCenter.store")
    /// The work asked for and not yet done.
    private static let pending = DispatchGroup()
    /// Registers the exit handler once, with the first work.
    private static let exitHandler: Void = {
        atexit { _ = MessageStoreWork.pending.wait(timeout: .now() + 2) }
    }()

    /// Runs `body` on the queue and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on the queue, after the work asked for before it; returns at once.
    static func submit(_ body: @escaping @Sendable () -> Void) {
        _ = exitHandler
        pending.enter()
        queue.async {
            body()
            pending.leave()
        }
    }
}
