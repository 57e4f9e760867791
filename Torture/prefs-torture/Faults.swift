import Foundation
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting

/// Fault injection: each fault must end in a clear typed ``PrefsError`` (or be handled as documented),
/// with every acknowledged write still there afterwards.
struct Faults {
    struct Check: Sendable {
        /// `skipped`: could not run here (no root for a tmpfs); `notApplicable`: nothing to check on this backend.
        enum Outcome: String, Sendable { case passed, failed, skipped, notApplicable }
        var name: String
        var backend: TortureBackend
        var outcome: Outcome
        var detail: String
    }

    /// A check's verdict when it does not pass.
    private enum Verdict: Error {
        case fail(String)
        case skip(String)
        case notApplicable(String)
    }

    let directory: String
    let verbose: Bool

    func run() -> [Check] {
        let checks: [(String, (TortureBackend, String) throws -> String)] = [
            ("sidecar replaced by a directory", sidecarIsDirectory),
            ("a file where the directory should be", parentIsFile),
            ("read-only file system", readOnlyFileSystem),
            ("store file deleted while open", deletedWhileOpen),
            ("store file replaced by another process", replacedWhileOpen),
            ("store file rewritten in place", rewrittenInPlace),
            ("disk full", diskFull),
            ("writer lock held past the timeout", lockHeld),
            ("corrupt store file", corruptFile),
        ]
        var results: [Check] = []
        for (name, check) in checks {
            for backend in TortureBackend.fileBackends {
                let scratch = (directory as NSString).appendingPathComponent("fault-\(results.count)")
                var result = Check(name: name, backend: backend, outcome: .passed, detail: "")
                do {
                    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
                    result.detail = try check(backend, scratch)
                } catch Verdict.fail(let reason) {
                    result.outcome = .failed
                    result.detail = reason
                } catch Verdict.skip(let reason) {
                    result.outcome = .skipped
                    result.detail = reason
                } catch Verdict.notApplicable(let reason) {
                    result.outcome = .notApplicable
                    result.detail = reason
                } catch {
                    result.outcome = .failed
                    result.detail = "unexpected error: \(error)"
                }
                if verbose { say("  fault \(name) [\(backend.rawValue)]: \(result.outcome.rawValue) — \(result.detail)") }
                results.append(result)
            }
        }
        return results
    }

    // MARK: - The faults

    /// The JSON store's lock file, or SQLite's WAL, is a directory: nothing can be written.
    private func sidecarIsDirectory(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        try writeValues(["a": "1", "b": "2"], backend, path)
        let sidecar = path + (backend == .sqlite ? "-wal" : ".lock")
        try? FileManager.default.removeItem(atPath: sidecar)
        try FileManager.default.createDirectory(atPath: sidecar, withIntermediateDirectories: false)
        let detail = try expectRefusedWrite(backend, path, expecting: ["a": "1", "b": "2"])
        try FileManager.default.removeItem(atPath: sidecar)
        try expectStore(backend, path, holds: ["a": "1", "b": "2"], after: "the sidecar was restored")
        return detail
    }

    /// The store's directory is a regular file: opening fails with ENOTDIR, and the file is not touched.
    private func parentIsFile(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let blocker = (scratch as NSString).appendingPathComponent("blocker")
        let bytes = Data("not a directory\n".utf8)
        try bytes.write(to: URL(fileURLWithPath: blocker))
        let path = (blocker as NSString).appendingPathComponent("sub/" + backend.fileName)
        let error = try expectPrefsError("opening a store under a regular file") { _ = try Prefs(backend.storage(path)) }
        guard case .io(_, _, let code) = error, code == ENOTDIR || code == EEXIST else {
            throw Verdict.fail("expected an I/O error ENOTDIR, got: \(error)")
        }
        guard try Data(contentsOf: URL(fileURLWithPath: blocker)) == bytes else { throw Verdict.fail("the regular file was changed") }
        return "\(error)"
    }

    /// The store's file system is read-only (a tmpfs remounted read-only: root ignores directory permissions).
    private func readOnlyFileSystem(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let mountPoint = (scratch as NSString).appendingPathComponent("ro")
        try mountTmpfs(at: mountPoint, size: "4m")
        defer { unmount(mountPoint) }
        let path = (mountPoint as NSString).appendingPathComponent(backend.fileName)
        try writeValues(["a": "1", "b": "2"], backend, path)
        guard runMount(["-o", "remount,ro", mountPoint]) else { throw Verdict.skip("mount -o remount,ro failed") }
        let detail = try expectRefusedWrite(backend, path, expecting: ["a": "1", "b": "2"])
        guard runMount(["-o", "remount,rw", mountPoint]) else { throw Verdict.fail("could not remount read-write") }
        try expectStore(backend, path, holds: ["a": "1", "b": "2"], after: "the file system was writable again")
        try writeValues(["c": "3"], backend, path)
        try expectStore(backend, path, holds: ["a": "1", "b": "2", "c": "3"], after: "a write on the writable file system")
        return detail
    }

    /// Another process deletes the store file while a store has it open: the store treats it as a reset,
    /// never writes the deleted values back, and a write after the deletion reaches the new file.
    private func deletedWhileOpen(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        let prefs = try Prefs(backend.storage(path))
        try prefs.set("1", for: key("a"))
        try prefs.set("2", for: key("b"))
        try runChild(["--child", "unlink", "--path", path])
        // A write without a refresh first: it must not bring "a" and "b" back.
        try prefs.set("3", for: key("c"))
        try expectStore(backend, path, holds: ["c": "3"], after: "the file was deleted by another process and \"c\" written")
        try prefs.refresh()
        guard prefs[key("a")] == nil, prefs[key("c")] == "3" else {
            throw Verdict.fail("after refresh() the open store reads a = \(prefs[key("a")] ?? "nil"), c = \(prefs[key("c")] ?? "nil"); expected nil and 3")
        }
        try prefs.close()
        return "the deletion reads as a reset; the write after it reached the new file"
    }

    /// Another process replaces the store file (a new file renamed over it) while a store has it open: a write
    /// merges by key into the new file, never over it with stale values, and refresh() sees the new content.
    private func replacedWhileOpen(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        let prefs = try Prefs(backend.storage(path))
        try prefs.set("1", for: key("a"))
        try prefs.set("2", for: key("b"))
        try runChild(["--child", "replace", "--backend", backend.rawValue, "--path", path])  // a = 10, c = 30
        try prefs.set("4", for: key("d"))
        try expectStore(backend, path, holds: ["a": "10", "c": "30", "d": "4"], after: "another process replaced the file and \"d\" was written")
        try prefs.refresh()
        guard prefs[key("a")] == "10", prefs[key("b")] == nil, prefs[key("c")] == "30" else {
            throw Verdict.fail(
                "after refresh() the open store reads a = \(prefs[key("a")] ?? "nil"), b = \(prefs[key("b")] ?? "nil"), c = \(prefs[key("c")] ?? "nil"); expected 10, nil, 30"
            )
        }
        try prefs.close()
        return "the write merged by key into the replacement; refresh() sees it"
    }

    /// Another process rewrites the file in place (same inode, as an editor or `cp` does): as for a replacement.
    private func rewrittenInPlace(_ backend: TortureBackend, _ scratch: String) throws -> String {
        guard backend == .json else {
            throw Verdict.notApplicable("rewriting a live SQLite database in place is corruption by definition (sqlite.org/howtocorrupt.html §1)")
        }
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        let prefs = try Prefs(backend.storage(path))
        try prefs.set("1", for: key("a"))
        try prefs.set("2", for: key("b"))
        try runChild(["--child", "rewrite", "--path", path])  // a = 11, e = 50, in place
        try prefs.set("4", for: key("d"))
        try expectStore(backend, path, holds: ["a": "11", "e": "50", "d": "4"], after: "another process rewrote the file in place and \"d\" was written")
        try prefs.close()
        return "the write merged by key into the rewritten file"
    }

    /// A full disk (a 1 MiB tmpfs): a write fails with a typed error, memory keeps the acknowledged value,
    /// the store opens with every acknowledged write, and writing works again once there is space.
    private func diskFull(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let mountPoint = (scratch as NSString).appendingPathComponent("full")
        try mountTmpfs(at: mountPoint, size: "1m")
        defer { unmount(mountPoint) }
        let path = (mountPoint as NSString).appendingPathComponent(backend.fileName)
        var acknowledged: ModelState = [:]
        let prefs = try Prefs(backend.storage(path))
        for index in 0..<10 {
            let value = String(repeating: "\(index)", count: 2000)
            try prefs.set(value, for: key("k\(index)"))
            acknowledged["k\(index)"] = value
        }
        let filler = (mountPoint as NSString).appendingPathComponent("filler")
        try fill(filler)
        let error = try expectPrefsError("writing 200 KB on a full disk") {
            try prefs.set(String(repeating: "x", count: 200_000), for: key("k0"))
        }
        guard prefs[key("k0")] == acknowledged["k0"] else { throw Verdict.fail("the failed write is visible in memory") }
        // Small writes may fit in space a backend already holds; each either succeeds or fails typed.
        var smallWrites = 0, smallFailures = 0
        for index in 0..<20 {
            do {
                try prefs.set("small\(index)", for: key("s\(index % 4)"))
                acknowledged["s\(index % 4)"] = "small\(index)"
                smallWrites += 1
            } catch {  // typed: a PrefsError
                smallFailures += 1
            }
        }
        try expectStore(backend, path, holds: acknowledged, after: "writes failed on the full disk (still full)")
        try FileManager.default.removeItem(atPath: filler)
        try prefs.set("after", for: key("k1"))
        acknowledged["k1"] = "after"
        try prefs.close()
        try expectStore(backend, path, holds: acknowledged, after: "space was freed and a write succeeded")
        let litter = try FileManager.default.contentsOfDirectory(atPath: mountPoint).filter { $0.contains(".tmp-") }
        guard litter.isEmpty else { throw Verdict.fail("temporary files left on the full disk: \(litter)") }
        return "\(error); then \(smallWrites) small writes succeeded, \(smallFailures) failed typed"
    }

    /// Another process holds the writer lock longer than this store waits: `lockTimeout` (JSON) or SQLITE_BUSY,
    /// for a store opened before the lock was taken and for one opened while it is held.
    private func lockHeld(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        try writeValues(["a": "1"], backend, path)
        let prefs = try Prefs(backend.storage(path, timeout: .milliseconds(300)))
        let holder = try Subprocess(["--child", "hold", "--backend", backend.rawValue, "--path", path])
        guard holder.readLines(until: { $0.contains("holding") }, timeout: .seconds(30)) else { throw Verdict.fail("the lock holder did not start") }
        let started = ContinuousClock.now
        let error = try expectPrefsError("writing while another process holds the lock") { try prefs.set("2", for: key("a")) }
        let waited = ContinuousClock.now - started
        try expectLockError(error, backend)
        guard prefs[key("a")] == "1" else { throw Verdict.fail("the refused write is visible in memory") }
        // A store opened while the lock is held.
        var lateOpen = "a store opened while the lock is held "
        do {
            let late = try Prefs(backend.storage(path, timeout: .milliseconds(300)))
            guard late[key("a")] == "1" else { throw Verdict.fail("a store opened while the lock is held reads a = \(late[key("a")] ?? "nil")") }
            let error = try expectPrefsError("writing from a store opened while the lock is held") { try late.set("2", for: key("a")) }
            try expectLockError(error, backend)
            lateOpen += "reads, and its write fails the same way"
        } catch let error as PrefsError {
            try expectLockError(error, backend)
            lateOpen += "fails to open: \(error)"
        }
        holder.closeInput()
        holder.readLines(until: { $0.contains("released") }, timeout: .seconds(30))
        guard holder.wait() == .exited(0) else { throw Verdict.fail("the lock holder failed: \(holder.lines)") }
        try prefs.set("3", for: key("a"))
        try prefs.close()
        try expectStore(backend, path, holds: ["a": "3", "held": "yes"], after: "the lock was released")
        return "\(error) after \(waited.milliseconds) ms; \(lateOpen)"
    }

    private func expectLockError(_ error: PrefsError, _ backend: TortureBackend) throws {
        switch (backend, error) {
        case (.sqlite, .database(let database)) where database.codeName == "SQLITE_BUSY": return
        case (.json, .lockTimeout): return
        default: throw Verdict.fail("expected \(backend == .sqlite ? "SQLITE_BUSY" : "lockTimeout"), got: \(error)")
        }
    }

    /// Garbage in the store file: `corruptStore`, and the bytes are kept exactly.
    private func corruptFile(_ backend: TortureBackend, _ scratch: String) throws -> String {
        let path = (scratch as NSString).appendingPathComponent(backend.fileName)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = try expectPrefsError("opening a corrupt file") { _ = try Prefs(backend.storage(path)) }
        guard case .corruptStore = error else { throw Verdict.fail("expected corruptStore, got: \(error)") }
        guard try Data(contentsOf: URL(fileURLWithPath: path)) == garbage else { throw Verdict.fail("the corrupt file was changed") }
        return "\(error)"
    }

    // MARK: - Helpers

    private func key(_ name: String) -> Prefs.Key<String?> { Prefs.Key<String?>(name) }

    /// Writes `values` through a store opened and closed for the purpose.
    private func writeValues(_ values: ModelState, _ backend: TortureBackend, _ path: String) throws {
        let prefs = try Prefs(backend.storage(path))
        try prefs.batch { transaction in
            for (name, value) in values { try transaction.set(value, for: key(name)) }
        }
        try prefs.close()
    }

    /// Opens the store as a new process would and compares every value with `expected`.
    private func expectStore(_ backend: TortureBackend, _ path: String, holds expected: ModelState, after what: String) throws {
        let found: ModelState
        do {
            let prefs = try Prefs(backend.checkerStorage(path))
            let problems = try prefs.integrityProblems()
            guard problems.isEmpty else { throw Verdict.fail("after \(what): integrity problems \(problems)") }
            found = try ModelState(snapshot: prefs.snapshot())
            try prefs.close()
        } catch let verdict as Verdict {
            throw verdict
        } catch {
            throw Verdict.fail("after \(what), the store does not open: \(error)")
        }
        guard found == expected else {
            throw Verdict.fail("after \(what): \(found.differences(from: expected).joined(separator: "; "))")
        }
    }

    /// Opening may fail (typed) or succeed; then a write must fail typed and change nothing in memory.
    private func expectRefusedWrite(_ backend: TortureBackend, _ path: String, expecting values: ModelState) throws -> String {
        let prefs: Prefs
        do {
            prefs = try Prefs(backend.storage(path, timeout: .seconds(1)))
        } catch {  // typed: a PrefsError
            return "opening fails: \(error)"
        }
        for (name, value) in values where prefs[key(name)] != value {
            throw Verdict.fail("the store opened but reads \(name) = \(prefs[key(name)] ?? "nil"), expected \(value)")
        }
        let error = try expectPrefsError("writing") { try prefs.set("changed", for: key("a")) }
        guard prefs[key("a")] == values["a"] else { throw Verdict.fail("the refused write is visible in memory") }
        return "opens read-only; a write fails: \(error)"
    }

    /// Runs `body`, which must throw a ``PrefsError``; returns it.
    private func expectPrefsError(_ what: String, _ body: () throws -> Void) throws -> PrefsError {
        do {
            try body()
        } catch let error as PrefsError {
            return error
        } catch {
            throw Verdict.fail("\(what) threw an untyped error \(type(of: error)): \(error)")
        }
        throw Verdict.fail("\(what) succeeded")
    }

    private func runChild(_ arguments: [String]) throws {
        let child = try Subprocess(arguments)
        child.drain()
        guard child.wait() == .exited(0), child.lines.last == "done" else {
            throw TortureError("child \(arguments) failed: \(child.lines.joined(separator: " / "))")
        }
    }

    /// Writes `path` until the file system is full (ENOSPC), in shrinking chunks so that not a byte is left.
    private func fill(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TortureError("create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var chunk = 65536
        let buffer = [UInt8](repeating: 0x46, count: chunk)
        while chunk > 0 {
            if write(fd, buffer, chunk) < 0 {
                guard errno == ENOSPC else { throw TortureError("fill \(path): \(String(cString: strerror(errno)))") }
                chunk /= 2
            }
        }
    }

    private func mountTmpfs(at mountPoint: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard runMount(["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", mountPoint]) else {
            throw Verdict.skip("cannot mount a tmpfs here (mount -t tmpfs needs root or CAP_SYS_ADMIN)")
        }
    }

    private func unmount(_ mountPoint: String) {
        _ = Self.run("umount", [mountPoint])
    }

    private func runMount(_ arguments: [String]) -> Bool {
        Self.run("mount", arguments)
    }

    /// Runs a system tool found on the usual paths, quietly; true when it exits 0.
    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard
            let executable = ["/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"].map({ $0 + tool }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { return false }
        return (try? SpawnedProcess.run(executable, arguments)) == 0
    }
}
