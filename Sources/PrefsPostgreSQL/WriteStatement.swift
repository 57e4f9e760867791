import CLibPQ
import Foundation
import Prefs
import PrefsSupport

extension PostgreSQLBackend {
    /// The text of every shape of write statement, for a test that has a server prepare each (most are made only for
    /// the writes that need them).
    package static var writeStatementTexts: [String] { WriteStatement.everyText }
}

/// A changeset in the form the statements take: canonical names, values as type name and JSON text.
struct WritePlan {
    var sets: [(key: String, value: StoredValue)] = []
    var removes: [String] = []
    var declarations: [(key: String, declaration: KeyDeclaration)] = []
    var undeclared: [String] = []

    init(_ changes: Changeset) {
        func add(_ key: String, _ change: Changeset.Change) {
            switch change {
            case .set(let value): sets.append((PostgreSQLBackend.canonicalName(key), value))
            case .remove: removes.append(PostgreSQLBackend.canonicalName(key))
            }
        }
        if changes.values.count == 1, let (key, change) = changes.values.first {
            add(key, change)  // the common write: nothing to sort
        } else {
            for (key, change) in changes.values.sorted(by: { $0.key < $1.key }) { add(key, change) }
        }
        if !changes.declarations.isEmpty {
            declarations = changes.declarations.sorted { $0.key < $1.key }.map { (PostgreSQLBackend.canonicalName($0.key), $0.value) }
        }
        if !changes.removedDeclarations.isEmpty { undeclared = changes.removedDeclarations.sorted().map(PostgreSQLBackend.canonicalName) }
    }

    /// Every key whose value the write changes.
    var keys: [String] { sets.map(\.key) + removes }

    /// The declarations as the statements that record them take them, seven arrays: the keys, their types and
    /// initial values; each former name's key, position and name; how many former names each key has.
    var declarationParameters: [String?] {
        var renamedKeys: [String] = [], positions: [String] = [], formers: [String] = [], counts: [String] = []
        for (key, declaration) in declarations {
            counts.append(String(declaration.formerNames.count))
            for (position, former) in declaration.formerNames.enumerated() {
                renamedKeys.append(key)
                positions.append(String(position))
                formers.append(former)
            }
        }
        return [
            PostgreSQLBackend.arrayLiteral(declarations.map(\.key)), PostgreSQLBackend.arrayLiteral(declarations.map(\.declaration.type.description)),
            PostgreSQLBackend.arrayLiteral(declarations.map { $0.declaration.initial?.serialized() }), PostgreSQLBackend.arrayLiteral(renamedKeys),
            PostgreSQLBackend.arrayLiteral(positions), PostgreSQLBackend.arrayLiteral(formers), PostgreSQLBackend.arrayLiteral(counts),
        ]
    }

    /// The parts of a `WITH` that record the declarations passed as parameters `first` to `first + 6`
    /// (``declarationParameters``), each only if `condition` holds (empty: always; else ` AND …`): recorded ones
    /// upserted (two instances may record one key's declaration at once: the later wins), with their former names in
    /// order. A row that holds the same already is left as it is (no new row version), so that a store may send a
    /// key's declaration with its first write without reading the recorded one first.
    static func declarationParts(first: Int, condition: String = "") -> [String] {
        let (keys, types, initials, renamedKeys, positions, formers, counts) =
            ("$\(first)", "$\(first + 1)", "$\(first + 2)", "$\(first + 3)", "$\(first + 4)", "$\(first + 5)", "$\(first + 6)")
        return [
            """
            declared AS (INSERT INTO prefs_declared (namespace, key, type, initial) \
            SELECT $1, k, t, i FROM unnest(\(keys)::text[], \(types)::text[], \(initials)::text[]) AS u(k, t, i) WHERE true\(condition) \
            ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, initial = excluded.initial \
            WHERE (prefs_declared.type, prefs_declared.initial) IS DISTINCT FROM (excluded.type, excluded.initial))
            """,
            """
            shortened AS (DELETE FROM prefs_renamed r USING unnest(\(keys)::text[], \(counts)::int[]) AS c(k, n) \
            WHERE r.namespace = $1 AND r.key = c.k AND r.position >= c.n\(condition))
            """,
            """
            renamed AS (INSERT INTO prefs_renamed (namespace, key, position, former) \
            SELECT $1, k, p, f FROM unnest(\(renamedKeys)::text[], \(positions)::int[], \(formers)::text[]) AS u(k, p, f) WHERE true\(condition) \
            ON CONFLICT (namespace, key, position) DO UPDATE SET former = excluded.former WHERE prefs_renamed.former IS DISTINCT FROM excluded.former)
            """,
        ]
    }

    func writes(_ key: String) -> Bool {
        sets.contains { $0.key == key } || removes.contains(key)
    }
}

/// The statement that writes a plan's values, as small as the plan allows, so that a plain set is one upsert: values
/// upserted and removals made tombstones, each with a new revision drawn under its row's lock (and the revision it
/// replaced); the namespace registered when this process has not yet; the history written when the namespace keeps
/// one (or, when the store does not know, if it does, and the statement says which); with a guard, all of it only if
/// the guarded key still has its revision. The notification is sent after the commit by the pool's signalling
/// connection (``PostgreSQLListener``), or by the statement where there is none. Returns (key, revision) for each row
/// written, and in a third column, when asked, whether the namespace keeps history. Statements of one shape have one
/// text, so a connection prepares each once.
struct WriteStatement {
    /// What the store knows of the namespace's history.
    enum History: Int, Hashable, CaseIterable {
        /// It keeps none: no history is written.
        case off
        /// It keeps one: each row written gets its entry.
        case on
        /// Not known lately: entries are written if it keeps one, and the statement returns whether it does.
        case unknown
    }

    /// What a statement's text depends on; its parameters are, in order: the namespace, the guarded key's (key, type,
    /// value, revision), the set keys' (keys, types, values), the removed keys, the declarations (seven arrays,
    /// ``WritePlan/declarationParameters``), the channel. One key is passed as itself, several as arrays: a function
    /// scan over `unnest` costs the server more than the rest of a one-key upsert.
    struct Shape: Hashable {
        enum Guard: Int, Hashable, CaseIterable { case none, revision, neverWritten }
        /// How many keys a part of the statement writes.
        enum Count: Int, Hashable, CaseIterable {
            case none, one, many
            init(_ count: Int) { self = count == 0 ? .none : count == 1 ? .one : .many }
        }
        var guarding: Guard
        var sets: Count
        var removes: Count
        var registers: Bool
        var history: History
        /// Whether the statement records the plan's declarations too (a key's first write with a new declaration).
        var declares: Bool
        var notifiesInline: Bool

        /// Whether the statement is one guarded update, one upsert or one removal of one key, and nothing else: its
        /// row then says only the new revision (the key is the one sent).
        var returnsRevisionOnly: Bool {
            guard history == .off, !registers, !declares else { return false }
            switch (guarding, sets, removes) {
            case (.revision, .none, .none), (.none, .one, .none), (.none, .none, .one): return true
            default: return false
            }
        }

        /// How many cases each part has (`allCases.count`, which makes an array at each call).
        private static let guards = Guard.allCases.count, counts = Count.allCases.count, histories = History.allCases.count
        /// How many shapes there are.
        static let count = guards * counts * counts * 2 * histories * 2 * 2

        /// This shape's place among the ``count`` shapes: its statement's text is found without hashing. (Each part's
        /// raw value is its place among its cases, 0 up.)
        var index: Int {
            var index = guarding.rawValue
            index = index * Self.counts + sets.rawValue
            index = index * Self.counts + removes.rawValue
            index = index * 2 + (registers ? 1 : 0)
            index = index * Self.histories + history.rawValue
            index = index * 2 + (declares ? 1 : 0)
            return index * 2 + (notifiesInline ? 1 : 0)
        }
    }

    /// The statement's text, prepared once per connection.
    var sql: PreparedSQL
    var parameters: [String?]
    /// Whether the statement registers the namespace (this process had not).
    var registers: Bool
    /// Whether the rows carry a third column: the namespace keeps history.
    var reportsHistory: Bool
    /// Whether the statement sends the notification itself (`pg_notify` on `notifying`), where no signalling connection
    /// sends it after the commit.
    var notifiesInline: Bool
    /// The key the statement writes, when it writes one (its rows then name it: ``WrittenRows`` keeps this string).
    var soleKey: String?
    /// Whether the statement's row is the new revision alone (``Shape/returnsRevisionOnly``): the key is ``soleKey``.
    var returnsRevisionOnly: Bool

    /// The statement for `plan`; `last` is the caller's last statement text and its shape's index, used when the shape
    /// is the same (a store writing in a loop finds its text without taking the lock of every store's texts), and
    /// replaced otherwise.
    init(
        plan: WritePlan, namespace: String, notifying channel: String?, guard guarded: (key: String, value: Int64)?, registers: Bool, history: History,
        last: inout (index: Int, sql: PreparedSQL)?
    ) {
        var sets = plan.sets, removes = plan.removes
        var parameters: [String?] = []
        parameters.reserveCapacity(8)
        parameters.append(namespace)
        var guarding = Shape.Guard.none
        var written: String?
        if let guarded {
            var change: (type: String?, value: String?)?
            // An update writes its one key: the plan's arrays are then emptied, not copied less one.
            if let index = sets.firstIndex(where: { $0.key == guarded.key }) {
                let value = sets[index].value
                if sets.count == 1 { sets = [] } else { sets.remove(at: index) }
                change = (value.type.description, value.storageText)
            } else if let index = removes.firstIndex(of: guarded.key) {
                if removes.count == 1 { removes = [] } else { removes.remove(at: index) }
                change = (nil, nil)
            }
            if let change {
                written = guarded.key
                guarding = guarded.value == 0 ? .neverWritten : .revision
                parameters.append(guarded.key)
                parameters.append(change.type)
                parameters.append(change.value)
                parameters.append(String(guarded.value))
            }
        }
        if sets.count == 1, let set = sets.first {
            parameters.append(set.key)
            parameters.append(set.value.type.description)
            parameters.append(set.value.storageText)
        } else if !sets.isEmpty {
            parameters += [
                PostgreSQLBackend.arrayLiteral(sets.map(\.key)), PostgreSQLBackend.arrayLiteral(sets.map { $0.value.type.description }),
                PostgreSQLBackend.arrayLiteral(sets.map { $0.value.storageText }),
            ]
        }
        if removes.count == 1, let key = removes.first {
            parameters.append(key)
        } else if !removes.isEmpty {
            parameters.append(PostgreSQLBackend.arrayLiteral(removes))
        }
        let declares = !plan.declarations.isEmpty
        if declares { parameters += plan.declarationParameters }
        if let channel { parameters.append(channel) }
        switch (written, sets.count, removes.count) {
        case (let key?, 0, 0): soleKey = key
        case (nil, 1, 0): soleKey = sets[0].key
        case (nil, 0, 1): soleKey = removes[0]
        default: soleKey = nil
        }
        let shape = Shape(
            guarding: guarding, sets: Shape.Count(sets.count), removes: Shape.Count(removes.count), registers: registers, history: history,
            declares: declares, notifiesInline: channel != nil)
        returnsRevisionOnly = shape.returnsRevisionOnly
        let index = shape.index
        if let last, last.index == index {
            sql = last.sql
        } else {
            sql = Self.sql(for: shape)
            last = (index, sql)
        }
        self.parameters = parameters
        self.registers = registers
        reportsHistory = history == .unknown
        notifiesInline = channel != nil
    }

    /// Every shape's text (``PostgreSQLBackend/writeStatementTexts``).
    static var everyText: [String] {
        var texts: [String] = []
        for guarding in Shape.Guard.allCases {
            for sets in Shape.Count.allCases {
                for removes in Shape.Count.allCases {
                    for registers in [false, true] {
                        for history in History.allCases {
                            for declares in [false, true] {
                                for notifiesInline in [false, true] {
                                    let shape = Shape(
                                        guarding: guarding, sets: sets, removes: removes, registers: registers, history: history, declares: declares,
                                        notifiesInline: notifiesInline)
                                    texts.append(makeSQL(for: shape))
                                }
                            }
                        }
                    }
                }
            }
        }
        return texts
    }

    /// Each shape's text once made, at its ``Shape/index``.
    private static let texts = Locked<[PreparedSQL?]>(Array(repeating: nil, count: Shape.count))

    /// The statement's text for `shape`, and its name, made once.
    static func sql(for shape: Shape) -> PreparedSQL {
        if let text = texts.withLock({ $0[shape.index] }) { return text }
        let text = PreparedSQL(makeSQL(for: shape))
        texts.withLock { $0[shape.index] = text }
        return text
    }

    private static func makeSQL(for shape: Shape) -> String {
        var count = 1  // $1: the namespace
        func parameter() -> String {
            count += 1
            return "$\(count)"
        }
        let stamp = "nextval('prefs_revision'), pg_current_xact_id(), now()"
        let returning = "RETURNING key, revision, previous_revision, type, value, changed_at"
        var parts: [String] = []
        var sources: [String] = []
        var condition = ""
        if shape.registers { parts.append("ns AS (INSERT INTO prefs_namespaces (namespace) VALUES ($1) ON CONFLICT (namespace) DO NOTHING)") }
        if shape.guarding != .none {
            let (key, type, value, revision) = (parameter(), parameter(), parameter(), parameter())
            let update = """
                UPDATE prefs_values SET type = \(type), value = \(value), revision = nextval('prefs_revision'), previous_revision = revision, \
                xid = pg_current_xact_id(), changed_at = now() WHERE namespace = $1 AND key = \(key) AND revision = \(revision)::bigint \(returning)
                """
            if shape.guarding == .neverWritten {
                // Read as never written: a placeholder row (revision 0) is updated, or else the row is created.
                parts.append("g1 AS (\(update))")
                parts.append(
                    """
                    g2 AS (INSERT INTO prefs_values (namespace, key, type, value, revision, xid, changed_at) \
                    SELECT $1, \(key), \(type), \(value), \(stamp) WHERE NOT EXISTS (SELECT 1 FROM g1) \
                    ON CONFLICT (namespace, key) DO NOTHING \(returning))
                    """)
                sources += ["g1", "g2"]
                condition = " AND EXISTS (SELECT 1 FROM g1 UNION ALL SELECT 1 FROM g2)"
            } else {
                parts.append("g AS (\(update))")
                sources.append("g")
                condition = " AND EXISTS (SELECT 1 FROM g)"
            }
        }
        if shape.sets != .none {
            let (keys, types, values) = (parameter(), parameter(), parameter())
            let source =
                shape.sets == .one
                ? "SELECT $1, \(keys)::text, \(types)::text, \(values)::text, \(stamp)"
                : "SELECT $1, k, t, v, \(stamp) FROM unnest(\(keys)::text[], \(types)::text[], \(values)::text[]) AS u(k, t, v)"
            parts.append(
                """
                s AS (INSERT INTO prefs_values AS p (namespace, key, type, value, revision, xid, changed_at) \
                \(source) WHERE true\(condition) \
                ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value, \
                revision = nextval('prefs_revision'), previous_revision = p.revision, xid = excluded.xid, changed_at = excluded.changed_at \
                \(returning))
                """)
            sources.append("s")
        }
        if shape.removes != .none {
            let keys = parameter()
            let matching = shape.removes == .one ? "key = \(keys)::text" : "key = ANY(\(keys)::text[])"
            parts.append(
                """
                r AS (UPDATE prefs_values SET type = NULL, value = NULL, revision = nextval('prefs_revision'), previous_revision = revision, \
                xid = pg_current_xact_id(), changed_at = now() WHERE namespace = $1 AND \(matching) AND value IS NOT NULL\(condition) \
                \(returning))
                """)
            sources.append("r")
        }
        if shape.declares {
            // Recorded only if the write is made: a guarded write that lost records nothing, as its transaction did.
            parts += WritePlan.declarationParts(first: count + 1, condition: condition)
            count += 7
        }
        // No rows (a plan with only declarations): a source of the same columns that yields none.
        let none = """
            SELECT NULL::text AS key, NULL::bigint AS revision, NULL::bigint AS previous_revision, NULL::text AS type, NULL::text AS value, \
            NULL::timestamptz AS changed_at WHERE false
            """
        let union = sources.isEmpty ? none : sources.map { "SELECT * FROM \($0)" }.joined(separator: " UNION ALL ")
        parts.append("c AS (\(union))")
        let kept = "EXISTS (SELECT 1 FROM prefs_namespaces WHERE namespace = $1 AND history_retention IS NOT NULL)"
        if shape.history != .off {
            parts.append(
                """
                h AS (INSERT INTO prefs_history (namespace, key, revision, previous_revision, type, value, changed_at) \
                SELECT $1, key, revision, previous_revision, type, value, changed_at FROM c\(shape.history == .unknown ? " WHERE \(kept)" : ""))
                """)
        }
        var columns = shape.returnsRevisionOnly ? "revision" : "key, revision"
        if shape.history == .unknown { columns += ", \(kept)" }
        if shape.notifiesInline { columns += ", pg_notify(\(parameter()), $1)" }
        if parts.count == 2, sources.count == 1, ["s", "r", "g"].contains(sources[0]), shape.history == .off, let statement = parts.first {
            // One upsert, removal or guarded update and nothing else: the statement itself, returning what the CTE's would.
            let open = statement.index(after: statement.firstIndex(of: "(")!)
            let body = statement[open..<statement.index(before: statement.endIndex)]
            return body.replacingOccurrences(of: returning, with: "RETURNING \(columns)")
        }
        return "WITH " + parts.joined(separator: ",\n") + "\nSELECT \(columns) FROM c"
    }
}

/// What a write statement returned, read from libpq's result: (key, revision) for each row written (the first two
/// columns), and whether the namespace keeps history (the third column, when the statement was asked).
struct WrittenRows {
    var revisions: [(key: String, revision: Int64)] = []
    var keepsHistory: Bool?

    init() {}

    /// Reads `result`; a row whose key is `soleKey` (the key of a one-key write) keeps that string rather than a copy.
    /// With `revisionOnly`, the row is the revision alone, of `soleKey`.
    init(_ result: OpaquePointer, readsHistory: Bool, soleKey: String? = nil, revisionOnly: Bool = false) {
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        // A revision alone names no key: it is `soleKey`'s; else (key, revision).
        let keyed = !revisionOnly || soleKey == nil
        guard columnCount >= (keyed ? 2 : 1) else { return }
        revisions.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            guard let revision = Self.integer(result, row, keyed ? 1 : 0), let key = keyed ? Self.key(result, row, soleKey) : soleKey else { continue }
            revisions.append((key, revision))
        }
        if readsHistory, rowCount > 0, columnCount >= 3 {
            keepsHistory = PQgetisnull(result, 0, 2) == 0 && String(cString: PQgetvalue(result, 0, 2)) == "t"
        }
    }

    /// The key in the first column of `row` (nil: NULL): `soleKey` when it is that key, not a copy of it.
    private static func key(_ result: OpaquePointer, _ row: Int32, _ soleKey: String?) -> String? {
        guard PQgetisnull(result, row, 0) == 0 else { return nil }
        let key = UnsafeRawBufferPointer(start: PQgetvalue(result, row, 0), count: Int(PQgetlength(result, row, 0)))
        if var soleKey, soleKey.withUTF8({ $0.elementsEqual(key) }) { return soleKey }
        return String(decoding: key, as: UTF8.self)
    }

    /// The `bigint` in `column` of `row` (nil: NULL, or not one).
    static func integer(_ result: OpaquePointer, _ row: Int32, _ column: Int32) -> Int64? {
        guard PQgetisnull(result, row, column) == 0, let text = PQgetvalue(result, row, column) else { return nil }
        return integer(UnsafeRawBufferPointer(start: text, count: Int(PQgetlength(result, row, column))))
    }

    /// A `bigint`'s text (an optional minus, then digits), read from its bytes; nil for anything else or past 64 bits.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int64? {
        guard let first = text.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        let digits = negative ? UnsafeRawBufferPointer(rebasing: text.dropFirst()) : text
        guard !digits.isEmpty else { return nil }
        var magnitude: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            magnitude = sum
        }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}
