import BenchSQLite
import Foundation
import Prefs

// Workload 10: app launch. A fresh process opens a store as an app leaves it (200 or 1,000 keys of mixed types: Bool,
// Int, Double, String, Date, small arrays, one Codable struct) and reads the 20 keys its first screen needs, as typed
// values. The parent times the whole process; the child times its open plus the 20 reads.

/// The Codable value a launch store holds under one key, as an app keeps its window or onboarding state.
struct LaunchWindow: Codable, Hashable, PrefsStorable {
    var title: String
    var x: Double
    var y: Double
    var width: Int
    var height: Int
    var pinned: Bool
    var tabs: [String]

    static let sample = LaunchWindow(title: "Main", x: 12.5, y: 40, width: 1280, height: 800, pinned: true, tabs: ["inbox", "drafts"])
    static let empty = LaunchWindow(title: "", x: 0, y: 0, width: 0, height: 0, pinned: false, tabs: [])
}

/// The keys and values of a launch store: key `k<i>` holds a value of kind `i % 7` (key 0 the Codable struct).
struct LaunchStore {
    enum Value: Hashable, CustomStringConvertible {
        case bool(Bool), int(Int), double(Double), string(String), date(Date), strings([String]), ints([Int]), window(LaunchWindow)

        var description: String {
            switch self {
            case .bool(let value): "\(value)"
            case .int(let value): "\(value)"
            case .double(let value): "\(value)"
            case .string(let value): value
            case .date(let value): "\(value.timeIntervalSinceReferenceDate)"
            case .strings(let value): value.joined(separator: ",")
            case .ints(let value): value.map(String.init).joined(separator: ",")
            case .window(let value): "\(value.title) \(value.width)x\(value.height)"
            }
        }
    }

    let n: Int
    var names: [String] { (0..<n).map { "k\($0)" } }

    static func value(_ index: Int) -> Value {
        if index == 0 { return .window(.sample) }
        switch index % 7 {
        case 0: return .bool(index % 2 == 0)
        case 1: return .int(index &* 7919)
        case 2: return .double(Double(index) / 8)
        case 3: return .string("value-\(index)-lorem-ipsum")
        case 4: return .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index)))  // whole seconds: an XML plist keeps no more
        case 5: return .strings(["a\(index)", "b\(index)", "c\(index)"])
        default: return .ints([index, index + 1, index + 2, index + 3])
        }
    }

    /// The 20 keys the first screen reads: key 0 (the Codable struct) and 19 more spread over the store.
    func readIndices() -> [Int] { (0..<20).map { $0 * n / 20 } }

    /// What the 20 reads must return, one line.
    func expected() -> String { readIndices().map { Self.value($0).description }.joined(separator: "|") }

    // MARK: Prefs

    static func read(_ prefs: Prefs, _ index: Int) -> Value {
        let name = "k\(index)"
        switch value(index) {
        case .bool: return .bool(prefs[Prefs.Key(name, initial: false)])
        case .int: return .int(prefs[Prefs.Key(name, initial: 0)])
        case .double: return .double(prefs[Prefs.Key(name, initial: 0.0)])
        case .string: return .string(prefs[Prefs.Key(name, initial: "")])
        case .date: return .date(prefs[Prefs.Key(name, initial: Date(timeIntervalSinceReferenceDate: 0))])
        case .strings: return .strings(prefs[Prefs.Key(name, initial: [String]())])
        case .ints: return .ints(prefs[Prefs.Key(name, initial: [Int]())])
        case .window: return .window(prefs[Prefs.Key(name, initial: LaunchWindow.empty)])
        }
    }

    func write(_ prefs: Prefs) throws {
        try prefs.batch { transaction in
            for index in 0..<n {
                let name = "k\(index)"
                switch Self.value(index) {
                case .bool(let value): try transaction.set(value, for: Prefs.Key(name, initial: false))
                case .int(let value): try transaction.set(value, for: Prefs.Key(name, initial: 0))
                case .double(let value): try transaction.set(value, for: Prefs.Key(name, initial: 0.0))
                case .string(let value): try transaction.set(value, for: Prefs.Key(name, initial: ""))
                case .date(let value): try transaction.set(value, for: Prefs.Key(name, initial: Date(timeIntervalSinceReferenceDate: 0)))
                case .strings(let value): try transaction.set(value, for: Prefs.Key(name, initial: [String]()))
                case .ints(let value): try transaction.set(value, for: Prefs.Key(name, initial: [Int]()))
                case .window(let value): try transaction.set(value, for: Prefs.Key(name, initial: LaunchWindow.empty))
                }
            }
        }
    }

    // MARK: UserDefaults

    /// The same values as an app using UserDefaults keeps them: scalars, dates and arrays as property-list values, the
    /// Codable struct as JSON data (as `@AppStorage` and Defaults' Codable bridge store one).
    func fill(_ defaults: DefaultsBaseline) throws {
        var domain: [String: Any] = [:]
        for index in 0..<n {
            let name = "k\(index)"
            switch Self.value(index) {
            case .bool(let value): domain[name] = value
            case .int(let value): domain[name] = value
            case .double(let value): domain[name] = value
            case .string(let value): domain[name] = value
            case .date(let value): domain[name] = value
            case .strings(let value): domain[name] = value
            case .ints(let value): domain[name] = value
            case .window(let value): domain[name] = try JSONEncoder().encode(value)
            }
        }
        defaults.defaults.setPersistentDomain(domain, forName: defaults.suite)
        defaults.defaults.synchronize()
    }

    static func read(_ defaults: UserDefaults, _ index: Int) throws -> Value {
        let name = "k\(index)"
        switch value(index) {
        case .bool: return .bool(defaults.bool(forKey: name))
        case .int: return .int(defaults.integer(forKey: name))
        case .double: return .double(defaults.double(forKey: name))
        case .string: return .string(defaults.string(forKey: name) ?? "")
        case .date: return .date(defaults.object(forKey: name) as? Date ?? Date(timeIntervalSinceReferenceDate: 0))
        case .strings: return .strings(defaults.stringArray(forKey: name) ?? [])
        case .ints: return .ints(defaults.array(forKey: name) as? [Int] ?? [])
        case .window:
            guard let data = defaults.data(forKey: name) else { throw BenchError("UserDefaults: no data under \(name)") }
            return .window(try JSONDecoder().decode(LaunchWindow.self, from: data))
        }
    }

    // MARK: Raw sqlite3, on the Prefs schema

    /// Opens the file with sqlite3 as an app would (WAL, a busy timeout), prepares `SELECT type, value … WHERE key = ?`
    /// once, and gives `read` the statement stepped to each of `indices`' rows in turn.
    static func rawRows<T>(path: String, indices: [Int], _ read: (OpaquePointer, Int) throws -> T) throws -> [T] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            throw BenchError("sqlite3_open_v2 \(path)")
        }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 5000)
        guard sqlite3_exec(db, "PRAGMA journal_mode = WAL", nil, nil, nil) == SQLITE_OK else { throw BenchError("PRAGMA journal_mode") }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, RawSQLite.selectSQL, -1, 0, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        return try indices.map { index in
            defer { sqlite3_reset(statement) }
            sqlite3_bind_text(statement, 1, "k\(index)", -1, prefs_bench_sqlite_transient())
            guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchError("raw sqlite3: no row for k\(index)") }
            return try read(statement, index)
        }
    }

    /// The same reads with sqlite3 directly on the file Prefs wrote, each value made typed the way an app using
    /// sqlite3 would (JSON text through JSONDecoder).
    static func readRaw(path: String, indices: [Int]) throws -> [Value] {
        let decoder = JSONDecoder()
        return try rawRows(path: path, indices: indices) { statement, index in
            func text() -> String { sqlite3_column_text(statement, 1).map { String(cString: $0) } ?? "" }
            func json() -> Data { Data(text().utf8) }
            switch value(index) {
            case .bool: return .bool(sqlite3_column_int64(statement, 1) != 0)
            case .int: return .int(Int(sqlite3_column_int64(statement, 1)))
            case .double: return .double(sqlite3_column_double(statement, 1))
            case .string: return .string(text())
            case .date:
                guard let date = try? Date(text(), strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) else {
                    throw BenchError("raw sqlite3: k\(index) is not an ISO-8601 date: \(text())")
                }
                return .date(date)
            case .strings: return .strings(try decoder.decode([String].self, from: json()))
            case .ints: return .ints(try decoder.decode([Int].self, from: json()))
            case .window: return .window(try decoder.decode(LaunchWindow.self, from: json()))
            }
        }
    }

    /// The same 20 rows read with sqlite3 and nothing else: integers and reals as they are, text (strings, dates, the
    /// JSON of arrays and of the struct) as Swift strings, not decoded. The floor of the held-out launch probe (issue 44).
    static func readRows(path: String, indices: [Int]) throws -> [String] {
        try rawRows(path: path, indices: indices) { statement, _ in
            switch sqlite3_column_type(statement, 1) {
            case SQLITE_INTEGER: String(sqlite3_column_int64(statement, 1))
            case SQLITE_FLOAT: String(sqlite3_column_double(statement, 1))
            default: sqlite3_column_text(statement, 1).map { String(cString: $0) } ?? ""
            }
        }
    }

    // MARK: JSONDecoder, on the Prefs JSON file

    /// Any JSON value, as JSONDecoder decodes one without knowing its shape.
    enum AnyJSON: Decodable {
        case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([AnyJSON].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: AnyJSON].self))
            }
        }
    }

    /// The whole store file decoded by JSONDecoder into a struct (the values as tagged JSON), then the 20 values
    /// taken from it: the floor of a JSON store that parses its file whole at launch.
    struct Document: Decodable {
        struct Entry: Decodable {
            var type: String
            var value: AnyJSON
        }
        var values: [String: Entry]
    }

    static func readDecoded(path: String, indices: [Int]) throws -> [Value] {
        let document = try JSONDecoder().decode(Document.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        return try indices.map { index in
            guard let entry = document.values["k\(index)"] else { throw BenchError("JSONDecoder: no k\(index)") }
            return try typed(entry.value, as: value(index), key: "k\(index)")
        }
    }

    private static func typed(_ json: AnyJSON, as expected: Value, key: String) throws -> Value {
        func strings(_ items: [AnyJSON]) -> [String] { items.compactMap { if case .string(let value) = $0 { value } else { nil } } }
        switch (expected, json) {
        case (.bool, .bool(let value)): return .bool(value)
        case (.int, .number(let value)): return .int(Int(value))
        case (.double, .number(let value)): return .double(value)
        case (.string, .string(let value)): return .string(value)
        case (.date, .string(let text)):
            return .date(try Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
        case (.strings, .array(let items)): return .strings(strings(items))
        case (.ints, .array(let items)): return .ints(items.compactMap { if case .number(let value) = $0 { Int(value) } else { nil } })
        case (.window, .object(let members)):
            func number(_ name: String) -> Double { if case .number(let value)? = members[name] { value } else { 0 } }
            guard case .string(let title)? = members["title"], case .bool(let pinned)? = members["pinned"], case .array(let tabs)? = members["tabs"]
            else { throw BenchError("JSONDecoder: \(key) is not a window") }
            return .window(
                LaunchWindow(
                    title: title, x: number("x"), y: number("y"), width: Int(number("width")), height: Int(number("height")), pinned: pinned,
                    tabs: strings(tabs)))
        default: throw BenchError("JSONDecoder: \(key) holds \(json), expected \(expected)")
        }
    }
}

extension Bench {
    func appLaunch(n: Int) throws {
        let store = LaunchStore(n: n)
        var paths: [Backend: String] = [:]
        var directories: [String] = []
        defer { directories.forEach(Scratch.remove) }
        for backend in Backend.files {
            progress("10. writing a \(backend.rawValue) launch store of \(Format.count(n)) keys")
            let directory = Scratch.directory("launch-\(backend.rawValue)")
            directories.append(directory)
            let prefs = try Prefs(backend.storage(in: directory))
            try store.write(prefs)  // each key's first set records its declaration, as an app's would
            try prefs.close()
            paths[backend] = backend.path(in: directory)!
        }
        let defaults = try DefaultsBaseline()
        defer { defaults.remove() }
        try store.fill(defaults)
        let expected = store.expected()

        func child(_ name: String, _ role: Contender.Role, _ kind: String, _ path: String) -> Contender {
            Contender(name: name, role: role, maxOps: 1) {
                .init { _, _ in
                    let result = try runChild(["--child-launch", kind, path, "\(n)"])
                    guard let text = field("open_read_ns", in: result.output), let inside = Double(text) else {
                        throw BenchError("launch child \(kind) printed no open_read_ns: \(result.output)")
                    }
                    if kind != "none", kind != "raw-sqlite-rows", field("values", in: result.output) != expected {
                        throw BenchError("launch child \(kind) read \(field("values", in: result.output) ?? "nothing"), expected \(expected)")
                    }
                    let phases = kind == "none" ? [:] : ["open+20 reads": Trial(ops: 1, elapsed: .nanoseconds(Int64(inside)))]
                    return Trial(ops: 1, elapsed: result.elapsed, phases: phases)
                }
            }
        }
        let (sqlite, json) = (Backend.sqlite.contenderName, Backend.json.contenderName)
        let contenders = [
            child("empty process", .baseline, "none", "-"),
            child(Name.rawSQLite, .baseline, "raw-sqlite", paths[.sqlite]!),
            child(Name.rawRows, .baseline, "raw-sqlite-rows", paths[.sqlite]!),
            child(Name.rawTyped, .baseline, "raw-sqlite-typed", paths[.sqlite]!),
            child(Name.jsonDecoder, .baseline, "json-decoder", paths[.json]!),
            child(Name.defaults, .baseline, "userdefaults", defaults.suite),
            child(sqlite, .subject, "sqlite", paths[.sqlite]!),
            child(json, .subject, "json", paths[.json]!),
        ]
        let inside = " · open+20 reads"
        try measure(
            workload: 10, title: "App launch: a fresh process opens a store of mixed types and reads 20 keys",
            data: (n: n, label: "N = \(Format.count(n)), mixed", type: "mixed"), contenders: contenders, metric: "process", display: .total,
            rules: [
                Rule(subject: sqlite + inside, baseline: Name.rawSQLite + inside, target: .within(1.2)),
                Rule(subject: sqlite + inside, baseline: Name.rawTyped + inside, target: .within(1.2)),
                Rule(subject: sqlite + inside, baseline: Name.rawRows + inside),
                Rule(subject: json + inside, baseline: Name.jsonDecoder + inside, target: .within(0.25)),
                Rule(subject: sqlite + inside, baseline: Name.defaults + inside),
                Rule(subject: json + inside, baseline: Name.defaults + inside),
                Rule(subject: sqlite, baseline: Name.rawSQLite),
                Rule(subject: json, baseline: Name.jsonDecoder),
            ],
            notes: [
                Name.rawSQLite: "sqlite3 on the file Prefs wrote: one prepared SELECT per key, arrays and the struct through JSONDecoder",
                Name.rawRows: "the same 20 rows through sqlite3 only: numbers as they are, text (dates, JSON) not decoded",
                Name.rawTyped:
                    "the same 20 rows through sqlite3, typed without Foundation: dates by fixed offsets, the JSON scanned in place",
                Name.jsonDecoder: "the whole file decoded by JSONDecoder (values as tagged JSON), then the 20 values taken from it",
                Name.defaults: "corelibs UserDefaults reading its plist; the struct stored as JSON data, decoded by JSONDecoder",
            ],
            budget: Budget(rounds: settings.coldStarts, minRounds: settings.coldStarts, sample: .zero, perContender: .seconds(3600)))
    }
}

/// The child side of workload 10: open the store, read the 20 keys as typed values, print the time and the values.
func childLaunch(kind: String, path: String, n: Int) throws {
    let store = LaunchStore(n: n)
    let indices = store.readIndices()
    let start = clock.now
    let values: [LaunchStore.Value]
    switch kind {
    case "none":
        values = []
    case "sqlite", "json":
        let url = URL(fileURLWithPath: path)
        // The child's command line (`--child-launch KIND PATH N`) is the benchmark's, not an app's launch arguments: a
        // store given it would read `-child-launch` as a key set for this launch (an app launched as usual has none).
        let prefs = try Prefs(kind == "sqlite" ? .sqlite(url) : .jsonFile(url), launchArguments: [])
        values = indices.map { LaunchStore.read(prefs, $0) }
    case "raw-sqlite":
        values = try LaunchStore.readRaw(path: path, indices: indices)
    case "raw-sqlite-rows":
        let rows = try LaunchStore.readRows(path: path, indices: indices)
        let elapsed = clock.now - start
        print("open_read_ns=\(Int(elapsed.nanoseconds))")
        print("rows=\(rows.count)")
        return
    case "raw-sqlite-typed":
        values = try LaunchStore.readTyped(path: path, indices: indices)
    case "write-sqlite", "write-json":
        // Not timed: the store a launch reads, left at PATH, to profile a child (`valgrind --tool=callgrind prefs-bench
        // --child-launch sqlite PATH N`) on the file the workload writes.
        let url = URL(fileURLWithPath: path)
        let prefs = try Prefs(kind == "write-sqlite" ? .sqlite(url) : .jsonFile(url))
        try store.write(prefs)
        try prefs.close()
        return
    case "json-decoder":
        values = try LaunchStore.readDecoded(path: path, indices: indices)
    case "userdefaults":
        let defaults = try DefaultsBaseline(existing: path).defaults
        values = try indices.map { try LaunchStore.read(defaults, $0) }
    default:
        throw BenchError(
            "unknown launch kind \(kind): expected sqlite, json, raw-sqlite, raw-sqlite-rows, raw-sqlite-typed, json-decoder, userdefaults, none, "
                + "write-sqlite or write-json")
    }
    let elapsed = clock.now - start
    print("open_read_ns=\(Int(elapsed.nanoseconds))")
    if kind != "none" { print("values=\(values.map(\.description).joined(separator: "|"))") }
}
