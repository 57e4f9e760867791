import Foundation
import Prefs

/// `watch`: print each change as it happens, made by any process.
enum WatchCommand {
    static let command = Command(spec: CommandSpec(
        name: "watch", summary: "Print each change to the store (or to KEYs) as it happens, until interrupted.",
        usage: "prefs-tool [--store PATH] watch [KEY…] [--interval MILLISECONDS]",
        help: """
            One line per change: KEY<TAB>TYPE<TAB>VALUE, or KEY<TAB>(reset) when a value is removed.
            The store is checked every --interval milliseconds (default 200). Changes from any process are seen.
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
        Terminal.note("watching \(context.store.path)\(keys.isEmpty ? "" : " for " + keys.sorted().joined(separator: ", ")); interrupt to stop")
        while true {
            try await Task.sleep(for: .milliseconds(interval))
            let now = try current()
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
