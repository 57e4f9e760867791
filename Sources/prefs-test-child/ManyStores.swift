// prefs-test-child many json|sqlite DIR COUNT [hog]: many stores in one process, for the shared inotify instance's tests.
//
// Opens COUNT stores DIR/store-I.json (or .sqlite), writes each three times (so that each writer watches its files) and
// prints "armed" with this process's inotify instances, their watches, and the checks the stores made so far. Then it
// waits for a line on stdin (another process has set the Int key "other" = I in store I meanwhile), refreshes each
// store, and prints "seen" with how many stores read their "other", the slow and fast checks that took, and how many
// stores reported that the system's inotify limit was reached. Then it closes and releases every store, and prints
// "closed" with the instances and watches left, and how many more descriptors and threads the process has than before
// the first store opened. With "hog", it first takes every inotify instance the user may have, so that none is left
// for the stores, and gives them back at the end.
import Foundation
import Prefs
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
func manyStores(_ arguments: [String]) -> Never {
    guard arguments.count >= 3, let count = Int(arguments[2]), ["json", "sqlite"].contains(arguments[0]) else {
        fail("usage: prefs-test-child many json|sqlite DIR COUNT [hog]")
    }
    var hogs: [Int32] = []
    if arguments.count == 4, arguments[3] == "hog" {
        while true {
            let fd = inotify_init1(Int32(IN_CLOEXEC))
            guard fd >= 0 else { break }
            hogs.append(fd)
        }
        guard errno == EMFILE else { fail("inotify_init1 failed with errno \(errno), not at the limit") }
    }
    let baseline = (descriptors: openDescriptors().count, threads: threadCount())
    func counts() -> String {
        let instances = openDescriptors().filter { $0.target == "anon_inode:inotify" && !hogs.contains($0.fd) }
        let watches = instances.reduce(0) { total, instance in
            // Read to its end: `String(contentsOfFile:)` may stop at a /proc file's first page.
            guard let file = FileHandle(forReadingAtPath: "/proc/self/fdinfo/\(instance.fd)") else { fail("no fdinfo for \(instance.fd)") }
            defer { file.closeFile() }
            let info = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            return total + info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }
        return "instances=\(instances.count) watches=\(watches)"
    }
    func checks() -> (slow: Int, fast: Int) {
        (FileChecks.slow.load(ordering: .sequentiallyConsistent), FileChecks.fast.load(ordering: .sequentiallyConsistent))
    }
    do {
        var stores: [Prefs] = []
        for index in 0..<count {
            let url = URL(fileURLWithPath: arguments[1]).appendingPathComponent("store-\(index).\(arguments[0])")
            let storage: Prefs.Storage = arguments[0] == "json" ? .jsonFile(url).idleCompaction(after: nil) : .sqlite(url)
            let prefs = try Prefs(storage)
            for round in 1...3 { try prefs.setStoredValue(StoredValue(type: .int, json: .int(round)), forKey: "own") }
            stores.append(prefs)
        }
        var before = checks()
        say("armed \(counts()) slow=\(before.slow) fast=\(before.fast)")
        guard readLine() != nil else { fail("stdin closed before the other process wrote") }
        before = checks()
        var seen = 0
        for (index, prefs) in stores.enumerated() {
            try prefs.refresh()
            if try prefs.storedValue(forKey: "other") == StoredValue(type: .int, json: .int(index)) { seen += 1 }
        }
        let after = checks()
        let limits = stores.reduce(0) { total, prefs in
            total + prefs.diagnostics.filter { if case .fileWatchUnavailable = $0.kind { true } else { false } }.count
        }
        say("seen \(seen) slow=\(after.slow - before.slow) fast=\(after.fast - before.fast) limitDiagnostics=\(limits)")
        for prefs in stores { try prefs.close() }
        stores = []
        let descriptors = openDescriptors().count - baseline.descriptors
        say("closed \(counts()) descriptors=\(descriptors) threads=\(threadCount() - baseline.threads)")
    } catch {
        fail("\(error)")
    }
    for fd in hogs { close(fd) }
    exit(0)
}

/// This process's open descriptors and what each is open on.
private func openDescriptors() -> [(fd: Int32, target: String)] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap { name in
        guard let fd = Int32(name) else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/fd/\(name)", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }  // the listing's own descriptor, closed since
        return (fd, String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// This process's threads.
private func threadCount() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
}
#endif
