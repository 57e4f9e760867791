import Foundation
import Testing
import PrefsSQLite

@Suite("SQLite errors")
struct SQLiteErrorTests {
    @Test("description format")
    func descriptionFormat() {
        let busy = SQLiteError(extendedCode: 5, message: "database is locked", sql: "BEGIN IMMEDIATE", path: "/tmp/x.sqlite")
        #expect(busy.description == #"SQLite error 5 (SQLITE_BUSY: database is locked) in "/tmp/x.sqlite" while executing "BEGIN IMMEDIATE""#)

        let unique = SQLiteError(extendedCode: 2067, message: "UNIQUE constraint failed: t.k")
        #expect(unique.code == 19)
        #expect(unique.description == "SQLite error 19 (SQLITE_CONSTRAINT, extended 2067: UNIQUE constraint failed: t.k)")

        let unknown = SQLiteError(extendedCode: 99, message: "?", path: ":memory:")
        #expect(unknown.description == #"SQLite error 99 (SQLITE_UNKNOWN: ?) in ":memory:""#)
    }

    @Test("every primary code has its symbolic name")
    func names() {
        let expected: [Int32: String] = [
            1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
            6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT",
            10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL",
            14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY", 17: "SQLITE_SCHEMA",
            18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE",
            22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE",
            26: "SQLITE_NOTADB", 27: "SQLITE_NOTICE", 28: "SQLITE_WARNING",
        ]
        for (code, name) in expected {
            #expect(SQLiteError.Code(rawValue: code).description == name)
            // Extended codes are named by their primary code.
            #expect(SQLiteError.Code(rawValue: code | (3 << 8)).description == name)
        }
    }

    @Test("matching with Code constants")
    func matching() {
        let error: any Error = SQLiteError(extendedCode: 517, message: "database is locked")  // SQLITE_BUSY_SNAPSHOT
        do {
            throw error
        } catch SQLiteError.locked {
            Issue.record("wrong code matched")
        } catch SQLiteError.busy {
            // expected
        } catch {
            Issue.record("no match for \(error)")
        }

        let sqliteError = SQLiteError(extendedCode: 2067, message: "UNIQUE constraint failed: t.k")
        switch sqliteError.code {
        case SQLiteError.busy, SQLiteError.locked: Issue.record("wrong code matched")
        case SQLiteError.constraint: break
        default: Issue.record("no match")
        }
        switch sqliteError {
        case SQLiteError.constraint: break
        default: Issue.record("no match")
        }
        if case SQLiteError.Code.constraint = sqliteError.extendedCode {} else { Issue.record("no match") }
        // An extended pattern matches only itself.
        #expect(SQLiteError.Code(rawValue: 2067) ~= sqliteError)
        #expect(!(SQLiteError.Code(rawValue: 1555) ~= sqliteError))
        #expect(!(SQLiteError.busy ~= (SQLiteTestError(label: "other") as any Error)))
        #expect(sqliteError.primaryCode == .constraint)
    }
}
