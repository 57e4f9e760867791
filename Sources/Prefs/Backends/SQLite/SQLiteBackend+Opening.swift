import Foundation
import PrefsSQLite

// Opening an SQLite store: the checks made before SQLite touches a file (its header, leftover sidecars), the
// connection's configuration, the schema check that refuses a database that is not a Prefs store (or is one from a
// newer release), the switch to WAL mode, and the read-only open of a store this user may not write.
extension SQLiteBackend {
    /// Opens or creates the database and checks that it is a Prefs store; never writes to a file that is not one.
    ///
    /// The folder is resolved (created when missing) and the file and its sidecars checked through its descriptor;
    /// SQLite, which opens files by name, gets the folder's resolved path and `SQLITE_OPEN_NOFOLLOW`. In a shared folder
    /// (sticky and writable by others), the database and its `-wal` and `-shm` files are created by this process first
    /// (`O_EXCL`, mode 0600) and kept when it closes (``SQLiteConnection/keepWALFilesOnClose()``), so another user never
    /// gets to choose them: see ``checkSidecarsBeforeOpening(_:_:)``.
    ///
    /// A `-wal`, `-shm` or `-journal` another user put beside an existing store in a shared folder does not keep this
    /// user from reading it: the store opens read-only without them (see ``openBeside(_:_:_:newest:)``), and
    /// ``Opened/squatters`` names them; a new store is refused at once, naming the first.
    static func open(_ folder: StoreFolder, options: Options) throws(PrefsError) -> Opened {
        let directory = try folder.created()
        let name = folder.name
        let path = directory.path(of: name)
        let exists = try checkFileBeforeOpening(directory, name)
        let squatters = try checkSidecarsBeforeOpening(directory, name)
        if let first = squatters.first {
            guard exists else { throw first.refusal }  // a new store would need the name: nothing is created
            return Opened(connection: try openBeside(first, directory, name, newest: options.migrations.newest), squatters: squatters)
        }
        if exists, let reason = PrefsError.readOnlyReason(path: path) {
            return Opened(connection: try openReadOnly(path: path, reason: reason, newest: options.migrations.newest))
        }
        let created = directory.isShared ? try claimFiles(directory, name) : []
        do throws(PrefsError) {
            let connection = try sqlite { () throws(SQLiteError) in
                try SQLiteConnection(path: path, options: .init(busyTimeout: options.busyTimeout, noFollow: true))
            }
            do throws(PrefsError) {
                try configure(connection, options: options, keepingWALFiles: directory.isShared)
                if directory.isShared { try claimRollbackJournal(directory, name) }
            } catch {
                connection.close()
                throw error
            }
            return Opened(connection: connection)
        } catch {
            for file in created { unlinkat(directory.descriptor, file, 0) }  // do not leave behind what was made above
            throw error
        }
    }

    /// An open database, and the files another user put beside it that made it open read-only (none usually).
    struct Opened {
        var connection: SQLiteConnection
        var squatters: [Squatter] = []
    }

    /// A file or link another user put at the name of one of a store's sidecars, in a shared folder.
    struct Squatter: Equatable {
        var path: String
        var owner: UInt32
        var isLink: Bool

        /// The error a write, or anything else that needs the file, fails with: it names the file and its owner.
        var refusal: PrefsError { isLink ? .untrustedLink(path: path, owner: owner) : .untrustedFile(path: path, owner: owner) }
    }

    /// Opens, read-only, an existing store beside which another user put a `-wal`, `-shm` or `-journal` (`squatter`, the
    /// first) in a shared folder, without SQLite ever opening those: as immutable (the `immutable=1` URI parameter: no
    /// WAL, no `-shm`, no rollback journal, no lock). That reads every committed write only when the database file holds
    /// them all, when this user's `-wal` is absent or empty: a store's writers leave it so when they close (in a shared
    /// folder they keep it, truncated), and no writer can open the store while the other user's file is there. A `-wal`
    /// of this user's that holds writes (a writer open since before the file was put there, or one that crashed) cannot
    /// be read without its `-shm` and a rollback journal check, so the store is refused, naming the other user's file.
    private static func openBeside(_ squatter: Squatter, _ directory: Directory, _ name: String, newest: Int64) throws(PrefsError) -> SQLiteConnection {
        let wal = name + "-wal"
        if try directory.foreignOwner(of: wal) == nil, let info = try directory.status(of: wal), info.st_size > 0 { throw squatter.refusal }
        let path = directory.path(of: name)
        let connection = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, options: .init(immutable: true, noFollow: true)) }
        do throws(PrefsError) {
            try checkIdentity(connection, newest: newest) { () throws(PrefsError) in throw squatter.refusal }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Creates, in a shared folder, the database and its `-wal` and `-shm` files that are missing, empty and with mode
    /// 0600 (`O_CREAT | O_EXCL`, a link never followed), before SQLite opens them by name: another user can no longer
    /// put a file of theirs there, which SQLite would write the store's pages into. Returns the names it created.
    private static func claimFiles(_ directory: Directory, _ name: String) throws(PrefsError) -> [String] {
        var created: [String] = []
        for file in [name, name + "-wal", name + "-shm"] {
            let fd = openat(directory.descriptor, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                closeDescriptor(fd)
                created.append(file)
            } else if errno != EEXIST {
                let code = errno
                for made in created { unlinkat(directory.descriptor, made, 0) }
                throw .io(path: directory.path(of: file), operation: "create", errno: code)
            }
        }
        // Whatever was there already, or was put there since the check: checked again, now that the names are taken.
        do throws(PrefsError) {
            _ = try checkFileBeforeOpening(directory, name)
            if let squatter = try checkSidecarsBeforeOpening(directory, name).first { throw squatter.refusal }
        } catch {
            for made in created { unlinkat(directory.descriptor, made, 0) }
            throw error
        }
        return created
    }

    /// Creates, in a shared folder, an empty `-journal` (mode 0600) beside a database in WAL mode, and keeps it: SQLite
    /// never writes it in WAL mode, and reads an empty one as no journal at all, while another user can no longer put one
    /// there for SQLite to roll back into the store when it opens. After the switch to WAL: the first transaction of a
    /// new store, in rollback mode, creates and removes a journal of its own.
    private static func claimRollbackJournal(_ directory: Directory, _ name: String) throws(PrefsError) {
        let fd = openat(directory.descriptor, name + "-journal", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 { return closeDescriptor(fd) }
        guard errno == EEXIST else { throw .io(path: directory.path(of: name + "-journal"), operation: "create", errno: errno) }
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
            try checkIdentity(connection, newest: newest) { () throws(PrefsError) in
                throw .readOnlyStore(path: path, reason: reason + "; the file is not a Prefs store yet, and cannot be made one")
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Checks, on a connection that cannot write, that the file is a Prefs store (else runs `notAStore`, which throws)
    /// of a version this release reads, with the schema it uses.
    private static func checkIdentity(_ connection: SQLiteConnection, newest: Int64, notAStore: () throws(PrefsError) -> Void) throws(PrefsError) {
        let (knownID, knownVersion) = try sqlite { () throws(SQLiteError) in
            (try integer(connection, "PRAGMA application_id"), try integer(connection, "PRAGMA user_version"))
        }
        if knownID != Self.applicationID { try notAStore() }
        guard knownVersion <= newest else {
            throw .unsupportedFormatVersion(path: connection.path, found: Int(knownVersion), supported: Int(newest))
        }
        try checkSchema(connection)
    }

    /// Refuses a database whose `-wal`, `-shm` or `-journal` name holds a symbolic link or anything but a regular
    /// file: SQLite opens those with `O_NOFOLLOW` and would fail later with a misleading `SQLITE_READONLY` or
    /// `SQLITE_CANTOPEN`, after creating the database file. In a shared folder, a sidecar (file or link) another user
    /// owns is returned instead, never opened: SQLite would write the store's pages into their file, or read pages of
    /// their choosing from it (a `-journal` it would even roll back into the store). Checked before anything is created.
    static func checkSidecarsBeforeOpening(_ directory: Directory, _ name: String) throws(PrefsError) -> [Squatter] {
        var squatters: [Squatter] = []
        for suffix in sidecarSuffixes {
            guard let info = try directory.status(of: name + suffix) else { continue }
            let path = directory.path(of: name + suffix)
            if directory.isShared, !TrustRule.isTrusted(owner: info.st_uid) {
                squatters.append(Squatter(path: path, owner: UInt32(info.st_uid), isLink: info.st_mode & S_IFMT == S_IFLNK))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: continue
            // Not corruptStore: recovery would move the database aside for a problem beside it.
            case S_IFLNK: throw .io(path: path, operation: "open (a symbolic link, which SQLite does not follow)", errno: ELOOP)
            default: throw .io(path: path, operation: "open (not a regular file)", errno: EINVAL)
            }
        }
        return squatters
    }

    /// Refuses what SQLite should not open: something other than a regular file (a FIFO would block the open), or
    /// a file too short to hold the SQLite header. Only `fstatat`: this process may already have the file open through
    /// SQLite, and closing a descriptor of our own would drop that connection's POSIX locks
    /// (https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
    /// A longer file that is not a database fails at the first read with `SQLITE_NOTADB`, before anything is written.
    /// A link at the name (put there since the path was resolved) is refused, never followed. Returns whether a file
    /// is there.
    private static func checkFileBeforeOpening(_ directory: Directory, _ name: String) throws(PrefsError) -> Bool {
        guard let info = try directory.trustedStatus(of: name) else { return false }
        let path = directory.path(of: name)
        try FileSystem.requireRegularFile(info, path: path)
        if info.st_size > 0, info.st_size < headerSize {
            throw .corruptStore(path: path, reason: "the file is \(info.st_size) bytes, too short for an SQLite database")
        }
        return true
    }

    /// Checks the schema, and on a new file creates it, or on a file of an older version brings it to the newest (see
    /// ``SQLiteMigrations``), under the write lock, so processes opening the file at the same moment agree; then
    /// switches to WAL (a no-op once the file is in WAL mode).
    private static func configure(_ connection: SQLiteConnection, options: Options, keepingWALFiles: Bool) throws(PrefsError) {
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
            try setPragmas(connection, options: options, keepingWALFiles: keepingWALFiles)
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
        try setPragmas(connection, options: options, keepingWALFiles: keepingWALFiles)
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

    /// Counts the store's two tables whose `CREATE TABLE` statement, as `sqlite_master` keeps it, is the one the first
    /// migration ran: 2 when both are exactly as created (an `ALTER TABLE` or a table made anew changes its text).
    static let tablesAsCreatedSQL: String = {
        // Plain concatenation: Foundation's string functions would cost a new process more than the probes it saves.
        var sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('prefs', 'prefs_declared') AND sql IN ("
        let created = SQLiteMigrations.standard.migrations.first { $0.version == 1 }
        for (index, statement) in (created?.statements ?? []).enumerated() {
            guard !statement.utf8.contains(UInt8(ascii: "'")) else { return "SELECT 0" }  // none has a quote; probes if one did
            sql += (index == 0 ? "'" : ", '") + statement + "'"
        }
        return sql + ")"
    }()

    /// Checks that a file marked as a Prefs store still has the tables, columns and key constraints the store uses,
    /// by preparing (never running) statements over them: this reads the schema only, writes nothing and takes no
    /// write lock. A damaged schema (a table dropped or recreated by hand) is ``PrefsError/corruptStore(path:reason:)``
    /// naming what is missing, rather than an SQLite error at the first read or write.
    ///
    /// A schema whose tables `sqlite_master` still records with the very statements that created them is that schema:
    /// one query says so, and the probes are not prepared (three statements fewer at every open of a current store).
    private static func checkSchema(_ connection: SQLiteConnection) throws(PrefsError) {
        do {
            if try integer(connection, tablesAsCreatedSQL) == 2 { return }
        } catch {
            // Nothing is lost: the probes below check the schema all the same, and report what they find as before.
        }
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

    /// WAL mode and the synchronous level; with `keepingWALFiles` (a shared folder), the `-wal` and `-shm` files stay
    /// when the connection closes, the WAL truncated to nothing (`journal_size_limit = 0`).
    private static func setPragmas(_ connection: SQLiteConnection, options: Options, keepingWALFiles: Bool) throws(PrefsError) {
        try sqlite { () throws(SQLiteError) in
            if keepingWALFiles {
                try connection.keepWALFilesOnClose()
                try connection.execute("PRAGMA journal_size_limit = 0")
            }
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
                if try text(connection, "PRAGMA journal_mode")?.lowercased() == "wal" { return }
                try connection.execute("PRAGMA journal_mode = WAL")
                return
            } catch  where error.code == 5 && ContinuousClock.now < deadline {  // SQLITE_BUSY
                usleep(2_000)
            }
        }
    }

    /// The integer in the first column of the first row of `sql`, else 0. One statement, stepped once: no rows are
    /// collected (what a new process pays for the arrays' first use counts at launch).
    private static func integer(_ connection: SQLiteConnection, _ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try connection.prepareUncached(sql)
        guard try statement.step(), case .integer(let value) = statement.column(0) else { return 0 }
        return value
    }

    /// The text in the first column of the first row of `sql`, else nil.
    private static func text(_ connection: SQLiteConnection, _ sql: String) throws(SQLiteError) -> String? {
        let statement = try connection.prepareUncached(sql)
        guard try statement.step(), case .text(let value) = statement.column(0) else { return nil }
        return value
    }
}
