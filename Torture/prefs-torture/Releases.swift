import Foundation
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Release 0.1 and this release on the same stores at once (issue 27), in `--long` mode: 0.1 is built from its commit
/// by `Tests/Releases/build-release.sh`, and its own `prefs-test-child`, `prefs-tool` and fixture writer run beside
/// this binary's children.
///
/// - **Both writing** a store 0.1 created (a format-1 JSON file, an SQLite file): atomic increments of one counter and
///   sets of keys of their own, from two processes of each release at once. Every acknowledged write is there
///   afterwards; the JSON file is still format 1, with no journal; 0.1 reads what this release reads.
/// - **Format 2 refused**: a store this release created, its latest writes in the journal: 0.1's writer and tool
///   refuse it with `unsupportedFormatVersion` and change no byte.
/// - **Format 1 for 0.1**: this release writes every value type it has into a store opened with `formatVersion: 1`;
///   0.1 reads each value as this release does, rewrites the file, and nothing this release wrote is lost.
struct ReleaseCompatibility {
    let directory: String
    let rounds: Int
    let verbose: Bool

    struct Check: Sendable {
        var name: String
        var passed: Bool
        var detail: String
    }

    /// The repository this harness was built from (the scripts live there).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func run() -> [Check] {
        let bin: String
        do {
            bin = try build()
        } catch {
            return [Check(name: "build release 0.1", passed: false, detail: "\(error)")]
        }
        var checks: [Check] = []
        for backend in TortureBackend.fileBackends {
            checks.append(check("both releases writing [\(backend.rawValue)], \(rounds) rounds") { try bothWriting(backend, bin: bin) })
        }
        checks.append(check("release 0.1 refuses format 2 and changes nothing") { try formatTwoRefused(bin: bin) })
        checks.append(check("format 1 for release 0.1: every value type read alike, rewritten by 0.1, nothing lost") { try formatOneForZeroOne(bin: bin) })
        return checks
    }

    private func check(_ name: String, _ body: () throws -> String) -> Check {
        do {
            let detail = try body()
            if verbose { say("  ok: \(name): \(detail)") }
            return Check(name: name, passed: true, detail: detail)
        } catch {
            return Check(name: name, passed: false, detail: "\(error)")
        }
    }

    /// Builds release 0.1 (or reuses `$PREFS_RELEASE_BUILDS/0.1`); returns the directory of its products.
    private func build() throws -> String {
        let builds = ProcessInfo.processInfo.environment["PREFS_RELEASE_BUILDS"] ?? (directory as NSString).appendingPathComponent("builds")
        let output = (directory as NSString).appendingPathComponent("build.out"), log = (directory as NSString).appendingPathComponent("build.log")
        say("  building release 0.1 (log: \(log))…")
        let status = try SpawnedProcess.run(
            "/bin/bash", [Self.root.appendingPathComponent("Tests/Releases/build-release.sh").path, "0.1", (builds as NSString).appendingPathComponent("0.1")],
            stdout: .file(output), stderr: .file(log))
        let bin = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0, !bin.isEmpty else { throw TortureError("build-release.sh exited \(status); see \(log)") }
        return bin
    }

    /// Runs a program to completion; returns its exit status, standard output and standard error.
    private func execute(_ executable: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let name = UUID().uuidString
        let out = (directory as NSString).appendingPathComponent("\(name).out"), err = (directory as NSString).appendingPathComponent("\(name).err")
        defer {
            unlink(out)
            unlink(err)
        }
        let status = try SpawnedProcess.run(executable, arguments, stdout: .file(out), stderr: .file(err))
        func text(_ path: String) -> String { String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self) }
        return (status, text(out), text(err))
    }

    private func bothWriting(_ backend: TortureBackend, bin: String) throws -> String {
        let count = 300
        for round in 0..<rounds {
            let path = (directory as NSString).appendingPathComponent("both-\(backend.rawValue)-\(round).\(backend == .sqlite ? "sqlite" : "json")")
            let kind = backend == .sqlite ? "sqlite" : "json"
            let old = "\(bin)/prefs-test-child"
            // 0.1 creates the store, as an app of that release would have.
            let created = try execute(old, ["write", kind, path, "created", "1"])
            guard created.status == 0 else { throw TortureError("0.1 could not create \(path): \(created.err)") }
            func this(_ kind: String, _ arguments: [String], _ log: String) throws -> SpawnedProcess {
                try SpawnedProcess.spawn(
                    Subprocess.selfExecutable, ["--child", kind, "--backend", backend.rawValue, "--path", path] + arguments,
                    stdout: .null, stderr: .file(path + ".\(log).err"))
            }
            func zeroOne(_ arguments: [String], _ log: String) throws -> SpawnedProcess {
                try SpawnedProcess.spawn(old, arguments, stdout: .null, stderr: .file(path + ".\(log).err"))
            }
            let children = try [
                zeroOne(["update", kind, path, "counter", "\(count)"], "0.1-a"),
                zeroOne(["update", kind, path, "counter", "\(count)"], "0.1-b"),
                zeroOne(["write", kind, path, "old", "\(count)"], "0.1-c"),
                this("release-update", ["--key", "counter", "--count", "\(count)"], "new-a"),
                this("release-update", ["--key", "counter", "--count", "\(count)"], "new-b"),
                this("release-write", ["--prefix", "new", "--count", "\(count)"], "new-c"),
            ]
            for child in children { child.waitUntilExit() }
            for (child, suffix) in zip(children, ["0.1-a", "0.1-b", "0.1-c", "new-a", "new-b", "new-c"]) where child.wasSignaled || child.terminationStatus != 0
            {
                let log = (try? String(contentsOfFile: path + ".\(suffix).err", encoding: .utf8)) ?? ""
                throw TortureError("round \(round): \(suffix) exited \(child.terminationStatus): \(log)")
            }
            let prefs = try Prefs(backend.checkerStorage(path))
            let values = try prefs.snapshot()
            guard values["counter"]?.json == .int(4 * count) else {
                throw TortureError("round \(round): counter \(values["counter"]?.json.serialized() ?? "absent"), expected \(4 * count): increments lost")
            }
            for prefix in ["old", "new"] {
                for index in 0..<count where values["\(prefix)-\(index)"]?.json != .int(index) {
                    throw TortureError("round \(round): \(prefix)-\(index) is \(values["\(prefix)-\(index)"]?.json.serialized() ?? "absent")")
                }
            }
            let problems = try prefs.integrityProblems()
            guard problems.isEmpty else { throw TortureError("round \(round): \(problems)") }
            if backend == .json {
                let document = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: path)))
                guard document["formatVersion"] == .int(1), access(path + ".journal", F_OK) != 0 else {
                    throw TortureError("round \(round): the file left format 1, or has a journal: 0.1 would refuse or misread it")
                }
            }
            let seen = try execute("\(bin)/release-fixtures", ["export", kind, path])
            guard seen.status == 0, let theirs = try JSON.parse(Data(seen.out.utf8))["values"] else { throw TortureError("0.1 cannot read it: \(seen.err)") }
            guard theirs == .object(values.mapValues { .object(["type": .string($0.type.description), "value": $0.json]) }) else {
                throw TortureError("round \(round): 0.1 reads other values than this release")
            }
        }
        return "\(rounds) rounds × (2 × \(count) increments and \(count) sets per release): nothing lost, 0.1 reads the same"
    }

    private func formatTwoRefused(bin: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent("format2.json")
        let writer = try Prefs(Prefs.Storage.jsonFile(URL(fileURLWithPath: path)).idleCompaction(after: nil))
        for index in 0..<20 { try writer.set(index, for: Prefs.Key<Int>("k\(index % 5)", initial: 0)) }  // the last in the journal
        let before = try [path, path + ".journal"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let update = try execute("\(bin)/prefs-test-child", ["update", "json", path, "k0", "1"])
        guard update.status != 0, update.err.contains("format version 2 is newer") else {
            throw TortureError("0.1's writer did not refuse the store: exit \(update.status), \(update.err)")
        }
        let list = try execute("\(bin)/prefs-tool", ["--store", path, "list"])
        guard list.status == 65, list.err.contains("format version 2 is newer") else {
            throw TortureError("0.1's prefs-tool: exit \(list.status), \(list.err)")
        }
        let after = try [path, path + ".journal"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        guard after == before else { throw TortureError("0.1 changed the files it refused") }
        try writer.set(99, for: Prefs.Key<Int>("k0", initial: 0))
        return "0.1's writer and prefs-tool both refused it (exit \(update.status), \(list.status)); no byte changed"
    }

    private func formatOneForZeroOne(bin: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent("format1.json")
        let url = URL(fileURLWithPath: path)
        let prefs = try Prefs(.jsonFile(url, formatVersion: 1))
        try prefs.set(UInt64(Int.max), for: Prefs.Key<UInt64>("unsigned", initial: 0))
        try prefs.set([UInt8(1), 255], for: Prefs.Key<[UInt8]>("bytes", initial: []))
        try prefs.set(Int8.min, for: Prefs.Key<Int8>("int8", initial: 0))
        try prefs.set(Float(0.1), for: Prefs.Key<Float>("float", initial: 0))
        try prefs.set(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, for: Prefs.Key<UUID>("uuid", initial: UUID()))
        try prefs.set(Decimal(string: "3.14159265358979323846")!, for: Prefs.Key<Decimal>("decimal", initial: 0))
        try prefs.set(Locale(identifier: "fr_CA"), for: Prefs.Key<Locale>("locale", initial: Locale(identifier: "en_US")))
        try prefs.set(TimeZone(identifier: "Asia/Tokyo")!, for: Prefs.Key<TimeZone>("zone", initial: TimeZone(identifier: "UTC")!))
        try prefs.set(1..<10, for: Prefs.Key<Range<Int>>("range", initial: 0..<1))
        try prefs.set(Set(["b", "a"]), for: Prefs.Key<Set<String>>("set", initial: []))
        try prefs.set(Date(timeIntervalSince1970: 1_700_000_000.123_456_789), for: Prefs.Key<Date>("date", initial: Date(timeIntervalSince1970: 0)))
        try prefs.set(5, for: Prefs.Key<Int>("launches", initial: 0, formerNames: ["launchCounter"]))
        try prefs.close()
        let mine = try Prefs(.jsonFile(url))
        let values = try mine.snapshot(), declared = try mine.declaredKeys()
        let seen = try execute("\(bin)/release-fixtures", ["export", "json", path])
        guard seen.status == 0, let theirs = try JSON.parse(Data(seen.out.utf8))["values"] else { throw TortureError("0.1 cannot read it: \(seen.err)") }
        guard theirs == .object(values.mapValues { .object(["type": .string($0.type.description), "value": $0.json]) }) else {
            throw TortureError("0.1 reads other values than this release: \(theirs.serialized())")
        }
        let rewrite = try execute("\(bin)/release-fixtures", ["rewrite", path, "byZeroOne", "1"])
        guard rewrite.status == 0 else { throw TortureError("0.1 could not write it: \(rewrite.err)") }
        let after = try Prefs(.jsonFile(url))
        var expected = values
        expected["byZeroOne"] = StoredValue(type: .int, json: .int(1))
        guard try after.snapshot() == expected else { throw TortureError("0.1's rewrite changed values") }
        let redeclared = try after.declaredKeys()
        guard redeclared["launches"]?.formerNames == ["launchCounter"], redeclared["unsigned"]?.type == .uint,
            redeclared.filter({ $0.key != "byZeroOne" }) == declared
        else { throw TortureError("0.1's rewrite lost declarations: \(redeclared)") }
        guard after[Prefs.Key<UInt64>("unsigned", initial: 0)] == UInt64(Int.max),
            after[Prefs.Key<Decimal>("decimal", initial: 0)] == Decimal(string: "3.14159265358979323846")!
        else { throw TortureError("a value read back wrong") }
        return "\(values.count) values of every type, \(declared.count) declarations: 0.1 reads them alike and keeps them when it rewrites the file"
    }
}

// MARK: - Children of this release

/// `--child release-update --backend B --path P --key K --count N`: N atomic increments of K, this release's way.
/// `--child release-write --backend B --path P --prefix X --count N`: sets X-i = i, one after another.
enum ReleaseChild {
    static func run(_ options: ChildOptions) throws {
        let prefs = try Prefs(try options.backend().storage(try options.path()))
        let count = try options.integer("count")
        if options.kind == "release-update" {
            let key = try Prefs.Key<Int>(validating: try options.string("key"), initial: 0)
            for _ in 0..<count { try prefs.update(key) { $0 += 1 } }
        } else {
            let prefix = try options.string("prefix")
            for index in 0..<count { try prefs.set(index, for: try Prefs.Key<Int>(validating: "\(prefix)-\(index)", initial: -1)) }
        }
        try prefs.close()
    }
}
