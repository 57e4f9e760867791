import Foundation
internal import PrefsJSON
import PrefsSQLite
import PrefsSupport

extension Prefs {
    /// How long a write survives once it returns.
    public enum Durability: Sendable, Hashable {
        /// Survives a crash of the app process (SQLite WAL with `synchronous=NORMAL`; JSON atomic rename). The default.
        case processCrash
        /// Survives power loss too (SQLite `synchronous=FULL`; JSON fsync of the file and its directory). Slower.
        case powerLoss
    }

    /// When a JSON store's writes reach the disk.
    public enum WriteMode: Sendable, Hashable {
        /// Every write replaces the file before it returns.
        case immediate
        /// Writes return at memory speed and reach the disk within the interval, on `flush()`, and on `close()`.
        /// A crash loses at most the writes of the last interval.
        case coalesced(Duration)
    }

    /// What opening does with a store file it cannot read.
    public enum Recovery: Sendable, Hashable {
        /// Throw ``PrefsError/corruptStore(path:reason:)`` and touch nothing. The default.
        case fail
        /// Rename the unreadable file, byte for byte, to `NAME.corrupt-YYYYMMDDTHHMMSSZ` and start empty.
        /// Only a regular file: a FIFO or a device at the path is left in place, and opening throws.
        case moveAsideAndStartEmpty
    }

    /// Where a store keeps its values: a `Sendable` value chosen at the call site.
    ///
    /// ```swift
    /// let prefs = try Prefs(.sqlite(url))
    /// let test = try Prefs(.memory)
    /// let readable = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(1))))
    /// ```
    public struct Storage: Sendable, CustomStringConvertible {
        enum Kind: Sendable {
            case memory([String: StoredValue])
            case json(path: String, JSONFileBackend.Options)
            case sqlite(path: String, SQLiteBackend.Options)
            case custom(String, @Sendable () throws -> any StoreBackend)
        }
        var kind: Kind
        /// Whether an open store names this storage by its backend's description (``custom(_:)``).
        var namedByBackend = false
        /// The clock the store's timers run on (a coalesced flush, an observer's poll tick, a JSON store's idle fold).
        package var clock = StoreClock.system

        /// This storage with its store's timers on `clock`: tests advance a manual clock instead of sleeping.
        package func clock(_ clock: StoreClock) -> Storage {
            var copy = self
            copy.clock = clock
            return copy
        }

        /// This storage with `kind`, keeping the rest.
        private func with(_ kind: Kind) -> Storage {
            var copy = self
            copy.kind = kind
            return copy
        }

        /// Values in memory only, gone when the store is released.
        public static var memory: Storage { .memory([:]) }

        /// Values in memory, starting from `snapshot` (for example ``Prefs/snapshot()`` of another store).
        public static func memory(_ snapshot: [String: StoredValue]) -> Storage {
            Storage(kind: .memory(snapshot))
        }

        /// One human-readable JSON file, safe to share between processes.
        ///
        /// `formatVersion` is the file format the store's writes leave: `nil` (the default) keeps an existing file's
        /// format and creates a new file in the newest (2: the file and its journal); `1` writes the format that release
        /// 0.1 reads and writes (the whole file on every write, no journal), for a store shared with processes of that
        /// release or that may be rolled back to it; `2` upgrades a format-1 file at its first write. See
        /// <doc:Storage#Formats-and-releases>.
        ///
        /// ```swift
        /// let shared = try Prefs(.jsonFile(url, formatVersion: 1))   // an app extension still on 0.1 writes it too
        /// ```
        public static func jsonFile(
            _ url: URL,
            durability: Durability = .processCrash,
            writeMode: WriteMode = .immediate,
            recovery: Recovery = .fail,
            lockTimeout: Duration = .seconds(5),
            formatVersion: Int? = nil
        ) -> Storage {
            Storage(
                kind: .json(
                    path: url.fileSystemPath,
                    .init(durability: durability, writeMode: writeMode, recovery: recovery, lockTimeout: lockTimeout, formatVersion: formatVersion)))
        }

        /// An SQLite database in WAL mode, safe to share between processes.
        public static func sqlite(
            _ url: URL,
            durability: Durability = .processCrash,
            busyTimeout: Duration = .seconds(5),
            recovery: Recovery = .fail
        ) -> Storage {
            Storage(kind: .sqlite(path: url.fileSystemPath, .init(durability: durability, busyTimeout: busyTimeout, recovery: recovery)))
        }

        /// The backend a path implies: `.json` is a JSON file; `.sqlite`, `.sqlite3` and `.db` are SQLite;
        /// any other existing file is recognized by its content. Throws for a new file with another extension.
        public static func file(_ url: URL) throws(PrefsError) -> Storage {
            switch url.pathExtension.lowercased() {
            case "json": return .jsonFile(url)
            case "sqlite", "sqlite3", "db": return .sqlite(url)
            default: break
            }
            let path = url.fileSystemPath
            let unknown = PrefsError.corruptStore(path: path, reason: "cannot tell which kind of store to create from the name; end it in .json or .sqlite")
            guard let (folder, name) = try Directory.resolveIfFoldersExist(file: path) else { throw unknown }
            // Already open through SQLite in this process: reading it here would drop that connection's locks.
            if SQLiteConnection.isOpenInProcess(folder.path(of: name)) { return .sqlite(url) }
            guard let (fd, _) = try folder.openRegularFile(name) else { throw unknown }
            defer { closeDescriptor(fd) }
            let data = try FileSystem.prefix(of: fd, count: 4096, path: folder.path(of: name))
            if data.starts(with: SQLiteBackend.header) { return .sqlite(url) }
            if data.first(where: { ![0x20, 0x0A, 0x0D, 0x09, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "{") { return .jsonFile(url) }
            throw .corruptStore(path: path, reason: "neither a JSON store nor an SQLite database")
        }

        /// The documented default: an SQLite store at ``defaultURL(identifier:environment:)``.
        public static func `default`(identifier: String) throws(PrefsError) -> Storage {
            .sqlite(try defaultURL(identifier: identifier))
        }

        /// Where apps that do not choose keep their store.
        ///
        /// On Linux and other XDG systems: `$XDG_CONFIG_HOME/prefs/IDENTIFIER.sqlite`, where `XDG_CONFIG_HOME`
        /// defaults to `~/.config` (a relative `XDG_CONFIG_HOME` is ignored, as the XDG specification says). On Apple
        /// platforms: `Application Support/IDENTIFIER/prefs.sqlite`.
        ///
        /// Throws ``PrefsError/invalidIdentifier(_:reason:)`` for an identifier that is not a reverse-DNS style name
        /// (letters, digits, `.`, `-` and `_`, starting with a letter or digit, no `..`), so it can never name a path
        /// outside the folder. Throws ``PrefsError/unusableFolder(path:reason:)``, naming the folder and the variable
        /// that chose it, when neither `XDG_CONFIG_HOME` nor `HOME` nor the user database gives an absolute home
        /// directory (a relative one would put the store under whatever the current directory is), and when the
        /// configuration directory they choose is one another user could change: the part of it that exists must pass
        /// the trust rule (see <doc:Promises>), and its deepest existing folder must not be writable by others, even
        /// sticky (`XDG_CONFIG_HOME=/tmp/x` refuses).
        public static func defaultURL(
            identifier: String,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(PrefsError) -> URL {
            if let problem = identifierProblem(identifier) { throw .invalidIdentifier(identifier, reason: problem) }
            #if canImport(Darwin)
            let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
            return support.appendingPathComponent(identifier).appendingPathComponent("prefs.sqlite")
            #else
            guard let (base, variable, value) = configDirectorySource(environment: environment) else {
                let home = environment["HOME"].map { JSON.string($0).serialized() } ?? "unset"
                throw .unusableFolder(
                    path: "$XDG_CONFIG_HOME",
                    reason: "no absolute home directory to keep the store in (HOME is \(home), XDG_CONFIG_HOME is not absolute, and the user database has none)"
                )
            }
            try checkConfigDirectory(base, variable: variable, value: value)
            return base.appendingPathComponent("prefs").appendingPathComponent(identifier + ".sqlite")
            #endif
        }

        /// Where ``defaultURL(identifier:environment:)`` puts the store, without checking its folder: the store's name while
        /// it waits for a folder that cannot hold it yet. Nil for an identifier that cannot name a store, or without an
        /// absolute home directory.
        static func uncheckedDefaultURL(identifier: String, environment: [String: String]) -> URL? {
            guard identifierProblem(identifier) == nil else { return nil }
            #if canImport(Darwin)
            return try? defaultURL(identifier: identifier, environment: environment)  // nothing but the identifier is checked there
            #else
            return configDirectorySource(environment: environment)?.folder.appendingPathComponent("prefs").appendingPathComponent(identifier + ".sqlite")
            #endif
        }

        /// The store an App Group shares: the app and its extensions (widgets, share extensions, watch apps) that name
        /// the same group read and write one store, and each sees the others' writes as it sees another process's.
        ///
        /// On Apple platforms: `Library/Application Support/Prefs/GROUP.sqlite` in the group's shared container
        /// (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`); when the system gives none (the
        /// target lacks the App Groups entitlement naming the group), this throws
        /// ``PrefsError/appGroupUnavailable(group:reason:)``: it never falls back to a store of the process's own,
        /// which the others would never see. On Linux, where programs have no containers, every program of the user
        /// shares the group's store at ``defaultURL(identifier:environment:)``, `$XDG_CONFIG_HOME/prefs/GROUP.sqlite`.
        /// `PrefsDefaults(suiteName:)` opens this storage for a name that starts with `group.`.
        ///
        /// ```swift
        /// let shared = try Prefs(.appGroup("group.com.example.app"))   // the app and its widget, one store
        /// ```
        public static func appGroup(_ group: String) throws(PrefsError) -> Storage {
            #if canImport(Darwin)
            .sqlite(try appGroupURL(group, container: { FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: $0) }))
            #else
            .sqlite(try appGroupURL(group, container: nil))
            #endif
        }

        /// Where the App Group `group`'s store is: `Library/Application Support/Prefs/GROUP.sqlite` in the container
        /// `container` gives for it (Apple platforms: the system's lookup, which tests replace), throwing
        /// ``PrefsError/appGroupUnavailable(group:reason:)`` when it gives none; without a lookup (Linux), the store
        /// every program of the user shares at ``defaultURL(identifier:environment:)``.
        package static func appGroupURL(
            _ group: String,
            container: ((String) -> URL?)?,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(PrefsError) -> URL {
            if let problem = identifierProblem(group) { throw .invalidIdentifier(group, reason: problem) }
            guard let container else { return try defaultURL(identifier: group, environment: environment) }
            guard let shared = container(group) else {
                throw .appGroupUnavailable(
                    group: group,
                    reason:
                        "the system gives no shared container for it: add it to the App Groups entitlement (com.apple.security.application-groups) of the app and of every extension that shares the store"
                )
            }
            return shared.appendingPathComponent("Library").appendingPathComponent("Application Support").appendingPathComponent("Prefs")
                .appendingPathComponent(group + ".sqlite")
        }

        #if !canImport(Darwin)
        /// The XDG configuration directory: an absolute `XDG_CONFIG_HOME`, else `.config` in the home directory (an
        /// absolute `HOME`, else the user database's); nil when neither gives an absolute path.
        package static func configDirectory(environment: [String: String]) -> URL? {
            configDirectorySource(environment: environment)?.folder
        }

        /// ``configDirectory(environment:)``, with what chose it: the variable's name and value (`XDG_CONFIG_HOME`, else
        /// `HOME`, else "the user database's home directory").
        static func configDirectorySource(environment: [String: String]) -> (folder: URL, variable: String, value: String)? {
            if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return (URL(fileURLWithPath: config), "XDG_CONFIG_HOME", config) }
            if let home = environment["HOME"], home.hasPrefix("/") { return (URL(fileURLWithPath: home).appendingPathComponent(".config"), "HOME", home) }
            if let home = homeDirectoryFromUserDatabase(), home.hasPrefix("/") {
                return (URL(fileURLWithPath: home).appendingPathComponent(".config"), "the user database's home directory", home)
            }
            return nil
        }
        #endif

        /// Why `identifier` cannot name a store file, or nil.
        static func identifierProblem(_ identifier: String) -> String? {
            let bytes = Array(identifier.utf8)
            guard let first = bytes.first else { return "empty" }
            guard bytes.count <= 200 else { return "\(bytes.count) bytes long; the limit is 200" }
            func isAlphanumeric(_ byte: UInt8) -> Bool {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
            guard isAlphanumeric(first) else { return "must start with a letter or digit" }
            if let bad = bytes.first(where: { !isAlphanumeric($0) && !"._-".utf8.contains($0) }) {
                return bad < 0x80
                    ? "\(JSON.string(String(UnicodeScalar(bad))).serialized()) is not allowed (use letters, digits, '.', '-' and '_', as in com.example.app)"
                    : "only ASCII letters, digits, '.', '-' and '_' are allowed (as in com.example.app)"
            }
            if identifier.contains("..") { return "'..' is not allowed" }
            return nil
        }

        /// A backend defined outside this module (another target of the package, or the tests).
        package static func backend(_ description: String, _ make: @escaping @Sendable () throws -> any StoreBackend) -> Storage {
            Storage(kind: .custom(description, make))
        }

        /// The call-site form, e.g. `.sqlite("/home/me/.config/prefs/app.sqlite")`.
        public var description: String {
            switch kind {
            case .memory: ".memory"
            case .json(let path, _): ".jsonFile(\(JSON.string(path).serialized()))"
            case .sqlite(let path, _): ".sqlite(\(JSON.string(path).serialized()))"
            case .custom(let description, _): description
            }
        }

        /// The endings of the files a file store keeps beside its file (SQLite's `-wal`, `-shm`, `-journal`; the JSON
        /// store's `.lock` and `.journal`), for tools that must not treat them as anything else.
        package static let sidecarSuffixes = SQLiteBackend.sidecarSuffixes + JSONFileBackend.sidecarSuffixes

        /// `path` with its symbolic links followed, as a file store follows them to find its file and put its sidecar
        /// files beside it, for tools that compare a path with a store's files; nil for a cycle or a chain of more than
        /// 32 links.
        package static func resolvingLinks(_ path: String) -> String? {
            FileSystem.resolvingLinksIfFinite(path)
        }

        /// This storage with a JSON store's journal compacted past `bytes` (and 4 times the snapshot) instead of 64 KiB:
        /// tests and the torture harness lower it so that compactions happen, and crashes land inside them. Other
        /// storages are returned unchanged.
        package func journalCompactionFloor(_ bytes: Int) -> Storage {
            guard case .json(let path, var options) = kind else { return self }
            options.compactionFloor = bytes
            return with(.json(path: path, options))
        }

        /// This storage with an SQLite store's schema extended by a migration to `version` (its `statements`), as a later
        /// release would: tests upgrade older stores with it. Other storages are returned unchanged.
        package func addingSQLiteMigration(version: Int64, _ statements: [String]) -> Storage {
            guard case .sqlite(let path, var options) = kind else { return self }
            options.migrations = options.migrations.appending(version: version, summary: "a test migration", statements: statements)
            return with(.sqlite(path: path, options))
        }

        /// This storage with a JSON store's idle compaction after `delay` instead of a second, or never (nil): tests that
        /// look at the journal after a write turn it off, so that a slow machine does not fold it under them. Other
        /// storages are returned unchanged.
        package func idleCompaction(after delay: Duration?) -> Storage {
            guard case .json(let path, var options) = kind else { return self }
            options.idleCompactionDelay = delay
            return with(.json(path: path, options))
        }

        /// This storage with a JSON store's file events (writes, syncs, renames, appends) reported to `observe`, for
        /// the simulated power cuts. Other storages are returned unchanged.
        package func tracingFileEvents(_ observe: @escaping @Sendable (FileSystem.FileEvent) -> Void) -> Storage {
            guard case .json(let path, var options) = kind else { return self }
            options.trace = FileSystem.Trace(observe)
            return with(.json(path: path, options))
        }

        /// The file path for file-backed stores.
        public var path: String? {
            switch kind {
            case .json(let path, _), .sqlite(let path, _): path
            case .memory, .custom: nil
            }
        }

        /// A name for the store this storage opens, the same for every storage on that store: a file store's path with
        /// its links followed, a backend's description (a PostgreSQL server and namespace); nil for memory, where each
        /// store is its own. For state an upper layer keeps per store within a process (DialogGate's session).
        package var storeIdentity: String? {
            switch kind {
            case .memory: nil
            case .json(let path, _), .sqlite(let path, _): "file:" + (FileSystem.resolvingLinksIfFinite(path) ?? path)
            case .custom(let description, _): "backend:" + description
            }
        }

        /// The arguments a store on this storage reads launch arguments from when not told: the process's (without its
        /// name), except for `.memory`, which reads none (see ``Prefs/init(_:pollInterval:launchArguments:onDiagnostic:)``).
        var defaultLaunchArguments: [String] {
            if case .memory = kind { return [] }
            return Array(CommandLine.arguments.dropFirst())  // as ProcessInfo has them, without its first-use cost
        }

        func makeBackend() throws -> any StoreBackend {
            switch kind {
            case .memory(let snapshot): return MemoryBackend(snapshot: snapshot)
            case .json(let path, var options):
                options.clock = clock
                return try JSONFileBackend(path: path, options: options)
            case .sqlite(let path, let options): return try SQLiteBackend(path: path, options: options)
            case .custom(_, let make): return try make()
            }
        }
    }
}

#if !canImport(Darwin)
/// The current user's home directory from the user database (`getpwuid_r`), for when `HOME` is unset or relative.
private func homeDirectoryFromUserDatabase() -> String? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
        return nil
    }
    return String(cString: directory)
}
#endif

extension URL {
    /// The file system path of a file URL, as ``path`` gives it (percent-decoded, resolved against a base, a trailing
    /// slash dropped), without the cost of `path`'s first call in a process (on Linux, a set that Foundation builds,
    /// which was a sixth of a store's launch).
    package var fileSystemPath: String {
        let encoded = path(percentEncoded: true)
        // `path` keeps an encoded slash (`a%2Fb` names one file); decoding it would name a folder.
        if encoded.contains("%2F") || encoded.contains("%2f") { return self.path }
        var path = path(percentEncoded: false)
        while path.utf8.count > 1, path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
        return path
    }
}
