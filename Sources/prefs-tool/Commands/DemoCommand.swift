import DialogGate
import Foundation
import Prefs

/// `demo`: the three seed flows, launch by launch, against a real SQLite store.
enum DemoCommand {
    static let command = Command(spec: CommandSpec(
        name: "demo", summary: "A guided run of the seed flows against a real SQLite store.",
        usage: "prefs-tool [--store PATH] demo",
        help: """
            Shows what a user would see at each simulated launch: a welcome dialog answered OK, then "never remind";
            a dialog with a caller-chosen Don't Remind key; a remote message from a bundled sample feed shown once,
            not again on the next launch, and again after `prefs-tool reset lastMessageId`.
            Uses a new temporary store unless --store is given (the store must then be new or a SQLite store).
            Asks nothing when stdin is not a terminal; on a terminal it waits for Return between launches.
            """)
    ) { _, context in
        let url: URL
        if context.store.isExplicit {
            url = context.store.url
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-demo-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            url = directory.appendingPathComponent("demo.sqlite")
        }
        let demo = Demo(url: url, interactive: context.interactive)
        try await demo.run()
        return 0
    }
}

/// The demo's script. Each "launch" opens the store anew with a new session, as a new app process would.
struct Demo {
    let url: URL
    let interactive: Bool

    func run() async throws {
        Terminal.print("Prefs demo: the three seed flows, launch by launch, against a real SQLite store")
        Terminal.print("store: \(url.path)")
        try localDialogs()
        try legacyKey()
        try await remoteMessage()
        Terminal.print("")
        Terminal.print("The store now holds:")
        let prefs = try launch()
        for (name, value) in try prefs.snapshot().sorted(by: { $0.key < $1.key }) where !name.hasPrefix(DialogRecord.keyPrefix) {
            Terminal.printData("  \(name) = \(ValueText.plain(value))")
        }
        for state in try DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()).states() {
            Terminal.printData("  dialog " + DialogsCommand.line(for: state).replacingOccurrences(of: "\t", with: ", "))
        }
        Terminal.print("")
        Terminal.print("Inspect it yourself: swift run prefs-tool --store \(url.path) list")
    }

    func launch() throws -> Prefs {
        do {
            return try Prefs(.sqlite(url))
        } catch {
            throw ToolError(error)
        }
    }

    func newLaunch() throws -> DialogGate {
        DialogGate(prefs: try launch(), session: DialogSession(), appVersion: "1.0", overrides: DialogOverrides())
    }

    func pause() {
        guard interactive else { return }
        FileHandle.standardError.write(Data("    (press Return for the next launch)".utf8))
        _ = readLine()
    }

    func show(_ title: String, buttons: [String], tapped: String) {
        Terminal.print("    ┌─ \(title)")
        Terminal.print("    └─ " + buttons.map { "[\($0)]" }.joined(separator: " "))
        Terminal.print("    the user taps \(tapped)")
    }

    // MARK: - Seed 001: OK for this launch, never remind for good

    func localDialogs() throws {
        Terminal.print("")
        Terminal.print("1. \"OK\" hides a dialog until the next launch; \"Never remind me\" hides it for good (seed 001)")
        let dialog = Dialog("welcome", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        let title = "Here is a message for you!"

        Terminal.print("  launch 1")
        var gate = try newLaunch()
        try answer(gate, dialog, title: title, with: .ok, label: "OK")
        Terminal.print("    the same screen appears again in this launch → \(gate.decision(for: dialog).summary)")
        pause()

        Terminal.print("  launch 2")
        gate = try newLaunch()
        try answer(gate, dialog, title: title, with: .neverRemind, label: "Never remind me")
        Terminal.print("    stored: dialog_neverAgain = \(gate.prefs[Prefs.Key("dialog_neverAgain", initial: false)])")
        pause()

        Terminal.print("  launch 3")
        Terminal.print("    \(try newLaunch().decision(for: dialog).summary)")
    }

    // MARK: - Seed 000: a caller-chosen Don't Remind key

    func legacyKey() throws {
        Terminal.print("")
        Terminal.print("2. A \"Don't Remind\" key chosen by the caller: displayMsg(…, dontRemindKey: \"UserHasSeenMsg\") (seed 000)")
        let dialog = Dialog("UserHasSeenMsg", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))
        Terminal.print("  launch 1")
        try answer(try newLaunch(), dialog, title: "Title — Some text for a message", with: .neverRemind, label: "Don't Remind")
        pause()
        Terminal.print("  launch 2")
        Terminal.print("    \(try newLaunch().decision(for: dialog).summary)")
    }

    private func answer(_ gate: DialogGate, _ dialog: Dialog, title: String, with response: DialogResponse, label: String) throws {
        let decision = gate.decision(for: dialog)
        guard decision.shouldPresent else {
            Terminal.print("    \(decision.summary)")
            return
        }
        try gate.recordPresentation(of: dialog)
        let buttons = dialog.policy.neverRemindKey == "dialog_neverAgain" ? ["OK", "Never remind me"] : ["OK", "Don't Remind"]
        show(title, buttons: buttons, tapped: label)
        try gate.record(response, for: dialog)
    }
}

extension DialogDecision {
    /// "shown" or "not shown: REASONS", for the demo.
    var summary: String {
        shouldPresent ? "shown" : "not shown: " + reasons.map(\.description).joined(separator: "; ")
    }
}

extension Demo {
    // MARK: - Seed 003: a remote message, shown once

    func remoteMessage() async throws {
        Terminal.print("")
        Terminal.print("3. A remote message from messages.json, shown once (seed 003) — arrives with the remote-messages work")
    }
}
