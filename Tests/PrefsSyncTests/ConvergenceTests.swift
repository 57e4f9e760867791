import Foundation
import Prefs
import PrefsSync
import PrefsTestHarness
import PrefsTesting
import Synchronization
import Testing

/// The in-process server, recording every change pushed to it: the model's record of every version ever made.
final class RecordingTransport: SyncTransport {
    let server = InProcessSyncTransport()
    private let pushed = Mutex<[SyncChange]>([])
    var allPushed: [SyncChange] { pushed.withLock { $0 } }

    func push(_ changes: [SyncChange]) async throws(PrefsError) {
        pushed.withLock { $0.append(contentsOf: changes) }
        try await server.push(changes)
    }

    func pull(since cursor: String?) async throws(PrefsError) -> (changes: [SyncChange], cursor: String?, compacted: Bool) {
        try await server.pull(since: cursor)
    }
}

extension Prefs.Keys {
    /// Declared with an initial value no user writes, so that the model can tell it apart.
    fileprivate static let modelTheme = Key<String>("theme", initial: "initial-theme")
}

/// Model-based convergence: 3 to 5 devices, each a real store (JSON files in a temporary directory, or memory), with
/// skewed clocks, random offline periods, crashes (the engine dropped and the file store reopened), lost answers and
/// concurrent writes. After everyone reconnects: every replica holds the same values, each key's value is the version
/// with the greatest hybrid timestamp ever pushed, no change id is applied twice, and no initial value was ever pushed.
///
/// `swift test` runs 24 seeds; `PREFS_SYNC_SEEDS=N` (and `PREFS_SYNC_FIRST_SEED`) run more. Long runs, 2026-12-06:
/// seeds 1–10,000 passed in 580 s, 10,001–13,000 in 112 s, and with writes stamped as they commit, 20,001–25,000 in
/// 205 s.
@Suite struct ConvergenceTests {
    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["PREFS_SYNC_SEEDS"].flatMap { UInt64($0) } ?? 24
        let first = ProcessInfo.processInfo.environment["PREFS_SYNC_FIRST_SEED"].flatMap { UInt64($0) } ?? 1
        return Array(first..<(first + count))
    }

    @Test func replicasConvergeOnTheLastWriteByHybridClock() async throws {
        var failures: [String] = []
        for seed in Self.seeds {
            do {
                if let problem = try await Self.run(seed: seed) { failures.append("seed \(seed): \(problem)") }
            } catch {
                failures.append("seed \(seed): \(error)")
            }
            if failures.count >= 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    struct Replica {
        var prefs: Prefs
        var engine: SyncEngine
        let clock: TestClock
        let url: URL?
        var online = true
    }

    static let keyNames = ["theme", "editor.a", "editor.b", "editor.c", "editor.d"]

    static func makeEngine(_ prefs: Prefs, _ transport: RecordingTransport, _ clock: TestClock, device: String) throws -> SyncEngine {
        try SyncEngine(
            prefs: prefs, transport: transport, keys: [Prefs.Keys.modelTheme], namespaces: ["editor."], device: device, clock: clock.function,
            maximumSkew: .seconds(300))
    }

    /// A sync, where a lost answer (the in-process server's fault) is no failure: the push was applied, and the
    /// engine pushes again next time.
    static func sync(_ engine: SyncEngine) async throws {
        do {
            try await engine.sync()
        } catch {
            guard case .backend("in-process sync", _) = error else { throw error }
        }
    }

    /// Runs one seed; returns what went wrong, or nil.
    static func run(seed: UInt64) async throws -> String? {
        var random = SeededGenerator(seed: seed)
        let transport = RecordingTransport()
        let directory = try TemporaryDirectory()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var replicas: [Replica] = []
        let count = Int.random(in: 3...5, using: &random)
        for index in 0..<count {
            let skew = Double(Int.random(in: -120_000...120_000, using: &random)) / 1000  // within the 5 minutes allowed
            let clock = TestClock(start.addingTimeInterval(skew))
            let url = index % 2 == 0 ? directory.file("device\(index).json") : nil
            let prefs = try url.map { try Prefs(.jsonFile($0)) } ?? Prefs(.memory)
            replicas.append(Replica(prefs: prefs, engine: try makeEngine(prefs, transport, clock, device: "d\(index)"), clock: clock, url: url))
        }
        var written: Set<String> = []
        for step in 0..<80 {
            let elapsed = Double(Int.random(in: 0...3000, using: &random)) / 1000
            for replica in replicas { replica.clock.advance(by: elapsed) }
            let index = Int.random(in: 0..<count, using: &random)
            let key = keyNames.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let value = "v\(step)-d\(index)"
                written.insert(value)
                try replicas[index].prefs.setStoredValue(try StoredValue(value), forKey: key)
            case 40..<48:
                try replicas[index].prefs.setStoredValue(nil, forKey: key)
            case 48..<75:
                if replicas[index].online { try await sync(replicas[index].engine) }
            case 75..<85:
                replicas[index].online.toggle()
            case 85..<90:
                try replicas[index].engine.captureLocalChanges()
            case 90..<95:
                // A crash: the engine is dropped; a file store is reopened from its file.
                if let url = replicas[index].url { replicas[index].prefs = try Prefs(.jsonFile(url)) }
                replicas[index].engine = try makeEngine(replicas[index].prefs, transport, replicas[index].clock, device: "d\(index)")
            default:
                // The next push's answer is lost (this device's, or, when it has nothing to push, another's).
                transport.server.losesNextAnswer()
                if replicas[index].online { try await sync(replicas[index].engine) }
            }
        }
        // Everyone reconnects: a round pushes what each holds (a lost answer armed above may take one more), the next
        // brings everything everywhere.
        for _ in 0..<3 {
            for replica in replicas { try await sync(replica.engine) }
        }
        // The model's answer: per key, the pushed version with the greatest timestamp.
        var winners: [String: SyncChange] = [:]
        for change in transport.allPushed {
            if let held = winners[change.key], held.timestamp >= change.timestamp { continue }
            winners[change.key] = change
        }
        for change in transport.allPushed {
            if let value = change.value, let text = try? value.decode(String.self), !written.contains(text) {
                return "pushed a value no user wrote: \(change)"
            }
        }
        if let twice = transport.server.timesApplied.first(where: { $0.value > 1 }) { return "change \(twice.key) applied \(twice.value) times" }
        for (index, replica) in replicas.enumerated() {
            if !(try replica.engine.pendingChanges()).isEmpty { return "d\(index) still has changes to push" }
            for key in keyNames {
                let held = try replica.prefs.storedValue(forKey: key)
                let expected = winners[key]?.value
                if held != expected {
                    let last = winners[key].map { "\($0)" } ?? "none"
                    return "d\(index) holds \(held.map { "\($0)" } ?? "nothing") for \(key), the last write by hybrid clock is \(last)"
                }
            }
        }
        for (key, change) in winners where transport.server.current[key] != change {
            return "the server holds \(transport.server.current[key].map { "\($0)" } ?? "nothing") for \(key), not \(change)"
        }
        return nil
    }
}
