import Foundation
import Prefs
import Synchronization

// Workload 6: two threads reading and one writing at once, for a fixed time; throughput of each.

/// What one contender does on the reader threads and on the writer thread.
struct SharedAccess: Sendable {
    var read: @Sendable (_ index: Int) -> Void
    var write: @Sendable (_ index: Int, _ variant: Int) throws -> Void
}

extension Bench {
    func concurrent<V: BenchValue>(_ data: DataSet<V>) throws {
        let n = data.n
        let duration = settings.concurrentDuration
        func contender(_ name: String, _ role: Contender.Role, _ make: @escaping () throws -> (SharedAccess, () -> Void)) -> Contender {
            Contender(name: name, role: role, maxOps: 1) {
                let (access, finish) = try make()
                return .init(
                    run: { round, _ in
                        let result = try runThreads(for: duration, n: n, variant: round, access)
                        return Trial(
                            ops: max(result.reads, 1), elapsed: result.elapsed,
                            phases: ["writes (1 thread)": Trial(ops: max(result.writes, 1), elapsed: result.elapsed)])
                    }, finish: finish)
            }
        }
        var contenders = [
            contender(Name.dictionary, .baseline) {
                let dictionary = MutexDictionary(data.dictionary())
                return (
                    SharedAccess(
                        read: { blackHole(dictionary.get(data.names[$0]) ?? V.initialValue) },
                        write: { dictionary.set(data.values[$1][$0], for: data.names[$0]) }), {}
                )
            }
        ]
        for backend in Backend.allCases {
            contenders.append(
                contender(backend.contenderName, .subject) {
                    progress("6. filling \(backend.rawValue), \(data.label)")
                    let store = try OpenStore(backend)
                    try store.fill(data)
                    store.warm(data.keys)
                    let prefs = store.prefs
                    return (
                        SharedAccess(
                            read: { blackHole(prefs[data.keys[$0]]) },
                            write: { try prefs.set(data.values[$1][$0], for: data.keys[$0]) }), { store.close() }
                    )
                })
        }
        let writes = " · writes (1 thread)"
        try measure(
            workload: 6, title: "Two threads reading and one writing at once: throughput", data: data.info,
            contenders: contenders, metric: "reads (2 threads)", phaseDisplay: .perOperation,
            rules: Backend.allCases.flatMap { backend in
                [
                    Rule(subject: backend.contenderName, baseline: Name.dictionary),
                    Rule(subject: backend.contenderName + writes, baseline: Name.dictionary + writes),
                ]
            },
            budget: Budget(rounds: settings.quick ? 2 : 5, minRounds: 2, sample: .zero, perContender: .seconds(3600)))
    }
}

/// Runs two reader threads and one writer thread until `duration` has passed; counts what each did.
func runThreads(for duration: Duration, n: Int, variant: Int, _ access: SharedAccess) throws -> (reads: Int, writes: Int, elapsed: Duration) {
    let counts = Mutex<[Int]>([0, 0, 0])
    let failure = Mutex<String?>(nil)
    let group = DispatchGroup()
    let start = clock.now
    let deadline = start + duration
    for thread in 0..<3 {
        group.enter()
        Thread {
            var done = 0
            if thread < 2 {
                // Readers walk the keys in different strided orders.
                var index = (thread * n) / 2
                while clock.now < deadline {
                    for _ in 0..<64 {
                        access.read(index)
                        index += 7919
                        if index >= n { index %= n }
                    }
                    done += 64
                }
            } else {
                var index = 0
                while clock.now < deadline {
                    do { try access.write(index, (variant + done) & 1) } catch {
                        failure.withLock { $0 = $0 ?? "\(error)" }
                        break
                    }
                    done += 1
                    index += 6007
                    if index >= n { index %= n }
                }
            }
            counts.withLock { $0[thread] = done }
            group.leave()
        }.start()
    }
    group.wait()
    let elapsed = clock.now - start
    if let message = failure.withLock({ $0 }) { throw BenchError("writer failed: \(message)") }
    let final = counts.withLock { $0 }
    return (final[0] + final[1], final[2], elapsed)
}
