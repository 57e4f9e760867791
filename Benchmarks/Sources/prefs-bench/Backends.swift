import Foundation
import Prefs

// The Prefs backends under test and how a workload opens and fills one.

enum Backend: String, CaseIterable, Codable {
    case memory
    case sqlite
    case json
    case jsonCoalesced = "json-coalesced"

    /// Backends whose single set survives a crash of the app (workload 2).
    static let durable: [Backend] = [.sqlite, .json]
    /// Backends with a file a fresh process can open (workload 5).
    static let files: [Backend] = [.sqlite, .json]

    var contenderName: String { "Prefs " + rawValue }

    /// The store file inside `directory`.
    func path(in directory: String) -> String? {
        switch self {
        case .memory: nil
        case .sqlite: directory + "/prefs.sqlite"
        case .json, .jsonCoalesced: directory + "/prefs.json"
        }
    }

    func storage(in directory: String) -> Prefs.Storage {
        switch self {
        case .memory: .memory
        case .sqlite: .sqlite(URL(fileURLWithPath: path(in: directory)!))
        case .json: .jsonFile(URL(fileURLWithPath: path(in: directory)!))
        case .jsonCoalesced: .jsonFile(URL(fileURLWithPath: path(in: directory)!), writeMode: .coalesced(.seconds(1)))
        }
    }
}

/// One open store in its own fresh directory, removed by `close()`.
final class OpenStore {
    let backend: Backend
    let directory: String
    let prefs: Prefs

    init(_ backend: Backend) throws {
        self.backend = backend
        directory = Scratch.directory(backend.rawValue)
        prefs = try Prefs(backend.storage(in: directory))
    }

    /// Writes the data set's values in one batch and records the keys' declarations, as an app that has
    /// used them would have (reading a key records its declaration), then flushes.
    func fill<V: BenchValue>(_ data: DataSet<V>, count: Int? = nil, declare: Bool = true) throws {
        let count = count ?? data.n
        let values = data.values(round: 0)
        try prefs.batch { transaction in
            for index in 0..<count { try transaction.set(values[index], for: data.keys[index]) }
        }
        // The whole data set's keys as they are: a copy of 100,000 references would be 0.8 MB of the harness's in the
        // store's peak memory (workload 8).
        if declare { try prefs.declare(count == data.n ? data.keys : Array(data.keys[0..<count])) }
        try prefs.flush()
    }

    /// One write of a key outside the data set, before timing: the raw sqlite3 baseline creates its table in WAL mode
    /// before its timed batch, so its WAL already holds a frame; a new SQLite store creates its tables before switching
    /// to WAL (so that a file that is not a store is never switched), and its first write in WAL mode syncs the WAL
    /// header and the folder. Each side's batch then starts from a store that has written once.
    func writeOnce() throws {
        try prefs.set(true, for: Self.written)
    }

    private static let written = Prefs.Key<Bool>("bench.written", initial: false)

    /// Writes the data set's values one `set` at a time, as an app that sets each key as it goes (each set records
    /// its key's declaration), then flushes.
    func fillOneByOne<V: BenchValue>(_ data: DataSet<V>) throws {
        let values = data.values(round: 0)
        for index in 0..<data.n { try prefs.set(values[index], for: data.keys[index]) }
        try prefs.flush()
    }

    /// Reads every key once so that later reads are cache hits.
    func warm<V: BenchValue>(_ keys: [Prefs.Key<V>]) {
        for key in keys { blackHole(prefs[key]) }
    }

    func close() {
        try? prefs.close()
        Scratch.remove(directory)
    }
}
