import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsSQLite

@Suite("SQLite files")
struct SQLiteFileTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let permissions = try #require(attributes[.posixPermissions] as? NSNumber)
        return permissions.intValue & 0o777
    }

    @Test("a file that is not a database fails with SQLITE_NOTADB and is left untouched")
    func notADatabase() throws {
        try withSQLiteTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("x.sqlite").path
            let garbage = Data((0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            try garbage.write(to: URL(fileURLWithPath: path))

            let connection = try SQLiteConnection(path: path)
            let error = #expect(throws: SQLiteError.self) { try connection.run("PRAGMA schema_version") }
            #expect(error?.code == 26)
            #expect(error?.path == path)
            #expect(error?.description.contains("SQLITE_NOTADB") == true)
            #expect(error.map { SQLiteError.notADatabase ~= $0 } == true)

            let checked = #expect(throws: SQLiteError.self) { try connection.checkIsDatabase() }
            #expect(checked?.code == 26)
            #expect(checked?.path == path)
            #expect(throws: SQLiteError.self) { try connection.integrityCheck() }
            connection.close()

            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["x.sqlite"])
        }
    }

    @Test("checkIsDatabase accepts new and existing databases")
    func isDatabase() throws {
        try withSQLiteTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("ok.sqlite").path
            let connection = try SQLiteConnection(path: path)
            try connection.checkIsDatabase()
            try connection.execute("CREATE TABLE t(v)")
            connection.close()
            let reopened = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try reopened.checkIsDatabase()
            let error = #expect(throws: SQLiteError.self) { try reopened.run("INSERT INTO t VALUES (1)") }
            #expect(error?.code == 8)
        }
    }

    @Test("the database and its -wal and -shm files are created 0600 under umask 022")
    func fileModes() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        try withSQLiteTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("modes.sqlite").path
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            #expect(try connection.firstValue("PRAGMA journal_mode=WAL") == .text("wal"))
            try connection.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(FileManager.default.fileExists(atPath: file), "\(file)")
                #expect(try mode(file) == 0o600, "\(file)")
            }
        }
    }

    @Test("an existing file keeps its mode")
    func existingFileMode() throws {
        try withSQLiteTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("shared.sqlite").path
            #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o640]))
            let connection = try SQLiteConnection(path: path)
            try connection.execute("CREATE TABLE t(v)")
            connection.close()
            #expect(try mode(path) == 0o640)
        }
    }

    @Test("opening fails with SQLITE_CANTOPEN and the path when the file cannot be created")
    func cantOpen() throws {
        try withSQLiteTemporaryDirectory { directory in
            let missingDirectory = directory.appendingPathComponent("missing/db.sqlite").path
            let error = #expect(throws: SQLiteError.self) { try SQLiteConnection(path: missingDirectory) }
            #expect(error?.code == 14)
            #expect(error?.path == missingDirectory)
            #expect(error.map { SQLiteError.cantOpen ~= $0 } == true)

            let notCreated = directory.appendingPathComponent("absent.sqlite").path
            #expect(throws: SQLiteError.self) {
                try SQLiteConnection(path: notCreated, options: .init(create: false))
            }
            #expect(throws: SQLiteError.self) {
                try SQLiteConnection(path: notCreated, options: .init(readOnly: true))
            }
            #expect(!FileManager.default.fileExists(atPath: notCreated))
        }
    }
}
