// A child process for Prefs' cross-process and crash tests.
//
//   (Where a mode takes json|sqlite PATH, postgresql:NAMESPACE URL opens a PostgreSQL store: PostgreSQLStorage.swift.)
//   prefs-test-child write   json|sqlite PATH PREFIX COUNT   one durable set per key PREFIX-i = i; prints "ack i" after each returns
//   prefs-test-child batch   json|sqlite PATH PREFIX COUNT   COUNT keys in one batch; prints "ack" after it returns
//   prefs-test-child update  json|sqlite PATH KEY COUNT      COUNT atomic increments of KEY
//   prefs-test-child repeat  json|sqlite PATH PREFIX set|batch|transaction|update
//                                                            one operation after another until killed; prints "ack i" after
//                                                            operation i returns. set: PREFIX-i = i. batch: PREFIX-i-0…15 = i
//                                                            in one batch. transaction: reads i = PREFIX-next, writes
//                                                            PREFIX-i-0…15 = i and PREFIX-next = i + 1. update: increments
//                                                            PREFIX-count to i + 1. (CrashOperation checks these.)
//   prefs-test-child transfer json|sqlite PATH PREFIX KEYS COUNT SEED
//                                                            COUNT transactions moving value between KEYS Int keys
//                                                            PREFIX-0… (TransferWorkload): each body reads every key and
//                                                            checks they sum to 0; prints "bodies B torn T committed C"
//   prefs-test-child hold    json|sqlite PATH KEY            sets KEY = 1 inside a transaction, prints "holding", and never
//                                                            commits: it holds the store's write lock until killed
//   prefs-test-child migrate PATH                            opens the SQLite store at PATH with a version-2 schema of the tests
//                                                            (a migration that creates prefs_migration_log and logs this
//                                                            process in it), prints "migrated" and the store's values' count
//   prefs-test-child flock   PATH                            takes flock(LOCK_EX) on PATH (created 0600 if missing), as release
//                                                            0.1's JSON writers lock STORE.lock, prints "locked", and holds
//                                                            it until killed
//   prefs-test-child watch   json|sqlite PATH KEY            prints each value of the Int KEY, one per line, until stdin closes
//   prefs-test-child set     json|sqlite PATH KEY TYPE JSON  writes one raw value (TYPE as prefs-tool lists it); prints "ack"
//   prefs-test-child sync    json|sqlite PATH DEVICE CONNINFO KEY VALUE|-
//                                                            a device of PrefsSync: sets KEY to the string VALUE (- sets
//                                                            nothing), syncs the namespace "editor." twice through a
//                                                            PostgreSQLSyncTransport to CONNINFO as DEVICE, prints "value
//                                                            JSON" (or "value none") of KEY
//   prefs-test-child standard KEY VALUE                     sets the Int KEY through a @Pref on Prefs.standard (never set, so
//                                                            the default location), prints the store's path
//   prefs-test-child suite NAME KEY VALUE                   sets the Int KEY through PrefsDefaults(suiteName: NAME), prints
//                                                            the store's path
//   prefs-test-child suite-watch NAME KEY                   prints "path PATH" of PrefsDefaults(suiteName: NAME)'s store,
//                                                            then "value V" for each value of the Int KEY it observes (its
//                                                            own writes and other processes'), until stdin closes
//   prefs-test-child standard-session                       a session with Prefs.standard (never set, so the default
//                                                            location) driven by stdin lines, each answered on one line:
//                                                            "set KEY V" (an Int, through a @Pref) → "set KEY";
//                                                            "get KEY" → "KEY=V stored" or "KEY=V initial"; "state" and
//                                                            "retry" (retryOpening()) → "open PATH" or "waiting REASON".
//                                                            At the end of stdin it exits normally (exit(0))
//   prefs-test-child domain NAME OTHER                      prints OTHER's persistent domain as seen from suite NAME
//                                                            ("KEY=VALUE" lines, sorted, or "nil"), then removes it
//   prefs-test-child coalesced json PATH KEY VALUE exit|return
//                                                            sets the Int KEY in a coalesced JSON store (one-hour interval)
//                                                            held in a global, prints "set", then calls exit(0) or returns
//                                                            from main
//   prefs-test-child measure OUTPUT PROGRAM [ARGUMENT…]    runs PROGRAM with this process's environment and standard streams,
//                                                            writes its peak resident set size in bytes (wait4's ru_maxrss)
//                                                            to the file OUTPUT, and exits with its status (128 + a signal).
//                                                            ChildProcess.runMeasured starts children through it: a child
//                                                            started by a large process inherits that process's peak in
//                                                            ru_maxrss (Linux records the shared memory's high-water mark at
//                                                            exec), and this one is small
//   prefs-test-child many json|sqlite DIR COUNT [hog]       COUNT stores in one process, for the shared inotify instance's
//                                                            tests: see ManyStores.swift
//   prefs-test-child pg-server                              starts a private PostgreSQL server (TestPostgreSQLServer), prints
//                                                            "server PID DIRECTORY", then waits to be killed
//   prefs-test-child arguments json|sqlite|standard PATH read|write|ignore [-NAME VALUE…]
//                                                            reads the keys launchCount (Int, 0), greeting (String?) and
//                                                            flag (Bool, false) of the store at PATH (standard: Prefs.standard,
//                                                            PATH "-") with its launch arguments, the -NAME VALUE pairs of
//                                                            this process's; prints "defaults …" (PrefsDefaults' integer,
//                                                            string, bool), "typed …" (the typed keys), "lookup …" (argument,
//                                                            stored or initial), "domain …" (the argument domain), then each
//                                                            diagnostic. write: first sets launchCount = 7 (typed) and
//                                                            greeting = "stored" (PrefsDefaults). ignore: opens the store
//                                                            with launchArguments: [].
//   prefs-test-child import-defaults PATH SUITE|- keep|replace [-NAME VALUE…]
//                                                            sets values of every property-list type through
//                                                            UserDefaults(suiteName: SUITE) (-: UserDefaults.standard), and
//                                                            registers "registered", then imports them into the SQLite store
//                                                            at PATH with PrefsDefaults.importValues(from:suiteName:
//                                                            replacingExisting:) (replace: true); prints the report. Run it
//                                                            with XDG_CONFIG_HOME set: UserDefaults writes its files there.
// The other modes' arguments hold no -NAME VALUE pair, so their stores, which read the process's, read none.
// With PREFS_TEST_JOURNAL_COMPACTION_BYTES=N in the environment, a JSON store compacts its journal past N bytes; with
// PREFS_TEST_NO_IDLE_COMPACTION=1, never when idle.
//
//   prefs-test-child open    json|sqlite|file PATH           opens the store (file: by name, else content); prints "opened"
//                                                            or fails with the error. Memory is capped at 1 GiB, so a read
//                                                            that never ends fails instead of filling the machine.
import Foundation
import Prefs
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import PrefsUserDefaults
import PrefsPostgreSQL
import PrefsSync
import PrefsSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("prefs-test-child: \(message)\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
// A JSON store compacts its journal once it passes this many bytes (and the snapshot's size): tests lower it, so that
// kills land inside compactions too. A store option, applied to the stores of the write modes below.
let compactionFloor = ProcessInfo.processInfo.environment["PREFS_TEST_JOURNAL_COMPACTION_BYTES"].flatMap(Int.init)
// With PREFS_TEST_NO_IDLE_COMPACTION=1, a JSON store does not fold its journal when idle: a test that kills the child
// finds its writes in the journal however slowly the machine ran it.
let noIdleCompaction = ProcessInfo.processInfo.environment["PREFS_TEST_NO_IDLE_COMPACTION"] == "1"
#if os(Linux)
if arguments.first == "many" { manyStores(Array(arguments.dropFirst())) }
if arguments.first == "measure" {
    guard arguments.count >= 3 else { fail("usage: prefs-test-child measure OUTPUT PROGRAM [ARGUMENT…]") }
    do {
        let child = try SpawnedProcess.spawn(arguments[2], Array(arguments.dropFirst(3)), stdin: .inherit, stdout: .inherit, stderr: .inherit)
        child.waitUntilExit()
        try Data("\(child.peakResidentBytes)\n".utf8).write(to: URL(fileURLWithPath: arguments[1]))
        exit(child.wasSignaled ? 128 + child.terminationStatus : child.terminationStatus)
    } catch {
        fail("\(error)")
    }
}
#endif
if arguments.first == "pg-server" {
    do {
        let server = try TestPostgreSQLServer()
        say("server \(server.postmasterPID ?? 0) \(server.directory)")
        while true { sleep(60) }  // until killed: the server outlives this process only until its reaper notices
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "arguments" {
    guard arguments.count >= 4, ["read", "write", "ignore"].contains(arguments[3]) else {
        fail("usage: prefs-test-child arguments json|sqlite|standard PATH read|write|ignore [-NAME VALUE…]")
    }
    let launchCount = Prefs.Key<Int>("launchCount", initial: 0)
    let greeting = Prefs.Key<String?>("greeting")
    let flag = Prefs.Key<Bool>("flag", initial: false)
    do {
        let url = URL(fileURLWithPath: arguments[2])
        let storage: Prefs.Storage = arguments[1] == "json" ? .jsonFile(url) : .sqlite(url)
        let prefs =
            arguments[1] == "standard"
            ? Prefs.standard : try Prefs(storage, launchArguments: arguments[3] == "ignore" ? [] : nil)
        let defaults = PrefsDefaults(prefs)
        if arguments[3] == "write" {
            try prefs.set(7, for: launchCount)
            defaults.set("stored", forKey: "greeting")
        }
        say(
            "defaults launchCount=\(defaults.integer(forKey: "launchCount")) greeting=\(defaults.string(forKey: "greeting") ?? "nil") "
                + "flag=\(defaults.bool(forKey: "flag"))")
        say("typed launchCount=\(prefs[launchCount]) greeting=\(prefs[greeting] ?? "nil") flag=\(prefs[flag])")
        func source<Value>(_ lookup: Prefs.Lookup<Value>) -> String {
            switch lookup {
            case .argument: "argument"
            case .stored: "stored"
            case .initial: "initial"
            case .unreadable: "unreadable"
            }
        }
        say("lookup launchCount=\(source(prefs.lookup(launchCount))) greeting=\(source(prefs.lookup(greeting))) flag=\(source(prefs.lookup(flag)))")
        let domain = defaults.volatileDomain(forName: PrefsDefaults.argumentDomain)
        say("domain " + domain.keys.sorted().map { "\($0)=\(domain[$0].map { "\($0)" } ?? "")" }.joined(separator: " "))
        try prefs.flush()
        for diagnostic in prefs.diagnostics { say("diagnostic \(diagnostic)") }
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "import-defaults" {
    guard arguments.count >= 4, ["keep", "replace"].contains(arguments[3]) else {
        fail("usage: prefs-test-child import-defaults PATH SUITE|- keep|replace [-NAME VALUE…]")
    }
    let suite = arguments[2] == "-" ? nil : arguments[2]
    guard let userDefaults = suite.map({ UserDefaults(suiteName: $0) }) ?? UserDefaults.standard else { fail("no UserDefaults for \(arguments[2])") }
    userDefaults.register(defaults: ["registered": 1])
    userDefaults.set(true, forKey: "bool")
    userDefaults.set(42, forKey: "int")
    userDefaults.set(2.5, forKey: "double")
    userDefaults.set("text", forKey: "string")
    userDefaults.set(Date(timeIntervalSince1970: 1_700_000_000), forKey: "date")
    userDefaults.set(Data([0, 1, 255]), forKey: "data")
    userDefaults.set(["a", "b"], forKey: "strings")
    userDefaults.set([1, "two"] as [Any], forKey: "mixed")
    userDefaults.set(["width": 800, "height": 600], forKey: "size")
    userDefaults.set(["recent": ["x", "y"], "count": 2] as [String: Any], forKey: "nested")
    userDefaults.set(String(repeating: "x", count: Prefs.maximumValueBytes + 1), forKey: "huge")
    userDefaults.set("from UserDefaults", forKey: "existing")
    do {
        let defaults = PrefsDefaults(try Prefs(.sqlite(URL(fileURLWithPath: arguments[1])), launchArguments: []))
        let report = try defaults.importValues(from: userDefaults, suiteName: suite, replacingExisting: arguments[3] == "replace")
        say(report.description)
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "migrate" {
    guard arguments.count == 2 else { fail("usage: prefs-test-child migrate PATH") }
    do {
        let storage = Prefs.Storage.sqlite(URL(fileURLWithPath: arguments[1]), busyTimeout: .seconds(60)).addingSQLiteMigration(
            version: 2, ["CREATE TABLE prefs_migration_log (pid INTEGER NOT NULL)", "INSERT INTO prefs_migration_log (pid) VALUES (\(getpid()))"])
        let prefs = try Prefs(storage)
        say("migrated \(try prefs.snapshot().count)")
        exit(0)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "flock" {
    guard arguments.count == 2 else { fail("usage: prefs-test-child flock PATH") }
    let fd = open(arguments[1], O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { fail("open \(arguments[1]): errno \(errno)") }
    guard flock(fd, LOCK_EX) == 0 else { fail("flock \(arguments[1]): errno \(errno)") }
    say("locked")
    while true { sleep(60) }  // until killed: the kernel releases the lock
}
if arguments.first == "suite" {
    guard arguments.count == 4, let value = Int(arguments[3]) else { fail("usage: prefs-test-child suite NAME KEY VALUE") }
    do {
        let defaults = try PrefsDefaults(suiteName: arguments[1])
        defaults.set(value, forKey: arguments[2])
        say(defaults.prefs.storage.path ?? "memory")
        exit(defaults.prefs.diagnostics.isEmpty ? 0 : 3)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "suite-watch" {
    guard arguments.count == 3 else { fail("usage: prefs-test-child suite-watch NAME KEY") }
    do {
        let defaults = try PrefsDefaults(suiteName: arguments[1])
        say("path \(defaults.prefs.storage.path ?? "memory")")
        let key = try Prefs.Key(validating: arguments[2], initial: 0)
        let task = Task.detached {
            for await value in defaults.prefs.values(for: key) { say("value \(value)") }
        }
        _ = FileHandle.standardInput.readDataToEndOfFile()
        task.cancel()
        exit(defaults.prefs.diagnostics.isEmpty ? 0 : 3)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "standard-session" {
    struct Model {
        @Pref<Int> var count: Int
    }
    func state() -> String {
        Prefs.standard.waitingReason.map { "waiting \($0)" } ?? "open \(Prefs.standard.storage.path ?? "memory")"
    }
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        do {
            switch words.first {
            case "set" where words.count == 3:
                guard let value = Int(words[2]) else { fail("set KEY VALUE: VALUE must be an Int") }
                let model = Model(count: Pref(try Prefs.Key(validating: words[1], initial: 0)))
                model.count = value
                say("set \(words[1])")
            case "get" where words.count == 2:
                let lookup = Prefs.standard.lookup(try Prefs.Key(validating: words[1], initial: 0))
                say("\(words[1])=\(lookup.value) \(lookup.isStored ? "stored" : "initial")")
            case "state" where words.count == 1:
                say(state())
            case "retry" where words.count == 1:
                do { try Prefs.standard.retryOpening() } catch { _ = error }  // the state line says why it still waits
                say(state())
            default:
                fail("unknown session command: \(line)")
            }
        } catch {
            fail("\(error)")
        }
    }
    exit(0)
}
if arguments.first == "domain" {
    guard arguments.count == 3 else { fail("usage: prefs-test-child domain NAME OTHER") }
    do {
        let defaults = try PrefsDefaults(suiteName: arguments[1])
        if let domain = defaults.persistentDomain(forName: arguments[2]) {
            for (key, value) in domain.sorted(by: { $0.key < $1.key }) { say("\(key)=\(value)") }
        } else {
            say("nil")
        }
        defaults.removePersistentDomain(forName: arguments[2])
        exit(defaults.prefs.diagnostics.isEmpty ? 0 : 3)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "standard" {
    guard arguments.count == 3, let value = Int(arguments[2]) else { fail("usage: prefs-test-child standard KEY VALUE") }
    struct Model {
        @Pref<Int> var count: Int
    }
    do {
        let model = Model(count: Pref(try Prefs.Key(validating: arguments[1], initial: 0)))
        model.count = value
        try Prefs.standard.flush()
        say(Prefs.standard.storage.path ?? "memory")
        exit(Prefs.standard.diagnostics.isEmpty ? 0 : 3)
    } catch {
        fail("\(error)")
    }
}
if arguments.first == "open" {
    guard arguments.count == 3 else { fail("usage: prefs-test-child open json|sqlite|file PATH") }
    // A regression that reads /dev/zero would fill the memory: cap it at 1 GiB. Not under a sanitizer, whose
    // runtime maps far more than that for its shadow memory before main.
    let program = dlopen(nil, RTLD_NOW)
    let runtimes: [String] = ["__tsan_init", "__asan_init"]
    let sanitized = runtimes.contains { dlsym(program, $0) != nil }
    if !sanitized {
        var cap = rlimit(rlim_cur: 1 << 30, rlim_max: 1 << 30)
        #if canImport(Glibc)
        _ = setrlimit(Int32(RLIMIT_DATA.rawValue), &cap)
        #else
        _ = setrlimit(RLIMIT_DATA, &cap)
        #endif
    }
    let url = URL(fileURLWithPath: arguments[2])
    do {
        let storage: Prefs.Storage =
            switch arguments[1] {
            case "json": .jsonFile(url)
            case "sqlite": .sqlite(url)
            default: try .file(url)
            }
        _ = try Prefs(storage)
        say("opened")
        exit(0)
    } catch {
        fail("\(error)")
    }
}
/// The store of `coalesced`: a global, never released, as an app keeps its store.
let coalescedStore: Prefs? =
    arguments.first == "coalesced"
    ? {
        guard arguments.count == 6, arguments[1] == "json", let value = Int(arguments[4]) else {
            fail("usage: prefs-test-child coalesced json PATH KEY VALUE exit|return")
        }
        do {
            let prefs = try Prefs(.jsonFile(URL(fileURLWithPath: arguments[2]), writeMode: .coalesced(.seconds(3600))))
            try prefs.set(value, for: try Prefs.Key(validating: arguments[3], initial: 0))
            return prefs
        } catch {
            fail("\(error)")
        }
    }() : nil
if coalescedStore != nil {
    say("set")
    if arguments[5] == "exit" { exit(0) }
} else {
    guard arguments.count >= 4 else { fail("usage: prefs-test-child write|batch|update|watch json|sqlite PATH ARGS…") }
    let url = URL(fileURLWithPath: arguments[2])
    var fileStorage: Prefs.Storage = arguments[1] == "json" ? .jsonFile(url, lockTimeout: .seconds(30)) : .sqlite(url, busyTimeout: .seconds(30))
    if noIdleCompaction { fileStorage = fileStorage.idleCompaction(after: nil) }
    let storage: Prefs.Storage =
        postgreSQLStorage(kind: arguments[1], url: arguments[2])
        ?? compactionFloor.map { fileStorage.journalCompactionFloor($0) } ?? fileStorage

    do {
        let prefs = try Prefs(storage, pollInterval: .milliseconds(20))
        switch arguments[0] {
        case "write":
            guard arguments.count == 5, let count = Int(arguments[4]) else { fail("write needs PREFIX COUNT") }
            for index in 0..<count {
                try prefs.set(index, for: try Prefs.Key(validating: "\(arguments[3])-\(index)", initial: -1))
                say("ack \(index)")
            }
        case "batch":
            guard arguments.count == 5, let count = Int(arguments[4]) else { fail("batch needs PREFIX COUNT") }
            try prefs.batch { transaction in
                for index in 0..<count {
                    try transaction.set(index, for: try Prefs.Key(validating: "\(arguments[3])-\(index)", initial: -1))
                }
            }
            say("ack")
        case "repeat":
            guard arguments.count == 5 else { fail("repeat needs PREFIX set|batch|transaction|update") }
            let prefix = arguments[3]
            func key(_ suffix: String) throws -> Prefs.Key<Int> { try Prefs.Key(validating: "\(prefix)-\(suffix)", initial: -1) }
            for index in 0... {
                switch arguments[4] {
                case "set":
                    try prefs.set(index, for: try key("\(index)"))
                case "batch":
                    try prefs.batch { transaction in
                        for part in 0..<16 { try transaction.set(index, for: try key("\(index)-\(part)")) }
                    }
                case "transaction":
                    let read = try prefs.transaction { transaction in
                        let next = try transaction.value(for: try key("next"))
                        let value = next < 0 ? 0 : next
                        for part in 0..<16 { try transaction.set(value, for: try key("\(value)-\(part)")) }
                        try transaction.set(value + 1, for: try key("next"))
                        return value
                    }
                    guard read == index else { fail("transaction read \(read), expected \(index)") }
                case "update":
                    let count = try prefs.update(try key("count")) { value in
                        value = max(value, 0) + 1
                        return value
                    }
                    guard count == index + 1 else { fail("update counted \(count), expected \(index + 1)") }
                default:
                    fail("unknown operation \(arguments[4])")
                }
                say("ack \(index)")
            }
        case "update":
            guard arguments.count == 5, let count = Int(arguments[4]) else { fail("update needs KEY COUNT") }
            let key = try Prefs.Key(validating: arguments[3], initial: 0)
            for _ in 0..<count { try prefs.update(key) { $0 += 1 } }
            say("done")
        case "transfer":
            guard arguments.count == 7, let keys = Int(arguments[4]), let count = Int(arguments[5]), let seed = UInt64(arguments[6]) else {
                fail("transfer needs PREFIX KEYS COUNT SEED")
            }
            var random = SeededGenerator(seed: seed)
            let tally = try TransferWorkload.run(
                prefs, keys: TransferWorkload.keys(prefix: arguments[3], count: keys), transactions: count, random: &random)
            say(tally.line)
        case "set":
            guard arguments.count == 6, let type = ValueType(arguments[4]) else { fail("set needs KEY TYPE JSON") }
            try prefs.setStoredValue(StoredValue(type: type, json: try JSON.parse(arguments[5])), forKey: arguments[3])
            say("ack")
        case "sync":
            guard arguments.count == 7 else { fail("sync needs DEVICE CONNINFO KEY VALUE|-") }
            if arguments[6] != "-" { try prefs.setStoredValue(try StoredValue(arguments[6]), forKey: arguments[5]) }
            let engine = try SyncEngine(
                prefs: prefs, transport: try PostgreSQLSyncTransport(arguments[4]), namespaces: ["editor."], device: arguments[3])
            let failure = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                do {
                    try await engine.sync()
                    try await engine.sync()
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            done.wait()
            if let failure = failure.withLock({ $0 }) { fail(failure) }
            say("value \(try prefs.storedValue(forKey: arguments[5])?.jsonText ?? "none")")
        case "hold":
            guard arguments.count == 4 else { fail("hold needs KEY") }
            try prefs.transaction { transaction in
                try transaction.set(1, for: try Prefs.Key(validating: arguments[3], initial: 0))
                say("holding")
                while true { sleep(60) }
            }
        case "watch":
            let key = try Prefs.Key(validating: arguments[3], initial: 0)
            let task = Task.detached {
                for await value in prefs.values(for: key) { say("value \(value)") }
            }
            _ = FileHandle.standardInput.readDataToEndOfFile()
            task.cancel()
        default:
            fail("unknown command \(arguments[0])")
        }
    } catch {
        fail("\(error)")
    }
}
