import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Runs the built `prefs-tool` as a child process.
func tool(_ arguments: String..., stdin: String? = nil, environment: [String: String] = [:]) async throws -> ChildProcess.Result {
    try await tool(arguments, stdin: stdin, environment: environment)
}

func tool(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) async throws -> ChildProcess.Result {
    // A private default location, so no test touches the real ~/.config.
    var environment = environment
    if environment["XDG_CONFIG_HOME"] == nil { environment["XDG_CONFIG_HOME"] = "/nonexistent-prefs-tool-test" }
    if environment["PREFS_STORE"] == nil { environment["PREFS_STORE"] = "" }
    return try await ChildProcess.run("prefs-tool", arguments, environment: environment, stdin: stdin.map { Data($0.utf8) })
}

enum StoreFile: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case json, sqlite
    var testDescription: String { rawValue }
    func path(in directory: TemporaryDirectory) -> String { directory.file("store.\(rawValue)").path }
}

/// Runs the built `prefs-tool` on a pseudo-terminal (`script(1)`), so it prints what a person sees: aligned
/// columns cut to `columns`, escapes for control characters. stdout and stderr arrive mixed, as on a terminal,
/// with the terminal's `\r\n` line ends turned back into `\n`.
func toolOnTerminal(_ arguments: [String], columns: Int = 80, environment: [String: String] = [:]) async throws -> ChildProcess.Result {
    var variables = ["XDG_CONFIG_HOME": "/nonexistent-prefs-tool-test", "PREFS_STORE": "", "COLUMNS": String(columns)]
    variables.merge(environment) { _, new in new }
    let command =
        (["env"] + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        + [ChildProcess.executable("prefs-tool").path] + arguments).map(shellQuoted).joined(separator: " ")
    var result = try await ChildProcess.runSystem("/usr/bin/script", ["-qec", command, "/dev/null"])
    result.stdout = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    return result
}

/// `word` quoted for a POSIX shell.
func shellQuoted(_ word: String) -> String {
    "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}
