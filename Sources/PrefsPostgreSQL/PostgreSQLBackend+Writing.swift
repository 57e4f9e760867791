import Foundation
@_spi(Tooling) import Prefs
import PrefsJSON
import PrefsSupport

/// Writes: one statement for a write without reads (a set, a reset, a batch) and for an update of one key (compared
/// with the revision it was read at); a transaction block for the rest (several keys read, declarations).
extension PostgreSQLBackend {
    package func apply(_ changes: Changeset) throws {
        try write(changes, reads: [:])
    }

    /// Writes `changes` if each key of `reads` still has its revision, else throws ``BackendTransactionConflict``
    /// (at once: a compare-and-set that lost is an answer, not something to wait out).
    func commitGuarded(_ changes: Changeset, reads: [String: Int64]) throws {
        try write(changes, reads: reads, pausesAfterConflict: false)
    }

    /// Starts recording what the transaction reads; nothing is sent to the server until it commits.
    package func beginTransaction() throws {
        transactionReads = [:]
    }

    package func commitTransaction(_ changes: Changeset) throws {
        let reads = transactionReads ?? [:]
        transactionReads = nil
        // A transaction that writes nothing read the cache, which is as fresh as reads are promised to be.
        guard !changes.isEmpty else { return }
        try write(changes, reads: reads)
    }

    package func rollbackTransaction() {
        transactionReads = nil
    }

    /// Writes `changes` if every key in `reads` still has the revision it was read at; throws
    /// ``BackendTransactionConflict`` (having written nothing) when one moved.
    private func write(_ changes: Changeset, reads: [String: Int64], pausesAfterConflict: Bool = true) throws {
        let operation = "writing to namespace \(Self.quoted(namespace))"
        guard !options.readOnly else {
            throw PostgreSQLError(
                kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.readOnly, message: "the store was opened read-only",
                operation: operation, target: target)
        }
        let plan = WritePlan(changes)
        do {
            let written: [(key: String, revision: Int64)]
            if plan.declarations.isEmpty && plan.undeclared.isEmpty, reads.count <= 1,
                reads.first.map({ plan.writes($0.key) }) ?? true
            {
                written = try writeInOneStatement(plan, guard: reads.first, operation: operation)
            } else {
                written = try writeInTransaction(plan, reads: reads, operation: operation)
            }
            conflictStreak = 0
            firstConflict = nil
            remember(plan, written)
        } catch let conflict as BackendTransactionConflict {
            for key in reads.keys { cache.removeValue(forKey: key) }
            if pausesAfterConflict { try giveUpOrPause(after: conflict, operation: operation) }
            throw conflict
        } catch {
            // Applied or not (an outcome unknown), these keys are read from the server next time.
            for key in plan.keys { cache.removeValue(forKey: key) }
            for key in reads.keys { cache.removeValue(forKey: key) }
            if let error = error as? PostgreSQLError, error.kind == .commitOutcomeUnknown { freshness?.expire() }
            throw error
        }
    }

    /// The new revisions in the cache; a removal of a key that held nothing changed nothing, and is forgotten.
    private func remember(_ plan: WritePlan, _ written: [(key: String, revision: Int64)]) {
        let revisions = Dictionary(written, uniquingKeysWith: max)
        for (key, value) in plan.sets {
            if let revision = revisions[key] { cache[key] = Entry(stored: value, revision: revision) } else { cache.removeValue(forKey: key) }
        }
        for key in plan.removes {
            if let revision = revisions[key] {
                cache[key] = Entry(stored: nil, revision: revision)
            } else if cache[key]?.stored != nil {
                cache.removeValue(forKey: key)
            }
        }
    }

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
        let statement = WriteStatement(plan: plan, namespace: namespace, channel: channel, guard: guarded)
        let rows = try withConnection(retrying: true, operation: operation) { connection, deadline in
            try expectingNotification(from: connection) {
                let rows = try connection.execute(statement.sql, statement.parameters, deadline: deadline, commits: true, operation: operation).rows
                return (rows, !rows.isEmpty)
            }
        }
        if let guarded, !rows.contains(where: { $0.first == guarded.key }) { throw BackendTransactionConflict(keys: [guarded.key]) }
        return Self.revisions(rows)
    }

    // MARK: - A transaction block

    /// `BEGIN`; the keys read locked and compared with their revisions; the write; the declarations; `COMMIT`.
    private func writeInTransaction(
        _ plan: WritePlan, reads: [String: Int64], operation: String
    ) throws -> [(key: String, revision: Int64)] {
        try withConnection(retrying: true, operation: operation) { connection, deadline in
            try connection.executeScript(options.beginTransaction, deadline: deadline, operation: operation)
            do {
                if !reads.isEmpty { try lockAndCompare(reads, connection, deadline: deadline, operation: operation) }
                let statement = WriteStatement(plan: plan, namespace: namespace, channel: channel, guard: nil)
                let rows =
                    plan.sets.isEmpty && plan.removes.isEmpty
                    ? [] : try connection.execute(statement.sql, statement.parameters, deadline: deadline, operation: operation).rows
                try writeDeclarations(plan, connection, deadline: deadline, operation: operation)
                try expectingNotification(from: connection) {
                    let commit = try connection.execute("COMMIT", deadline: deadline, commits: true, operation: operation)
                    // A transaction that failed earlier ends with ROLLBACK as its tag, not an error.
                    guard commit.commandTag == "COMMIT" else {
                        throw PostgreSQLError(
                            kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer,
                            message: "the server rolled the transaction back (\(commit.commandTag))", operation: operation, target: target)
                    }
                    return ((), !rows.isEmpty)
                }
                return Self.revisions(rows)
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
        let result = try connection.execute(
            """
            WITH wanted AS (SELECT unnest($2::text[]) AS key),
            placed AS (INSERT INTO prefs_values (namespace, key, type, value, revision, xid, changed_at)
                       SELECT $1, key, NULL, NULL, 0, pg_current_xact_id(), now() FROM wanted
                       ON CONFLICT (namespace, key) DO NOTHING RETURNING key, revision),
            locked AS (SELECT key, revision FROM prefs_values WHERE namespace = $1 AND key IN (SELECT key FROM wanted)
                       ORDER BY key FOR UPDATE)
            SELECT key, revision FROM placed UNION ALL SELECT key, revision FROM locked
            """, [namespace, Self.arrayLiteral(keys)], deadline: deadline, operation: operation)
        let found = Dictionary(Self.revisions(result.rows), uniquingKeysWith: { first, _ in first })
        let moved = keys.filter { found[$0] != reads[$0] }
        if !moved.isEmpty {
            _ = try? connection.execute("ROLLBACK", deadline: deadline, operation: "rolling back")
            throw BackendTransactionConflict(keys: moved)
        }
    }

    private func writeDeclarations(_ plan: WritePlan, _ connection: PostgreSQLConnection, deadline: ContinuousClock.Instant, operation: String) throws {
        let replaced = Array(plan.undeclared) + plan.declarations.map(\.key)
        guard !replaced.isEmpty else { return }
        try connection.execute(
            """
            WITH declared AS (DELETE FROM prefs_declared WHERE namespace = $1 AND key = ANY($2::text[]))
            DELETE FROM prefs_renamed WHERE namespace = $1 AND key = ANY($2::text[])
            """, [namespace, Self.arrayLiteral(replaced)], deadline: deadline, operation: operation)
        guard !plan.declarations.isEmpty else { return }
        var renamedKeys: [String] = [], positions: [String] = [], formers: [String] = []
        for (key, declaration) in plan.declarations {
            for (position, former) in declaration.formerNames.enumerated() {
                renamedKeys.append(key)
                positions.append(String(position))
                formers.append(former)
            }
        }
        try connection.execute(
            """
            WITH declared AS (INSERT INTO prefs_declared (namespace, key, type, initial)
                              SELECT $1, k, t, i FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, t, i))
            INSERT INTO prefs_renamed (namespace, key, position, former)
            SELECT $1, k, p, f FROM unnest($5::text[], $6::int[], $7::text[]) AS u(k, p, f)
            """,
            [
                namespace, Self.arrayLiteral(plan.declarations.map(\.key)), Self.arrayLiteral(plan.declarations.map(\.declaration.type.description)),
                Self.arrayLiteral(plan.declarations.map { $0.declaration.initial?.serialized() }), Self.arrayLiteral(renamedKeys),
                Self.arrayLiteral(positions), Self.arrayLiteral(formers),
            ], deadline: deadline, operation: operation)
    }

    // MARK: - Helpers

    /// Runs `body`, which may make `connection`'s server process notify this namespace, and returns whether it did (a
    /// write that changed nothing notifies nobody): that notification is this store's own, not another instance's
    /// change, and the listener skips it.
    private func expectingNotification<Result>(
        from connection: PostgreSQLConnection, _ body: () throws -> (result: Result, notified: Bool)
    ) throws -> Result {
        guard subscription != nil else { return try body().result }
        let pid = connection.backendPID
        ownNotifications.withLock { $0[pid, default: 0] += 1 }
        do {
            let (result, notified) = try body()
            if !notified { forgetExpected(pid) }
            return result
        } catch {
            forgetExpected(pid)
            throw error
        }
    }

    private func forgetExpected(_ pid: Int32) {
        ownNotifications.withLock { counts in
            if let count = counts[pid] { counts[pid] = count > 1 ? count - 1 : nil }
        }
    }

    /// (key, revision) of rows whose first two columns are those.
    static func revisions(_ rows: [[String?]]) -> [(key: String, revision: Int64)] {
        rows.compactMap { row in
            guard row.count >= 2, let key = row[0], let revision = row[1].flatMap({ Int64($0) }) else { return nil }
            return (key, revision)
        }
    }
}

/// A changeset in the form the statements take: canonical names, values as type name and JSON text.
struct WritePlan {
    var sets: [(key: String, value: StoredValue)] = []
    var removes: [String] = []
    var declarations: [(key: String, declaration: KeyDeclaration)] = []
    var undeclared: [String] = []

    init(_ changes: Changeset) {
        for (key, change) in changes.values.sorted(by: { $0.key < $1.key }) {
            switch change {
            case .set(let value): sets.append((PostgreSQLBackend.canonicalName(key), value))
            case .remove: removes.append(PostgreSQLBackend.canonicalName(key))
            }
        }
        declarations = changes.declarations.sorted { $0.key < $1.key }.map { (PostgreSQLBackend.canonicalName($0.key), $0.value) }
        undeclared = changes.removedDeclarations.sorted().map(PostgreSQLBackend.canonicalName)
    }

    /// Every key whose value the write changes.
    var keys: [String] { sets.map(\.key) + removes }

    func writes(_ key: String) -> Bool {
        sets.contains { $0.key == key } || removes.contains(key)
    }
}

/// The statement that writes a plan's values: upserts and tombstones with new revisions, the namespace registered,
/// the history when the namespace keeps one, and one notification; with a guard, all of it only if the guarded key
/// still has its revision. Returns (key, revision) for each row written.
struct WriteStatement {
    var sql: String
    var parameters: [String?]

    init(plan: WritePlan, namespace: String, channel: String, guard guarded: (key: String, value: Int64)?) {
        var sets = plan.sets, removes = plan.removes
        var guardChange: (type: String?, value: String?)?
        if let guarded {
            if let index = sets.firstIndex(where: { $0.key == guarded.key }) {
                let value = sets.remove(at: index).value
                guardChange = (value.type.description, value.json.serialized())
            } else if let index = removes.firstIndex(of: guarded.key) {
                removes.remove(at: index)
                guardChange = (nil, nil)
            }
        }
        parameters = [
            namespace, channel,
            PostgreSQLBackend.arrayLiteral(sets.map(\.key)), PostgreSQLBackend.arrayLiteral(sets.map { $0.value.type.description }),
            PostgreSQLBackend.arrayLiteral(sets.map { $0.value.json.serialized() }), PostgreSQLBackend.arrayLiteral(removes),
        ]
        let stamp = "nextval('prefs_revision'), pg_current_xact_id(), now()"
        var parts = ["ns AS (INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT (namespace) DO NOTHING)"]
        var condition = ""
        var changed = ["s", "r"]
        if let guarded, let guardChange {
            parameters += [guarded.key, guardChange.type, guardChange.value, String(guarded.value)]
            let update = """
                UPDATE prefs_values SET type = $8, value = $9, revision = nextval('prefs_revision'), previous_revision = revision, \
                xid = pg_current_xact_id(), changed_at = now() WHERE namespace = $1 AND key = $7 AND revision = $10::bigint \
                RETURNING key, revision, previous_revision, type, value, changed_at
                """
            if guarded.value == 0 {
                // Read as never written: a placeholder row (revision 0) is updated, or else the row is created.
                parts.append("g1 AS (\(update))")
                parts.append(
                    """
                    g AS (INSERT INTO prefs_values (namespace, key, type, value, revision, xid, changed_at) \
                    SELECT $1, $7, $8, $9, \(stamp) WHERE NOT EXISTS (SELECT 1 FROM g1) \
                    ON CONFLICT (namespace, key) DO NOTHING RETURNING key, revision, previous_revision, type, value, changed_at)
                    """)
                changed = ["g1", "g"] + changed
                condition = " AND EXISTS (SELECT 1 FROM g1 UNION ALL SELECT 1 FROM g)"
            } else {
                parts.append("g AS (\(update))")
                changed = ["g"] + changed
                condition = " AND EXISTS (SELECT 1 FROM g)"
            }
        }
        parts.append(
            """
            s AS (INSERT INTO prefs_values AS p (namespace, key, type, value, revision, xid, changed_at) \
            SELECT $1, k, t, v, \(stamp) FROM unnest($3::text[], $4::text[], $5::text[]) AS u(k, t, v) WHERE true\(condition) \
            ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value, \
            revision = nextval('prefs_revision'), previous_revision = p.revision, xid = excluded.xid, changed_at = excluded.changed_at \
            RETURNING key, revision, previous_revision, type, value, changed_at)
            """)
        parts.append(
            """
            r AS (UPDATE prefs_values SET type = NULL, value = NULL, revision = nextval('prefs_revision'), previous_revision = revision, \
            xid = pg_current_xact_id(), changed_at = now() WHERE namespace = $1 AND key = ANY($6::text[]) AND value IS NOT NULL\(condition) \
            RETURNING key, revision, previous_revision, type, value, changed_at)
            """)
        parts.append("c AS (\(changed.map { "SELECT * FROM \($0)" }.joined(separator: " UNION ALL ")))")
        parts.append(
            """
            h AS (INSERT INTO prefs_history (namespace, key, revision, previous_revision, type, value, changed_at) \
            SELECT $1, key, revision, previous_revision, type, value, changed_at FROM c \
            WHERE EXISTS (SELECT 1 FROM prefs_namespaces WHERE namespace = $1 AND history_retention IS NOT NULL))
            """)
        sql = "WITH " + parts.joined(separator: ",\n") + "\nSELECT key, revision, pg_notify($2, $1) FROM c"
    }
}
