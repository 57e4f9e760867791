import Foundation
import Prefs
import PrefsJSON

/// `watch`: print each change as it happens, made by any process.
enum WatchCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "watch", summary: "Print each change to the store (or to KEYs) until interrupted.",
            usage: "prefs-tool [--store PATH] watch [KEY…] [--interval MILLISECONDS]",
            help: """
                One line per change: TIME<TAB>KEY<TAB>TYPE<TAB>VALUE<TAB>(was OLD), with (new) for a key that held no
                value and VALUE (reset) for a value removed; TIME is when the change was seen, in UTC to the
                millisecond. Fields are escaped as 'list' escapes them, and aligned on a terminal.
                The store is checked every --interval milliseconds (default 200), and a PostgreSQL store also as soon
                as another instance's change is signalled (LISTEN/NOTIFY); changes from any process are seen, and
                several changes to one key between two checks show as the last. A KEY neither stored nor declared is
                named on stderr (with the nearest key) and watched for. A store that does not exist yet is waited for,
                as tail -F waits for a file; its first values then show as new. A check that cannot read the store
                (another program rewriting a JSON file in place, so that it is briefly empty) is reported on stderr and
                watching goes on. Interrupt (Ctrl-C) or terminate to stop: the lines of the current check are finished,
                and the exit status is 0.
                """,
            options: ["interval"], positionals: 0...Int.max)
    ) { arguments, context in
        let interval = Int(arguments.option("interval") ?? "200") ?? -1
        guard (10...60_000).contains(interval) else { throw ToolError.usage("--interval takes milliseconds from 10 to 60000", context.usage) }
        let stop = StopRequest(signals: [SIGINT, SIGTERM])
        let existed = context.store.exists
        if !existed {
            Terminal.warning(context.store.missingStoreMessage())
            Terminal.note("waiting for \(context.store.path) to be created; interrupt to stop")
            while !context.store.exists {
                try await Task.sleep(for: .milliseconds(interval))
                if stop.isRequested { return 0 }
            }
        }
        let prefs = try context.store.open(listening: true)
        let keys = Set(arguments.positionals)
        func current() throws -> [String: StoredValue] {
            try prefs.refresh()
            let all = try prefs.snapshot()
            return keys.isEmpty ? all : all.filter { keys.contains($0.key) }
        }
        // Listening before the first check: a change made after it is signalled.
        let signal = prefs.makeChangeSignal()
        defer { signal?.close() }
        var last = existed ? try current() : [:]
        if existed {
            let declared = try prefs.declaredKeys()
            for name in keys.sorted() where last[name] == nil && declared[name] == nil {
                let hint = try StoreCommands.suggestion(for: name, in: prefs)
                Terminal.warning("key \(ValueText.quoted(name)) is neither stored nor declared\(hint)")
            }
        }
        Terminal.note("watching \(context.store.path)\(keys.isEmpty ? "" : " for " + keys.sorted().joined(separator: ", ")); interrupt to stop")
        var failure: String?
        while true {
            try await waitForNextCheck(interval: .milliseconds(interval), signal: signal, stop: stop)
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
            let time = ISO8601.format(Date(), fractionDigits: 3)
            var table = KeyTable()
            for name in Set(last.keys).union(now.keys).sorted() where last[name] != now[name] {
                let old = last[name]
                let was = old.map { "(was \(ValueText.plain($0)))" } ?? "(new)"
                if let value = now[name] {
                    table.rows.append(.init(fields: [time, name, value.type.description], value: ValueText.plain(value), note: was))
                } else if let old {
                    table.rows.append(.init(fields: [time, name, old.type.description], value: "(reset)", note: was))
                }
            }
            table.print(environment: context.environment)
            last = now
        }
    }
}

extension WatchCommand {
    /// Returns when the next check is due: `interval` has passed, another process's change was signalled, or a stop was
    /// requested (noticed within a quarter of a second, whatever the interval).
    static func waitForNextCheck(interval: Duration, signal: Prefs.ChangeSignal?, stop: StopRequest) async throws {
        let deadline = ContinuousClock.now + interval
        while !stop.isRequested {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return }
            let slice = min(left, .milliseconds(250))
            guard let signal else {
                try await Task.sleep(for: slice)
                continue
            }
            // Off the cooperative pool: the wait blocks its thread until a change is signalled or the slice ends.
            let signalled = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                DispatchQueue.global().async { continuation.resume(returning: signal.wait(upTo: slice)) }
            }
            if signalled { return }
        }
    }
}

/// A stop asked for by a signal, noticed between two units of work instead of ending the process in the middle of
/// one (a line half written to a slow pipe).
// @unchecked Sendable: the sources are set once here and only kept alive; the flag is behind a lock.
final class StopRequest: @unchecked Sendable {
    private let requested = Flag()
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32]) {
        let requested = requested
        sources = signals.map { number in
            signal(number, SIG_IGN)  // delivered to the source below instead of ending the process
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { requested.set() }
            source.resume()
            return source
        }
    }

    var isRequested: Bool { requested.isSet }
}

/// `check`: an integrity check of the store.
enum CheckCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "check", summary: "Check the store: integrity, every value's type and declaration.",
            usage: "prefs-tool [--store PATH] check",
            help: """
                Exits 0 and prints "ok", or exits 65 naming each problem: damage SQLite's integrity_check finds, a JSON
                document of the wrong shape or a JSON journal with a bad line before good ones, a JSON journal that does
                not belong to its store file yet holds changes the file lacks (writes no reader applies), a value that
                does not fit its own type, and a value that does not fit the type its key is declared with (the app reads
                the initial value instead, until the key is reset or set). Noted on stderr, and no problem: a torn last
                journal record (a writer killed mid-append: never applied, removed by the next write), and a JSON file
                edited while its journal held changes to the same keys (the edit is kept for those keys).
                Reads only: a damaged store is never changed.
                """)
    ) { _, context in
        let prefs = try context.store.open()
        let problems = try prefs.integrityProblems() + declarationProblems(in: prefs)
        guard problems.isEmpty else {
            for problem in problems { Terminal.error(problem) }
            throw ToolError.data("\(context.store.path): \(problems.count) problem\(problems.count == 1 ? "" : "s") found")
        }
        let count = try prefs.snapshot().count
        Terminal.print("ok: \(context.store.path) (\(count) value\(count == 1 ? "" : "s"))")
        for diagnostic in prefs.diagnostics {
            // A writer killed mid-append (the record was never acknowledged nor applied), a hand edit merged with the
            // journal: not damage, but worth knowing.
            switch diagnostic.kind {
            case .journalTornTail, .handEditKept: Terminal.note("note: \(diagnostic)")
            default: break
            }
        }
        return 0
    }

    /// Stored values the app cannot read as their keys' declared types, one line each. A value that does not fit
    /// its own type is left to the integrity check.
    static func declarationProblems(in prefs: Prefs) throws -> [String] {
        let stored = try prefs.snapshot()
        return try prefs.declaredKeys().sorted { $0.key < $1.key }.compactMap { name, declaration in
            guard let value = stored[name], value.shapeProblem() == nil, let mismatch = declaration.mismatch(with: value) else { return nil }
            let initial = declaration.initialValue.map { ValueText.plain($0) } ?? "null"
            return "key \(ValueText.quoted(name)) is declared as \(declaration.type), and its stored \(value.type) \(value.preview()) "
                + "cannot be read as one (\(mismatch.reason)): the app reads its initial value \(initial) (prefs-tool reset \(ArgumentParser.shellQuoted(name)))"
        }
    }
}

/// A flag one thread sets and others read.
// @unchecked Sendable: `value` is read and written only under `lock`.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
