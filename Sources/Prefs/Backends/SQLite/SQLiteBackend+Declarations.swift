import Foundation
internal import PrefsJSON
import PrefsSQLite

// Key declarations in an SQLite store: table `prefs_declared(key, type, initial)`, and the former names of renamed keys in
// `prefs_renamed(key, position, former)`, a table created by the first declaration that has any (older releases, and
// stores without renames, have none).
extension SQLiteBackend {
    func declarations() throws -> [String: KeyDeclaration] {
        try openIfClosed()
        return try sqlite { () throws(SQLiteError) in
            let rows = try connection.rows("SELECT key, type, initial FROM prefs_declared")
            var result: [String: KeyDeclaration] = [:]
            result.reserveCapacity(rows.count)
            for row in rows {
                guard case .text(let key) = row[0], let declaration = Self.declaration(type: row[1], initial: row[2]) else { continue }
                let name = Self.canonicalName(key)
                if result[name] == nil || name.utf8.elementsEqual(key.utf8) { result[name] = declaration }
            }
            if try hasRenameTable() {
                for row in try connection.rows("SELECT key, former FROM prefs_renamed ORDER BY key, position") {
                    guard case .text(let key) = row[0], case .text(let former) = row[1] else { continue }
                    result[Self.canonicalName(key)]?.formerNames.append(former)
                }
            }
            return result
        }
    }

    func declaration(forKey key: String) throws -> KeyDeclaration? {
        try openIfClosed()
        return try sqlite { () throws(SQLiteError) -> KeyDeclaration? in
            let name = Self.canonicalName(key)
            let statement = try connection.statement("SELECT type, initial FROM prefs_declared WHERE key = ?1")
            defer { statement.reset() }
            try statement.bind(.text(name))
            guard try statement.step(), var declaration = Self.declaration(type: statement.column(0), initial: statement.column(1)) else {
                return nil
            }
            if try hasRenameTable() {
                let formers = try connection.statement("SELECT former FROM prefs_renamed WHERE key = ?1 ORDER BY position")
                defer { formers.reset() }
                try formers.bind(.text(name))
                while try formers.step() {
                    if case .text(let former) = formers.column(0) { declaration.formerNames.append(former) }
                }
            }
            return declaration
        }
    }

    /// Whether the store has the table of declared renames, created by the first declaration of a key with former names
    /// (stores written before it existed, and stores without renames, have none; older releases ignore it).
    func hasRenameTable() throws(SQLiteError) -> Bool {
        let statement = try connection.statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'prefs_renamed'")
        defer { statement.reset() }
        return try statement.step()
    }

    /// Records the former names of a declared key, replacing those recorded before. Inside the commit's transaction.
    /// `tableExists` is what the caller last learned about the table (``hasRenameTable()`` once per commit), and what
    /// this call leaves it.
    func recordRenames(_ key: String, _ formerNames: [String], tableExists: inout Bool) throws(SQLiteError) {
        if formerNames.isEmpty {
            guard tableExists else { return }
        } else if !tableExists {
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS prefs_renamed (key TEXT NOT NULL, position INTEGER NOT NULL, former TEXT NOT NULL, \
                PRIMARY KEY (key, position)) WITHOUT ROWID
                """)
            tableExists = true
        }
        let delete = try connection.statement("DELETE FROM prefs_renamed WHERE key = ?1")
        defer { delete.reset() }
        try delete.bind(.text(key))
        _ = try delete.step()
        for (position, former) in formerNames.enumerated() {
            let insert = try connection.statement("INSERT INTO prefs_renamed (key, position, former) VALUES (?1, ?2, ?3)")
            defer { insert.reset() }
            try insert.bind(.text(key), .integer(Int64(position)), .text(former))
            _ = try insert.step()
        }
    }

    private static func declaration(type typeColumn: SQLiteValue, initial: SQLiteValue) -> KeyDeclaration? {
        guard case .text(let typeName) = typeColumn, let type = ValueType(typeName) else { return nil }
        var json: JSON?
        if case .text(let text) = initial { json = try? JSON.parse(text) }  // an unreadable initial is shown as unknown; the app records it again
        return KeyDeclaration(type: type, initial: json)
    }
}
