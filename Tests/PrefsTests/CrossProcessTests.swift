import Foundation
import Prefs
import PrefsTestSupport
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

    @Test("a writer killed with SIGKILL mid-write leaves a store that opens and holds every acknowledged write", arguments: fileBackends)
    func killedWriter(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        guard let path = backend.storage(directory).path else { return }
        for round in 0..<5 {
            let (process, out, _) = try ChildProcess.start("prefs-test-child", ["write", backend.rawValue, path, "r\(round)", "100000"])
            let target = Int.random(in: 5...60)
            // Reading the pipe and waiting for the kill both block: they run off the concurrency pool.
            let child = UncheckedSendable((process, out.fileHandleForReading))
            let acknowledged = await ChildProcess.offPool { () -> Int in
                let (process, handle) = child.value
                var acknowledged = -1
                var buffer = Data()
                while acknowledged < target {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                    for line in lines.dropLast() where line.hasPrefix("ack ") { acknowledged = max(acknowledged, Int(line.dropFirst(4)) ?? -1) }
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                // Whatever the child printed before dying was acknowledged too.
                let rest = String(decoding: buffer + handle.readDataToEndOfFile(), as: UTF8.self)
                for line in rest.split(separator: "\n") where line.hasPrefix("ack ") {
                    acknowledged = max(acknowledged, Int(line.dropFirst(4)) ?? -1)
                }
                return acknowledged
            }
            #expect(process.terminationReason == .uncaughtSignal)
            let prefs = try Prefs(backend.storage(directory))
            #expect(try prefs.integrityProblems() == [])
            let values = try prefs.snapshot()
            for index in 0...max(acknowledged, 0) where acknowledged >= 0 {
                #expect(values["r\(round)-\(index)"]?.json == .int(index), "round \(round): acknowledged write \(index) lost")
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
