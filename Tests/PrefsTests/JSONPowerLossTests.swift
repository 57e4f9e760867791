import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsSupport

/// Simulated power cuts for the JSON store, in the spirit of ALICE (application-level crash exploration): the
/// store's file operations are traced (the store option `tracingFileEvents`), and at every sync point the directory is rebuilt as a
/// cut there may leave it: unsynced renames and removals dropped, or kept ahead of their directory's sync
/// (reordered); a file's unsynced bytes (a new file's content, the journal's appends) dropped or torn in half.
@Suite("Power loss, simulated (JSON)")
struct JSONPowerLossTests {
    static let writes = 12

    /// The trace of `writes` sets on a JSON store with `durability`, and for each write the number of events
    /// that had happened when it returned.
    static func record(_ directory: TemporaryDirectory, durability: Prefs.Durability) throws -> ([FileSystem.FileEvent], [Int]) {
        let events = Locked<[FileSystem.FileEvent]>([])
        let prefix = directory.url.path + "/"
        let storage = Prefs.Storage.jsonFile(directory.file("p.json"), durability: durability).tracingFileEvents { event in
            let path: String =
                switch event {
                case .wrote(let path, _), .syncedFile(let path), .appended(let path, _), .truncated(let path, _): path
                case .renamed(_, let to): to
                case .syncedDirectory(let directory): directory + "/"
                }
            if path.hasPrefix(prefix) { events.withLock { $0.append(event) } }
        }
        let prefs = try Prefs(storage)
        var acknowledged: [Int] = []
        for index in 0..<writes {
            try prefs.set(index, for: Prefs.Key("k\(index)", initial: -1))
            acknowledged.append(events.withLock { $0.count })
        }
        try prefs.close()
        return (events.withLock { $0 }, acknowledged)
    }

    enum Torn: CaseIterable { case empty, half }

    /// The possible contents of the store's files (by name: the store and its journal) after a cut following the
    /// first `count` events; a file that is absent is missing from the result.
    static func files(after count: Int, of events: [FileSystem.FileEvent], reordered: Bool, torn: Torn) -> [String: Data] {
        // File contents by the name each file was created under (a replace's temporary name), with their synced length.
        var contents: [String: (data: Data, synced: Int)] = [:]
        var durable: [String: String] = [:], pending: [String: String] = [:]
        func file(_ name: String) -> String? {
            if let entry = pending[name] { return entry }
            return durable[name] ?? (contents[name] != nil ? name : nil)
        }
        for event in events.prefix(count) {
            switch event {
            case .wrote(let path, let data): contents[path] = (data, 0)
            case .syncedFile(let path):
                if let inode = file(path), let current = contents[inode] { contents[inode] = (current.data, current.data.count) }
            case .renamed(let from, let to): pending[to] = .some(from)
            case .appended(let path, let data):
                if let inode = file(path) { contents[inode]?.data.append(data) }
            case .truncated(let path, let length):
                if let inode = file(path), let current = contents[inode] {
                    contents[inode] = (current.data.prefix(length), min(current.synced, length))
                }
            case .syncedDirectory:
                for (name, entry) in pending { durable[name] = entry }
                pending = [:]
            }
        }
        var result: [String: Data] = [:]
        for name in Set(durable.keys).union(pending.keys) {
            guard let inode = reordered ? pending[name] ?? durable[name] : durable[name], let (data, synced) = contents[inode] else { continue }
            let unsynced = data.count - synced
            result[(name as NSString).lastPathComponent] = torn == .empty ? data.prefix(synced) : data.prefix(synced + unsynced / 2)
        }
        return result
    }

    /// Writes `files` (named as in the traced directory, `p.json…`) as the store at `url` and its sidecars.
    static func place(_ files: [String: Data], at url: URL) throws {
        for (name, data) in files {
            try data.write(to: URL(fileURLWithPath: url.path + name.dropFirst("p.json".count)))
        }
    }

    @Test("with .powerLoss, a cut at every sync point, in order or reordered, leaves every acknowledged write")
    func powerLoss() throws {
        let directory = try TemporaryDirectory()
        let (events, acknowledged) = try Self.record(directory, durability: .powerLoss)
        let syncPoints =
            [0]
            + events.indices.filter {
                switch events[$0] {
                case .syncedFile, .syncedDirectory: true;
                default: false
                }
            }.map { $0 + 1 } + [events.count]
        #expect(syncPoints.count >= Self.writes, "a journal sync per write")
        for cut in syncPoints {
            for reordered in [false, true] {
                for torn in Torn.allCases {
                    let state = "cut after \(cut) of \(events.count) events\(reordered ? ", renames reordered" : ""), unsynced \(torn)"
                    let url = directory.file("cut-\(cut)-\(reordered)-\(torn).json")
                    try Self.place(Self.files(after: cut, of: events, reordered: reordered, torn: torn), at: url)
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
            try Self.place(Self.files(after: cut, of: events, reordered: false, torn: .empty), at: url)
            let prefs = try Prefs(.jsonFile(url))
            let present = (0..<Self.writes).map { prefs[Prefs.Key("k\($0)", initial: -1)] == $0 }
            let survived = present.firstIndex(of: false) ?? Self.writes
            #expect(present == (0..<Self.writes).map { $0 < survived }, "cut after \(cut): not a prefix of the writes")
        }
    }
}
