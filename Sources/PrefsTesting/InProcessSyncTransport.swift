import Foundation
import PrefsSupport
public import Prefs
public import PrefsSync

/// A sync server in memory, for tests of an app's sync: give each simulated device's `SyncEngine` the same transport.
/// It applies the rule a real server applies (per key, the greatest timestamp wins; a change id it holds is ignored),
/// numbers what it accepts with revisions, and can forget old removals (``compact(tombstonesBefore:)``) or lose a push's
/// answer (``losesNextAnswer()``), as a server and a network do.
///
/// ```swift
/// let server = InProcessSyncTransport()
/// let phone = try SyncEngine(prefs: try Prefs(.memory), transport: server, namespaces: ["editor."], device: "phone")
/// let laptop = try SyncEngine(prefs: try Prefs(.memory), transport: server, namespaces: ["editor."], device: "laptop")
/// try await phone.sync(); try await laptop.sync()
/// ```
public final class InProcessSyncTransport: SyncTransport {
    private struct State {
        var rows: [String: (change: SyncChange, revision: Int)] = [:]
        var revision = 0
        var compactedThrough = 0
        var appliedIDs: [String: Int] = [:]
        var losesNextAnswer = false
        var pushes = 0
    }
    private let state = Locked(State())

    /// An empty server.
    ///
    /// ```swift
    /// let server = InProcessSyncTransport()
    /// ```
    public init() {}

    /// Applies `changes`: per key, a change with a greater timestamp than the one held replaces it; a change id already
    /// held is ignored. Throws `PrefsError.backend` after applying them when told to lose this answer.
    ///
    /// ```swift
    /// try await server.push([change])
    /// ```
    public func push(_ changes: [SyncChange]) async throws(PrefsError) {
        let lost = state.withLock { state -> Bool in
            state.pushes += 1
            for change in changes {
                if let held = state.rows[change.key], held.change.id == change.id || held.change.timestamp >= change.timestamp { continue }
                state.appliedIDs[change.id, default: 0] += 1
                state.revision += 1
                state.rows[change.key] = (change, state.revision)
            }
            defer { state.losesNextAnswer = false }
            return state.losesNextAnswer
        }
        if lost { throw .backend("in-process sync", reason: "the push's answer was lost (after it was applied)") }
    }

    /// The changes accepted after revision `cursor`, in revision order; `compacted` when removals after `cursor` were
    /// forgotten (the answer is then everything held).
    ///
    /// ```swift
    /// let (changes, cursor, compacted) = try await server.pull(since: nil)
    /// ```
    public func pull(since cursor: String?) async throws(PrefsError) -> (changes: [SyncChange], cursor: String?, compacted: Bool) {
        guard let from = cursor.map({ Int($0) }) ?? 0 else {
            throw .backend("in-process sync", reason: "the cursor \(cursor ?? "") is not a revision")
        }
        return state.withLock { state in
            let compacted = from < state.compactedThrough
            let after = compacted ? 0 : from
            let rows = state.rows.values.filter { $0.revision > after }.sorted { $0.revision < $1.revision }
            return (rows.map(\.change), String(state.revision), compacted)
        }
    }

    /// Forgets the removals whose timestamp is before `milliseconds`; a device pulling from a cursor older than this
    /// is told to resync from scratch.
    ///
    /// ```swift
    /// server.compact(tombstonesBefore: Int64(clock.now.timeIntervalSince1970 * 1000) - 30 * 86_400_000)
    /// ```
    public func compact(tombstonesBefore milliseconds: Int64) {
        state.withLock { state in
            for (key, row) in state.rows where row.change.isTombstone && row.change.timestamp.milliseconds < milliseconds {
                state.rows[key] = nil
            }
            state.compactedThrough = state.revision
        }
    }

    /// Makes the next push apply its changes and then throw, as when a connection drops before the answer arrives.
    ///
    /// ```swift
    /// server.losesNextAnswer()
    /// try? await engine.sync()   // applied, but the engine does not know: it pushes again next time
    /// ```
    public func losesNextAnswer() {
        state.withLock { $0.losesNextAnswer = true }
    }

    /// The version of each key the server holds, by key.
    ///
    /// ```swift
    /// server.current["editor.theme"]?.value   // the winning value
    /// ```
    public var current: [String: SyncChange] {
        state.withLock { $0.rows.mapValues(\.change) }
    }

    /// How many times each change id was applied: never more than once.
    ///
    /// ```swift
    /// #expect(server.timesApplied.values.allSatisfy { $0 == 1 })
    /// ```
    public var timesApplied: [String: Int] {
        state.withLock { $0.appliedIDs }
    }
}
