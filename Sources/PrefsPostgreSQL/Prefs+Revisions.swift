import Foundation
import Prefs
import PrefsSupport

extension Prefs {
    /// A key's value with its revision, in a PostgreSQL store: what `Prefs.revisioned(_:)` reads and a watch from
    /// a revision delivers.
    ///
    /// Each write of a key gives it a new revision (its removal too), drawn from one sequence for the whole database
    /// under the key's row lock: one key's revisions grow in the order its writes committed, as etcd's
    /// `mod_revision` does. Revisions of different keys are unique, but their order need not be the order of their
    /// commits: writers of different keys do not wait for each other (etcd's single revision counter makes them).
    public struct Revisioned<Value: Sendable>: Sendable {
        /// The stored value, or the key's initial value when none is stored.
        public var value: Value
        /// Whether a value is stored (false: `value` is the initial value).
        public var isStored: Bool
        /// The revision of the key's last write, its value's or its removal's; 0 when it was never written.
        public var revision: Int64
    }

    /// Thrown by `Prefs.set(_:for:ifRevision:)` when the key's revision is no longer the one given: nothing was
    /// written. Carries the key's current value and revision, to decide again from.
    public struct RevisionConflict<Value: Sendable>: Error, CustomStringConvertible {
        /// The key's name.
        public var key: String
        /// The revision the write expected.
        public var expected: Int64
        /// The value and revision the key has now.
        public var current: Revisioned<Value>

        /// The conflict in one line.
        public var description: String {
            "revision conflict on key \"\(key)\": expected revision \(expected), found \(current.revision)"
        }
    }

    /// `key`'s value and revision, read from the server (a PostgreSQL store only). While the key holds no value, the
    /// value under the first of its former names that holds one is returned, with the key's own revision.
    ///
    /// ```swift
    /// let quota = try prefs.revisioned(.quota)             // value 10, revision 4711
    /// try prefs.set(quota.value - 1, for: .quota, ifRevision: quota.revision)
    /// ```
    public func revisioned<Value: PrefsStorable>(_ key: Key<Value>) throws(PrefsError) -> Revisioned<Value> {
        let read = try revisionedValue(key.name, formerNames: key.formerNames)
        return Self.revisioned(read.stored, revision: read.revision, key: key, reportingTo: self)
    }

    /// What ``revisioned(_:)`` reads, in types that are not generic: the generic closures it ran through made the
    /// runtime look up a tuple type's metadata at every call (some 1,700 instructions of a read's 20,000).
    private func revisionedValue(_ name: String, formerNames: [String]) throws(PrefsError) -> (stored: StoredValue?, revision: Int64) {
        try PrefsError.converting {
            try withBackend("revisioned(_:)") { backend, _ in
                try Self.postgreSQLBackend(backend, operation: "revisioned(_:)").revisioned(name, formerNames: formerNames)
            }
        }
    }

    /// Writes `value` for `key` only if the key's revision is still `revision` (a PostgreSQL store only): compare and
    /// set in one statement, as etcd's transactions compare `mod_revision`. Returns the new revision. When the key was
    /// written since, throws `RevisionConflict` with its current value and revision, having written nothing. A
    /// revision of 0 writes only a key that was never written. The write removes values under the key's former names,
    /// as `set(_:for:)` does; `nil` for an optional key removes the value (a removal has a
    /// revision too). Unlike a plain set, it records no declaration of the key.
    ///
    /// Throws `PrefsError` for a failure (the server's among them), or `RevisionConflict<Value>`: untyped, since a
    /// conflict is an answer to decide again from, not a failure, and carries the key's current value.
    @discardableResult
    public func set<Value: PrefsStorable>(_ value: Value, for key: Key<Value>, ifRevision revision: Int64) throws -> Int64 {
        var changes = Changeset()
        changes.values[key.name] = try Self.change(for: value, key: key.name)
        for former in key.formerNames { changes.values[former] = .remove }
        let written: Int64? = try PrefsError.converting {
            try withBackend("set(_:for:ifRevision:)", invalidating: Array(changes.values.keys)) { backend, committed in
                let backend = try Self.postgreSQLBackend(backend, operation: "set(_:for:ifRevision:)")
                guard let written = try backend.write(changes, ifRevisionOf: key.name, is: revision) else { return nil }
                committed = changes
                return written
            }
        }
        guard let written else { throw RevisionConflict(key: key.name, expected: revision, current: try revisioned(key)) }
        return written
    }

    /// Every change of `key` after `revision`, oldest first, then each new one as it is made, by any instance (a
    /// PostgreSQL store only): the revision to resume from is the last one received, as with etcd's watch from a
    /// revision. Every change is delivered, removals included (`Revisioned.isStored` false), while the namespace's
    /// history holds them (``PostgreSQLDatabase/setHistoryRetention(_:for:)``); otherwise the stream ends with a
    /// `PrefsError` whose `PrefsError.postgreSQLError` is ``PostgreSQLError/Kind/revisionCompacted``, and
    /// nothing is skipped silently. Every error that ends the stream is a `PrefsError`. New changes are seen when their
    /// notification arrives, and at least every staleness bound. The stream ends when cancelled, or when the store is
    /// closed or released.
    ///
    /// ```swift
    /// for try await change in prefs.changes(of: .quota, after: lastSeen) {
    ///     apply(change.value); lastSeen = change.revision
    /// }
    /// ```
    public func changes<Value: PrefsStorable>(of key: Key<Value>, after revision: Int64) -> AsyncThrowingStream<Revisioned<Value>, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Revisioned<Value>.self)
        let reader: PostgreSQLHistoryReader
        do {
            reader = try withBackend("changes(of:after:)") { backend, _ in
                try Self.postgreSQLBackend(backend, operation: "changes(of:after:)").historyReader()
            }
        } catch {
            continuation.finish(throwing: PrefsError(error))
            return stream
        }
        let ended = Locked(false)
        continuation.onTermination = { _ in
            ended.withLock { $0 = true }
            reader.waiter?.signal()
        }
        let interval = max(reader.options.stalenessBound, .milliseconds(50))
        let thread = Thread { [weak self] in
            defer { reader.close() }
            var last = revision
            while !ended.withLock({ $0 }) {
                do {
                    let changes = try reader.changes(of: key.name, after: last)
                    for change in changes {
                        continuation.yield(Self.revisioned(change.stored, revision: change.revision, key: key, reportingTo: self))
                        last = change.revision
                    }
                    if changes.count == 1000 { continue }  // more to read at once
                } catch {
                    continuation.finish(throwing: PrefsError(error))
                    return
                }
                guard let self, !self.isClosed else {
                    continuation.finish()
                    return
                }
                reader.wait(upTo: interval)
            }
            continuation.finish()
        }
        thread.name = "PrefsPostgreSQL.changes"
        thread.start()
        return stream
    }

    private static func revisioned<Value: PrefsStorable>(
        _ stored: StoredValue?, revision: Int64, key: Key<Value>, reportingTo prefs: Prefs?
    ) -> Revisioned<Value> {
        guard let stored else { return Revisioned(value: key.initial, isStored: false, revision: revision) }
        do {
            return Revisioned(value: try key.decode(stored), isStored: true, revision: revision)
        } catch {
            prefs?.reportMismatch(error, key: key.name)
            return Revisioned(value: key.initial, isStored: true, revision: revision)
        }
    }

    /// Whether this PostgreSQL store listens for its namespace's notifications now: another instance's write from here
    /// on is seen at once, whatever the staleness bound (false for another store, or while it is not listening yet).
    /// For tests, which wait for it before a write that only a notification brings in time.
    package var isListeningForChanges: Bool {
        (try? withBackend("isListeningForChanges") { backend, _ in (backend as? PostgreSQLBackend)?.isListening ?? false }) ?? false
    }

    private static func postgreSQLBackend(_ backend: any StoreBackend, operation: String) throws -> PostgreSQLBackend {
        guard let postgreSQL = backend as? PostgreSQLBackend else {
            throw PostgreSQLError(
                kind: .statementFailed, sqlState: "0A000", message: "revisions are kept by the PostgreSQL store only", operation: operation,
                target: backend.description)
        }
        return postgreSQL
    }
}
