@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Two windows, each with its `MessageCenter` (the per-view pattern the docs show), and an app with its extension (two
/// processes): one message on screen at a time, and each center's next decision sees another's acknowledgement.
@Suite("MessageCenter: one message at a time across windows and processes", .serialized)
@MainActor
struct MessageWindowTests {
    let directory: TemporaryDirectory
    let feed: URL

    init() throws {
        directory = try TemporaryDirectory()
        feed = directory.file("messages.json")
        try Data(Feeds.of(Feeds.message(id: 7)).utf8).write(to: feed)
    }

    var storePath: String { directory.file("app.sqlite").path }

    /// A window: a center on a store instance of its own over the store file (or on `prefs`).
    func window(_ prefs: Prefs? = nil, busyTimeout: Duration = .seconds(30)) throws -> MessageCenter {
        let prefs = try prefs ?? Prefs(.sqlite(directory.file("app.sqlite"), busyTimeout: busyTimeout))
        return MessageCenter(feedURL: feed, prefs: prefs, context: .seedApp, options: .unhurried)
    }

    /// Reported: both windows showed the pending message, and after A acknowledged, B kept showing it until its next
    /// refresh.
    @Test("two windows: while A presents message 7, B presents none; after A acknowledges, B's next decision sees it")
    func twoWindows() async throws {
        let a = try window(), b = try window()
        await a.refresh()
        let message = try #require(a.pendingMessage)
        await b.refresh()
        #expect(b.pendingMessage == nil, "one message at a time")
        #expect(b.presentedElsewhere == 7)
        #expect(b.lastReport?.selected?.id == 7, "eligible, and shown elsewhere")
        a.acknowledge(.confirm, for: message)
        await b.refresh()
        #expect(b.pendingMessage == nil && b.presentedElsewhere == nil)
        #expect(b.lastMessageId == 7)
        #expect(b.lastReport?.evaluations.first?.check(.id)?.summary == "id > lastMessageId (7 is not > 7)")
    }

    @Test("two windows on one store instance: the same; A dismissing lets B present it, and then A presents none")
    func dismissHandsOver() async throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        let a = try window(prefs), b = try window(prefs)
        await a.refresh()
        #expect(a.pendingMessage?.id == 7)
        await b.refresh()
        #expect(b.pendingMessage == nil && b.presentedElsewhere == 7)
        a.dismissWithoutAcknowledging()
        await b.refresh()
        #expect(b.pendingMessage?.id == 7)
        await a.refresh()
        #expect(a.pendingMessage == nil && a.presentedElsewhere == 7)
        #expect(a.lastMessageId == 0, "nothing acknowledged")
    }

    @Test("a window closed without an answer (its center released) holds nothing: another window presents the message")
    func windowClosed() async throws {
        var a: MessageCenter? = try window()
        await a?.refresh()
        #expect(a?.pendingMessage?.id == 7)
        let b = try window()
        await b.refresh()
        #expect(b.pendingMessage == nil)
        a = nil
        await b.refresh()
        #expect(b.pendingMessage?.id == 7)
    }

    @Test("a refresh keeps this window's own message: a second refresh of A still shows 7, with no new impression")
    func ownMessageKept() async throws {
        let a = try window()
        var events: [String] = []
        a.onEvent = { events.append("\($0)") }
        await a.refresh()
        await a.refresh(force: true)
        #expect(a.pendingMessage?.id == 7 && a.presentedElsewhere == nil)
        #expect(events == ["impression 7"])
    }

    @Test("two processes: while the extension presents message 7, the app presents none; then it sees the extension's acknowledgement")
    func twoProcesses() async throws {
        _ = try Prefs(.sqlite(directory.file("app.sqlite")))  // the store exists before the child opens it
        let release = directory.file("release").path
        let (child, out, err) = try ChildProcess.start("dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", release, "confirm"])
        #expect(await ChildProcess.readLine(out) == "pending 7")
        let app = try window()
        await app.refresh()
        #expect(app.pendingMessage == nil && app.presentedElsewhere == 7)
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        let result = try await ChildProcess.finish(child, out, err)
        #expect(result.status == 0 && result.stdout == "finished\n", "\(result.stderr)")
        await app.refresh()
        #expect(app.pendingMessage == nil && app.presentedElsewhere == nil)
        #expect(app.lastMessageId == 7, "the extension's acknowledgement")
    }

    @Test("two processes: a message this process presents is not presented by another; a holder that was killed binds nothing")
    func heldAcrossProcesses() async throws {
        let app = try window()
        await app.refresh()
        #expect(app.pendingMessage?.id == 7)
        let declined = try await ChildProcess.run("dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", "-", "confirm"])
        #expect(declined.stdout == "none (presented elsewhere: 7)\n", "\(declined.stderr)")
        app.dismissWithoutAcknowledging()
        await app.flush()

        let never = directory.file("never").path
        let (child, out, err) = try ChildProcess.start("dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", never, "confirm"])
        #expect(await ChildProcess.readLine(out) == "pending 7")
        await app.refresh()
        #expect(app.pendingMessage == nil && app.presentedElsewhere == 7)
        kill(child.processIdentifier, SIGKILL)
        #expect(try await ChildProcess.finish(child, out, err).signaled)
        await app.refresh()
        #expect(app.pendingMessage?.id == 7, "the killed holder binds nothing, and its message was never acknowledged")
    }

    @Test("an acknowledgement right before exit(0) is stored: a normal exit waits for the write")
    func acknowledgeThenExit() async throws {
        _ = try Prefs(.sqlite(directory.file("app.sqlite")))
        let result = try await ChildProcess.run("dialoggate-test-child", ["message", "sqlite", storePath, feed.path, "-", "-", "confirm-exit"])
        #expect(result.status == 0 && result.stdout == "pending 7\n", "\(result.stderr)")
        #expect(try Prefs(.sqlite(directory.file("app.sqlite"))).storedValue(forKey: "lastMessageId") == StoredValue(7))
    }

    /// Reported: MessageCenter ran store transactions on the main actor, up to the lock timeout under contention.
    @Test("acknowledging while another process holds the store's lock returns at once; the write lands when the lock is free")
    func acknowledgeDoesNotBlock() async throws {
        let center = try window(busyTimeout: .seconds(10))
        await center.refresh()
        let message = try #require(center.pendingMessage)
        let release = directory.file("release").path
        let (holder, out, err) = try ChildProcess.start("dialoggate-test-child", ["hold", "sqlite", storePath, "other", "-", release, "-"])
        #expect(await ChildProcess.readLine(out) == "holding")
        center.acknowledge(.confirm, for: message)
        // Here only once acknowledge returned: on the main actor, which a write waiting for the lock would hold.
        #expect(center.lastMessageId == 7, "the acknowledgement counts at once")
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        #expect(try await ChildProcess.finish(holder, out, err).stdout == "released\n")
        await center.flush()
        #expect(center.lastError == nil, "\(String(describing: center.lastError))")
        #expect(try Prefs(.sqlite(directory.file("app.sqlite"))).storedValue(forKey: "lastMessageId") == StoredValue(7))
    }
}
