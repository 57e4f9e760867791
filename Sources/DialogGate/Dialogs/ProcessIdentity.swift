import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which process holds a dialog's presentation claim, so that another process can tell a claim whose holder
/// crashed (it may present again) from one whose holder still has the dialog on screen (it may not).
///
/// A process is named by its host, its id and its start time. The start time tells a live holder from a
/// later process that was given the same id; where it cannot be read, the id alone decides.
///
/// ```swift
/// ProcessIdentity.current.isRunning()   // true
/// ```
struct ProcessIdentity: Hashable, Sendable {
    var host: String
    var processID: Int32
    /// When the process started, in the system's own units (clock ticks since boot on Linux, microseconds since
    /// 1970 on Apple platforms); nil where it cannot be read.
    var started: UInt64?

    /// This process.
    static let current = ProcessIdentity(host: hostName(), processID: getpid(), started: startTime(of: getpid()))

    /// Whether the process still runs: true or false on this host, nil for a process on another host
    /// (a store on a shared disk), which cannot be asked.
    func isRunning() -> Bool? {
        guard host == Self.current.host else { return nil }
        if processID == Self.current.processID { return started == Self.current.started }
        guard kill(processID, 0) == 0 || errno == EPERM else { return false }  // EPERM: it runs, as another user
        if let started, let now = Self.startTime(of: processID) { return started == now }
        return true
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The start time of process `pid`, or nil.
    static func startTime(of pid: Int32) -> UInt64? {
        #if os(Linux)
        // /proc/PID/stat: field 22 is the start time; the command name (field 2) is in parentheses and may hold spaces.
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: field 3 (state) is fields[0], so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
        #elseif canImport(Darwin)
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, pid]
        guard sysctl(&name, 4, &info, &size, nil, 0) == 0, size > 0 else { return nil }
        let start = info.kp_proc.p_starttime
        return UInt64(start.tv_sec) * 1_000_000 + UInt64(start.tv_usec)
        #else
        return nil
        #endif
    }
}
