import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Real child processes (`prefs-test-child`) on one store file.
@Suite("Cross-process", .serialized)
struct CrossProcessTests {
    static let fileBackends: [Backend] = [.json, .sqlite]

    @Test("several processes writing distinct keys at once: every key survives", arguments: fileBackends)
    func concurrentWriters(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        guard let path = backend.storage(directory).path else { return }
        let children = try (0..<4).map { index in
            try ChildProcess.start("prefs-test-child", ["write", backend.rawValue, path, "p\(index)", "40"])
        }
        for (process, out, err) in children {
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let values = try Prefs(backend.storage(directory)).snapshot()
        for child in 0..<4 {
            for index in 0..<40 {
                #expect(values["p\(child)-\(index)"]?.json == .int(index), "p\(child)-\(index) missing")
            }
        }
    }

    @Test("atomic updates from several processes lose no increment", arguments: fileBackends)
    func crossProcessUpdate(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        guard let path = backend.storage(directory).path else { return }
        let children = try (0..<3).map { _ in try ChildProcess.start("prefs-test-child", ["update", backend.rawValue, path, "counter", "30"]) }
        for (process, out, err) in children {
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try Prefs(backend.storage(directory))[Prefs.Key("counter", initial: 0)] == 90)
    }

    /// Each round starts `prefs-test-child repeat` with the next operation (set, batch, transaction, update, in turn),
    /// waits for a random number of acknowledgements and kills it with SIGKILL, mostly inside an operation. After
    /// each kill the store must open, pass its integrity check and hold every round's acknowledged operations so far,
    /// not only this round's: a later kill must not damage what earlier rounds left.
    @Test(
        "SIGKILL inside sets, batches, transactions and updates: the store opens and every round's acknowledged writes survive",
        arguments: fileBackends)
    func killedWriter(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        guard let path = backend.storage(directory).path else { return }
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        var rounds: [(prefix: String, operation: CrashOperation, acknowledged: Int)] = []
        for round in 0..<12 {
            let operation = CrashOperation.allCases[round % CrashOperation.allCases.count]
            let prefix = "r\(round)"
            let (process, out, err) = try ChildProcess.start("prefs-test-child", ["repeat", backend.rawValue, path, prefix, operation.rawValue])
            let target = Int.random(in: 0...20, using: &random)
            // Killed once "ack target" is printed: after the first acknowledged write, as a rule, and mostly inside the next one.
            let before = try await ChildProcess.read(out.fileHandleForReading) { $0 == "ack \(target)" }
            kill(process.processIdentifier, SIGKILL)
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.signaled && result.status == SIGKILL, "round \(round) (\(operation)) ended by itself: \(result.stderr)")
            // Whatever the child printed before dying was acknowledged too.
            let acknowledged =
                (before + result.stdout).split(separator: "\n").compactMap { line in
                    line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil
                }.max() ?? -1
            #expect(acknowledged >= target)
            rounds.append((prefix, operation, acknowledged))

            let prefs = try Prefs(backend.storage(directory))
            #expect(try prefs.integrityProblems() == [], "round \(round), seed \(seed)")
            let values = try prefs.snapshot()
            try prefs.close()
            for earlier in rounds {
                let problems = earlier.operation.problems(in: values, prefix: earlier.prefix, acknowledged: earlier.acknowledged)
                #expect(problems == [], "after the kill in round \(round) (\(operation)), seed \(seed)")
            }
        }
    }

    @Test("a live store sees another process's write on refresh() and by itself while observed", arguments: fileBackends)
    func externalChanges(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        guard let path = backend.storage(directory).path else { return }
        let prefs = try Prefs(backend.storage(directory), pollInterval: .milliseconds(20))
        let key = Prefs.Key("p0-0", initial: -1)
        #expect(prefs[key] == -1)
        let result = try await ChildProcess.run("prefs-test-child", ["write", backend.rawValue, path, "p0", "1"])
        #expect(result.status == 0)
        #expect(prefs[key] == -1, "cached until refresh")
        try prefs.refresh()
        #expect(prefs[key] == 0)

        var iterator = prefs.values(for: Prefs.Key("p1-2", initial: -1)).makeAsyncIterator()
        #expect(await iterator.next() == -1)
        _ = try await ChildProcess.run("prefs-test-child", ["write", backend.rawValue, path, "p1", "3"])
        #expect(await iterator.next() == 2, "seen by polling, without refresh()")
    }
}

@Suite("Cross-process: a new store file opened by many processes at once", .serialized)
struct NewFileRaceTests {
    @Test("processes creating the same new SQLite store at once all succeed and agree", arguments: 0..<5)
    func simultaneousCreation(round: Int) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new.sqlite").path
        let children = try (0..<4).map { _ in try ChildProcess.start("prefs-test-child", ["update", "sqlite", path, "counter", "5"]) }
        for (process, out, err) in children {
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try Prefs(.sqlite(URL(fileURLWithPath: path)))[Prefs.Key("counter", initial: 0)] == 20)
    }
}
