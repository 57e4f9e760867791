import DialogGate
import Foundation
import Prefs

/// `demo`: session and persistent suppression, a caller-chosen Don't Remind key and a remote message shown once,
/// launch by launch, against a real SQLite store.
enum DemoCommand {
    static let command = Command(
        spec: CommandSpec(
            name: "demo", summary: "A guided run of dialogs and a remote message on a SQLite store.",
            usage: "prefs-tool [--store PATH] demo",
            help: """
                Shows what a user would see at each simulated launch: a welcome dialog answered OK, then "never remind";
                a dialog with a caller-chosen Don't Remind key; a remote message from a bundled sample feed shown once,
                not again on the next launch, and again after `prefs-tool reset lastMessageId`.
                Uses a new temporary store unless --store is given (the store must then be new or a SQLite store). The
                sample feed goes in a new private directory (mode 0700), never beside the store.
                Asks nothing when stdin is not a terminal; on a terminal it waits for Return between launches.
                """)
    ) { _, context in
        if context.store.isExplicit, context.store.exists { _ = try context.store.open(checked: true) }  // a damaged store is refused, untouched
        // Everything the demo writes besides the store goes in a directory it has just created and only this user
        // can enter: nothing beside a --store PATH (another user's directory, a shared one) is written or followed.
        let directory = try privateDirectory()
        // The directory is kept when the store is in it (the demo ends by telling the user to inspect that store);
        // with --store it holds only the sample feed, which nothing needs afterwards.
        defer { if context.store.isExplicit { removePrivateDirectory(directory) } }
        let url = context.store.isExplicit ? context.store.url : directory.appendingPathComponent("demo.sqlite")
        let demo = Demo(url: url, directory: directory, interactive: context.interactive)
        try await demo.run()
        return 0
    }
}

extension DemoCommand {
    /// A new directory under the temporary directory that only this user can enter (as `mkdtemp`, mode 0700), after
    /// checking the temporary directory and the folders above it by the library's trust rule: `TMPDIR` may be shared,
    /// as /tmp, but not another user's.
    static func privateDirectory() throws -> URL {
        do {
            let created = try Prefs.Storage.makePrivateFolder(in: FileManager.default.temporaryDirectory.path, prefix: "prefs-demo-")
            return URL(fileURLWithPath: created, isDirectory: true)
        } catch {
            throw ToolError.io("cannot create a private directory for the demo: \(error)")
        }
    }

    /// Removes the demo's own directory and the files the demo wrote in it (nothing else is ever in it: only this
    /// user can enter it). A failure leaves it for the system's cleaning of the temporary directory, and says so.
    static func removePrivateDirectory(_ directory: URL) {
        do {
            try FileManager.default.removeItem(at: directory)
        } catch {
            Terminal.print("note: the demo's directory \(directory.path) was left behind: \(error.localizedDescription)")
        }
    }
}

/// The demo's script. Each "launch" opens the store anew with a new session, as a new app process would.
struct Demo {
    let url: URL
    /// The demo's private directory: the sample feed, and the store unless --store named one.
    let directory: URL
    let interactive: Bool

    func run() async throws {
        Terminal.print("Prefs demo: two dialogs and a remote message, launch by launch, on a SQLite store")
        Terminal.print("store: \(url.path)")
        try localDialogs()
        try legacyKey()
        try await remoteMessage()
        Terminal.print("")
        Terminal.print("The store now holds:")
        let prefs = try launch()
        for (name, value) in try prefs.snapshot().sorted(by: { $0.key < $1.key }) where !name.hasPrefix(DialogRecord.keyPrefix) {
            if name.hasPrefix("dialoggate.feed.") {
                Terminal.printData("  \(name) = the last good feed with its validators (\(ValueText.plain(value).utf8.count) bytes)")
            } else {
                Terminal.printData("  \(name) = \(ValueText.plain(value))")
            }
        }
        for state in try DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides()).states() {
            Terminal.printData("  dialog " + DialogsCommand.line(for: state).replacingOccurrences(of: "\t", with: ", "))
        }
        Terminal.print("")
        Terminal.print("Inspect it yourself: swift run prefs-tool --store \(url.path) list")
    }

    func launch() throws -> Prefs {
        do {
            return try Prefs(.sqlite(url), launchArguments: [])  // the tool's arguments are no argument domain
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

    // MARK: - OK for this launch, never remind for good

    func localDialogs() throws {
        Terminal.print("")
        Terminal.print("1. \"OK\" hides a dialog until the next launch; \"Never remind me\" hides it for good")
        let dialog = Dialog("welcome", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
        let title = "Here is a message for you!"

        Terminal.print("  launch 1")
        var gate = try newLaunch()
        try answer(gate, dialog, title: title, with: .hideForSession, label: "OK")
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

    // MARK: - A caller-chosen Don't Remind key

    func legacyKey() throws {
        Terminal.print("")
        Terminal.print("2. A \"Don't Remind\" key chosen by the caller: displayMsg(…, dontRemindKey: \"UserHasSeenMsg\")")
        let dialog = Dialog("UserHasSeenMsg", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))
        let title = "Title — Some text for a message"
        Terminal.print("  launch 1")
        let gate = try newLaunch()
        // This alert's OK only closes it: it hides nothing, so it is recorded as a dismissal.
        try answer(gate, dialog, title: title, with: .dismiss, label: "OK")
        Terminal.print("    the same call again in this launch → \(gate.decision(for: dialog).summary)")
        try answer(gate, dialog, title: title, with: .neverRemind, label: "Don't Remind")
        pause()
        Terminal.print("  launch 2")
        Terminal.print("    \(try newLaunch().decision(for: dialog).summary)")
    }

    private func answer(_ gate: DialogGate, _ dialog: Dialog, title: String, with response: DialogResponse, label: String) throws {
        let presentation: DialogPresentation
        switch try gate.claim(dialog) {
        case .declined(let decision):
            Terminal.print("    \(decision.summary)")
            return
        case .granted(let granted):
            presentation = granted
        }
        let buttons = dialog.policy.neverRemindKey == "dialog_neverAgain" ? ["OK", "Never remind me"] : ["OK", "Don't Remind"]
        show(title, buttons: buttons, tapped: label)
        try presentation.finish(response)
    }
}

extension DialogDecision {
    /// "shown" or "not shown: REASONS", for the demo.
    var summary: String {
        shouldPresent ? "shown" : "not shown: " + reasons.map(\.description).joined(separator: "; ")
    }
}

extension Demo {
    // MARK: - A remote message, shown once

    static let bundleIdentifier = "com.createchsol.AppAlertExample"

    /// The bundled sample feed: a message for this app, a message for another app, and one cancelled with the
    /// `"osVersions": ["0"]` idiom. Kept in the source so the demo works wherever the binary is.
    static let sampleFeed = #"""
        [
          {
            "id": 1,
            "bundleId": "com.createchsol.AppAlertExample",
            "title": "App Alert",
            "text": "Warning: There is a bug in the application and I am working on it.",
            "confirmLabel": "OK",
            "appVersions": ["1.0", "1.1"],
            "link": {"title": "Workaround", "url": "https://example.com/workaround"}
          },
          {
            "id": 7,
            "bundleId": "com.example.OtherApp",
            "title": "Not for this app",
            "text": "Chosen by bundle id: this app never sees it.",
            "confirmLabel": "OK"
          },
          {
            "id": 2,
            "bundleId": "com.createchsol.AppAlertExample",
            "title": "Cancelled",
            "text": "osVersions [\"0\"] matches no real OS: the usual way to cancel a message.",
            "confirmLabel": "OK",
            "osVersions": ["0"]
          }
        ]

        """#

    func remoteMessage() async throws {
        Terminal.print("")
        Terminal.print("3. A remote message from messages.json, shown once, and again after `reset lastMessageId`")
        let feed = directory.appendingPathComponent("messages.json")
        do {
            // A new file in the demo's own directory (mode 0700): nothing to replace, and nothing another user
            // could have planted there.
            try Data(Self.sampleFeed.utf8).write(to: feed, options: .withoutOverwriting)
        } catch {
            throw ToolError.io("cannot write the sample feed \(feed.path): \(error.localizedDescription)")
        }
        Terminal.print("  feed: \(feed.absoluteString) (the bundled sample: 3 messages, one for this app, one cancelled)")
        let context = MessageContext(bundleIdentifier: Self.bundleIdentifier, appVersion: "1.0", osVersion: "17.0", localeIdentifier: "en_US")

        Terminal.print("  launch 1")
        try await messageLaunch(feed: feed, context: context, answer: true)
        pause()
        Terminal.print("  launch 2")
        try await messageLaunch(feed: feed, context: context, answer: true)
        pause()
        Terminal.print("  QA: prefs-tool --store \(url.path) reset lastMessageId")
        let status = await PrefsTool.run(["--store", url.path, "reset", "lastMessageId"], environment: [:])
        guard status == 0 else { throw ToolError.io("the reset failed (exit \(status))") }
        Terminal.print("  launch 3")
        try await messageLaunch(feed: feed, context: context, answer: false)
    }

    /// One launch of an app that shows remote messages: refresh, then show the pending message and acknowledge it.
    @MainActor
    private func messageLaunch(feed: URL, context: MessageContext, answer: Bool) async throws {
        let center = MessageCenter(feedURL: feed, prefs: try launch(), context: context)
        await center.refresh()
        if let error = center.lastError { throw ToolError.io("the feed could not be read: \(error)") }
        if let error = center.lastStoreError { throw ToolError.io("the store could not be used: \(error)") }
        guard let message = center.pendingMessage else {
            let ours = center.lastReport?.evaluations.filter { $0.message.bundleId == Self.bundleIdentifier } ?? []
            let reasons = ours.map { "message \($0.message.id): " + $0.failedChecks.map(\.summary).joined(separator: "; ") }
            Terminal.print("    no message: " + reasons.joined(separator: " | "))
            return
        }
        Terminal.printData("    ┌─ \(message.title)")
        Terminal.printData("    │  \(message.text)")
        Terminal.printData("    └─ [\(message.confirmLabel)]" + (message.link.map { " [\($0.title)]" } ?? ""))
        if answer {
            _ = center.acknowledge(.confirm, for: message)
            Terminal.print("    the user taps \(message.confirmLabel) → lastMessageId = \(center.lastMessageId)")
        } else {
            Terminal.print("    (shown again: QA can check the message as often as needed)")
        }
    }
}
