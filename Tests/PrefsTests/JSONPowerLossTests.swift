import Foundation
@_spi(Tooling) import Prefs
import PrefsTestSupport
import Testing
import PrefsJSON
import PrefsSupport

/// Simulated power cuts for the JSON store, in the spirit of ALICE (application-level crash exploration): the
/// store's file operations are traced (`FileSystem.trace`), and at every sync point the directory is rebuilt as a
/// cut there may leave it: unsynced renames dropped, or kept ahead of their directory's sync (reordered); an
/// unsynced file's content empty or torn in half. Serialized: the trace is process-wide.
@Suite("Power loss, simulated (JSON)", .serialized)
struct JSONPowerLossTests {
    static let writes = 12

    /// The trace of `writes` sets on a JSON store with `durability`, and for each write the number of events
    /// that had happened when it returned.
    static func record(_ directory: TemporaryDirectory, durability: Prefs.Durability) throws -> ([FileSystem.FileEvent], [Int]) {
        let events = Locked<[FileSystem.FileEvent]>([])
        let prefix = directory.url.path + "/"
        FileSystem.trace.withLock {
            $0 = { event in
                let path: String = switch event {
                case .wrote(let path, _), .syncedFile(let path): path
                case .renamed(_, let to): to
                case .syncedDirectory(let directory): directory + "/"
                }
                if path.hasPrefix(prefix) { events.withLock { $0.append(event) } }
            }
        }
        defer { FileSystem.trace.withLock { $0 = nil } }
        let prefs = try Prefs(.jsonFile(directory.file("p.json"), durability: durability))
        var acknowledged: [Int] = []
        for index in 0..<writes {
            try prefs.set(index, for: Prefs.Key("k\(index)", initial: -1))
            acknowledged.append(events.withLock { $0.count })
        }
        try prefs.close()
        return (events.withLock { $0 }, acknowledged)
    }

    enum Torn: CaseIterable { case empty, half }

    /// The store file's possible contents after a cut following the first `count` events: nil when it is absent.
    static func contents(after count: Int, of events: [FileSystem.FileEvent], reordered: Bool, torn: Torn) -> Data? {
        var written: [String: Data] = [:], synced: Set<String> = []
        var durableEntry: String?, pendingEntry: String?
        for event in events.prefix(count) {
            switch event {
            case .wrote(let path, let data): written[path] = data
            case .syncedFile(let path): synced.insert(path)
            case .renamed(let from, _): pendingEntry = from
            case .syncedDirectory:
                if let pendingEntry { durableEntry = pendingEntry }
                pendingEntry = nil
            }
        }
        guard let file = reordered ? (pendingEntry ?? durableEntry) : durableEntry, let data = written[file] else { return nil }
        if synced.contains(file) { return data }
        return torn == .empty ? Data() : data.prefix(data.count / 2)
    }

    @Test("with .powerLoss, a cut at every sync point, in order or reordered, leaves every acknowledged write")
    func powerLoss() throws {
        let directory = try TemporaryDirectory()
        let (events, acknowledged) = try Self.record(directory, durability: .powerLoss)
        let syncPoints = [0] + events.indices.filter {
            switch events[$0] { case .syncedFile, .syncedDirectory: true; default: false }
        }.map { $0 + 1 } + [events.count]
        #expect(syncPoints.count >= 2 * Self.writes, "a file and a directory sync per write")
        for cut in syncPoints {
            for reordered in [false, true] {
                for torn in Torn.allCases {
                    let state = "cut after \(cut) of \(events.count) events\(reordered ? ", renames reordered" : ""), unsynced \(torn)"
                    let url = directory.file("cut-\(cut)-\(reordered)-\(torn).json")
                    if let data = Self.contents(after: cut, of: events, reordered: reordered, torn: torn) { try data.write(to: url) }
                    let prefs: Prefs
                    do {
                        prefs = try Prefs(.jsonFile(url))
                    } catch {
                        Issue.record("\(state): the store does not open: \(error)")
                        continue
                    }
                    let promised = acknowledged.filter { $0 <= cut }.count
                    let present = (0..<Self.writes).map { prefs[Prefs.Key("k\($0)", initial: -1)] == $0 }
                    let survived = present.firstIndex(of: false) ?? Self.writes
                    #expect(present == (0..<Self.writes).map { $0 < survived }, "\(state): not a prefix of the writes")
                    #expect(survived >= promised, "\(state): \(promised) writes acknowledged, \(survived) survived")
                }
            }
        }
    }

    @Test("with the default durability, a cut with operations in order leaves a store that opens with a prefix of the writes")
    func processCrash() throws {
        let directory = try TemporaryDirectory()
        let (events, _) = try Self.record(directory, durability: .processCrash)
        #expect(!events.contains { if case .syncedFile = $0 { true } else { false } }, "no fsync by default")
        for cut in 0...events.count {
            let url = directory.file("cut-\(cut).json")
            if let data = Self.contents(after: cut, of: events, reordered: false, torn: .empty) { try data.write(to: url) }
            let prefs = try Prefs(.jsonFile(url))
            let present = (0..<Self.writes).map { prefs[Prefs.Key("k\($0)", initial: -1)] == $0 }
            let survived = present.firstIndex(of: false) ?? Self.writes
            #expect(present == (0..<Self.writes).map { $0 < survived }, "cut after \(cut): not a prefix of the writes")
        }
    }
}
