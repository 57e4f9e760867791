import Foundation
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting

// MARK: - Child: write until killed

/// `--child crash`: performs the round's operations one after another and prints `ack N` after operation N
/// returns, until the parent kills it.
enum CrashChild {
    static func run(_ options: ChildOptions) throws {
        let backend = try options.backend()
        // A JSON store folds its journal into a new snapshot past this many bytes: the parent lowers it in most rounds,
        // so that kills land inside compactions as well as inside appends.
        let compactionBytes = try options.integer("compaction-bytes", default: JSONJournal.defaultCompactionFloor)
        let storage = backend.storage(
            try options.path(), durability: try options.durability(), flushInterval: .milliseconds(try options.integer("flush-ms", default: 50))
        ).journalCompactionFloor(compactionBytes)
        let coalesced = backend == .jsonCoalesced
        var workload = CrashWorkload(seed: try options.seed(), round: try options.integer("round"), coalesced: coalesced)
        var pacing = SeededGenerator(seed: try options.seed(), stream: 2, UInt64(workload.round))
        let prefs = try Prefs(storage)
        let deadline = ContinuousClock.now + .seconds(120)
        while workload.index < 200_000, ContinuousClock.now < deadline {
            let index = workload.index
            try perform(workload.next(), on: prefs, storage: storage, coalesced: coalesced)
            say("ack \(index)")
            // Coalesced writes return at memory speed: pace them so a round stays a few thousand operations.
            if coalesced { usleep(UInt32.random(in: 0...1500, using: &pacing)) }
        }
        say("end")
    }

    static func perform(_ operation: CrashWorkload.Operation, on prefs: Prefs, storage: Prefs.Storage, coalesced: Bool) throws {
        switch operation {
        case .set(let key, let value):
            try prefs.set(value, for: try Prefs.Key<String?>(validating: key, initial: nil))
        case .batch(let entries):
            let keys = try entries.map { try Prefs.Key<String?>(validating: $0.key, initial: nil) }
            try prefs.batch { transaction in
                for (key, entry) in zip(keys, entries) {
                    if let value = entry.value { try transaction.set(value, for: key) } else { transaction.reset(key) }
                }
            }
        case .update(let key, let tag):
            try prefs.update(try Prefs.Key<String?>(validating: key, initial: nil)) { $0 = CrashWorkload.counted($0, tag: tag) }
        case .transaction(let read, let writes, let tag):
            let source = try Prefs.Key<String?>(validating: read, initial: nil)
            let targets = try writes.map { try Prefs.Key<String?>(validating: $0, initial: nil) }
            try prefs.transaction { transaction in
                let seen = try transaction.value(for: source)
                for (name, target) in zip(writes, targets) {
                    try transaction.set(CrashWorkload.derived(from: seen, key: name, tag: tag), for: target)
                }
                try transaction.set(CrashWorkload.counted(seen, tag: tag), for: source)
            }
        case .reset(let names):
            try prefs.reset(try names.map { try Prefs.Key<String?>(validating: $0, initial: nil) })
        case .rename(let from, let to):
            // In coalesced mode the second instance must see this one's writes first.
            if coalesced { try prefs.flush() }
            let other = try Prefs(storage)
            let renamed = try Prefs.Key<String?>(validating: to, initial: nil, formerNames: [from])
            try other.update(renamed) { _ in }  // reads the former name's value while the new name holds none, writes it back
            // A torn journal tail that a killed writer left (not removed yet when this is the round's first write) is
            // reported by every instance that opens the store, and counted by the parent; anything else is a problem.
            let problems = other.diagnostics.filter { if case .journalTornTail = $0.kind { false } else { true } }
            if let problem = problems.first { throw TortureError("rename \(from) → \(to): \(problem)") }
            try other.close()
        case .flush:
            try prefs.flush()
        }
    }
}

// MARK: - Parent: kill, reopen, compare

/// Kills writers at random moments and checks, after each kill, that the store opens, passes its integrity
/// check and holds exactly the acknowledged writes (the write in flight: all of it or none of it).
struct CrashInjection {
    struct Report: Sendable {
        var backend: TortureBackend
        var rounds = 0
        /// Every SIGKILL, including those that landed before the child opened the store or acknowledged anything.
        var kills = 0
        /// Kills after the child's first acknowledged operation: the ones that test what was written.
        var killsAfterFirstAcknowledgement = 0
        /// Kills after the first acknowledgement, by the kind of operation that was in flight (set, batch, …).
        var killedInFlight: [String: Int] = [:]
        var acknowledgedOperations = 0
        /// Kills after which the operation in flight was found committed (it had not been acknowledged yet).
        var inFlightCommitted = 0
        /// Coalesced mode: acknowledged operations not on disk after a kill (allowed: they were not flushed).
        var unflushedLost = 0
        var flushesAcknowledged = 0
        /// Rounds that started without a store file, killed while creating it.
        var freshStarts = 0
        /// Temporary files (`NAME.tmp-PID-N`) found beside the store right after kills (a writer killed mid-replace).
        var temporaryFilesSeen = 0
        /// Temporary files still there after a final write by a new writer, which must remove them.
        var temporaryFilesAfterWrite = 0
        /// JSON: kills after which the journal ended in a torn record (not applied, reported by the integrity check).
        var tornJournalTails = 0
        /// JSON: kills after which the snapshot had a new journal generation (a compaction had run since the last kill).
        var compactions = 0
        /// The snapshot's journal generation seen after the last kill.
        var lastJournalGeneration: JSON?
        var failures: [String] = []
        var seconds = 0.0
    }

    let backend: TortureBackend
    let rounds: Int
    let seed: UInt64
    let directory: String
    let verbose: Bool

    func run() -> Report {
        var report = Report(backend: backend)
        let start = ContinuousClock.now
        let path = (directory as NSString).appendingPathComponent(backend.fileName)
        var random = SeededGenerator(seed: seed, stream: 3, UInt64(TortureBackend.allCases.firstIndex(of: backend)!))
        var model: ModelState = [:]
        for round in 0..<rounds {
            do {
                model = try runRound(round, path: path, model: model, random: &random, report: &report)
            } catch {
                report.failures.append("round \(round): \(error)")
            }
            report.rounds += 1
            if report.failures.count > 20 { break }
        }
        // A writer that takes the lock removes what killed writers left behind.
        do {
            let prefs = try Prefs(backend.storage(path))
            try prefs.set("done", for: try Prefs.Key<String?>(validating: "final", initial: nil))
            try prefs.close()
            report.temporaryFilesAfterWrite = temporaryFiles().count
            if report.temporaryFilesAfterWrite > 0 {
                report.failures.append(
                    "\(report.temporaryFilesAfterWrite) temporary files left by killed writers are still there after a new write: \(temporaryFiles())")
            }
        } catch {
            report.failures.append("the final write failed: \(error)")
        }
        report.seconds = (ContinuousClock.now - start).seconds
        return report
    }

    private enum KillPlan: CustomStringConvertible {
        case afterAcknowledgements(Int, thenMicroseconds: UInt32)
        case afterDelay(milliseconds: Int)

        var description: String {
            switch self {
            case .afterAcknowledgements(let count, let micros): "after \(count) acks + \(micros) µs"
            case .afterDelay(let ms): "after \(ms) ms"
            }
        }
    }

    /// One child, one kill, one check. Returns the state found, the model for the next round.
    private func runRound(_ round: Int, path: String, model: ModelState, random: inout SeededGenerator, report: inout Report) throws -> ModelState {
        let coalesced = backend == .jsonCoalesced
        let durability = random.chance(0.3) ? "powerLoss" : "processCrash"
        let flushMilliseconds = [5, 20, 50, 100, 200].randomElement(using: &random)!
        let compactionBytes = [1024, 4096, 16384, 64 * 1024].randomElement(using: &random)!
        var plan: KillPlan =
            random.chance(0.5)
            ? .afterAcknowledgements(
                Int.random(in: 1...40, using: &random), thenMicroseconds: random.chance(0.5) ? 0 : UInt32.random(in: 0...3000, using: &random))
            : .afterDelay(milliseconds: Int.random(in: 0...350, using: &random))
        // Now and then, start from no file at all and kill early: while the store file is being created.
        var model = model
        if round > 0, random.chance(0.08) {
            for suffix in ["", "-wal", "-shm", ".lock", ".journal"] { unlink(path + suffix) }
            model = [:]
            plan = .afterDelay(milliseconds: Int.random(in: 0...60, using: &random))
            report.freshStarts += 1
        }
        let errorLog = (directory as NSString).appendingPathComponent("child-stderr.log")
        try? FileManager.default.removeItem(atPath: errorLog)
        let child = try Subprocess(
            [
                "--child", "crash", "--backend", backend.rawValue, "--path", path, "--seed", String(seed), "--round", String(round),
                "--durability", durability, "--flush-ms", String(flushMilliseconds), "--compaction-bytes", String(compactionBytes),
            ], errorPath: errorLog)
        switch plan {
        case .afterAcknowledgements(let count, let micros):
            child.readLines(until: { lines in lines.count(where: { $0.hasPrefix("ack ") }) >= count }, timeout: .seconds(60))
            if micros > 0 { usleep(micros) }
        case .afterDelay(let milliseconds):
            let deadline = ContinuousClock.now + .milliseconds(milliseconds)
            while ContinuousClock.now < deadline, child.readAvailable(timeout: deadline - ContinuousClock.now) {}
        }
        child.kill()
        let status = child.wait()
        child.drain()  // whatever it printed before dying was acknowledged too

        if status == .signaled(SIGKILL) {
            report.kills += 1
        } else if child.lines.last != "end" {
            let stderr = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            throw TortureError("the writer ended by itself (\(status)) before the kill: \(child.lines.last ?? "")\(stderr.isEmpty ? "" : " — " + stderr)")
        }
        if let error = child.lines.first(where: { $0.hasPrefix("error") }) { throw TortureError("the writer failed: \(error)") }
        let acknowledged = child.lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        guard acknowledged == Array(0..<acknowledged.count) else { throw TortureError("acknowledgements out of order") }
        report.acknowledgedOperations += acknowledged.count
        let killedAfterAcknowledgement = status == .signaled(SIGKILL) && !acknowledged.isEmpty
        if killedAfterAcknowledgement { report.killsAfterFirstAcknowledgement += 1 }
        report.temporaryFilesSeen += temporaryFiles().count
        if backend != .sqlite {
            let generation = ((try? Data(contentsOf: URL(fileURLWithPath: path))).flatMap { try? JSON.parse($0) })?["journalGeneration"]
            if let generation, let last = report.lastJournalGeneration, generation != last { report.compactions += 1 }
            report.lastJournalGeneration = generation
        }

        let found: ModelState
        do {
            let prefs = try Prefs(backend.checkerStorage(path))
            // A torn last journal record is what a kill mid-append leaves: never applied, and reported on opening.
            if prefs.diagnostics.contains(where: { if case .journalTornTail = $0.kind { true } else { false } }) { report.tornJournalTails += 1 }
            let problems = try prefs.integrityProblems()
            guard problems.isEmpty else { throw TortureError("integrity problems: \(problems.joined(separator: "; "))") }
            found = try ModelState(snapshot: prefs.snapshot())
            try prefs.close()
        } catch {
            throw TortureError("after a kill \(plan) with \(acknowledged.count) acks, the store does not open cleanly: \(error)")
        }

        // Replay the child's operations on the model: the acknowledged ones and the one in flight.
        var workload = CrashWorkload(seed: seed, round: round, coalesced: coalesced)
        let operations = (0...acknowledged.count).map { _ in workload.next() }
        let inFlight = operations[acknowledged.count]
        if killedAfterAcknowledgement { report.killedInFlight[inFlight.kind, default: 0] += 1 }
        var flushes = 0
        var lastFlush = -1  // coalesced: the operation after which the last acknowledged flush returned
        for (index, operation) in operations.dropLast().enumerated() {
            if case .flush = operation { flushes += 1; lastFlush = index }
        }
        // The states the store may be in: durable modes, before or after the write in flight;
        // coalesced mode, any state from the last acknowledged flush on.
        let earliest = coalesced ? lastFlush + 1 : acknowledged.count
        var state = model
        var candidates: [(afterOperations: Int, state: ModelState)] = earliest == 0 ? [(0, model)] : []
        for (index, operation) in operations.enumerated() {
            state = operation.applied(to: state)
            if index + 1 >= earliest { candidates.append((index + 1, state)) }
        }
        if coalesced {
            report.flushesAcknowledged += flushes
            guard let match = candidates.last(where: { $0.state == found }) else {
                let flushed = candidates[0].state
                let written = Set(candidates.flatMap { $0.state.map { "\($0.key)=\($0.value)" } })
                let strays = found.filter { !written.contains("\($0.key)=\($0.value)") }.map(\.key).sorted()
                report.failures.append(
                    """
                    round \(round): after a kill \(plan) with \(acknowledged.count) acks (last acknowledged flush after operation \(lastFlush)), \
                    the file matches no state between that flush and the kill; differences from the flushed state: \
                    \(found.differences(from: flushed).joined(separator: "; "))\
                    \(strays.isEmpty ? "" : "; values never written since that flush under: \(strays.joined(separator: ","))")
                    """)
                return found
            }
            report.unflushedLost += max(0, acknowledged.count - match.afterOperations)
        } else {
            let before = candidates[0].state
            let after = candidates[candidates.count - 1].state
            if found == after, after != before {
                report.inFlightCommitted += 1
            } else if found != before {
                report.failures.append(
                    """
                    round \(round): after a kill \(plan) with \(acknowledged.count) acks (in flight: \(inFlight)), \
                    the store holds neither the acknowledged state nor that plus the write in flight: \
                    \(found.differences(from: before).joined(separator: "; "))
                    """)
            }
        }
        if verbose {
            let failed = report.failures.last?.hasPrefix("round \(round):") == true
            say("  \(backend.rawValue) round \(round): killed \(plan), \(acknowledged.count) acks, \(failed ? "FAILED" : "ok")")
        }
        return found
    }

    /// The temporary files beside the store (`NAME.tmp-PID-N`, written before the rename that replaces it).
    private func temporaryFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []  // an unreadable directory fails the next open
        return names.filter { $0.contains(".tmp-") }.sorted()
    }
}
