import Foundation
internal import PrefsJSON
import PrefsSQLite

/// Everything a ``Prefs`` store can fail with. Each case says what failed and where.
///
/// ```swift
/// do { let prefs = try Prefs(.jsonFile(url)) }
/// catch PrefsError.corruptStore(let path, let reason) { print("\(path): \(reason)") }
/// ```
public enum PrefsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A key name that is empty, too long or holds control characters.
    case invalidKeyName(String, reason: String)
    /// The store file exists but cannot be read as a store: not JSON (with `line:column`), not a database, a wrong shape,
    /// or not a regular file at all (a FIFO, a device).
    case corruptStore(path: String, reason: String)
    /// The file was written by a newer release of Prefs (or a store was asked to write a format this release does not
    /// know): `found` is its format version, `supported` the newest this release reads. Nothing was changed.
    case unsupportedFormatVersion(path: String, found: Int, supported: Int)
    /// A database engine's call failed (SQLite, or a PostgreSQL server): its result code (a SQLSTATE for PostgreSQL),
    /// message and statement.
    case database(DatabaseError)
    /// A file-system call failed.
    case io(path: String, operation: String, errno: Int32)
    /// A symbolic link that another user (`owner`) owns, on the way to a store or an export, or at a store's name (one
    /// planted in a shared sticky directory such as /tmp): not followed, since they, not the store's user, chose its
    /// target.
    case untrustedLink(path: String, owner: UInt32)
    /// A folder on the way to a store or an export that another user could change: owned by another user (`owner`), or
    /// writable by others (`mode`) without being sticky. Not used, since they could replace what is in it. Every folder
    /// must be owned by root or this user and not writable by others, unless it is sticky like /tmp (see the trust rule
    /// in <doc:Promises>).
    case untrustedFolder(path: String, owner: UInt32, mode: UInt32)
    /// A file that another user (`owner`) owns in a shared folder (sticky and writable by others, such as /tmp), where a
    /// store, its lock file, journal or sidecar, or an export was to be: never read, written, locked or replaced. The
    /// message names the owner and what to do. A store whose own file is this user's is still read without such a file
    /// beside it (``Prefs/Diagnostic/Kind/untrustedFileIgnored(path:owner:)``); its writes fail with this error.
    case untrustedFile(path: String, owner: UInt32)
    /// The store's writer lock was held longer than the timeout: by another process, or (`heldInThisProcess`) by
    /// another store open on the same file in this process.
    case lockTimeout(path: String, seconds: Double, heldInThisProcess: Bool = false)
    /// A value whose JSON form is larger than ``Prefs/maximumValueBytes``.
    case valueTooLarge(key: String, bytes: Int, limit: Int)
    /// A value whose JSON form nests arrays and objects more than ``Prefs/maximumValueDepth`` levels deep.
    case valueTooDeep(key: String, limit: Int)
    /// A `Codable` value that could not be encoded.
    case encodingFailed(key: String, reason: String)
    /// A stored value that cannot be read as the requested type.
    case typeMismatch(key: String, ValueMismatch)
    /// The store was closed.
    case closed(store: String)
    /// The store was called from inside one of its own transaction bodies (or from a handler it called while
    /// holding its writer lock) for an operation that would wait for that lock: `operation` names the call.
    /// Read and write through the transaction's subscript instead.
    case reentrantCall(store: String, operation: String)
    /// An application identifier that cannot name a store file (``Prefs/Storage/default(identifier:)``,
    /// ``Prefs/Storage/appGroup(_:)``).
    case invalidIdentifier(String, reason: String)
    /// The folder a store is to be kept in cannot hold it: the configuration directory that `XDG_CONFIG_HOME` or `HOME`
    /// chose is one other users could change, is not a folder, or cannot be read or made (`reason` says which, and what
    /// chose it); `path` is the folder, or what names it when no home directory gives one.
    ///
    /// ```swift
    /// catch PrefsError.unusableFolder(let path, let reason) { print("\(path): \(reason)") }
    /// // /home/me/.config: HOME (/home/me) chose it: not a folder
    /// ```
    case unusableFolder(path: String, reason: String)
    /// The system gives no shared container for the App Group `group` (``Prefs/Storage/appGroup(_:)``): the app or
    /// extension lacks the App Groups entitlement (`com.apple.security.application-groups`) naming it. No private store
    /// is opened in its place.
    ///
    /// ```swift
    /// catch PrefsError.appGroupUnavailable(let group, _) { assertionFailure("add \(group) to the App Groups entitlement") }
    /// ```
    case appGroupUnavailable(group: String, reason: String)
    /// A write to a store this user can read but not write (file mode, directory permissions, a read-only mount).
    /// The store opened read-only: reads, exports and checks work.
    case readOnlyStore(path: String, reason: String)
    /// A backend of the app's own (``Prefs/Storage/custom(_:)``) threw an error that is not a `PrefsError`: the
    /// backend in call-site form (its ``Prefs/Backend/description``), and the call that failed with that error.
    ///
    /// ```swift
    /// catch PrefsError.backend(let backend, let reason) { print("\(backend): \(reason)") }
    /// // .keychain(service: "com.example.app"): commit(_:) failed: the keychain is locked
    /// ```
    case backend(String, reason: String)

    public var description: String {
        switch self {
        case .invalidKeyName(let name, let reason):
            "invalid key name \(Self.quoted(name)): \(reason)"
        case .corruptStore(let path, let reason):
            "\(path): \(reason)"
        case .unsupportedFormatVersion(let path, let found, let supported) where found < 1:
            "\(path): format version \(found) is not one this release of Prefs reads or writes (1 to \(supported))"
        case .unsupportedFormatVersion(let path, let found, let supported):
            "\(path): format version \(found) is newer than this release of Prefs reads (\(supported)); upgrade Prefs"
        case .database(let error) where error.isBusy:
            "\(error.description): a writer (another process, or another store on this file in this process) held the "
                + "store's write lock past the busy timeout (`busyTimeout:` of `.sqlite(url, busyTimeout:)`, 5 s by default)"
        case .database(let error):
            error.description
        case .io(let path, let operation, let code):
            "\(path): \(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .untrustedLink(let path, let owner):
            "\(path): refusing to follow a symbolic link owned by another user (uid \(owner))\(UserNames.ownerClause(owner)): \(Self.squatterRemedy)"
        case .untrustedFolder(let path, let owner, let mode):
            "\(path): refusing a folder another user could change (owner uid \(owner), mode \(String(format: "%04o", mode))): "
                + "the folders of a store must be owned by root or this user and not writable by others, unless sticky like /tmp"
        case .untrustedFile(let path, let owner):
            "\(path): refusing a file owned by another user (uid \(owner)) in a shared folder\(UserNames.ownerClause(owner)): \(Self.squatterRemedy)"
        case .lockTimeout(let path, let seconds, let heldInThisProcess):
            heldInThisProcess
                ? "\(path): another store on this file in this process held the store's lock for more than \(seconds) s"
                : "\(path): another process held the store's lock for more than \(seconds) s"
        case .valueTooLarge(let key, let bytes, let limit):
            "value for key \(Self.quoted(key)) is \(bytes) bytes; the limit is \(limit)"
        case .valueTooDeep(let key, let limit):
            "value for key \(Self.quoted(key)) nests arrays and objects more than \(limit) levels deep"
        case .encodingFailed(let key, let reason):
            "value for key \(Self.quoted(key)) could not be encoded: \(reason)"
        case .typeMismatch(let key, let mismatch):
            "key \(Self.quoted(key)): \(mismatch)"
        case .closed(let store):
            "\(store) is closed"
        case .reentrantCall(let store, let operation):
            "\(store): \(operation) was called from inside a transaction on this store (or a handler it runs), and would "
                + "wait for the transaction's own lock; read and write through the transaction's subscript (t[key]) instead"
        case .invalidIdentifier(let identifier, let reason):
            "store identifier \(Self.quoted(identifier)): \(reason)"
        case .unusableFolder(let path, let reason):
            "\(path): this folder cannot hold a store: \(reason)"
        case .appGroupUnavailable(let group, let reason):
            "App Group \(Self.quoted(group)): \(reason)"
        case .readOnlyStore(let path, let reason):
            "\(path): the store is read-only here (\(reason)); it can be read, exported and checked, not written"
        case .backend(let backend, let reason):
            "\(backend): \(reason)"
        }
    }

    /// Whether the error says the store's content is damaged or not a store (as opposed to an I/O fault, a lock held
    /// past its timeout, or a programming error): a corrupt file, a newer format, SQLite's `SQLITE_CORRUPT` and
    /// `SQLITE_NOTADB`. Tools report these as bad data and never write to such a store.
    public var isDamagedStore: Bool {
        switch self {
        case .corruptStore, .unsupportedFormatVersion: true
        case .database(let error): error.isDamage
        default: false
        }
    }

    /// A name in quotes with control characters escaped, safe to print to a terminal.
    package static func quoted(_ text: String) -> String {
        JSON.string(text).serialized()
    }
}

/// A failed call into the database engine under a store: the engine's own result code and message, the statement
/// (never its bound values, so secrets kept as preference values cannot leak into logs) and the file or server.
///
/// ```swift
/// catch PrefsError.database(let error) where error.isBusy { /* another writer held the lock; retry later */ }
/// catch PrefsError.database(let error) where error.codeName == "53300" { /* PostgreSQL: too many connections */ }
/// ```
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The engine: `"SQLite"` or `"PostgreSQL"`.
    public var engine: String
    /// The engine's result code: for SQLite the extended result code (https://www.sqlite.org/rescode.html), e.g. 5
    /// (`SQLITE_BUSY`) or 2067 (`SQLITE_CONSTRAINT_UNIQUE`); 0 for PostgreSQL, whose code is a SQLSTATE (``codeName``).
    public var code: Int32
    /// The code's symbolic name, e.g. `SQLITE_BUSY`; for PostgreSQL the five-character SQLSTATE, e.g. `57014`
    /// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    public var codeName: String
    /// The engine's message.
    public var message: String
    /// The statement that failed, without bound values; for PostgreSQL what the store was doing ("reading key
    /// \"theme\"", "committing a transaction").
    public var statement: String?
    /// The database file; for PostgreSQL the database, with any password replaced by `***`.
    public var path: String?
    /// Whether another connection held a lock longer than the store waits (SQLite's `SQLITE_BUSY`, `SQLITE_LOCKED`).
    public var isBusy: Bool
    /// Whether the engine found the database damaged or not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
    public var isDamage: Bool
    /// One line: engine, code and name, message, file and statement.
    public var description: String
    /// The engine's own error, for what the fields above do not say: PrefsPostgreSQL's `PostgreSQLError`, with its
    /// kind (read it as `PrefsError.postgreSQLError`). Nil for SQLite.
    public var underlying: (any Error & Hashable & Sendable)?

    /// Makes an error (the stores make their own; this is for a backend's module reporting in the same form).
    package init(
        engine: String, code: Int32, codeName: String, message: String, statement: String?, path: String?, isBusy: Bool = false,
        isDamage: Bool = false, description: String, underlying: (any Error & Hashable & Sendable)? = nil
    ) {
        self.engine = engine
        self.code = code
        self.codeName = codeName
        self.message = message
        self.statement = statement
        self.path = path
        self.isBusy = isBusy
        self.isDamage = isDamage
        self.description = description
        self.underlying = underlying
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.engine == rhs.engine && lhs.code == rhs.code && lhs.codeName == rhs.codeName && lhs.message == rhs.message
            && lhs.statement == rhs.statement && lhs.path == rhs.path && lhs.isBusy == rhs.isBusy && lhs.isDamage == rhs.isDamage
            && lhs.description == rhs.description && lhs.underlyingHashable == rhs.underlyingHashable
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(engine)
        hasher.combine(code)
        hasher.combine(codeName)
        hasher.combine(message)
        hasher.combine(statement)
        hasher.combine(path)
        hasher.combine(underlyingHashable)
    }

    private var underlyingHashable: AnyHashable? {
        underlying.map { AnyHashable($0) }
    }
}

extension DatabaseError {
    init(_ error: SQLiteError) {
        self.init(
            engine: "SQLite", code: error.extendedCode, codeName: SQLiteError.Code.name(of: error.code), message: error.message,
            statement: error.sql, path: error.path,
            isBusy: SQLiteError.busy ~= error || SQLiteError.locked ~= error,
            isDamage: SQLiteError.corrupt ~= error || SQLiteError.notADatabase ~= error,
            description: error.description
        )
    }
}

// MARK: - One error type for every store call

/// An error a backend's module says as a ``PrefsError`` (PrefsPostgreSQL's `PostgreSQLError` as
/// ``PrefsError/database(_:)``), so that a store call throws `PrefsError` whatever the backend.
package protocol PrefsErrorConvertible: Error {
    var prefsError: PrefsError { get }
}

extension PrefsError {
    /// `error` as a `PrefsError`: itself, a backend module's error as it says itself (``PrefsErrorConvertible``), a
    /// SQLite error as ``database(_:)``, or any other error a backend threw as ``database(_:)`` of the engine its type
    /// names, with its description as the message.
    package init(_ error: any Error) {
        switch error {
        case let error as PrefsError: self = error
        case let error as any PrefsErrorConvertible: self = error.prefsError
        case let error as SQLiteError: self = .database(DatabaseError(error))
        default:
            let engine = String(describing: type(of: error))
            self = .database(
                DatabaseError(engine: engine, code: 0, codeName: "", message: "\(error)", statement: nil, path: nil, description: "\(engine): \(error)"))
        }
    }

    /// Runs `body` (a call into a backend, whose requirements throw untyped), throwing its error as a `PrefsError`.
    /// Never around an app's closure, whose errors a store call passes on unchanged.
    package static func converting<Result>(_ body: () throws -> Result) throws(PrefsError) -> Result {
        do {
            return try body()
        } catch {
            throw PrefsError(error)
        }
    }
}

extension PrefsError {
    /// Why this process cannot write the store file at `path` (which exists), or nil when it can: the file's mode, the
    /// directory's (where the store keeps its lock file, journal or WAL), or a read-only mount.
    /// What to do about a file or link another user put where a store's file goes.
    static let squatterRemedy = "remove it as that user or root, or move the store to a folder only you can write"

    static func readOnlyReason(path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        if access(path, W_OK) != 0 { return errno == EROFS ? "a read-only file system" : "the file is not writable by this user" }
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            return errno == EROFS ? "a read-only file system" : "its directory is not writable by this user"
        }
        return nil
    }
}
