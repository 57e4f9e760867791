import CLMDB
import Foundation
import Prefs

// Workload 1: typed get of a stored key (cache hit) and of a key never written (initial value);
// and, for the record, the first read of a stored key in a freshly opened store.

/// How the LMDB get is measured, in the tables' notes.
let lmdbGetNote =
    "mdb_txn_renew + mdb_get + mdb_txn_reset of one long-lived read-only transaction per get (each get sees the latest commit); the bytes are not decoded"

final class Counter: @unchecked Sendable {
    var value = 0
}

extension Bench {
    func typedGet<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        var stores: [OpenStore] = []
        defer { stores.forEach { $0.close() } }
        for backend in Backend.allCases {
            progress("1. filling \(backend.rawValue), \(data.label)")
            let store = try OpenStore(backend)
            stores.append(store)
            try store.fill(data)
            try store.prefs.declare(data.absentKeys)  // declared up front: steady-state reads never write
            store.warm(data.keys)
            store.warm(data.absentKeys)
        }
        let dictionary = MutexDictionary(data.dictionary())
        // LMDB holds the same N keys with the bytes Prefs stores for their values, written in one transaction.
        let lmdbStored = try LMDBBytes(data)
        let lmdbAbsent = try LMDBBytes(names: data.absentNames, values: [[V]]())
        let lmdb = try LMDBBaseline()
        defer { lmdb.close() }
        try lmdb.setAll(lmdbStored.values(round: 0), for: lmdbStored.names, count: n)
        let defaults = includesDefaults(n, workload: 1) ? try DefaultsBaseline() : nil
        defer { defaults?.remove() }
        defaults?.fill(data.names, data.values(round: 0))

        func contenders(_ names: [String], _ keys: [Prefs.Key<V>], _ lmdbKeys: [MDB_val]) -> [Contender] {
            var list = [
                Contender(name: Name.dictionary, role: .baseline, maxOps: n) {
                    .init { _, ops in timed(ops: ops) { for i in 0..<ops { blackHole(dictionary.get(names[i]) ?? V.initialValue) } } }
                },
                Contender(name: Name.lmdb, role: .baseline, maxOps: n) {
                    .init { _, ops in try timed(ops: ops) { for i in 0..<ops { blackHole(try lmdb.get(lmdbKeys[i])) } } }
                },
            ]
            if let defaults {
                list.append(
                    Contender(name: Name.defaults, role: .baseline, maxOps: n, adaptive: true) {
                        .init { _, ops in timed(ops: ops) { for i in 0..<ops { blackHole(V.read(from: defaults.defaults, forKey: names[i])) } } }
                    })
            }
            for store in stores {
                list.append(
                    Contender(name: store.backend.contenderName, role: .subject, maxOps: n) {
                        .init { _, ops in timed(ops: ops) { for i in 0..<ops { blackHole(store.prefs[keys[i]]) } } }
                    })
            }
            return list
        }
        let subjects = Backend.allCases.map(\.contenderName)
        try measure(
            workload: 1, title: "Typed get of a stored key (cache hit)", data: data.info,
            contenders: contenders(data.names, data.keys, lmdbStored.names), metric: "get",
            rules: subjects.flatMap {
                [
                    // Issue 32's goals: a cache hit within 1.5× a Dictionary behind a Mutex, and faster than LMDB's get.
                    Rule(subject: $0, baseline: Name.dictionary, target: .within(1.5)), Rule(subject: $0, baseline: Name.defaults),
                    Rule(subject: $0, baseline: Name.lmdb, target: .within(0.7)),
                ]
            },
            notes: [Name.lmdb: lmdbGetNote])
        try measure(
            workload: 1, title: "Typed get of a key never written (initial value)", data: data.info,
            contenders: contenders(data.absentNames, data.absentKeys, lmdbAbsent.names), metric: "get initial",
            rules: subjects.flatMap {
                [
                    Rule(subject: $0, baseline: Name.dictionary), Rule(subject: $0, baseline: Name.defaults),
                    Rule(subject: $0, baseline: Name.lmdb),
                ]
            },
            notes: [Name.lmdb: "mdb_get of a key never written (MDB_NOTFOUND), in the read transaction renewed and reset per get"])
        try firstRead(data)
    }

    /// The first read of each stored key in a freshly opened store that has not recorded the keys' declarations
    /// (a store another process wrote, or keys new in this app version). Each round opens the store again (untimed)
    /// and reads keys no earlier round read.
    func firstRead<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        let budget = settings.budget(n)
        let maxOps = max(1, n / (budget.rounds + 2))
        var contenders: [Contender] = []
        var sqlitePath = ""
        for backend in Backend.files {
            let directory = Scratch.directory("first-read-\(backend.rawValue)")
            let store = try Prefs(backend.storage(in: directory))
            try store.batch { transaction in
                for (key, value) in zip(data.keys, data.values(round: 0)) { try transaction.set(value, for: key) }
            }
            try store.close()
            if backend == .sqlite { sqlitePath = backend.path(in: directory)! }
            let next = Counter()
            contenders.append(
                Contender(name: backend.contenderName, role: .subject, maxOps: maxOps, adaptive: true) {
                    .init(
                        run: { _, ops in
                            let prefs = try Prefs(backend.storage(in: directory))
                            defer { try? prefs.close() }
                            let start = next.value
                            next.value += ops
                            return timed(ops: ops) { for i in start..<start + ops { blackHole(prefs[data.keys[i % n]]) } }
                        }, finish: { Scratch.remove(directory) })
                })
        }
        let path = sqlitePath
        contenders.insert(
            Contender(name: Name.rawSQLite, role: .baseline, maxOps: maxOps, adaptive: true) {
                let raw = try RawSQLite(path: path, createSchema: false)
                let next = Counter()
                return .init(
                    run: { _, ops in
                        let start = next.value
                        next.value += ops
                        return try timed(ops: ops) { for i in start..<start + ops { blackHole(try raw.get(data.names[i % n], as: V.self)) } }
                    }, finish: { raw.close() })
            }, at: 0)
        try measure(
            workload: 1, title: "First read of a stored key in a freshly opened store (for the record)", data: data.info,
            contenders: contenders, metric: "first get",
            rules: [Rule(subject: Backend.sqlite.contenderName, baseline: Name.rawSQLite), Rule(subject: Backend.json.contenderName, baseline: Name.rawSQLite)])
    }
}
