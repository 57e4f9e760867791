import Foundation
import Prefs

// Workload 5: cold start. A fresh process of this binary opens a store of N keys and reads one key; the parent
// times the whole process, the child times its open plus read and prints it.

extension Bench {
    func coldStart<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        let key = data.names[n / 2]
        let expected = "\(data.values(round: 0)[n / 2])"
        // Stores as an app leaves them: N values written by Prefs, the keys' declarations recorded.
        var paths: [Backend: String] = [:]
        var directories: [String] = []
        defer { directories.forEach(Scratch.remove) }
        for backend in Backend.files {
            progress("5. writing a \(backend.rawValue) store, \(data.label)")
            let directory = Scratch.directory("cold-\(backend.rawValue)")
            directories.append(directory)
            let prefs = try Prefs(backend.storage(in: directory))
            try prefs.batch { transaction in
                for (key, value) in zip(data.keys, data.values(round: 0)) { try transaction.set(value, for: key) }
            }
            try prefs.declare(data.keys)
            try prefs.close()
            paths[backend] = backend.path(in: directory)!
        }
        let defaults = includesDefaults(n, workload: 5) ? try DefaultsBaseline() : nil
        defer { defaults?.remove() }
        defaults?.fill(data.names, data.values(round: 0))

        func child(_ name: String, _ role: Contender.Role, _ kind: String, _ path: String) -> Contender {
            Contender(name: name, role: role, maxOps: 1) {
                .init { _, _ in
                    let result = try runChild(["--child-cold-start", kind, path, key, V.typeName])
                    guard let text = field("open_read_ns", in: result.output), let inside = Double(text) else {
                        throw BenchError("child \(kind) printed no open_read_ns: \(result.output)")
                    }
                    if kind != "none", field("value", in: result.output) != expected {
                        throw BenchError("child \(kind) read \(field("value", in: result.output) ?? "nothing"), expected \(expected)")
                    }
                    let phases = kind == "none" ? [:] : ["open+read": Trial(ops: 1, elapsed: .nanoseconds(Int64(inside)))]
                    return Trial(ops: 1, elapsed: result.elapsed, phases: phases)
                }
            }
        }
        let (sqlite, json) = (Backend.sqlite.contenderName, Backend.json.contenderName)
        var contenders = [
            child("empty process", .baseline, "none", "-"),
            child(Name.rawSQLite, .baseline, "raw-sqlite", paths[.sqlite]!),
            child(Name.jsonDecoder, .baseline, "json-decoder", paths[.json]!),
        ]
        if let defaults { contenders.append(child(Name.defaults, .baseline, "userdefaults", defaults.suite)) }
        contenders += [child(sqlite, .subject, "sqlite", paths[.sqlite]!), child(json, .subject, "json", paths[.json]!)]
        let openRead = " · open+read"
        try measure(
            workload: 5, title: "Cold start: a fresh process opens a store of N keys and reads one", data: data.info,
            contenders: contenders, metric: "process", display: .total,
            rules: [
                Rule(subject: sqlite + openRead, baseline: Name.rawSQLite + openRead, target: n == 100_000 ? .within(2) : nil),
                Rule(subject: sqlite, baseline: Name.rawSQLite),
                Rule(subject: sqlite, baseline: Name.defaults),
                Rule(subject: json + openRead, baseline: Name.jsonDecoder + openRead, target: .within(1.3)),
                Rule(subject: json, baseline: Name.jsonDecoder),
                Rule(subject: json, baseline: Name.defaults),
            ],
            budget: Budget(rounds: settings.coldStarts, minRounds: settings.coldStarts, sample: .zero, perContender: .seconds(3600)))
    }
}

/// The child side of workload 5: open the store, read `key`, print the time and the value.
func childColdStart(kind: String, path: String, key: String, valueType: String) throws {
    switch valueType {
    case "int": try coldRead(Int.self, kind: kind, path: path, key: key)
    case "string": try coldRead(String.self, kind: kind, path: path, key: key)
    default: throw BenchError("value type \(valueType): expected int or string")
    }
}

private func coldRead<V: BenchValue>(_: V.Type, kind: String, path: String, key: String) throws {
    let url = URL(fileURLWithPath: path)
    let start = clock.now
    let value: V?
    switch kind {
    case "none":
        value = nil
    case "sqlite", "json":
        // The child's command line (`--child-cold-start KIND PATH KEY TYPE`) is the benchmark's, not an app's launch arguments: a
        // store given it would read `-child-cold-start` as a key set for this launch (an app launched as usual has none).
        let prefs = try Prefs(kind == "sqlite" ? .sqlite(url) : .jsonFile(url), launchArguments: [])
        value = prefs[try Prefs.Key(validating: key, initial: V.initialValue)]
    case "raw-sqlite":
        let raw = try RawSQLite(path: path, createSchema: false)
        value = try raw.get(key, as: V.self)
    case "json-decoder":
        value = try JSONBaseline.load(path, as: V.self).values[key]?.value
    case "userdefaults":
        value = V.read(from: try DefaultsBaseline(existing: path).defaults, forKey: key)
    default:
        throw BenchError("unknown cold-start kind \(kind): expected sqlite, json, raw-sqlite, json-decoder, userdefaults or none")
    }
    let elapsed = clock.now - start
    print("open_read_ns=\(Int(elapsed.nanoseconds))")
    if let value { print("value=\(value)") }
}
