import BenchHeap
import Foundation
import Prefs

// Peak memory: one child process per contender fills a store of N Int keys and reads every key, then reports
// VmHWM from /proc/self/status, and the heap still in use (malloc's count of the bytes it handed out), from which the
// bytes per key at 1k, where pages are too coarse a measure. Separate processes, so that one contender's allocations do
// not mix with another's.

enum MemoryKind: String, CaseIterable {
    case empty
    case dictionary
    case memory, sqlite, json
    /// The memory store and the `Dictionary` again, their keys set one at a time rather than in one batch (and no
    /// `declare`: each first set records its key's declaration).
    case memoryOneByOne = "memory-one-by-one"
    case dictionaryOneByOne = "dictionary-one-by-one"
    case jsonCoalesced = "json-coalesced"
    case rawSQLite = "raw-sqlite"
    case codable = "json-codable"
    case defaults = "userdefaults"

    var displayName: String {
        switch self {
        case .empty: "empty"
        case .dictionary: Name.dictionary
        case .memory, .sqlite, .json, .jsonCoalesced: Backend(rawValue: rawValue)!.contenderName
        case .memoryOneByOne: Name.memoryOneByOne
        case .dictionaryOneByOne: Name.dictionaryOneByOne
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
            let heap = field("heap_bytes", in: result.output).flatMap(Int.init).flatMap { $0 >= 0 ? $0 : nil }
            recorder.memory.append(PeakMemory(contender: kind.displayName, n: n, baseKiB: base, peakKiB: peak, heapBytes: heap))
        }
        Report.printMemory(recorder.memory.filter { $0.n == n })
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
    let heapBase = prefs_bench_heap_in_use()
    var peak: Int?  // taken before closing, for contenders whose close frees memory
    var heap: Int64?  // the same
    switch kind {
    case .empty:
        break
    case .dictionary:
        let dictionary = MutexDictionary(data.dictionary())
        for name in data.names { blackHole(dictionary.get(name)) }
        heap = prefs_bench_heap_in_use()
        withExtendedLifetime(dictionary) {}
    case .dictionaryOneByOne:
        let dictionary = MutexDictionary<Int>()
        let values = data.values(round: 0)
        for index in 0..<n { dictionary.set(values[index], for: data.names[index]) }
        for name in data.names { blackHole(dictionary.get(name)) }
        heap = prefs_bench_heap_in_use()
        withExtendedLifetime(dictionary) {}
    case .memoryOneByOne:
        let store = try OpenStore(.memory)
        try store.fillOneByOne(data)
        store.warm(data.keys)
        peak = peakResidentKiB()
        heap = prefs_bench_heap_in_use()
        store.close()
    case .memory, .sqlite, .json, .jsonCoalesced:
        let store = try OpenStore(Backend(rawValue: kind.rawValue)!)
        try store.fill(data)
        store.warm(data.keys)
        peak = peakResidentKiB()
        heap = prefs_bench_heap_in_use()
        store.close()
    case .rawSQLite:
        let directory = Scratch.directory("raw")
        let raw = try RawSQLite(path: directory + "/raw.sqlite")
        try raw.setAll(data.values(round: 0), for: data.names, count: n)
        for name in data.names { blackHole(try raw.get(name, as: Int.self)) }
        heap = prefs_bench_heap_in_use()
        raw.close()
    case .codable:
        let path = Scratch.directory("json") + "/prefs.json"
        try JSONBaseline.save(JSONBaseline.document(data.dictionary()), to: path)
        let document = try JSONBaseline.load(path, as: Int.self)
        for name in data.names { blackHole(document.values[name]?.value) }
        heap = prefs_bench_heap_in_use()
        withExtendedLifetime(document) {}
    case .defaults:
        let defaults = try DefaultsBaseline()
        defaults.fill(data.names, data.values(round: 0))
        for name in data.names { blackHole(defaults.defaults.integer(forKey: name)) }
        peak = peakResidentKiB()
        heap = prefs_bench_heap_in_use()
        defaults.remove()
    }
    print("base_kib=\(base)")
    print("peak_kib=\(peak ?? peakResidentKiB())")
    let heapNow = heap ?? prefs_bench_heap_in_use()
    print("heap_bytes=\(heapBase < 0 || heapNow < 0 ? -1 : heapNow - heapBase)")
    withExtendedLifetime(data) {}  // the keys and values are the base of every contender: alive until measured
}
