import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PrefsSupport

/// Writes coalesced changes still held in memory when the process exits normally: `exit(_:)`, or a return from
/// `main`, with the store in a global or a `static let` that is never released.
///
/// A store joins when it schedules its first coalesced flush, and leaves when it is released. The flush runs from
/// an `atexit` handler on the exiting thread; it waits at most two seconds for the store's lock (another thread
/// may be in the middle of a write, or hold it for ever), and a failure is reported as a ``Prefs/Diagnostic`` and
/// on standard error, since nobody is left to catch it. A crash or `SIGKILL` runs no handler: the last interval is
/// lost, as the coalesced mode documents.
enum ExitFlush {
    private struct WeakStore: @unchecked Sendable {  // @unchecked: a weak reference to a Sendable class, read under `stores`' lock
        weak var prefs: Prefs?
    }

    private static let stores = Locked<[ObjectIdentifier: WeakStore]>([:])

    /// Registers the handler once, the first time a store joins.
    private static let handler: Void = {
        atexit { ExitFlush.flushAll() }
    }()

    static func remember(_ prefs: Prefs) {
        _ = handler
        stores.withLock { $0[ObjectIdentifier(prefs)] = WeakStore(prefs: prefs) }
    }

    static func forget(_ id: ObjectIdentifier) {
        stores.withLock { _ = $0.removeValue(forKey: id) }
    }

    private static func flushAll() {
        let live = stores.withLock { stores in
            defer { stores = [:] }
            return stores.values.compactMap(\.prefs)
        }
        for prefs in live { prefs.flushAtExit() }
    }
}

extension Prefs {
    /// Writes pending coalesced changes at process exit; see ``ExitFlush``. A store that still waits to open
    /// (``waitingReason``) tries once more, then reports the writes it kept in memory as lost.
    func flushAtExit() {
        do {
            // A suspended store has nothing pending (``suspend()`` wrote it): not reopened at exit. A store that still
            // waits to open tries once more (the process ends: no cache to drop, no observer to tell).
            _ = try io.withBackendUnlessSuspended("exit", waitingAtMost: .seconds(2)) { backend in
                _ = (backend as? DeferredBackend)?.attempt()
                try backend.flush()
            }
        } catch PrefsError.closed {
            return  // closed: flushed then
        } catch let unwritten as DeferredBackend.Unwritten {
            let reason = "the process exited while the store still waited: \(unwritten.reason)"
            let diagnostic = Diagnostic(key: nil, kind: .pendingWritesDropped(keys: unwritten.keys, reason: reason), store: storage.description)
            report(diagnostic)
            FileHandle.standardError.write(Data("Prefs: \(diagnostic)\n".utf8))
        } catch {
            let diagnostic = Diagnostic(key: nil, kind: .writeFailed(error, during: "flush at exit"), store: storage.description)
            report(diagnostic)
            FileHandle.standardError.write(Data("Prefs: \(diagnostic)\n".utf8))
        }
    }
}
