import CLibPQ
import Foundation
import Prefs
import PrefsJSON
import PrefsSupport
import Synchronization

/// A store in a PostgreSQL database, one namespace of it, through libpq.
///
/// Many stores share one database, each in its own namespace (one per user, or per app and environment), and the
/// stores of one server in one process share a small pool of connections (``PostgreSQLPool``). The tables read plainly
/// in `psql` (``PostgreSQLSchema``): a value is its type's name and its JSON text, as the other stores keep them.
///
/// Reads: values are cached here and in the store, and served for at most ``PostgreSQLOptions/stalenessBound``; then the
/// next read checks the server for changes (one round trip: the rows written by transactions the last check's
/// snapshot did not see, compared by revision). A notification (`LISTEN`, on the pool's one listening connection)
/// makes the next read check at once.
///
/// Writes are one statement each (``PostgreSQLBackend/apply(_:)``): the values, their new revisions, the history when
/// the namespace keeps one, and the notification, together. Transactions are optimistic: a body reads one snapshot of
/// the namespace (as of one check, from the cache; see ``transactionEntry(_:)``), and the commit checks that each key
/// read still has the revision it was read at (one statement for an `update` of one key), else the store runs the
/// transaction again. Writers of different keys never wait for each other; writers of one key take turns on its row.
///
/// Faults: every call has a deadline (``PostgreSQLOptions/timeout``); a broken connection is dropped and a read, or a
/// write that was not sent, is repeated once on another. A write that was sent is never repeated: its outcome is
/// unknown when its answer is lost, and its keys are read from the server next time.
package final class PostgreSQLBackend: StoreBackend {
    let namespace: String
    let options: PostgreSQLOptions
    /// The database with the password hidden.
    package let target: String
    let pool: PostgreSQLPool
    /// This namespace's notification channel.
    let channel: String
    package let freshness: BackendFreshness?
    package var validatesTransactionsAtCommit: Bool { true }
    /// A write's declarations are upserted by its statement only where they differ (``WritePlan/declarationParts(first:condition:)``).
    package var recordsOnlyChangedDeclarations: Bool { true }

    /// A key as this backend last saw it: its stored value (nil: none) and its revision (0: never written).
    struct Entry: Equatable {
        var stored: StoredValue?
        var revision: Int64
        /// The ``replacedGeneration`` in which ``setLatest(_:for:)`` put this key in ``replaced`` (or found it there):
        /// while it is the current one, the key is known to be there without a lookup. Not part of what the entry is.
        var replacedIn: UInt32 = 0

        /// A key without a row.
        static let absent = Entry(stored: nil, revision: 0)

        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.stored == rhs.stored && lhs.revision == rhs.revision }
    }

    // `@exclusivity(unchecked)` below: the store calls its backend from one thread at a time, under its lock, so no two
    // accesses overlap; checked, an update paid some twenty runtime calls for them (2k instructions).
    /// Every key read or written, as of the last check for changes or later: what a read outside a transaction serves.
    /// Change it with ``setLatest(_:for:)``, which keeps the namespace as of the last check whole.
    @exclusivity(unchecked) private(set) var cache: [String: Entry] = [:]
    /// For each key whose ``cache`` entry is not (or may not be) its entry as of ``snapshot`` (this store wrote it
    /// since, read it on its own, or forgot it after a conflict or a failed write): its entry as of ``snapshot``. With
    /// the other keys' entries in ``cache`` (and no row for a key in neither), the whole namespace as of ``snapshot``:
    /// the state a transaction body reads.
    @exclusivity(unchecked) private var replaced: [String: Entry] = [:]
    /// Counts the times ``replaced`` was emptied (never 0): an entry's ``Entry/replacedIn`` of an earlier count says
    /// nothing.
    @exclusivity(unchecked) private var replacedGeneration: UInt32 = 1
    /// The snapshot of the last check (`pg_snapshot` text): rows written by transactions it does not see are changes.
    /// Nil until the first check, which reads every row (as does a check that finds the namespace deleted, recreated or
    /// pruned).
    @exclusivity(unchecked) private var snapshot: String?
    /// The namespace's row as the last check saw it (its creation and last pruning), "" when it had none: when it
    /// changes, the namespace was deleted, recreated or pruned, and everything is read again.
    private var namespaceMarker: String?
    /// A check made on the way (a read, a write) found a change the store has not been told of: the next ``refresh()``
    /// says so.
    var pendingChange = false
    /// Inside a transaction, the revision of each key it read.
    @exclusivity(unchecked) var transactionReads: ReadRevisions?
    /// Inside a transaction, whether its body has read: from then on its reads come from ``snapshot``, which moves only
    /// to a snapshot where everything the body read is unchanged.
    @exclusivity(unchecked) var transactionHasSnapshot = false
    /// Inside a transaction, whether its body reads one key only (an `update`).
    @exclusivity(unchecked) var transactionReadsOneKey = false
    /// Inside a transaction, why its snapshot could not be taken: each later read of the body throws it at once,
    /// rather than wait for the server again (the transaction throws it instead of committing).
    @exclusivity(unchecked) var transactionSnapshotFailure: (any Error)?
    /// Set by the listener when the namespace's settings changed: what was learned of its history is forgotten.
    let settingsChanged = RaisedFlag()
    /// Whether the namespace keeps history, and when that was learned (a check, or a write that asked): a write whose
    /// knowledge is older than a second asks again, in the same statement.
    @exclusivity(unchecked) var history: (keeps: Bool, learned: ContinuousClock.Instant)?
    /// The writes that wrote history since this store last pruned it, and when it did (nil: not yet): see
    /// ``pruneHistoryIfDue()``.
    var historyWritesSincePrune = 0
    var lastHistoryPrune: ContinuousClock.Instant?
    /// Conflicts in a row, and since when, to give up once the deadline has passed.
    @exclusivity(unchecked) var conflictStreak = 0
    @exclusivity(unchecked) var firstConflict: ContinuousClock.Instant?
    /// The waits of observers of this store (``makeChangeListener()``).
    let waiters = PostgreSQLChangeWaiters()
    /// The pool listener's id for this backend, while it listens.
    private(set) var subscription: UInt64?
    /// The pool's signalling connection (``PostgreSQLPool/listener``), known once the first connection was made; nil
    /// where there is none (the statements then notify themselves).
    private(set) var listener: PostgreSQLListener?
    /// The operation a write names in its errors (made once: a `lazy var` would race between writing threads).
    let writingOperation: String
    /// The last write statement's text and shape (``WriteStatement/init(plan:namespace:notifying:guard:registers:history:last:)``).
    @exclusivity(unchecked) var lastStatement: (index: Int, sql: PreparedSQL)?
    /// ``PostgreSQLPool/registrationsRemoved`` when this store last found its namespace registered (nil: not known).
    @exclusivity(unchecked) var registeredAsOf: UInt64?
    /// The signalling thread's round in which this store's last write asked for a notification (``PostgreSQLListener``).
    @exclusivity(unchecked) var notifiedInRound: UInt64?

    package var description: String {
        PostgreSQLOptions.storageDescription(target: target, namespace: namespace)
    }

    /// Opens a namespace: connects (or borrows a connection of this server's pool), creates the schema when the
    /// database has none or upgrades an older format (neither when read-only or on a standby), refuses a newer format.
    /// Opening writes nothing else: a namespace is registered by its first write.
    package init(conninfo: String, namespace: String, options: PostgreSQLOptions = .init()) throws {
        self.namespace = namespace
        self.options = options
        writingOperation = "writing to namespace \(Self.quoted(namespace))"
        pool = try PostgreSQLPool.shared(conninfo: conninfo, options: options)
        target = pool.target
        channel = PostgreSQLStore.notificationChannel(for: namespace)
        freshness = BackendFreshness(bound: options.stalenessBound, clock: options.clock)
        guard !namespace.isEmpty, namespace.utf8.count <= PostgreSQLStore.maximumNamespaceBytes, !namespace.utf8.contains(0) else {
            throw PostgreSQLError(
                kind: .statementFailed, sqlState: PostgreSQLError.ClientCode.invalidParameter,
                message: "a namespace is 1 to \(PostgreSQLStore.maximumNamespaceBytes) bytes, without NUL",
                operation: "opening namespace \(Self.quoted(namespace))", target: target)
        }
        // A connection now, so that a server that cannot be reached, a newer format or a missing schema show at open;
        // one the pool already had checks the format again (the pool may have outlived another release's upgrade).
        try pool.withConnection(
            deadline: .now + options.connectTimeout + options.timeout, readOnly: options.readOnly, checkingFormat: true,
            operation: "opening namespace \(Self.quoted(namespace))"
        ) { _ in }
        listener = pool.listener
        if options.listens, let listener {
            let freshness = freshness, waiters = waiters, settingsChanged = settingsChanged
            subscription = listener.subscribe(
                .init(namespace: namespace) { event in
                    if case .settings = event { settingsChanged.raise() }
                    freshness?.expire()
                    waiters.signal()
                })
        }
    }

    deinit { close() }

    /// `text` in double quotes, `\` and `"` escaped, for messages.
    static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) else { return "\"" + text + "\"" }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    // MARK: - Connections

    /// Runs `body` on a connection of the pool, by the deadline of one call. When the connection breaks before
    /// anything could have been applied (``PostgreSQLError/Kind/connectionLost``: a read, a write not yet sent, a
    /// transaction not yet committed) and `retrying`, runs it once more on another, by the same deadline.
    func withConnection<Result>(
        retrying: Bool, operation: @autoclosure () -> String, _ body: (PostgreSQLConnection, ContinuousClock.Instant) throws -> Result
    ) throws -> Result {
        let deadline = ContinuousClock.now + options.timeout
        do {
            return try pool.withConnection(deadline: deadline, readOnly: options.readOnly, operation: operation()) { try body($0, deadline) }
        } catch let error as PostgreSQLError where retrying && error.kind == .connectionLost {
            return try pool.withConnection(deadline: deadline, readOnly: options.readOnly, operation: operation()) { try body($0, deadline) }
        }
    }

    // MARK: - Reading

    package func value(forKey key: String) throws -> StoredValue? {
        let name = Self.canonicalName(key)
        if transactionReads != nil { return try transactionEntry(name).stored }
        try ensureFresh()
        if let cached = cache[name] { return cached.stored }
        let entry = try fetch(name)
        setLatest(entry, for: name)
        return entry.stored
    }

    /// One key from the server, with its revision.
    func fetch(_ name: String) throws -> Entry {
        try withConnection(retrying: true, operation: "reading key \(Self.quoted(name)) of namespace \(Self.quoted(namespace))") { connection, deadline in
            try connection.executeReading(
                Self.fetchStatement, [namespace, name], deadline: deadline,
                operation: "reading key \(Self.quoted(name)) of namespace \(Self.quoted(namespace))", read: Self.fetchedEntry)
                ?? Entry(stored: nil, revision: 0)
        }
    }

    /// The entry in a result of ``fetchStatement`` (none: never written).
    private static func fetchedEntry(_ result: OpaquePointer) -> Entry {
        guard PQntuples(result) > 0, PQnfields(result) >= 3 else { return Entry(stored: nil, revision: 0) }
        let revision = WrittenRows.integer(result, 0, 2) ?? 0
        guard PQgetisnull(result, 0, 1) == 0 else { return Entry(stored: nil, revision: revision) }
        return Entry(stored: storedValue(result, row: 0, typeColumn: 0, valueColumn: 1), revision: revision)
    }

    static let fetchStatement = PreparedSQL("SELECT type, value, revision FROM prefs_values WHERE namespace = $1 AND key = $2")

    /// Every value: read whole from the server (a full check, in one statement), or inside a transaction from its
    /// snapshot.
    package func allValues() throws -> [String: StoredValue] {
        if transactionReads != nil { return try transactionValues() }
        if try check(full: true, renewingOnFailure: false) { noteChangeFoundOnTheWay() }
        var values: [String: StoredValue] = [:]
        for (key, entry) in cache {
            if let stored = entry.stored { values[key] = stored }
        }
        return values
    }

    // MARK: - Checking for other instances' changes

    /// True when another instance changed what this store has read since the last call. Always asks the server
    /// (one round trip), so `Prefs.refresh()` is a strict read.
    package func refresh() throws -> Bool {
        let changed = try check()
        defer { pendingChange = false }
        return changed || pendingChange
    }

    /// Checks when the staleness bound has passed, so that a read never serves a value older than it.
    func ensureFresh() throws {
        guard let freshness, freshness.isExpired else { return }
        if try check() { noteChangeFoundOnTheWay() }
    }

    /// The snapshot before any transaction: the first check reads every row of the namespace (so the whole namespace
    /// is cached in one round trip, and what this backend read or wrote before is compared with it).
    static let beforeEverything = "1:1:"

    /// A change found by a check or read the store did not ask for: the store is told at its next read.
    func noteChangeFoundOnTheWay() {
        pendingChange = true
        freshness?.expire()
    }

    /// The rows written since the last check's snapshot (by transactions it did not see), in one round trip; every row
    /// when `full`, at the first check, and after the namespace was deleted, recreated or pruned (a second round trip).
    ///
    /// The filter is `xid >= pg_snapshot_xmin(snapshot)`: every transaction below that was over when the snapshot was
    /// taken, so what it wrote was seen then. Rows above it that were seen too come back again, and are told apart by
    /// their revision. (The exact test, `pg_visible_in_snapshot`, is not used: a hot standby's `pg_current_snapshot()`
    /// lists no transactions in progress.) Returns whether a cached key changed.
    ///
    /// A failed check renews the staleness bound when `renewingOnFailure`: until the next check is due, reads serve what
    /// they have (the store reports the failure), rather than each wait for a server that does not answer.
    @discardableResult
    func check(full: Bool = false, renewingOnFailure: Bool = true) throws -> Bool {
        let changes: Changes
        do {
            changes = try readChanges(since: full ? nil : snapshot)
        } catch {
            if renewingOnFailure { freshness?.renew(checkedAt: options.clock.uptimeNanoseconds) }
            throw error
        }
        // Deleted, recreated or pruned: rows may have gone, which only a read of every row shows.
        if !changes.isFull, namespaceMoved(to: changes.marker) { return try check(full: true, renewingOnFailure: renewingOnFailure) }
        return apply(changes)
    }

    /// What a check read: the server's snapshot, the namespace's marker (its creation and last pruning, "" when it has
    /// no row) and whether it keeps history, and the rows written by transactions the base snapshot did not see (every
    /// row, for a full check).
    struct Changes {
        var snapshot: String
        var marker: String
        var keepsHistory: Bool
        var rows: [(key: String, entry: Entry)]
        var isFull: Bool
        /// When the check began, in the staleness clock's uptime.
        var started: UInt64
    }

    /// One statement: the rows written by transactions `base` did not see (nil: every row), and a new snapshot.
    private func readChanges(since base: String?) throws -> Changes {
        let started = options.clock.uptimeNanoseconds
        // Each operation's name made only for an error: built at every check, it cost a tenth of a check's instructions.
        let changes = try withConnection(retrying: true, operation: "checking namespace \(Self.quoted(namespace)) for changes") { connection, deadline in
            try connection.executeReading(
                Self.checkStatement, [namespace, Self.xmin(of: base ?? Self.beforeEverything)], deadline: deadline,
                operation: "checking namespace \(Self.quoted(namespace)) for changes", read: { Self.changes(in: $0, isFull: base == nil, started: started) })
        }
        guard let changes = changes ?? nil else {
            throw PostgreSQLError(
                kind: .unexpectedSchema, sqlState: PostgreSQLError.ClientCode.unexpectedAnswer, message: "the check for changes returned no snapshot",
                operation: "checking namespace \(Self.quoted(namespace)) for changes", target: target)
        }
        return changes
    }

    /// What a check's result says (``checkStatement``), read straight from libpq's: nil when it has no snapshot. A check
    /// that finds nothing new is one row of NULLs but the first three columns, and its rows as arrays of strings cost
    /// more than the rest of reading them.
    private static func changes(in result: OpaquePointer, isFull: Bool, started: UInt64) -> Changes? {
        func text(_ row: Int32, _ column: Int32) -> String? {
            PQgetisnull(result, row, column) == 0 ? String(cString: PQgetvalue(result, row, column)) : nil
        }
        let rowCount = PQntuples(result)
        guard rowCount > 0, PQnfields(result) >= 7, let snapshot = text(0, 0) else { return nil }
        var rows: [(key: String, entry: Entry)] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            guard let key = text(row, 3).map(canonicalName) else { continue }  // no row changed: the one row's NULLs
            let stored = PQgetisnull(result, row, 5) == 0 ? storedValue(result, row: row, typeColumn: 4, valueColumn: 5) : nil
            rows.append((key, Entry(stored: stored, revision: WrittenRows.integer(result, row, 6) ?? 0)))
        }
        let keepsHistory = PQgetisnull(result, 0, 2) == 0 && PQgetvalue(result, 0, 2).pointee == UInt8(ascii: "t")
        return Changes(snapshot: snapshot, marker: text(0, 1) ?? "", keepsHistory: keepsHistory, rows: rows, isFull: isFull, started: started)
    }

    /// $1 the namespace, $2 the base snapshot's xmin (``xmin(of:)``): the snapshot now, the namespace's marker and
    /// whether it keeps history, and the rows written by transactions at or above that xmin.
    static let checkStatement = PreparedSQL(
        """
        SELECT pg_current_snapshot()::text, n.created_xid::text || '/' || coalesce(n.pruned_xid::text, ''), \
        n.history_retention IS NOT NULL, v.key, v.type, v.value, v.revision
        FROM (SELECT 1) AS one
        LEFT JOIN prefs_namespaces n ON n.namespace = $1
        LEFT JOIN prefs_values v ON v.namespace = $1 AND v.xid >= $2::xid8
        """)

    /// The xmin of a snapshot's text (`xmin:xmax:xip,…`, as `pg_current_snapshot()::text` writes it): the text before
    /// its first colon, which the server reads as an `xid8` (and refuses, failing the check, if it is none). Passed so
    /// rather than the whole snapshot: `pg_snapshot_xmin($2::pg_snapshot)` was worked out again for every row scanned.
    static func xmin(of snapshot: String) -> String {
        // Cut at the colon's byte: walking the text's characters cost a check a tenth of its instructions.
        guard let colon = snapshot.utf8.firstIndex(of: UInt8(ascii: ":")) else { return snapshot }
        return String(snapshot[..<colon])
    }

    /// Whether the namespace's row changed since the last check: it was deleted, recreated or pruned. (A namespace
    /// registered since, by its first write, here or elsewhere, is not that: every row it holds was written since, and
    /// comes back in the check. Taking it for a recreation made a store's own first write look like another instance's
    /// change, delivered to observers that the write was made without notifying.)
    private func namespaceMoved(to marker: String) -> Bool {
        guard let known = namespaceMarker, !known.isEmpty else { return false }
        return known != marker
    }

    /// Takes in what a check read: ``cache`` holds the namespace as of its snapshot, and nothing is replaced. Returns
    /// whether a cached key changed.
    private func apply(_ changes: Changes) -> Bool {
        var changed = false
        if namespaceMoved(to: changes.marker) {
            // Nothing cached can be trusted (a full check: every row comes back below).
            changed = !cache.isEmpty
            cache.removeAll()
            forgetReplaced()
        }
        namespaceMarker = changes.marker
        // A namespace without its row (never written, or deleted) is registered again by the next write.
        if changes.marker.isEmpty, pool.registeredNamespaces.withLock({ $0.remove(namespace) }) != nil {
            pool.registrationsRemoved.add(1, ordering: .releasing)
        }
        history = (changes.keepsHistory, .now)
        var seen = Set<String>()
        for (key, entry) in changes.rows {
            if let cached = cache[key], cached.revision != entry.revision { changed = true }
            cache[key] = entry
            seen.insert(key)
        }
        if changes.isFull {
            // Every row came back: a key cached with one has none now.
            for (key, cached) in cache where !seen.contains(key) && cached.revision != 0 {
                changed = true
                cache[key] = .absent
            }
        } else {
            // A key replaced since the last snapshot that did not come back is unchanged since: its entry then is its
            // entry now (a write of this store since, or a row another instance changed, would have come back).
            for (key, older) in replaced where !seen.contains(key) { cache[key] = older }
        }
        forgetReplaced()
        snapshot = changes.snapshot
        freshness?.renew(checkedAt: changes.started)
        return changed
    }

    /// Sets the latest entry of `key` (nil: forgets it, so that the next read outside a transaction asks the server),
    /// keeping its entry as of the last check's snapshot in ``replaced``.
    func setLatest(_ entry: Entry?, for key: String) {
        guard snapshot != nil else {
            if let entry { cache[key] = entry } else { cache.removeValue(forKey: key) }
            return
        }
        guard var entry else {
            let former = cache.removeValue(forKey: key)
            if former?.replacedIn != replacedGeneration, replaced[key] == nil { replaced[key] = former ?? .absent }
            return
        }
        // One lookup of `cache` for both the entry it held and the new one (written in place, by its index), marked as
        // replaced. A cached key is in `replaced` only if its entry is marked so in this generation (every write of
        // `cache` but a check's is here, and a check empties `replaced`): one that is not is looked up there no more.
        let generation = replacedGeneration
        guard let index = cache.index(forKey: key) else {
            // Not cached: as of the snapshot the key had no row, unless `replaced` says otherwise.
            let replacesAbsence = entry.revision != Entry.absent.revision
            entry.replacedIn = replacesAbsence || replaced[key] != nil ? generation : 0
            cache[key] = entry
            if replacesAbsence, replaced[key] == nil { replaced[key] = .absent }
            return
        }
        let former = cache.values[index]
        if former.replacedIn == generation {
            entry.replacedIn = generation
        } else {
            assert(replaced[key] == nil, "\(key) is in `replaced` but its cached entry is not marked so")
            if entry.revision == former.revision {
                entry.replacedIn = former.replacedIn  // not replaced: a read that found what was cached, the common case
            } else {
                entry.replacedIn = generation
                replaced[key] = former
            }
        }
        cache.values[index] = entry
    }

    /// Empties ``replaced``, and so unmarks every entry marked in it. Its table is kept for the next snapshot's keys
    /// (a store writing in a loop fills it again, and growing it rehashed every key once more), unless a large batch
    /// made it large.
    private func forgetReplaced() {
        replaced.removeAll(keepingCapacity: replaced.capacity <= 4_096)
        replacedGeneration = replacedGeneration == .max ? 1 : replacedGeneration + 1
    }

    // MARK: - A transaction's snapshot

    /// `name`'s entry as a transaction body reads it: as of the body's snapshot, the namespace as of one check.
    ///
    /// The body's first read takes the snapshot: the last check's, after checking again (one round trip) when it is
    /// older than the staleness bound or a notification came, when there was none yet, or when this store replaced
    /// `name`'s entry since (its own write, most often: the body then reads it). A later read comes from the same
    /// snapshot; when it reads a key this store replaced since, one check moves the body to a newer snapshot if
    /// nothing the body read has changed there (``moveSnapshotIfReadsHold()``). So a body never sees a torn state, and
    /// reads from the cache without a round trip when it holds the keys as of a fresh check.
    ///
    /// An `update` (``beginSingleKeyTransaction()``) reads its key as this store last saw it, when that is fresh and
    /// holds a value (its former names are not read then): one read cannot be torn, and an update of a key this store
    /// just wrote stays one round trip.
    func transactionEntry(_ name: String) throws -> Entry {
        if transactionReadsOneKey, !transactionHasSnapshot, let latest = cache[name], latest.stored != nil,
            latest.replacedIn == replacedGeneration || replaced[name] != nil, !(freshness?.isExpired ?? false)
        {
            transactionReads?.record(name, revision: latest.revision)
            return latest
        }
        try prepareTransactionRead(replacing: replaced[name] != nil)
        let entry = replaced[name] ?? cache[name] ?? .absent
        transactionReads?.record(name, revision: entry.revision)
        return entry
    }

    /// Every value as of the body's snapshot (see ``transactionEntry(_:)``); each key with a row counts as read.
    private func transactionValues() throws -> [String: StoredValue] {
        try prepareTransactionRead(replacing: !replaced.isEmpty)
        var values: [String: StoredValue] = [:]
        for key in Set(cache.keys).union(replaced.keys) {
            let entry = replaced[key] ?? cache[key] ?? .absent
            guard entry.revision != 0 || entry.stored != nil else { continue }
            transactionReads?.record(key, revision: entry.revision)
            if let stored = entry.stored { values[key] = stored }
        }
        return values
    }

    /// Takes the body's snapshot at its first read, or moves it at a later read of a key this store replaced since.
    private func prepareTransactionRead(replacing readsReplaced: Bool) throws {
        if let transactionSnapshotFailure { throw transactionSnapshotFailure }
        guard transactionHasSnapshot else {
            if snapshot == nil || readsReplaced || freshness?.isExpired ?? false {
                do {
                    if try check() { noteChangeFoundOnTheWay() }
                } catch {
                    transactionSnapshotFailure = error
                    throw error
                }
            }
            transactionHasSnapshot = true
            return
        }
        if readsReplaced { moveSnapshotIfReadsHold() }
    }

    /// At a body's later read of a key this store replaced since the body's snapshot (the snapshot holds the key's
    /// older entry): one check, and when no key the body read has changed since the snapshot, the body moves to the
    /// new one, where what it read is the same, and reads the key as it is now. Else it stays: it reads the older
    /// entry, consistent with the rest of what it read, and its commit finds the change and runs it again. A failed
    /// check leaves it where it is too (the body can read its snapshot without it).
    private func moveSnapshotIfReadsHold() {
        guard let snapshot else { return }
        let changes: Changes
        do {
            changes = try readChanges(since: snapshot)
        } catch {
            return
        }
        let reads = transactionReads ?? ReadRevisions()
        let moved = changes.rows.contains { row in reads[row.key].map { $0 != row.entry.revision } ?? false }
        guard !moved, !namespaceMoved(to: changes.marker) else {
            freshness?.expire()  // what it read is not taken in: the next read outside a transaction checks again
            return
        }
        if apply(changes) { noteChangeFoundOnTheWay() }
    }

    // MARK: - Checking and closing

    package func integrityProblems() throws -> [String] {
        var problems = try quickCheckProblems()
        guard problems.isEmpty else { return problems }  // the values cannot be read through a damaged schema
        for (key, value) in try allValues().sorted(by: { $0.key < $1.key }) {
            if case .other(let name) = value.type {
                problems.append("key \(Self.quoted(key)): type \(Self.quoted(name)) is not a type this release reads")
            } else if let problem = value.shapeProblem() {
                problems.append("key \(Self.quoted(key)): \(problem)")
            }
        }
        return problems
    }

    package func quickCheckProblems() throws -> [String] {
        try withConnection(retrying: true, operation: "checking the schema") { connection, deadline in
            try PostgreSQLSchema.problems(connection, deadline: deadline)
        }
    }

    /// How soon a connection of this store's pool is taken again without checking it (``PostgreSQLPool/livenessWindow``),
    /// and how many idle connections the pool has checked: for tests.
    package var connectionLivenessWindow: Duration {
        get { pool.livenessWindow }
        set { pool.livenessWindow = newValue }
    }
    package var connectionLivenessChecks: Int { pool.livenessChecks }

    package func close() {
        // Other processes hear of this store's last writes, even if this process ends next.
        if pool.hasSignals { listener?.flush(until: .now + options.timeout) }
        if let subscription { listener?.unsubscribe(subscription) }
        subscription = nil
        waiters.closeAll()
    }
}
