import Foundation
import Prefs

/// Which store a command works on: `--store PATH`, else `$PREFS_STORE`, else the library's default location.
struct StoreLocator {
    var path: String
    /// Whether the store was named (by --store or $PREFS_STORE) rather than defaulted.
    var isExplicit: Bool

    init(option: String?, environment: [String: String]) {
        if let option, !option.isEmpty {
            path = option
            isExplicit = true
        } else if let variable = environment["PREFS_STORE"], !variable.isEmpty {
            path = variable
            isExplicit = true
        } else {
            path = Prefs.Storage.defaultURL(identifier: "default", environment: environment).path
            isExplicit = false
        }
    }

    var url: URL { URL(fileURLWithPath: path) }

    var exists: Bool { FileManager.default.fileExists(atPath: path) }

    /// Opens the store. A missing store is created only when `create`; otherwise it is an error (exit 74).
    /// A corrupt file is reported (exit 65) and left exactly as it is: the tool never recovers by itself.
    ///
    /// Commands that write pass `checked`: the store's structure is checked first (``Prefs/quickCheckProblems()``,
    /// SQLite's `quick_check`), because a write can succeed on a file whose damaged pages it does not touch, and
    /// would then change a store that `list`, `export` and `check` already refuse.
    func open(create: Bool = false, checked: Bool = false) throws -> Prefs {
        guard create || exists else {
            throw ToolError.io("no store at \(path) (give --store PATH or set PREFS_STORE)")
        }
        let prefs: Prefs
        do {
            prefs = try Prefs(try Prefs.Storage.file(url), pollInterval: .milliseconds(100))
        } catch {
            throw ToolError(error)
        }
        guard checked else { return prefs }
        let problems: [String]
        do {
            problems = try prefs.quickCheckProblems()
        } catch {
            // SQLite may report the damage as SQLITE_CORRUPT rather than as rows of problems.
            let failure = ToolError(error)
            guard failure.code == .data else { throw failure }
            throw ToolError.data("\(failure.message); nothing was written")
        }
        guard !problems.isEmpty else { return prefs }
        // SQLite heads its report with "*** in database main ***"; the lines after it are the problems.
        let lines = problems.flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("*** in database") }
        let first = lines.first.map(String.init) ?? problems[0]
        let more = lines.count > 1 ? " and \(lines.count - 1) more problem\(lines.count == 2 ? "" : "s")" : ""
        throw ToolError.data("\(path): the store is damaged (\(first)\(more)); nothing was written (see 'prefs-tool check')")
    }
}
