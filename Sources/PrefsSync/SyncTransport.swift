import Foundation
public import Prefs

/// Where a ``SyncEngine`` sends its changes and finds other devices': a server, a cloud key-value store, or, in tests,
/// `InProcessSyncTransport` (PrefsTesting). Two calls, so that an app's own HTTP service can be one.
///
/// A transport keeps, per key, the change with the greatest ``HybridTimestamp`` (the same rule the engine applies), and
/// ignores a change whose ``SyncChange/id`` it already holds. It gives changes out in the order it accepted them, from a
/// cursor of its own making (a revision number, a server token) that the engine stores and hands back.
///
/// ```swift
/// struct MyService: SyncTransport {
///     func push(_ changes: [SyncChange]) async throws(PrefsError) { /* POST them */ }
///     func pull(since cursor: String?) async throws(PrefsError) -> (changes: [SyncChange], cursor: String?, compacted: Bool) {
///         ([], cursor, false)   // GET what changed after `cursor`
///     }
/// }
/// ```
public protocol SyncTransport: Sendable {
    /// Sends local changes. When it returns, the transport holds them (or newer versions of their keys). Throw
    /// `PrefsError.backend` with what failed; the engine sends the same changes again at its next sync.
    func push(_ changes: [SyncChange]) async throws(PrefsError)

    /// The changes accepted after `cursor` (nil: from the beginning), and the cursor to ask from next time. `compacted`
    /// true says that `cursor` was older than what the transport keeps (removals it no longer holds): the changes are
    /// then everything it holds, from scratch, and the engine treats a key missing from them as removed elsewhere.
    func pull(since cursor: String?) async throws(PrefsError) -> (changes: [SyncChange], cursor: String?, compacted: Bool)
}
