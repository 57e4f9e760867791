import Foundation
import PrefsTestSupport

// Temporary directories for every store, and child processes of this same binary.

/// Every store lives in a fresh directory under one per-run root, removed afterwards.
enum Scratch {
    static let root: String = {
        let base = ProcessInfo.processInfo.environment["PREFS_BENCH_TMPDIR"] ?? NSTemporaryDirectory()
        return makeDirectory((base as NSString).appendingPathComponent("prefs-bench-XXXXXX"))
    }()

    /// `mkdtemp(3)`: a new directory named after `template`, whose trailing XXXXXX are replaced.
    private static func makeDirectory(_ template: String) -> String {
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { fatalError("mkdtemp \(template): errno \(errno)") }
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Where UserDefaults keeps its suites on Linux: `$XDG_CONFIG_HOME` as set at launch (CoreFoundation reads it
    /// before `main`, so it cannot be redirected from inside), else `~/.config`. Suites are unique per run and removed.
    static var configHome: String {
        if let config = getenv("XDG_CONFIG_HOME"), config.pointee != 0 { return String(cString: config) }
        return NSHomeDirectory() + "/.config"
    }

    /// A fresh empty directory.
    static func directory(_ label: String) -> String {
        makeDirectory((root as NSString).appendingPathComponent("\(label)-XXXXXX"))
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static func removeAll() {
        remove(root)
    }
}

/// This program's executable, to spawn children of the same build.
let selfExecutable: String = {
    if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
    return CommandLine.arguments[0]
}()

/// What a child printed and how long the whole process took, spawn to exit.
struct ChildResult {
    var output: String
    var elapsed: Duration
}

/// Runs `prefs-bench ARGUMENTS` and waits for it. Its stdout is returned; its stderr passes through.
/// Through ``SpawnedProcess`` (posix_spawn and waitpid): Foundation's `Process.waitUntilExit` polls in 50 ms steps on Linux.
func runChild(_ arguments: [String]) throws -> ChildResult {
    if getenv("PREFS_BENCH_TMPDIR") == nil { setenv("PREFS_BENCH_TMPDIR", Scratch.root, 1) }  // a child's directories go inside the run's
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe: errno \(errno)") }
    let reader = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true)
    let start = clock.now
    let process: SpawnedProcess
    do {
        process = try SpawnedProcess.spawn(selfExecutable, arguments, stdin: .inherit, stdout: .descriptor(pipeEnds[1]))
    } catch {
        close(pipeEnds[1])
        throw BenchError("\(error)")
    }
    close(pipeEnds[1])
    let data = reader.readDataToEndOfFile()
    process.waitUntilExit()
    let elapsed = clock.now - start
    let output = String(decoding: data, as: UTF8.self)
    guard !process.wasSignaled, process.terminationStatus == 0 else {
        throw BenchError(
            "child \(arguments.joined(separator: " ")) \(process.wasSignaled ? "killed by signal" : "exited with status") \(process.terminationStatus): \(output)"
        )
    }
    return ChildResult(output: output, elapsed: elapsed)
}

/// A `name=value` field of a child's output.
func field(_ name: String, in output: String) -> String? {
    for line in output.split(separator: "\n") where line.hasPrefix(name + "=") {
        return String(line.dropFirst(name.count + 1))
    }
    return nil
}

/// Peak resident set size of this process in KiB (VmHWM from /proc/self/status).
func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}
