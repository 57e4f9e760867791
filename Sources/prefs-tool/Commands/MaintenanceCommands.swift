import Foundation
import Prefs

/// `watch`: print each change as it happens, made by any process.
enum WatchCommand {
    static let command = Command(spec: CommandSpec(
        name: "watch", summary: "Print each change to the store (or to KEYs) as it happens, until interrupted.",
        usage: "prefs-tool [--store PATH] watch [KEY…] [--interval MILLISECONDS]",
        help: """
            One line per change: KEY<TAB>TYPE<TAB>VALUE, or KEY<TAB>(reset) when a value is removed.
            The store is checked every --interval milliseconds (default 200); changes from any process are seen, and
            several changes to one key between two checks show as the last. A check that cannot read the store (another
            program rewriting a JSON file in place, so that it is briefly empty) is reported on stderr and watching goes
            on. Interrupt (Ctrl-C) or terminate to stop: the lines of the current check are finished, and the exit
            status is 0.
            """,
        options: ["interval"], positionals: 0...Int.max)
    ) { arguments, context in
        let interval = Int(arguments.option("interval") ?? "200") ?? -1
        guard (10...60_000).contains(interval) else { throw ToolError.usage("--interval takes milliseconds from 10 to 60000", context.usage) }
        let prefs = try context.store.open()
        let keys = Set(arguments.positionals)
        func current() throws -> [String: StoredValue] {
            try prefs.refresh()
            let all = try prefs.snapshot()
            return keys.isEmpty ? all : all.filter { keys.contains($0.key) }
        }
        var last = try current()
        let stop = StopRequest(signals: [SIGINT, SIGTERM])
        Terminal.note("watching \(context.store.path)\(keys.isEmpty ? "" : " for " + keys.sorted().joined(separator: ", ")); interrupt to stop")
        var failure: String?
        while true {
            try await Task.sleep(for: .milliseconds(interval))
            if stop.isRequested { return 0 }
            let now: [String: StoredValue]
            do {
                now = try current()
            } catch {
                // Reported once per distinct failure; the next check reads the store again.
                let message = ToolError(error).message
                if message != failure { Terminal.warning("\(message); still watching") }
                failure = message
                continue
            }
            if failure != nil { Terminal.note("the store can be read again") }
            failure = nil
            for name in Set(last.keys).union(now.keys).sorted() where last[name] != now[name] {
                if let value = now[name] {
                    Terminal.printData("\(name)\t\(value.type)\t\(ValueText.plain(value))")
                } else {
                    Terminal.printData("\(name)\t(reset)")
                }
            }
            last = now
        }
    }
}

/// A stop asked for by a signal, noticed between two units of work instead of ending the process in the middle of
/// one (a line half written to a slow pipe).
// @unchecked Sendable: the sources are set once here and only kept alive; the flag is behind a lock.
final class StopRequest: @unchecked Sendable {
    private let requested = Locked(false)
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32]) {
        let requested = requested
        sources = signals.map { number in
            signal(number, SIG_IGN)  // delivered to the source below instead of ending the process
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { requested.withLock { $0 = true } }
            source.resume()
            return source
        }
    }

    var isRequested: Bool { requested.withLock { $0 } }
}

/// `check`: an integrity check of the store.
enum CheckCommand {
    static let command = Command(spec: CommandSpec(
        name: "check", summary: "Check the store's integrity (SQLite integrity_check, JSON shape, every value's type).",
        usage: "prefs-tool [--store PATH] check",
        help: "Exits 0 and prints \"ok\", or exits 65 naming each problem. Reads only: a damaged store is never changed.")
    ) { _, context in
        let prefs = try context.store.open()
        let problems = try prefs.integrityProblems()
        guard problems.isEmpty else {
            for problem in problems { Terminal.error(problem) }
            throw ToolError.data("\(context.store.path): \(problems.count) problem\(problems.count == 1 ? "" : "s") found")
        }
        let count = try prefs.snapshot().count
        Terminal.print("ok: \(context.store.path) (\(count) value\(count == 1 ? "" : "s"))")
        return 0
    }
}
