import Foundation
import Prefs
import PrefsJSON
import PrefsSupport
import Synchronization

/// Writes: one statement for a write without reads (a set, a reset, a batch, with the declarations of keys written
/// for the first time), for an update of one key (compared with the revision it was read at) and for declarations
/// alone; a transaction block for the rest (several keys read, declarations removed).
extension PostgreSQLBackend {
    package func apply(_ changes: Changeset) throws {
        try write(changes, reads: ReadRevisions())
    }

    /// Writes `changes` if each key of `reads` still has its revision, else throws ``BackendTransactionConflict``
    /// (at once: a compare-and-set that lost is an answer, not something to wait out).
    func commitGuarded(_ changes: Changeset, reads: ReadRevisions) throws {
        try write(changes, reads: reads, pausesAfterConflict: false)
    }

    /// Starts recording what the transaction reads; nothing is sent to the server until it commits, and its body's
    /// first read takes its snapshot (``transactionEntry(_:)``).
    package func beginTransaction() throws {
        transactionReads = ReadRevisions()
        transactionHasSnapshot = false
        transactionReadsOneKey = false
        transactionSnapshotFailure = nil
    }

    /// As ``beginTransaction()``, for an `update`: its key, when it holds a value, is read as this store last saw it,
    /// without a check for a key it wrote since its last one (``transactionEntry(_:)``).
    package func beginSingleKeyTransaction() throws {
        try beginTransaction()
        transactionReadsOneKey = true
    }

    package func commitTransaction(_ changes: Changeset) throws {
        let reads = transactionReads ?? ReadRevisions()
        endTransaction()
        // A transaction that writes nothing read one snapshot, as fresh as reads are promised to be at its first read.
        guard !changes.isEmpty else { return }
        try write(changes, reads: reads)
    }

    package func rollbackTransaction() {
        endTransaction()
    }

    private func endTransaction() {
        transactionReads = nil
        transactionHasSnapshot = false
        transactionReadsOneKey = false
        transactionSnapshotFailure = nil
    }

    /// Writes `changes` if every key in `reads` still has the revision it was read at; throws
    /// ``BackendTransactionConflict`` (having written nothing) when one moved.
    private func write(_ changes: Changeset, reads: ReadRevisions, pausesAfterConflict: Bool = true) throws {
        let operation = writingOperation
        guard !options.readOnly else {
            throw PostgreSQLError(
                kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.readOnly, message: "the store was opened read-only",
                operation: operation, target: target)
        }
        let plan = WritePlan(changes)
        do {
            let written: [(key: String, revision: Int64)]
            if plan.sets.isEmpty, plan.removes.isEmpty, plan.undeclared.isEmpty, reads.isEmpty {
                // Declarations alone (`declare`): their one statement commits on its own, without BEGIN and COMMIT.
                try withConnection(retrying: true, operation: operation) { connection, deadline in
                    try writeDeclarations(plan, connection, deadline: deadline, commits: true, operation: operation)
                }
                written = []
            } else if plan.undeclared.isEmpty, reads.count <= 1, reads.single.map({ plan.writes($0.key) }) ?? true {
                // A write, with the declarations of keys written for the first time: one statement.
                written = try writeInOneStatement(plan, guard: reads.single, operation: operation)
            } else {
                written = try writeInTransaction(plan, reads: reads, operation: operation)
            }
            conflictStreak = 0
            firstConflict = nil
            remember(plan, written)
            if !written.isEmpty, history?.keeps == true { pruneHistoryIfDue() }
        } catch let conflict as BackendTransactionConflict {
            for key in reads.keys { setLatest(nil, for: key) }
            if pausesAfterConflict { try giveUpOrPause(after: conflict, operation: operation) }
            throw conflict
        } catch {
            // Applied or not (an outcome unknown), these keys are read from the server next time.
            for key in plan.keys { setLatest(nil, for: key) }
            for key in reads.keys { setLatest(nil, for: key) }
            if let error = error as? PostgreSQLError, error.kind == .commitOutcomeUnknown { freshness?.expire() }
            throw error
        }
    }

    /// The new revisions in the cache; a removal of a key that held nothing changed nothing, and is forgotten.
    private func remember(_ plan: WritePlan, _ written: [(key: String, revision: Int64)]) {
        // One key, the common write: no dictionary to build.
        let revisions = written.count > 1 ? Dictionary(written, uniquingKeysWith: max) : [:]
        func revision(of key: String) -> Int64? {
            written.count > 1 ? revisions[key] : written.first.flatMap { $0.key == key ? $0.revision : nil }
        }
        for (key, value) in plan.sets {
            setLatest(revision(of: key).map { Entry(stored: value, revision: $0) }, for: key)
        }
        for key in plan.removes {
            if let revision = revision(of: key) {
                setLatest(Entry(stored: nil, revision: revision), for: key)
            } else if cache[key]?.stored != nil {
                setLatest(nil, for: key)
            }
        }
    }

    /// The writes between two prunes of the history: a tenth of ``PostgreSQLOptions/historyRevisions`` (so that a
    /// namespace holds at most 10% more, per writing store), 1 to 1,000.
    var historyPruneInterval: Int {
        min(1000, max(1, (options.historyRevisions ?? 10_000) / 10))
    }

    /// After a write that wrote history: once every ``historyPruneInterval`` such writes, at this store's first, and
    /// when a minute has passed since its last prune, one `DELETE` of the namespace's entries past the bounds (its
    /// retention, ``PostgreSQLOptions/historyAge``, the newest ``PostgreSQLOptions/historyRevisions``). Rows another
    /// store is deleting at the same moment are skipped (`SKIP LOCKED`), so pruners never wait for each other nor
    /// deadlock. The write has committed: a prune that fails does not fail it, and is tried again at the next write.
    func pruneHistoryIfDue() {
        historyWritesSincePrune += 1
        if let last = lastHistoryPrune, historyWritesSincePrune < historyPruneInterval, ContinuousClock.now - last < .seconds(60) { return }
        do {
            try pruneHistory()
            historyWritesSincePrune = 0
            lastHistoryPrune = .now
        } catch {
            // Kept for the next write: the entries stay a little longer, nothing is lost.
        }
    }

    /// Deletes the namespace's history entries past its bounds; returns how many.
    @discardableResult
    func pruneHistory() throws -> Int {
        let operation = "pruning the history of namespace \(Self.quoted(namespace))"
        let result = try withConnection(retrying: true, operation: operation) { connection, deadline in
            try connection.execute(
                Self.pruneStatement,
                [namespace, options.historyAge.map { String(max(1, $0.milliseconds)) }, options.historyRevisions.map { String(max(1, $0)) }],
                deadline: deadline, operation: operation)
        }
        return Int(result.firstInteger ?? 0)
    }

    /// $1 the namespace, $2 the store's age bound in milliseconds (NULL: none), $3 how many entries to keep (NULL:
    /// any number). A namespace that keeps no history (its retention NULL) keeps no entry.
    static let pruneStatement = PreparedSQL(
        """
        WITH doomed AS (SELECT h.key, h.revision FROM prefs_history h JOIN prefs_namespaces n ON n.namespace = h.namespace
                        WHERE h.namespace = $1 AND (n.history_retention IS NULL
                            OR h.changed_at < now() - least(n.history_retention, $2::bigint * interval '1 millisecond')
                            OR ($3::bigint IS NOT NULL AND h.revision < (SELECT revision FROM prefs_history WHERE namespace = $1
                                                                         ORDER BY revision DESC OFFSET $3::bigint - 1 LIMIT 1)))
                        FOR UPDATE OF h SKIP LOCKED),
        gone AS (DELETE FROM prefs_history h USING doomed d WHERE h.namespace = $1 AND h.key = d.key AND h.revision = d.revision RETURNING 1)
        SELECT count(*) FROM gone
        """)

    /// After `after` conflicts in a row: gives up with ``PostgreSQLError/Kind/timedOut`` once the deadline has passed
    /// since the first, else pauses a little (more after each) so that the writers contending for a key spread out.
    private func giveUpOrPause(after conflict: BackendTransactionConflict, operation: String) throws {
        conflictStreak += 1
        let first = firstConflict ?? .now
        firstConflict = first
        if ContinuousClock.now - first > options.timeout {
            let attempts = conflictStreak
            conflictStreak = 0
            firstConflict = nil
            throw PostgreSQLError(
                kind: .timedOut, sqlState: "40001",
                message:
                    "other writers changed \(conflict.keys.sorted().map(Self.quoted).joined(separator: ", ")) each time, \(attempts) attempts until the deadline",
                operation: operation, target: target)
        }
        if conflictStreak > 1 {
            let limit = min(1 << min(conflictStreak, 6), 50)
            Thread.sleep(forTimeInterval: Double(Int.random(in: 0...limit)) / 1000)
        }
    }

    // MARK: - One statement

    /// The write in one statement; with `guard`, only if that key (which the write changes) still has its revision.
    private func writeInOneStatement(
        _ plan: WritePlan, guard guarded: (key: String, value: Int64)?, operation: String
    ) throws -> [(key: String, revision: Int64)] {
        let statement = makeStatement(plan, guard: guarded)
        let written = try withConnection(retrying: true, operation: operation) { connection, deadline in
            try connection.executeWrite(
                statement.sql, statement.parameters, deadline: deadline, commits: true, readsHistory: statement.reportsHistory,
                soleKey: statement.soleKey, revisionOnly: statement.returnsRevisionOnly, operation: operation)
        }
        learn(from: statement, written)
        if let guarded, !written.revisions.contains(where: { $0.key == guarded.key }) { throw BackendTransactionConflict(keys: [guarded.key]) }
        return written.revisions
    }

    // MARK: - A transaction block

    /// `BEGIN`; the keys read locked and compared with their revisions; the write; the declarations; `COMMIT`.
    private func writeInTransaction(
        _ plan: WritePlan, reads: ReadRevisions, operation: String
    ) throws -> [(key: String, revision: Int64)] {
        try withConnection(retrying: true, operation: operation) { connection, deadline in
            try connection.executeScript(options.beginTransaction, deadline: deadline, operation: operation)
            do {
                if !reads.isEmpty { try lockAndCompare(reads.all, connection, deadline: deadline, operation: operation) }
                var values = plan
                values.declarations = []  // recorded below, with the removed ones
                let statement = makeStatement(values, guard: nil)
                let written =
                    plan.sets.isEmpty && plan.removes.isEmpty
                    ? WrittenRows()
                    : try connection.executeWrite(
                        statement.sql, statement.parameters, deadline: deadline, commits: false, readsHistory: statement.reportsHistory,
                        soleKey: statement.soleKey, revisionOnly: statement.returnsRevisionOnly, operation: operation)
                try writeDeclarations(plan, connection, deadline: deadline, operation: operation)
                let commit = try connection.execute("COMMIT", deadline: deadline, commits: true, operation: operation)
                // A transaction that failed earlier ends with ROLLBACK as its tag, not an error.
                guard commit.commandTag == "COMMIT" else {
                    throw PostgreSQLError(
                        kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer,
                        message: "the server rolled the transaction back (\(commit.commandTag))", operation: operation, target: target)
                }
                if !(plan.sets.isEmpty && plan.removes.isEmpty) { learn(from: statement, written) }
                return written.revisions
            } catch {
                if connection.isOpen, connection.isInTransaction {
                    _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back")
                }
                throw error
            }
        }
    }

    /// Locks the rows of the keys read (inserting a placeholder, revision 0, for a key that has none, so that a
    /// writer creating it waits too) and throws ``BackendTransactionConflict`` when one moved.
    private func lockAndCompare(
        _ reads: [String: Int64], _ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant, operation: String
    ) throws {
        let keys = reads.keys.sorted()  // one order for everyone: no deadlock between two such transactions
        let result = try connection.executeWrite(
            Self.lockAndCompareStatement, [namespace, Self.arrayLiteral(keys)], deadline: deadline, commits: false, readsHistory: false,
            operation: operation)
        let found = Dictionary(result.revisions, uniquingKeysWith: { first, _ in first })
        let moved = keys.filter { found[$0] != reads[$0] }
        if !moved.isEmpty {
            _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back")
            throw BackendTransactionConflict(keys: moved)
        }
    }

    /// $1 the namespace, $2 the keys read (an array, in order): a placeholder row for each key without one, every row
    /// locked; (key, revision) of each.
    static let lockAndCompareStatement = PreparedSQL(
        """
        WITH wanted AS (SELECT unnest($2::text[]) AS key),
        placed AS (INSERT INTO prefs_values (namespace, key, type, value, revision, xid, changed_at)
                   SELECT $1, key, NULL, NULL, 0, pg_current_xact_id(), now() FROM wanted
                   ON CONFLICT (namespace, key) DO NOTHING RETURNING key, revision),
        locked AS (SELECT key, revision FROM prefs_values WHERE namespace = $1 AND key IN (SELECT key FROM wanted)
                   ORDER BY key FOR UPDATE)
        SELECT key, revision FROM placed UNION ALL SELECT key, revision FROM locked
        """)

    /// The declarations: removed ones deleted, recorded ones upserted (two instances may record one key's declaration
    /// at once: the later wins), with their former names in order.
    private func writeDeclarations(
        _ plan: WritePlan, _ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant, commits: Bool = false, operation: String
    ) throws {
        if !plan.undeclared.isEmpty {
            let removed = plan.undeclared.filter { name in !plan.declarations.contains { $0.key == name } }
            try connection.execute(
                """
                WITH declared AS (DELETE FROM prefs_declared WHERE namespace = $1 AND key = ANY($2::text[]))
                DELETE FROM prefs_renamed WHERE namespace = $1 AND key = ANY($2::text[])
                """, [namespace, Self.arrayLiteral(removed)], deadline: deadline, operation: operation)
        }
        guard !plan.declarations.isEmpty else { return }
        try connection.execute(
            Self.declarationsStatement, [namespace] + plan.declarationParameters, deadline: deadline, commits: commits, operation: operation)
    }

    /// $1 the namespace, $2 to $8 the declarations (``WritePlan/declarationParameters``).
    static let declarationsStatement = PreparedSQL("WITH " + WritePlan.declarationParts(first: 2).joined(separator: ",\n") + "\nSELECT 1")

    // MARK: - Helpers

    /// The plan's statement, registering the namespace unless this process did, and with history as last learned.
    private func makeStatement(_ plan: WritePlan, guard guarded: (key: String, value: Int64)?) -> WriteStatement {
        let registered = namespaceRegistered()
        if settingsChanged.take() { history = nil }
        let known: WriteStatement.History
        if let history, ContinuousClock.now - history.learned <= .seconds(1) {
            known = history.keeps ? .on : .off
        } else {
            known = .unknown
        }
        // Behind a pooler in transaction mode there is no signalling connection: the statement notifies itself.
        let inline = listener == nil ? channel : nil
        return WriteStatement(
            plan: plan, namespace: namespace, notifying: inline, guard: guarded, registers: !registered, history: known, last: &lastStatement)
    }

    /// Whether this process has registered the namespace (``PostgreSQLPool/registeredNamespaces``): looked up once,
    /// then taken as known until a store of the pool finds a namespace's row gone (``PostgreSQLPool/registrationsRemoved``).
    private func namespaceRegistered() -> Bool {
        let removals = pool.registrationsRemoved.load(ordering: .acquiring)
        if registeredAsOf == removals { return true }
        let registered = pool.registeredNamespaces.withLock { $0.contains(namespace) }
        registeredAsOf = registered ? removals : nil
        return registered
    }

    /// What a write that committed tells: the namespace is registered, and (when asked) whether it keeps history; and
    /// when it changed rows, the other stores of this process and then other processes are notified.
    private func learn(from statement: WriteStatement, _ written: WrittenRows) {
        if statement.registers { pool.registeredNamespaces.withLock { _ = $0.insert(namespace) } }
        if let keeps = written.keepsHistory { history = (keeps, .now) }
        if !written.revisions.isEmpty, !statement.notifiesInline { listener?.notifyLater(namespace, except: subscription, addedInRound: &notifiedInRound) }
    }
}
