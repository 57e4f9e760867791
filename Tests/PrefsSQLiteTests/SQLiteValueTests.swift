import Foundation
import Testing
import PrefsSQLite

@Suite("SQLite values")
struct SQLiteValueTests {
    /// Writes `value` into an untyped column (no affinity, so no conversion) and reads it back,
    /// with SQLite's own `typeof()` for the stored class.
    private func roundTrip(_ value: SQLiteValue, in connection: SQLiteConnection) throws -> (SQLiteValue, String) {
        try connection.run("DELETE FROM t")
        try connection.run("INSERT INTO t(v) VALUES (?)", [value])
        let row = try #require(try connection.firstRow("SELECT v, typeof(v) FROM t"))
        return (row[0], row[1].stringValue ?? "?")
    }

    private func withTable(_ body: (SQLiteConnection) throws -> Void) throws {
        try withSQLiteTemporaryDirectory { directory in
            let connection = try SQLiteConnection(path: directory.appendingPathComponent("v.sqlite").path)
            defer { connection.close() }
            try connection.execute("CREATE TABLE t(v)")
            try body(connection)
        }
    }

    @Test(
        "every storage class round-trips",
        arguments: [
            SQLiteValue.null,
            .integer(0), .integer(1), .integer(-1), .integer(.min), .integer(.max),
            .real(0.5), .real(-1.25), .real(.pi), .real(.infinity), .real(-.infinity),
            .real(.greatestFiniteMagnitude), .real(-.greatestFiniteMagnitude),
            .real(.leastNonzeroMagnitude), .real(.leastNormalMagnitude),
            .text(""), .text("hello"), .text("héllo wörld 🌍🇫🇷"), .text("a\u{0}b"), .text("\u{0}"),
            .text(String(repeating: "long text ", count: 1000)),
            .blob(Data()), .blob(Data([0])), .blob(Data([0, 1, 2, 0xfe, 0xff])),
            .blob(Data(repeating: 0xab, count: 100_000)),
        ])
    func roundTrip(_ value: SQLiteValue) throws {
        try withTable { connection in
            let (read, type) = try roundTrip(value, in: connection)
            #expect(read == value)
            #expect(type == value.typeName)
        }
    }

    @Test("text with NUL characters keeps every byte")
    func nulText() throws {
        try withTable { connection in
            let (read, _) = try roundTrip(.text("a\u{0}b"), in: connection)
            #expect(read.stringValue?.utf8.count == 3)
            #expect(try connection.firstValue("SELECT length(CAST(v AS BLOB)) FROM t") == .integer(3))
            #expect(try connection.firstValue("SELECT v = ? FROM t", [.text("a\u{0}b")]) == .integer(1))
            #expect(try connection.firstValue("SELECT v = ? FROM t", [.text("a")]) == .integer(0))
        }
    }

    @Test("an empty blob is a zero-length blob, not NULL")
    func emptyBlobIsNotNull() throws {
        try withTable { connection in
            try connection.run("INSERT INTO t(v) VALUES (?), (?)", [.blob(Data()), .null])
            let rows = try connection.rows("SELECT typeof(v), length(v), v IS NULL FROM t ORDER BY rowid")
            #expect(rows == [["blob", 0, 0], ["null", .null, 1]])
            let statement = try connection.prepareUncached("SELECT v FROM t ORDER BY rowid")
            #expect(try statement.step())
            #expect(statement.columnBlob(0) == Data())
            #expect(!statement.columnIsNull(0))
            #expect(try statement.step())
            #expect(statement.columnBlob(0) == nil)
            #expect(statement.columnIsNull(0))
        }
    }

    @Test("NaN is stored as NULL, as SQLite documents")
    func nanBecomesNull() throws {
        try withTable { connection in
            let (read, type) = try roundTrip(.real(.nan), in: connection)
            #expect(read == .null)
            #expect(type == "null")
        }
    }

    @Test("negative zero reads back equal to zero")
    func negativeZero() throws {
        try withTable { connection in
            let (read, type) = try roundTrip(.real(-0.0), in: connection)
            #expect(type == "real")
            #expect(read.doubleValue == 0.0)
        }
    }

    @Test("fast column accessors")
    func fastAccessors() throws {
        try withTable { connection in
            let statement = try connection.prepareUncached("SELECT ?, ?, ?, ?, ?")
            try statement.bind([.integer(.min), .real(2.5), .text("x\u{0}y"), .blob(Data([1, 2])), .null])
            #expect(try statement.step())
            #expect(statement.columnCount == 5)
            #expect(statement.columnInt64(0) == .min)
            #expect(statement.columnDouble(1) == 2.5)
            #expect(statement.columnText(2) == "x\u{0}y")
            #expect(statement.columnBlob(3) == Data([1, 2]))
            #expect(statement.columnText(4) == nil)
            #expect(statement.columnBlob(4) == nil)
            #expect(statement.columnInt64(4) == 0)
            #expect(statement.column(4) == .null)
            #expect(try !statement.step())
        }
    }

    @Test("fixed-arity bind overloads and parameter count checks")
    func bindOverloads() throws {
        try withTable { connection in
            let one = try connection.statement("SELECT ?")
            try one.bind(.integer(1))
            #expect(try one.step())
            #expect(one.column(0) == .integer(1))

            let two = try connection.statement("SELECT ?, ?")
            try two.bind("a", 2.5)
            #expect(try two.step())
            #expect(two.column(0) == .text("a") && two.column(1) == .real(2.5))

            let three = try connection.statement("SELECT ?, ?, ?")
            try three.bind(.null, .blob(Data([9])), 3)
            #expect(try three.step())
            #expect(three.column(1) == .blob(Data([9])) && three.column(2) == .integer(3))

            let error = #expect(throws: SQLiteError.self) { try three.bind("only one") }
            #expect(error?.code == 25)
            #expect(error?.sql == "SELECT ?, ?, ?")
            #expect(throws: SQLiteError.self) { try connection.run("SELECT ?", []) }
            #expect(throws: SQLiteError.self) { try connection.run("SELECT 1", [1]) }
        }
    }

    @Test("SQLiteValue helpers")
    func helpers() {
        #expect(SQLiteValue.integer(3).doubleValue == 3)
        #expect(SQLiteValue.text("x").int64Value == nil)
        #expect(SQLiteValue.null.isNull)
        #expect(SQLiteValue.blob(Data([1, 2, 3])).description == "<3 bytes>")
        #expect(SQLiteValue.text("a\"b").description == "\"a\\\"b\"")
        let literals: [SQLiteValue] = [1, 1.5, "s"]
        #expect(literals == [.integer(1), .real(1.5), .text("s")])
    }
}
