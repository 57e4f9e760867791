import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// The documented QA session (the prefs-tool article of the Prefs DocC catalog), run for real: every `$ ` line through a
/// shell on a pseudo-terminal 80 columns wide, in a home folder holding the app's store and a feed, and its output
/// compared with the article's lines.
@Suite("prefs-tool: the documented QA session")
struct ReadmeSessionTests {
    /// Where the article shows the session's home folder.
    static let shownHome = "/home/qa"

    /// The store the session starts from: what the app left after a few launches.
    static let appStore = #"""
        {"formatVersion": 1,
         "declared": {"lastMessageId": {"type": "int", "initial": 0}, "dialog_neverAgain": {"type": "bool", "initial": false}},
         "values": {
          "lastMessageId": {"type": "int", "value": 1},
          "dialog_neverAgain": {"type": "bool", "value": true},
          "UserHasSeenMsg": {"type": "bool", "value": true},
          "dialogs.welcome": {"type": "json", "value": {"id": "welcome", "presentations": 2, "appVersion": "1.0",
            "firstPresented": "2026-11-29T08:24:31.06376409530639648Z", "lastPresented": "2026-11-29T10:00:00.25Z",
            "lastResponse": "neverRemind", "lastResponseDate": "2026-11-29T10:00:02.5Z", "neverRemindSince": "2026-11-29T10:00:02.5Z",
            "neverRemindKey": "dialog_neverAgain"}}
         }}
        """#

    static let feed = #"""
        [
          {"id": 1, "bundleId": "com.createchsol.AppAlertExample", "title": "App Alert",
           "text": "Warning: There is a bug in the application and I am working on it.", "confirmLabel": "OK",
           "appVersions": ["1.0", "1.1"]},
          {"id": 2, "bundleId": "com.createchsol.AppAlertExample", "title": "Cancelled",
           "text": "osVersions [\"0\"] matches no real OS: the usual way to cancel a message.", "confirmLabel": "OK",
           "osVersions": ["0"]}
        ]
        """#

    /// The session's steps: each command (continuation lines joined) and the output the article shows for it.
    static func session() throws -> [(command: String, output: String)] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Prefs/Prefs.docc/PrefsTool.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let start = text.range(of: "A QA session on an app's store"),
            let open = text.range(of: "```console\n", range: start.upperBound..<text.endIndex),
            let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
        else { return [] }
        var steps: [(command: String, output: String)] = []
        var continued = false
        for line in text[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if continued || line.hasPrefix("$ ") {
                let part = continued ? line : line.dropFirst(2)
                if !continued { steps.append(("", "")) }
                continued = part.hasSuffix("\\")
                steps[steps.count - 1].command += continued ? part.dropLast() : part
            } else if !steps.isEmpty {
                steps[steps.count - 1].output += line + "\n"
            }
        }
        return steps
    }

    @Test("the documented QA session matches a real run, output for output")
    func readmeSession() async throws {
        let steps = try Self.session()
        #expect(steps.count >= 10, "the session was found in PrefsTool.md")
        let home = try TemporaryDirectory()
        try Data(Self.feed.utf8).write(to: home.file("messages.json"))
        let seeded = try await tool(
            ["--app", "com.createchsol.AppAlertExample", "import", "-"], stdin: Self.appStore,
            environment: ["XDG_CONFIG_HOME": home.file(".config").path])
        #expect(seeded.status == 0, "\(seeded)")
        let products = ChildProcess.productsDirectory.path
        var exports = ""
        for step in steps {
            if step.command.hasPrefix("export ") {
                exports += step.command + "; "
                continue
            }
            let script =
                "cd \(shellQuoted(home.url.path)) && export HOME=\(shellQuoted(home.url.path)) COLUMNS=80 "
                + "PATH=\(shellQuoted(products)):\"$PATH\" && unset XDG_CONFIG_HOME PREFS_STORE && \(exports)\(step.command)"
            let result = try await ChildProcess.runSystem("/usr/bin/script", ["-qec", script, "/dev/null"])
            let output = result.stdout.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: home.url.path, with: Self.shownHome)
            #expect(output == step.output, "$ \(step.command)")
        }
    }
}
