import Foundation
@_spi(Tooling) import Prefs

// Peak memory: one child process per contender fills a store of N Int keys and reads every key, then reports
// VmHWM from /proc/self/status. Separate processes, so that one contender's allocations do not mix with another's.

enum MemoryKind: String, CaseIterable {
    case empty
    case dictionary
    case memory, sqlite, json
    case jsonCoalesced = "json-coalesced"
    case rawSQLite = "raw-sqlite"
    case codable = "json-codable"
    case defaults = "userdefaults"

    var displayName: String {
        switch self {
        case .empty: "empty"
        case .dictionary: Name.dictionary
        case .memory, .sqlite, .json, .jsonCoalesced: Backend(rawValue: rawValue)!.contenderName
        case .rawSQLite: Name.rawSQLite
        case .codable: "JSONEncoder/JSONDecoder"
        case .defaults: Name.defaults
        }
    }
}

extension Bench {
    func peakMemory(n: Int) throws {
        for kind in MemoryKind.allCases {
            if kind == .defaults, !includesDefaults(n, workload: 8) { continue }
            progress("8. peak memory: \(kind.displayName), N = \(Format.count(n))")
            let result = try runChild(["--child-peak-memory", kind.rawValue, "\(n)"])
            guard let base = field("base_kib", in: result.output).flatMap(Int.init),
                let peak = field("peak_kib", in: result.output).flatMap(Int.init)
            else {
                throw BenchError("peak-memory child \(kind.rawValue) printed: \(result.output)")
            }
            recorder.memory.append(PeakMemory(contender: kind.displayName, n: n, baseKiB: base, peakKiB: peak))
        }
        Report.printMemory(recorder.memory)
    }
}

/// The child side: make the keys and values, note VmHWM, fill the store, read every key, note VmHWM again.
func childPeakMemory(kind name: String, n: Int) throws {
    guard let kind = MemoryKind(rawValue: name) else {
        throw BenchError("unknown kind \(name): expected one of \(MemoryKind.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    defer { Scratch.removeAll() }
    let data = try DataSet<Int>(n: n)
    let base = peakResidentKiB()
    var peak: Int?  // taken before closing, for contenders whose close frees memory
    switch kind {
    case .empty:
        break
    case .dictionary:
        let dictionary = MutexDictionary(data.dictionary())
        for name in data.names { blackHole(dictionary.get(name)) }
    case .memory, .sqlite, .json, .jsonCoalesced:
        let store = try OpenStore(Backend(rawValue: kind.rawValue)!)
        try store.fill(data)
        store.warm(data.keys)
        peak = peakResidentKiB()
        store.close()
    case .rawSQLite:
        let directory = Scratch.directory("raw")
        let raw = try RawSQLite(path: directory + "/raw.sqlite")
        try raw.setAll(data.values(round: 0), for: data.names, count: n)
        for name in data.names { blackHole(try raw.get(name, as: Int.self)) }
        raw.close()
    case .codable:
        let path = Scratch.directory("json") + "/prefs.json"
        try JSONBaseline.save(JSONBaseline.document(data.dictionary()), to: path)
        let document = try JSONBaseline.load(path, as: Int.self)
        for name in data.names { blackHole(document.values[name]?.value) }
    case .defaults:
        let defaults = try DefaultsBaseline()
        defaults.fill(data.names, data.values(round: 0))
        for name in data.names { blackHole(defaults.defaults.integer(forKey: name)) }
        peak = peakResidentKiB()
        defaults.remove()
    }
    print("base_kib=\(base)")
    print("peak_kib=\(peak ?? peakResidentKiB())")
}
