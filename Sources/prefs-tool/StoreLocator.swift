import Foundation
import Prefs
import PrefsJSON
import PrefsPostgreSQL

/// The options every command takes, before or after its name: which store, and whether a new store's folders
/// may be created.
struct GlobalOptions {
    /// `--store PATH`
    var store: String?
    /// `--app ID`: the store of the app with that bundle identifier, in the default location.
    var app: String?
    /// `--create-dirs`: a new store given by path may create the folders it needs.
    var createDirectories = false
    /// `--namespace NAME`: the namespace of a PostgreSQL store (`--store postgresql://…`).
    var namespace: String?
}

/// Which store a command works on: `--store PATH` or `--app ID`, else `$PREFS_STORE`, else the library's default
/// location.
struct StoreLocator {
    enum Origin: Equatable {
        /// `--store PATH` or `$PREFS_STORE`.
        case path
        /// `--app ID`: the default location of that app's store.
        case app(String)
        /// Nothing named a store: the default location's `default` store.
        case defaultLocation
    }

    /// The store's file, or for a PostgreSQL store its connection string with the password hidden (for messages).
    var path: String
    var origin: Origin
    /// A PostgreSQL store (`--store postgresql://…` or `$PREFS_STORE`): the connection string as given, and the namespace
    /// (`--namespace`, else `$PREFS_NAMESPACE`). Nil for a file store.
    var postgreSQL: (conninfo: String, namespace: String)?
    /// A PostgreSQL store's connection string as given, with or without a namespace (for `namespaces`). Nil for a file.
    var connectionString: String?
    /// Whether a new store may create missing folders: asked for with `--create-dirs`, and always in the default
    /// location, which the library creates for an app too.
    var createsDirectories: Bool
    var environment: [String: String]

    /// Whether the store was named (by --store, --app or $PREFS_STORE) rather than defaulted.
    var isExplicit: Bool { origin != .defaultLocation }

    /// `requiresNamespace`: a PostgreSQL store without a namespace is a usage error (every command but `namespaces`).
    init(_ options: GlobalOptions, environment: [String: String], requiresNamespace: Bool = true) throws {
        self.environment = environment
        if let option = options.store, !option.isEmpty {
            path = option
            origin = .path
        } else if let app = options.app {
            path = try Prefs.Storage.defaultURL(identifier: app, environment: environment).path
            origin = .app(app)
        } else if let variable = environment["PREFS_STORE"], !variable.isEmpty {
            path = variable
            origin = .path
        } else {
            path = try Prefs.Storage.defaultURL(identifier: "default", environment: environment).path
            origin = .defaultLocation
        }
        createsDirectories = options.createDirectories || origin != .path
        if origin == .path, Self.isPostgreSQL(path) {
            connectionString = path
            guard let namespace = options.namespace ?? environment["PREFS_NAMESPACE"], !namespace.isEmpty else {
                if !requiresNamespace {
                    path = PostgreSQLRedaction.redact(path)
                    return
                }
                throw ToolError.usage(
                    "a PostgreSQL store needs a namespace: give --namespace NAME (or set PREFS_NAMESPACE)",
                    "usage: prefs-tool --store postgresql://USER@HOST/DATABASE --namespace NAME COMMAND")
            }
            postgreSQL = (path, namespace)
            path = PostgreSQLRedaction.redact(path)
        }
    }

    /// Whether `store` names a PostgreSQL database (a `postgresql://` or `postgres://` URL, or libpq's `key=value`
    /// pairs such as `host=db dbname=prefs`) rather than a file.
    static func isPostgreSQL(_ store: String) -> Bool {
        PostgreSQLStore.isConnectionString(store)
    }

    var url: URL { URL(fileURLWithPath: path) }

    /// A PostgreSQL store always exists: its schema and namespace are created when it is first opened.
    var exists: Bool { postgreSQL != nil || FileManager.default.fileExists(atPath: path) }

    /// Where the store is, for messages: its path, or the database (password hidden) and namespace.
    var displayName: String {
        guard let postgreSQL else { return path }
        return "\(path) namespace \(ValueText.quoted(postgreSQL.namespace))"
    }

    /// Opens the store. A missing store is created only when `create`; otherwise it is an error (exit 74).
    /// A corrupt file is reported (exit 65) and left exactly as it is: the tool never recovers by itself.
    ///
    /// Commands that write pass `checked`: the store's structure is checked first (``Prefs/quickCheckProblems()``,
    /// SQLite's `quick_check`), because a write can succeed on a file whose damaged pages it does not touch, and
    /// would then change a store that `list`, `export` and `check` already refuse.
    /// `listening`: a PostgreSQL store listens for other instances' changes (`watch`); every other command reads or
    /// writes once, and opens no signalling connection in the background (one still connecting when the tool exits
    /// ran libpq's Kerberos checks after their library had been torn down: an abort, seen under ThreadSanitizer).
    /// `launchArguments`: an app's, for DialogGate to read as that app would (`dialogs --arguments`); none otherwise.
    func open(create: Bool = false, checked: Bool = false, listening: Bool = false, launchArguments: [String] = []) throws -> Prefs {
        guard create || exists else { throw ToolError.io(missingStoreMessage()) }
        if create, !exists, postgreSQL == nil {
            let directory = url.deletingLastPathComponent().path
            var info = stat()
            if stat(directory, &info) != 0 {
                guard createsDirectories else {
                    throw ToolError.io("no folder \(directory) for a new store at \(path) (give --create-dirs to create it); nothing was written")
                }
                // Here rather than left to the library: a JSON store takes its lock file in the folder first. Each
                // missing folder is made by this process (mode 0700); those that exist, and links on the way, must
                // pass the library's trust rule, so none that another user made or controls is adopted.
                do {
                    try Prefs.Storage.createFolders(of: url.path)
                } catch {
                    throw ToolError.io("cannot create the folder \(directory) for a new store: \(error)")
                }
            }
        }
        let prefs: Prefs
        do {
            // A command that only reads opens a PostgreSQL store read-only: it then works for a role that may only
            // read and on a hot standby, and never creates or upgrades the schema of a fleet's database.
            let options = PostgreSQLOptions(listens: listening, readOnly: !(create || checked))
            let storage =
                try postgreSQL.map { Prefs.Storage.postgreSQL($0.conninfo, namespace: $0.namespace, options: options) } ?? Prefs.Storage.file(url)
            // The tool's own arguments are commands, never an argument domain (`dialogs --arguments` gives an app's).
            prefs = try Prefs(storage, pollInterval: .milliseconds(100), launchArguments: launchArguments)
        } catch {
            throw ToolError(error)
        }
        guard checked else { return prefs }
        let problems: [String]
        do {
            problems = try prefs.quickCheckProblems()
        } catch {
            // SQLite may report the damage as SQLITE_CORRUPT rather than as rows of problems.
            let failure = ToolError(error)
            guard failure.code == .data else { throw failure }
            throw ToolError.data("\(failure.message); nothing was written")
        }
        guard !problems.isEmpty else { return prefs }
        let first = problems[0]
        let more = problems.count > 1 ? " and \(problems.count - 1) more problem\(problems.count == 2 ? "" : "s")" : ""
        throw ToolError.data("\(path): the store is damaged (\(first)\(more)); nothing was written (see 'prefs-tool check')")
    }
}

extension StoreLocator {
    /// The files SQLite and the JSON store keep beside a store (the library's list).
    static let sidecarSuffixes = Prefs.Storage.sidecarSuffixes

    /// The device and inode of the file at `path`, links followed; nil when there is none.
    private static func fileIdentity(_ path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    /// Which of the store's own files `other` is: `""` for the store itself, or a sidecar's suffix (`"-wal"`);
    /// nil for any other file. Symbolic links are followed, as the library follows them, and files that exist
    /// are compared by device and inode, so another spelling of the path or a hard link is recognized too.
    func ownFile(_ other: String) -> String? {
        guard postgreSQL == nil, !Self.isPostgreSQL(other) else { return nil }
        guard let store = Prefs.Storage.resolvingLinks(path).map(FilePaths.canonical),
            let candidate = Prefs.Storage.resolvingLinks(other).map(FilePaths.canonical)
        else { return nil }
        let candidateID = Self.fileIdentity(candidate)
        for suffix in [""] + Self.sidecarSuffixes {
            let file = store + suffix
            if candidate == file { return suffix }
            if let candidateID, candidateID == Self.fileIdentity(file) { return suffix }
        }
        return nil
    }

    /// "the store itself (PATH)" or "the store's -wal file (PATH-wal)", for `ownFile(_:)`'s answer. A sidecar is
    /// named beside the file the store's links lead to, where it is.
    func describeOwnFile(_ suffix: String, as name: String = "the store") -> String {
        suffix.isEmpty ? "\(name) itself (\(path))" : "\(name)'s \(suffix) file (\(Prefs.Storage.resolvingLinks(path) ?? path)\(suffix))"
    }
}

/// Paths as the file system sees them.
enum FilePaths {
    /// `path` absolute, with its directory's links, `.` and `..` resolved (`realpath`); the last component is kept.
    /// A path whose directory does not exist is only made absolute.
    static func canonical(_ path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard let resolved = realpath(directory.isEmpty ? "." : directory, nil) else {
            return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        defer { free(resolved) }
        return (String(cString: resolved) as NSString).appendingPathComponent(name)
    }
}

/// The files and directories a new store at a path will create, noted before it is opened, so that a command that
/// fails afterwards can remove them and leave no empty store behind. Notes nothing when a file is already at the
/// path (links followed): an existing store is never removed.
struct NewStoreFiles {
    private var files: [String] = []
    /// Deepest first.
    private var directories: [String] = []

    init(path: String) {
        // By name only where no other user can change a folder of the path (else the store refuses to open, too).
        guard (try? Prefs.Storage.checkFolders(of: path)) != nil, let resolved = Prefs.Storage.resolvingLinks(path), !Self.exists(resolved) else {
            return
        }
        files = ([""] + StoreLocator.sidecarSuffixes).map { resolved + $0 }.filter { !Self.exists($0) }
        var directory = (resolved as NSString).deletingLastPathComponent
        while !directory.isEmpty, directory != "/", !Self.exists(directory) {
            directories.append(directory)
            directory = (directory as NSString).deletingLastPathComponent
        }
    }

    /// Removes what was noted; a directory only when empty.
    func remove() {
        for file in files { unlink(file) }
        for directory in directories { rmdir(directory) }
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 || errno != ENOENT
    }
}
