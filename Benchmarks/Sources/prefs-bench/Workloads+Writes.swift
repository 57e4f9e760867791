import CLMDB
import Foundation
import Prefs

// Workloads 2–4: durable single sets, batched sets, and the JSON backend in coalesced mode.

extension Bench {
    /// 2. A set that survives an app crash, one write per call, into a store that holds N keys.
    /// Writes that rewrite a whole file cost O(N) each, so samples are sized to the time budget.
    func singleSet<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        var contenders = [
            Contender(name: Name.dictionary, role: .baseline, maxOps: n) {
                let dictionary = MutexDictionary(data.dictionary())
                return .init { round, ops in
                    let values = data.values(round: round)
                    return timed(ops: ops) { for i in 0..<ops { dictionary.set(values[i], for: data.names[i]) } }
                }
            },
            Contender(name: Name.write2, role: .baseline, maxOps: n, adaptive: true) {
                // The floor of any durable set that appends: one write(2), to a file opened O_APPEND, of a line of the
                // shape and length of the journal line the JSON store writes for that set (see journalLine).
                let directory = Scratch.directory("write2")
                let path = directory + "/records.jsonl"
                let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw BenchError("open \(path): errno \(errno)") }
                // Each round's lines, end to end in one buffer (so that reaching a line costs no more than an index).
                let rounds: [(bytes: [UInt8], ends: [Int])] = try (0..<2).map { round in
                    var bytes: [UInt8] = []
                    var ends: [Int] = []
                    for (index, entry) in zip(data.names, data.values(round: round)).enumerated() {
                        bytes += try Self.journalLine(sequence: index + 1, key: entry.0, value: StoredValue(entry.1))
                        ends.append(bytes.count)
                    }
                    return (bytes, ends)
                }
                return .init(
                    run: { round, ops in
                        let (bytes, ends) = rounds[(round + 2) % 2]
                        return try bytes.withUnsafeBytes { buffer in
                            try timed(ops: ops) {
                                var start = 0
                                for index in 0..<ops {
                                    let count = ends[index] - start
                                    guard write(fd, buffer.baseAddress! + start, count) == count else {
                                        throw BenchError("write \(path): errno \(errno)")
                                    }
                                    start = ends[index]
                                }
                            }
                        }
                    },
                    finish: {
                        close(fd); Scratch.remove(directory)
                    })
            },
            Contender(name: Name.rawAutocommit, role: .baseline, maxOps: n, adaptive: true) {
                let directory = Scratch.directory("raw")
                let raw = try RawSQLite(path: directory + "/raw.sqlite")
                try raw.setAll(data.values(round: 0), for: data.names, count: n)
                return .init(
                    run: { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try raw.set(values[i], for: data.names[i]) } }
                    },
                    finish: {
                        raw.close(); Scratch.remove(directory)
                    })
            },
            Contender(name: Name.jsonEncoder, role: .baseline, maxOps: n, adaptive: true) {
                let directory = Scratch.directory("json-baseline")
                var document = JSONBaseline.document(data.dictionary())
                try JSONBaseline.save(document, to: directory + "/prefs.json")
                return .init(
                    run: { round, ops in
                        let values = data.values(round: round)
                        return try timed(ops: ops) {
                            for i in 0..<ops {
                                document.values[data.names[i]] = .init(type: V.typeName, value: values[i])
                                try JSONBaseline.save(document, to: directory + "/prefs.json")
                            }
                        }
                    }, finish: { Scratch.remove(directory) })
            },
        ]
        contenders.append(
            Contender(name: Name.lmdbNoSync, role: .baseline, maxOps: n, adaptive: true) {
                // One write transaction per set, committed; MDB_NOSYNC: the commit survives an app crash, not a power loss.
                let bytes = try LMDBBytes(data)
                let lmdb = try LMDBBaseline()
                try lmdb.setAll(bytes.values(round: 0), for: bytes.names, count: n)
                return .init(
                    run: { round, ops in
                        let values = bytes.values(round: round)
                        return try timed(ops: ops) { for i in 0..<ops { try lmdb.set(values[i], for: bytes.names[i]) } }
                    }, finish: { lmdb.close() })
            })
        if includesDefaults(n, workload: 2) {
            contenders.append(
                Contender(name: Name.defaults, role: .baseline, maxOps: n, adaptive: true) {
                    let defaults = try DefaultsBaseline()
                    defaults.fill(data.names, data.values(round: 0))
                    return .init(
                        run: { round, ops in
                            let values = data.values(round: round)
                            return timed(ops: ops) {
                                for i in 0..<ops {
                                    values[i].store(in: defaults.defaults, forKey: data.names[i])
                                    defaults.defaults.synchronize()
                                }
                            }
                        }, finish: { defaults.remove() })
                })
        }
        for backend in [Backend.memory] + Backend.durable {
            contenders.append(
                Contender(name: backend.contenderName, role: .subject, maxOps: n, adaptive: backend != .memory) {
                    let store = try OpenStore(backend)
                    try store.fill(data)
                    return .init(
                        run: { round, ops in
                            let values = data.values(round: round)
                            return try timed(ops: ops) { for i in 0..<ops { try store.prefs.set(values[i], for: data.keys[i]) } }
                        }, finish: { store.close() })
                })
        }
        let (memory, sqlite, json) = (Backend.memory.contenderName, Backend.sqlite.contenderName, Backend.json.contenderName)
        try measure(
            workload: 2, title: "Set that survives an app crash, one write per call (memory: for the record)", data: data.info,
            contenders: contenders, metric: "set",
            rules: [
                Rule(subject: memory, baseline: Name.dictionary),
                Rule(subject: sqlite, baseline: Name.rawAutocommit, target: .within(1.2)),
                Rule(subject: sqlite, baseline: Name.defaults),
                Rule(subject: json, baseline: Name.write2, target: .within(5)),
                Rule(subject: json, baseline: sqlite, target: .within(0.5)),
                Rule(subject: json, baseline: Name.jsonEncoder),
                Rule(subject: json, baseline: Name.defaults),
                Rule(subject: sqlite, baseline: Name.write2),
            ] + [memory, sqlite, json].map { Rule(subject: $0, baseline: Name.lmdbNoSync) },
            notes: [
                Name.lmdbNoSync: "one write transaction per set (mdb_txn_begin + mdb_put + mdb_txn_commit), no fsync: survives an app crash",
                sqlite: "keys declared before timing (steady state); a key's first write in a process also records its declaration",
                json: "one journal append per set; compactions (past max(64 KiB, 4 × snapshot size)) fall inside the samples that reach them",
            ])
    }

    /// The prefix of workload 3's namespaced keys, and the suffix of its contenders' names.
    static let namespace = "com.example.app.settings."
    static let namespacedSuffix = ", keys under one prefix"

    /// 3. The same N sets in one batch, into a fresh store each round.
    func batchSet<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        var contenders = [
            Contender(name: Name.dictionary, role: .baseline, maxOps: n) {
                .init { round, ops in
                    let dictionary = MutexDictionary<V>()
                    return timed(ops: ops) { dictionary.set(data.values(round: round), for: data.names, count: ops) }
                }
            },
            rawTransactionBatch(data, name: Name.rawTransaction),
            Contender(name: Name.jsonEncoder, role: .baseline, maxOps: n) {
                .init { round, ops in
                    let directory = Scratch.directory("json-baseline")
                    defer { Scratch.remove(directory) }
                    var trial = try Self.encoderBatch(data, round: round, count: ops, path: directory + "/prefs.json")
                    trial.phases = [:]  // its phases are shown in workload 4
                    return trial
                }
            },
            Contender(name: Name.lmdbTransaction, role: .baseline, maxOps: n) {
                let bytes = try LMDBBytes(data)
                return .init { round, ops in
                    let lmdb = try LMDBBaseline()
                    defer { lmdb.close() }
                    return try timed(ops: ops) { try lmdb.setAll(bytes.values(round: round), for: bytes.names, count: ops) }
                }
            },
        ]
        if includesDefaults(n, workload: 3) { contenders.append(defaultsBatch(data)) }
        for backend in [Backend.memory] + Backend.durable { contenders.append(storeBatch(data, backend, name: backend.contenderName)) }
        // The same batch with the keys named under one prefix, as apps name theirs: the store writes a large commit's
        // rows in key order, and keys alike in their first bytes are what its sort has to tell apart.
        let namespaced = try DataSet<V>(n: n, prefix: Self.namespace)
        let (rawNamespaced, sqliteNamespaced) = (Name.rawTransaction + Self.namespacedSuffix, Backend.sqlite.contenderName + Self.namespacedSuffix)
        contenders += [rawTransactionBatch(namespaced, name: rawNamespaced), storeBatch(namespaced, .sqlite, name: sqliteNamespaced)]
        let (memory, sqlite, json) = (Backend.memory.contenderName, Backend.sqlite.contenderName, Backend.json.contenderName)
        let versusDefaults: Target? = n == 10_000 ? .faster(by: 100) : nil
        try measure(
            workload: 3, title: "The same N sets in one batch", data: data.info, contenders: contenders, metric: "batch",
            display: .total,
            rules: [
                Rule(subject: memory, baseline: Name.dictionary),
                Rule(subject: sqlite, baseline: Name.rawTransaction, target: .within(1.3)),
                Rule(subject: json, baseline: Name.jsonEncoder),
                Rule(subject: sqliteNamespaced, baseline: rawNamespaced, target: .within(1.3)),
            ]
                + [memory, sqlite, json].flatMap {
                    [
                        Rule(subject: $0, baseline: Name.defaults, target: versusDefaults),
                        Rule(subject: $0, baseline: Name.lmdbTransaction),
                    ]
                },
            notes: [
                Name.lmdbTransaction: "N puts in one write transaction, committed, into a fresh environment each round; no fsync",
                rawNamespaced: "the same, the keys named \(Self.namespace)k0 … (alike in their first \(Self.namespace.utf8.count) bytes)",
            ])
    }

    /// Raw sqlite3: N sets in one transaction, into a fresh database each round.
    func rawTransactionBatch<V: BenchValue>(_ data: DataSet<V>, name: String) -> Contender {
        Contender(name: name, role: .baseline, maxOps: data.n) {
            .init { round, ops in
                let directory = Scratch.directory("raw")
                defer { Scratch.remove(directory) }
                let raw = try RawSQLite(path: directory + "/raw.sqlite")
                defer { raw.close() }
                return try timed(ops: ops) { try raw.setAll(data.values(round: round), for: data.names, count: ops) }
            }
        }
    }

    /// A Prefs store of `backend`: N sets in one batch, into a fresh store (written once) each round.
    func storeBatch<V: BenchValue>(_ data: DataSet<V>, _ backend: Backend, name: String) -> Contender {
        Contender(name: name, role: .subject, maxOps: data.n) {
            .init { round, ops in
                let store = try OpenStore(backend)
                defer { store.close() }
                try store.writeOnce()
                let values = data.values(round: round)
                return try timed(ops: ops) {
                    try store.prefs.batch { transaction in
                        for i in 0..<ops { try transaction.set(values[i], for: data.keys[i]) }
                    }
                }
            }
        }
    }

    /// UserDefaults: N sets into a fresh suite, then `synchronize()` to persist them.
    func defaultsBatch<V: BenchValue>(_ data: DataSet<V>) -> Contender {
        Contender(name: Name.defaults, role: .baseline, maxOps: data.n, metric: "sets+synchronize") {
            .init { round, ops in
                let defaults = try DefaultsBaseline()
                defer { defaults.remove() }
                let values = data.values(round: round)
                return timed(ops: ops) {
                    for i in 0..<ops { values[i].store(in: defaults.defaults, forKey: data.names[i]) }
                    defaults.defaults.synchronize()
                }
            }
        }
    }

    /// The JSON floor for N sets: build the dictionary, encode it, replace the file. Phases "sets" and "flush".
    static func encoderBatch<V: BenchValue>(_ data: DataSet<V>, round: Int, count: Int, path: String) throws -> Trial {
        let values = data.values(round: round)
        var document = JSONBaseline.Document<V>()
        let sets = timed(ops: count) {
            for i in 0..<count { document.values[data.names[i]] = .init(type: V.typeName, value: values[i]) }
        }
        let save = try timed(ops: count) { try JSONBaseline.save(document, to: path) }
        return Trial(ops: count, elapsed: sets.elapsed + save.elapsed, phases: ["sets": sets, "flush": save])
    }

    /// N sets into a fresh JSON store in coalesced mode, then flush(). Phases "sets" and "flush".
    static func coalescedSetsAndFlush<V: BenchValue>(_ data: DataSet<V>, round: Int, count: Int) throws -> Trial {
        let store = try OpenStore(.jsonCoalesced)
        defer { store.close() }
        let values = data.values(round: round)
        let sets = try timed(ops: count) { for i in 0..<count { try store.prefs.set(values[i], for: data.keys[i]) } }
        let flush = try timed(ops: count) { try store.prefs.flush() }
        return Trial(ops: count, elapsed: sets.elapsed + flush.elapsed, phases: ["sets": sets, "flush": flush])
    }

    /// 4. JSON backend in coalesced mode: N sets, then flush(), into a fresh store each round.
    func coalescedJSON<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        let subject = Backend.jsonCoalesced.contenderName
        var contenders = [
            Contender(name: Name.dictionary, role: .baseline, maxOps: n, metric: "sets") {
                .init { round, ops in
                    let dictionary = MutexDictionary<V>()
                    let values = data.values(round: round)
                    return timed(ops: ops) { for i in 0..<ops { dictionary.set(values[i], for: data.names[i]) } }
                }
            },
            Contender(name: Name.jsonEncoder, role: .baseline, maxOps: n) {
                .init { round, ops in
                    let directory = Scratch.directory("json-baseline")
                    defer { Scratch.remove(directory) }
                    return try Self.encoderBatch(data, round: round, count: ops, path: directory + "/prefs.json")
                }
            },
        ]
        let coalesced = Contender(name: subject, role: .subject, maxOps: n) {
            .init { round, ops in try Self.coalescedSetsAndFlush(data, round: round, count: ops) }
        }
        // N sets in coalesced mode may cost more than linearly in N: project a sample's time before running it.
        let projection = try projectedTime(n: n) { try Self.coalescedSetsAndFlush(data, round: 0, count: $0).elapsed }
        if projection.seconds > settings.sampleLimitSeconds {
            recorder.note(
                String(
                    format: "workload 4, %@: %@ skipped: one sample of N sets + flush is projected at %.0f s (time grows as N^%.1f)",
                    data.label, subject, projection.seconds, projection.exponent))
        } else {
            contenders.append(coalesced)
        }
        // UserDefaults runs in this workload's own rounds, as every baseline does: its samples taken in workload 3,
        // minutes earlier, were paired round by round with this workload's in whatever phase the machine was then.
        if includesDefaults(n, workload: 4) { contenders.append(defaultsBatch(data)) }
        try measure(
            workload: 4, title: "JSON backend in coalesced mode: N sets, then flush()", data: data.info,
            contenders: contenders, metric: "sets+flush", display: .total,
            rules: [
                Rule(subject: subject + " · sets", baseline: Name.dictionary),
                Rule(subject: subject + " · flush", baseline: Name.jsonEncoder + " · flush", target: .within(1.3)),
                Rule(subject: subject, baseline: Name.jsonEncoder),
                Rule(subject: subject, baseline: Name.defaults, target: n == 10_000 ? .faster(by: 100) : nil),
            ])
    }

    /// A line of the shape and length the JSON store's journal appends for a set of `value` under `key`:
    /// `{"seq":N,"values":{"KEY":{"type":"T","value":V}},"crc":"xxxxxxxx"}` and a newline (the store's `writeRecord`
    /// and `seal`), the key, type and value as the store writes them (their JSON text). The checksum is a placeholder of
    /// 8 hex digits, not the line's CRC-32: what a `write(2)` costs depends on the bytes' count, not on their values.
    static func journalLine(sequence: Int, key: String, value: StoredValue) throws -> [UInt8] {
        let type = try StoredValue(value.type.description).jsonText
        let entry = try StoredValue(key).jsonText + #":{"type":"# + type + #","value":"# + value.jsonText + "}"
        return Array((#"{"seq":"# + String(sequence) + #","values":{"# + entry + #"},"crc":"00000000"}"# + "\n").utf8)
    }
}
