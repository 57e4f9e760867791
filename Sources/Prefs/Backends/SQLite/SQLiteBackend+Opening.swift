import Foundation
import PrefsSQLite

// Opening an SQLite store: the checks made before SQLite touches a file (its header, leftover sidecars), the
// connection's configuration, the schema check that refuses a database that is not a Prefs store (or is one from a
// newer release), the switch to WAL mode, and the read-only open of a store this user may not write.
extension SQLiteBackend {
    /// Opens or creates the database and checks that it is a Prefs store; never writes to a file that is not one.
    static func open(path: String, options: Options) throws(PrefsError) -> SQLiteConnection {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, access(directory, F_OK) != 0 { try FileSystem.createDirectory(directory) }
        try checkFileBeforeOpening(path)
        try checkSidecarsBeforeOpening(path)
        if access(path, F_OK) == 0, let reason = PrefsError.readOnlyReason(path: path) {
            return try openReadOnly(path: path, reason: reason, newest: options.migrations.newest)
        }
        let connection = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, options: .init(busyTimeout: options.busyTimeout)) }
        do throws(PrefsError) {
            try configure(connection, options: options)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Opens a store this user can read but not write, read-only and without writing anything. SQLite reads a WAL
    /// database through its `-shm` index, which it cannot create here: a store whose WAL is empty or absent (its
    /// writers closed it) opens as immutable, one whose WAL holds writes opens read-only through the existing index.
    private static func openReadOnly(path: String, reason: String, newest: Int64) throws(PrefsError) -> SQLiteConnection {
        var wal = stat()
        let walHoldsWrites = lstat(path + "-wal", &wal) == 0 && wal.st_size > 0
        guard !walHoldsWrites || access(path + "-shm", R_OK) == 0 else {
            throw .readOnlyStore(path: path, reason: reason + "; its WAL holds recent writes, which cannot be read without the -shm index beside it")
        }
        let connection = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, options: .init(immutable: !walHoldsWrites)) }
        do throws(PrefsError) {
            let (knownID, knownVersion) = try sqlite { () throws(SQLiteError) in
                (try integer(connection, "PRAGMA application_id"), try integer(connection, "PRAGMA user_version"))
            }
            guard knownID == Self.applicationID else {
                throw .readOnlyStore(path: path, reason: reason + "; the file is not a Prefs store yet, and cannot be made one")
            }
            guard knownVersion <= newest else {
                throw .unsupportedFormatVersion(path: connection.path, found: Int(knownVersion), supported: Int(newest))
            }
            try checkSchema(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Refuses a database whose `-wal`, `-shm` or `-journal` name holds a symbolic link or anything but a regular
    /// file: SQLite opens those with `O_NOFOLLOW` and would fail later with a misleading `SQLITE_READONLY` or
    /// `SQLITE_CANTOPEN`, after creating the database file; such a link is usually planted by another user in a
    /// shared directory. Checked before anything is created.
    private static func checkSidecarsBeforeOpening(_ path: String) throws(PrefsError) {
        for suffix in sidecarSuffixes {
            var info = stat()
            guard lstat(path + suffix, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG: continue
            // Not corruptStore: recovery would move the database aside for a problem beside it.
            case S_IFLNK: throw .io(path: path + suffix, operation: "open (a symbolic link, which SQLite does not follow)", errno: ELOOP)
            default: throw .io(path: path + suffix, operation: "open (not a regular file)", errno: EINVAL)
            }
        }
    }

    /// Refuses what SQLite should not open: something other than a regular file (a FIFO would block the open), or
    /// a file too short to hold the SQLite header. Only `stat`: this process may already have the file open through
    /// SQLite, and closing a descriptor of our own would drop that connection's POSIX locks
    /// (https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
    /// A longer file that is not a database fails at the first read with `SQLITE_NOTADB`, before anything is written.
    private static func checkFileBeforeOpening(_ path: String) throws(PrefsError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .io(path: path, operation: "stat", errno: errno)
        }
        try FileSystem.requireRegularFile(info, path: path)
        if info.st_size > 0, info.st_size < header.count {
            throw .corruptStore(path: path, reason: "the file is \(info.st_size) bytes, too short for an SQLite database")
        }
    }

    /// Checks the schema, and on a new file creates it, or on a file of an older version brings it to the newest (see
    /// ``SQLiteMigrations``), under the write lock, so processes opening the file at the same moment agree; then
    /// switches to WAL (a no-op once the file is in WAL mode).
    private static func configure(_ connection: SQLiteConnection, options: Options) throws(PrefsError) {
        let newest = options.migrations.newest
        // The common case, a Prefs store of the newest version, needs no lock: the application id and the version are
        // written in the same transaction as the tables, so seeing them means the schema is there (it is checked all
        // the same: anyone with the sqlite3 shell can drop a table afterwards).
        let (knownID, knownVersion) = try sqlite { () throws(SQLiteError) in
            (try integer(connection, "PRAGMA application_id"), try integer(connection, "PRAGMA user_version"))
        }
        if knownID == Self.applicationID, knownVersion >= newest {
            guard knownVersion == newest else {
                throw .unsupportedFormatVersion(path: connection.path, found: Int(knownVersion), supported: Int(newest))
            }
            try checkSchema(connection)
            try setPragmas(connection, options: options)
            return
        }
        try sqlite { () throws(SQLiteError) in try connection.execute("BEGIN IMMEDIATE") }
        do throws(PrefsError) {
            // Read again under the write lock: another process may have created or upgraded the store meanwhile.
            let (applicationID, version, objects) = try sqlite { () throws(SQLiteError) in
                (
                    try integer(connection, "PRAGMA application_id"),
                    try integer(connection, "PRAGMA user_version"),
                    try integer(connection, "SELECT count(*) FROM sqlite_master")
                )
            }
            if applicationID == Self.applicationID {
                guard version <= newest else {
                    throw .unsupportedFormatVersion(path: connection.path, found: Int(version), supported: Int(newest))
                }
                if version < newest { try sqlite { () throws(SQLiteError) in try options.migrations.migrate(connection, from: version) } }
                try checkSchema(connection)
            } else if applicationID != 0 || objects != 0 || version != 0 {
                // Only a database nobody has used yet becomes a Prefs store: a user_version set by another program
                // marks its file even before that program created a table.
                throw .corruptStore(
                    path: connection.path,
                    reason:
                        "an SQLite database, but not a Prefs store (application_id \(applicationID), user_version \(version), \(objects) schema objects); it was left untouched"
                )
            } else {
                try sqlite { () throws(SQLiteError) in try options.migrations.migrate(connection, from: 0) }
            }
            try sqlite { () throws(SQLiteError) in try connection.execute("COMMIT") }
        } catch {
            if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") }  // the original error is what matters
            throw error
        }
        try setPragmas(connection, options: options)
    }

    /// The statements whose preparation proves the schema usable: each table with its columns, and the key
    /// constraint the upserts' `ON CONFLICT (key)` need; each with what its failure means, where SQLite's own
    /// message would not say it.
    private static let schemaProbes: [(sql: String, missing: String?)] = [
        ("SELECT key, type, value FROM prefs LIMIT 0", nil),
        ("SELECT key, type, initial FROM prefs_declared LIMIT 0", nil),
        ("INSERT INTO prefs (key, type, value) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO NOTHING", "prefs.key is not a primary key"),
        ("INSERT INTO prefs_declared (key, type, initial) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO NOTHING", "prefs_declared.key is not a primary key"),
    ]

    /// Checks that a file marked as a Prefs store still has the tables, columns and key constraints the store uses,
    /// by preparing (never running) statements over them: this reads the schema only, writes nothing and takes no
    /// write lock. A damaged schema (a table dropped or recreated by hand) is ``PrefsError/corruptStore(path:reason:)``
    /// naming what is missing, rather than an SQLite error at the first read or write.
    private static func checkSchema(_ connection: SQLiteConnection) throws(PrefsError) {
        for (sql, missing) in schemaProbes {
            do {
                try sqlite { () throws(SQLiteError) in _ = try connection.prepareUncached(sql) }  // finalized when released
            } catch .database(let error) where error.code & 0xff == 1 {  // SQLITE_ERROR: no such table, column or constraint
                throw .corruptStore(
                    path: connection.path,
                    reason: """
                        a Prefs store whose schema is damaged (\(missing ?? error.message)); it needs tables \
                        prefs(key PRIMARY KEY, type, value) and prefs_declared(key PRIMARY KEY, type, initial). \
                        It was left untouched
                        """)
            }
        }
    }

    private static func setPragmas(_ connection: SQLiteConnection, options: Options) throws(PrefsError) {
        try sqlite { () throws(SQLiteError) in
            try switchToWAL(connection, timeout: options.busyTimeout)
            try connection.execute(options.durability == .powerLoss ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
    }

    /// `PRAGMA journal_mode = WAL` needs an exclusive lock and does not wait for one (no busy handler), so a
    /// new file opened by several processes at once retries here until the busy timeout.
    private static func switchToWAL(_ connection: SQLiteConnection, timeout: Duration) throws(SQLiteError) {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                if case .text(let mode)? = try connection.rows("PRAGMA journal_mode").first?.first, mode.lowercased() == "wal" { return }
                try connection.execute("PRAGMA journal_mode = WAL")
                return
            } catch  where error.code == 5 && ContinuousClock.now < deadline {  // SQLITE_BUSY
                usleep(2_000)
            }
        }
    }

    private static func integer(_ connection: SQLiteConnection, _ sql: String) throws(SQLiteError) -> Int64 {
        if case .integer(let value)? = try connection.rows(sql).first?.first { return value }
        return 0
    }
}
