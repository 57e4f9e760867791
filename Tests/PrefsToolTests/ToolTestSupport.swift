import Foundation
import Prefs
import PrefsTestSupport
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
