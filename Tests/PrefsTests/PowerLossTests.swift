import CSQLiteCrashVFS
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport

/// What the watched files held at each sync, in order: the only content a power cut is sure to leave.
private let syncedImages = Locked<[(name: String, data: Data)]>([])

/// The VFS's callback: records the content just synced. Runs inside SQLite, on the writing thread.
private func recordSync(_ path: UnsafePointer<CChar>?) {
    guard let path else { return }
    let url = URL(fileURLWithPath: String(cString: path))
    // The file was just synced and is locked against other writers: what is read here is what the disk holds.
    let data = (try? Data(contentsOf: url)) ?? Data()  // a file that cannot be read records as empty: the check then fails
    syncedImages.withLock { $0.append((url.lastPathComponent, data)) }
}

/// Simulated power cuts for the SQLite store, in the spirit of SQLite's crash tests: a pass-through VFS
/// (`CSQLiteCrashVFS`) records the content of the store's files at every sync; the files a cut after the n-th
/// sync would leave (every unsynced write dropped, the `-shm` index gone) are rebuilt in a fresh directory and
/// opened normally. Serialized: the VFS is the process's default while a workload runs.
@Suite("Power loss, simulated (SQLite)", .serialized)
struct PowerLossTests {
    static let writes = 24

    /// Runs `writes` single sets and a batch on a store with `durability` under the recording VFS; returns, for each
    /// write, how many syncs had completed when it returned (write i is acknowledged before every cut after that).
    static func record(_ directory: TemporaryDirectory, durability: Prefs.Durability) throws -> [Int] {
        syncedImages.withLock { $0.removeAll() }
        try #require(prefs_crash_vfs_install() == 0)
        prefs_crash_vfs_watch(directory.url.path + "/", recordSync)
        defer {
            prefs_crash_vfs_watch(nil, nil)
            prefs_crash_vfs_uninstall()
        }
        let prefs = try Prefs(.sqlite(directory.file("p.sqlite"), durability: durability))
        var acknowledged: [Int] = []
        for index in 0..<writes {
            if index % 6 == 5 {  // now and then a batch of two
                try prefs.batch { t in
                    try t.set(index, for: Prefs.Key("k\(index)", initial: -1))
                    try t.set(index, for: Prefs.Key("b\(index)", initial: -1))
                }
            } else {
                try prefs.set(index, for: Prefs.Key("k\(index)", initial: -1))
            }
            acknowledged.append(syncedImages.withLock { $0.count })
        }
        try prefs.close()
        return acknowledged
    }

    /// The files as a power cut after the first `syncs` syncs leaves them, in a new directory of `parent`.
    static func filesAfterCut(syncs: Int, in parent: TemporaryDirectory) throws -> URL {
        let directory = parent.file("cut-\(syncs)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        var latest: [String: Data] = [:]
        for image in syncedImages.withLock({ Array($0.prefix(syncs)) }) { latest[image.name] = image.data }
        for (name, data) in latest { try data.write(to: directory.appendingPathComponent(name)) }
        return directory.appendingPathComponent("p.sqlite")
    }

    @Test(
        "at every sync point, a cut leaves a store that opens, is whole, holds a prefix of the writes, and with .powerLoss every acknowledged one",
        arguments: [Prefs.Durability.powerLoss, .processCrash])
    func cutAtEverySync(durability: Prefs.Durability) throws {
        let directory = try TemporaryDirectory()
        let acknowledged = try Self.record(directory, durability: durability)
        let syncs = syncedImages.withLock { $0.count }
        if durability == .powerLoss { #expect(syncs >= Self.writes, "synchronous=FULL syncs at every commit") }
        for cut in 0...syncs {
            let url = try Self.filesAfterCut(syncs: cut, in: directory)
            let prefs: Prefs
            do {
                prefs = try Prefs(.sqlite(url))
            } catch {
                Issue.record("a cut after sync \(cut) of \(syncs) leaves a store that does not open: \(error)")
                continue
            }
            #expect(try prefs.integrityProblems() == [], "cut after sync \(cut)")
            let present = (0..<Self.writes).map { prefs[Prefs.Key("k\($0)", initial: -1)] == $0 }
            let survived = present.firstIndex(of: false) ?? Self.writes
            #expect(present == (0..<Self.writes).map { $0 < survived }, "cut after sync \(cut): not a prefix of the writes: \(present)")
            for index in 0..<Self.writes where index % 6 == 5 {
                #expect(prefs[Prefs.Key("b\(index)", initial: -1)] == (present[index] ? index : -1), "cut after sync \(cut): batch \(index) torn")
            }
            if durability == .powerLoss {
                let promised = acknowledged.filter { $0 <= cut }.count
                #expect(survived >= promised, "cut after sync \(cut): \(promised) writes acknowledged, \(survived) survived")
            }
            try prefs.close()
        }
    }
}
