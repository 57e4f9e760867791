import Foundation
import Testing
import PrefsSQLite

@Suite("SQLite connection")
struct SQLiteConnectionTests {
    private func withDatabase(_ body: (SQLiteConnection, String) throws -> Void) throws {
        try withSQLiteTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db.sqlite").path
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            try connection.execute(
                """
                CREATE TABLE prefs(key TEXT PRIMARY KEY NOT NULL, value BLOB);
                -- a comment between statements
                CREATE INDEX prefs_value ON prefs(value);
                """)
            try body(connection, path)
        }
    }

    private func count(_ connection: SQLiteConnection) throws -> Int64? {
        try connection.firstValue("SELECT count(*) FROM prefs")?.int64Value
    }

    @Test("the statement cache returns the same statement, reset, which works twice")
    func statementCacheReuse() throws {
        try withDatabase { connection, _ in
            let sql = "INSERT INTO prefs(key, value) VALUES (?, ?)"
            let first = try connection.statement(sql)
            try first.bind("a", 1)
            #expect(try !first.step())
            #expect(connection.changes == 1)

            let second = try connection.statement(sql)
            #expect(first === second)
            try second.bind("b", 2)
            #expect(try !second.step())
            second.reset()

            // Helpers share the cache and leave statements reset.
            try connection.run(sql, ["c", 3])
            #expect(try connection.statement(sql) === first)
            #expect(try connection.rows("SELECT key, value FROM prefs ORDER BY key") == [["a", 1], ["b", 2], ["c", 3]])
            #expect(try connection.firstRow("SELECT key FROM prefs WHERE key = ?", ["zzz"]) == nil)
            #expect(try connection.firstValue("SELECT value FROM prefs WHERE key = ?", ["b"]) == .integer(2))
        }
    }

    @Test("text and static text bind their exact bytes, kept by SQLite past the call, one-character literals included")
    func textBindings() throws {
        try withDatabase { connection, _ in
            let statement = try connection.statement("INSERT INTO prefs(key, value) VALUES (?1, ?2)")
            let names: [(key: String, value: StaticString)] = [("a", "int"), ("b", "x"), ("caf\u{E9}\u{0}z", "[string: int]"), ("", "")]
            for (key, value) in names {
                // A key made here and gone before the step: SQLite must hold its own copy of it.
                try statement.bind(text: String(key.unicodeScalars), at: 1)
                try statement.bind(static: value, at: 2)
                #expect(try !statement.step())
                statement.reset()
            }
            let rows = try connection.rows("SELECT key, value, typeof(value) FROM prefs ORDER BY key")
            #expect(
                rows == [
                    [.text(""), .text(""), .text("text")], [.text("a"), .text("int"), .text("text")], [.text("b"), .text("x"), .text("text")],
                    [.text("caf\u{E9}\u{0}z"), .text("[string: int]"), .text("text")],
                ])
        }
    }

    @Test("text bound without a copy is read in place while the body runs, unbound after it, and after a failure too")
    func textBoundInPlace() throws {
        try withDatabase { connection, _ in
            let statement = try connection.statement("SELECT ?1, length(?1)")
            // A heap string made here, and a small one: both read where they are while bound.
            for text in [String(repeating: "caf\u{E9} ", count: 20), "k1"] {
                var row: [SQLiteValue] = []
                try statement.withText(text, at: 1) { () throws(SQLiteError) in
                    defer { statement.reset() }
                    #expect(try statement.step())
                    row = [statement.column(0), statement.column(1)]
                }
                #expect(row == [.text(text), .integer(Int64(text.count))])
                #expect(try statement.step())
                #expect(statement.column(0) == .null, "unbound once the body returned")
                statement.reset()
            }
            let failure = SQLiteError(misuse: "the body's own", code: 1, sql: nil, path: nil)
            do {
                try statement.withText("x", at: 1) { () throws(SQLiteError) in throw failure }
                Issue.record("the body's error was not thrown")
            } catch {
                #expect((error as? SQLiteError) == failure)
            }
            #expect(try statement.step())
            #expect(statement.column(0) == .null, "unbound after the body threw")
            statement.reset()
        }
    }

    @Test("reuse clears bindings from the previous use")
    func cacheClearsBindings() throws {
        try withDatabase { connection, _ in
            let statement = try connection.statement("SELECT ?")
            try statement.bind(.integer(42))
            #expect(try statement.step())
            let again = try connection.statement("SELECT ?")
            #expect(try again.step())
            #expect(again.column(0) == .null)
        }
    }

    @Test("a cached statement whose step fails is evicted and finalized")
    func failingStatementIsEvicted() throws {
        try withDatabase { connection, _ in
            let sql = "INSERT INTO prefs(key, value) VALUES (?, ?)"
            try connection.run(sql, ["dup", 1])
            let cached = try connection.statement(sql)
            try cached.bind("dup", 2)
            let error = #expect(throws: SQLiteError.self) { try cached.step() }
            #expect(error?.code == 19)
            #expect(error?.extendedCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(cached.isFinalized)
            #expect(throws: SQLiteError.self) { try cached.step() }

            let fresh = try connection.statement(sql)
            #expect(fresh !== cached)
            try fresh.bind("other", 3)
            #expect(try !fresh.step())
            #expect(try count(connection) == 2)
        }
    }

    @Test("withStatement resets even when the body throws")
    func withStatementResets() throws {
        try withDatabase { connection, _ in
            try connection.run("INSERT INTO prefs VALUES ('k', 1)")
            #expect(throws: SQLiteTestError(label: "body")) {
                try connection.withStatement("SELECT * FROM prefs") { statement in
                    _ = try statement.step()
                    throw SQLiteTestError(label: "body")
                }
            }
            // A statement left on a row would keep a read transaction open.
            #expect(!connection.isInTransaction)
            let value = try connection.withStatement("SELECT value FROM prefs WHERE key = ?") { statement in
                try statement.bind("k")
                return try statement.step() ? statement.columnInt64(0) : nil
            }
            #expect(value == 1)
        }
    }

    @Test("prepare rejects several statements and empty SQL, accepts trailing comments")
    func prepareChecks() throws {
        try withDatabase { connection, _ in
            #expect(throws: SQLiteError.self) { try connection.prepareUncached("SELECT 1; SELECT 2") }
            #expect(throws: SQLiteError.self) { try connection.prepareUncached("   ") }
            let error = #expect(throws: SQLiteError.self) { try connection.statement("SELEC 1") }
            #expect(error?.code == 1)
            #expect(error?.message.contains("syntax error") == true)
            let statement = try connection.prepareUncached("SELECT 1; -- done\n ;")
            #expect(try statement.step())
        }
    }

    @Test("a thrown error rolls the transaction back and is rethrown unchanged")
    func transactionRollback() throws {
        try withDatabase { connection, _ throws in
            #expect(throws: SQLiteTestError(label: "boom")) {
                try connection.transaction {
                    try connection.run("INSERT INTO prefs VALUES ('a', 1)")
                    #expect(connection.isInTransaction)
                    throw SQLiteTestError(label: "boom")
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 0)

            // An SQLite error from the body is the one rethrown.
            let error = #expect(throws: SQLiteError.self) {
                try connection.transaction(.deferred) {
                    try connection.run("INSERT INTO prefs VALUES ('b', 1)")
                    try connection.run("INSERT INTO prefs VALUES ('b', 2)")
                }
            }
            #expect(error?.code == 19)
            #expect(error?.sql == "INSERT INTO prefs VALUES ('b', 2)")
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 0)
        }
    }

    @Test("a body that already ended the transaction does not trigger a ROLLBACK error")
    func transactionAlreadyGone() throws {
        try withDatabase { connection, _ throws in
            #expect(throws: SQLiteTestError(label: "after rollback")) {
                try connection.transaction(.exclusive) {
                    try connection.run("INSERT INTO prefs VALUES ('a', 1)")
                    try connection.run("ROLLBACK")
                    throw SQLiteTestError(label: "after rollback")
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 0)
        }
    }

    @Test("a successful transaction commits and returns the body's value")
    func transactionCommit() throws {
        try withDatabase { connection, _ in
            let changed = try connection.transaction {
                try connection.run("INSERT INTO prefs VALUES ('a', 1), ('b', 2)")
                return connection.changes
            }
            #expect(changed == 2)
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 2)
        }
    }

    @Test("BEGIN IMMEDIATE fails with SQLITE_BUSY after the busy timeout while another connection writes")
    func busy() throws {
        try withDatabase { connection, path in
            connection.close()
            let waiting = try SQLiteConnection(path: path, options: .init(busyTimeout: .milliseconds(50)))
            let holder = try SQLiteConnection(path: path)
            try holder.run("BEGIN IMMEDIATE")

            let clock = ContinuousClock()
            let start = clock.now
            let error = #expect(throws: SQLiteError.self) {
                try waiting.transaction(.immediate) { try waiting.run("INSERT INTO prefs VALUES ('x', 1)") }
            }
            let elapsed = clock.now - start
            #expect(error?.code == 5)
            #expect(error?.extendedCode == 5)
            #expect(error?.description.contains("SQLITE_BUSY") == true)
            #expect(
                error?.description == """
                    SQLite error 5 (SQLITE_BUSY: database is locked) in "\(path)" while executing "BEGIN IMMEDIATE"
                    """)
            #expect(error.map { SQLiteError.busy ~= $0 } == true)
            // It waited for the busy timeout before giving up (without one, SQLite fails at once). SQLite's busy handler
            // sleeps at least the timeout, so this lower bound cannot fail by load; no upper bound is asserted.
            #expect(elapsed >= .milliseconds(40))
            #expect(!waiting.isInTransaction)

            // Once the holder commits, the same statement (re-prepared after eviction) succeeds.
            try holder.run("COMMIT")
            try waiting.transaction { try waiting.run("INSERT INTO prefs VALUES ('x', 1)") }
            #expect(try count(holder) == 1)
        }
    }

    @Test("dataVersion changes after another connection commits, not after our own")
    func dataVersion() throws {
        try withDatabase { connection, path in
            let other = try SQLiteConnection(path: path)
            let initial = try connection.dataVersion()
            #expect(try connection.dataVersion() == initial)

            try connection.run("INSERT INTO prefs VALUES ('own', 1)")
            try connection.transaction { try connection.run("INSERT INTO prefs VALUES ('own2', 1)") }
            #expect(try connection.dataVersion() == initial)

            try other.run("INSERT INTO prefs VALUES ('theirs', 1)")
            let afterOther = try connection.dataVersion()
            #expect(afterOther != initial)
            #expect(try connection.dataVersion() == afterOther)
        }
    }

    @Test("integrityCheck returns no problems for a sound database")
    func integrity() throws {
        try withDatabase { connection, _ in
            try connection.run("INSERT INTO prefs VALUES ('a', x'00ff')")
            #expect(try connection.integrityCheck() == [])
        }
    }

    @Test("close is idempotent and later use throws SQLITE_MISUSE")
    func closeTwice() throws {
        try withDatabase { connection, path in
            let uncached = try connection.prepareUncached("SELECT 1")
            let cached = try connection.statement("SELECT 2")
            connection.close()
            connection.close()
            #expect(connection.isClosed)
            #expect(cached.isFinalized)
            let error = #expect(throws: SQLiteError.self) { try connection.run("SELECT 1") }
            #expect(error?.code == 21)
            #expect(error?.path == path)
            #expect(throws: SQLiteError.self) { try connection.dataVersion() }
            #expect(throws: SQLiteError.self) { try connection.execute("SELECT 1") }
            _ = uncached  // finalized on release, after the connection closed (sqlite3_close_v2)
        }
    }

    @Test("in-memory databases work")
    func inMemory() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        #expect(try connection.firstValue("SELECT v FROM t") == .integer(1))
    }
}
