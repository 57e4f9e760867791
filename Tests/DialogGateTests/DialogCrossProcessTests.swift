@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// An app and its extension on one store, with QA resetting state from a terminal: real processes
/// (`dialoggate-test-child`, `prefs-tool`) beside this one.
@Suite("Local dialogs across processes", .serialized)
struct DialogCrossProcessTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func app(_ store: FileStore) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(store.storage(store.file(in: directory))), session: DialogSession(), appVersion: "1.0",
            overrides: DialogOverrides(), clock: clock.function)
    }

    func child(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run("dialoggate-test-child", arguments)
    }

    @Test(
        "the app decides eligible; the extension presents and answers never-remind; the app's next decision and claim see it",
        arguments: FileStore.allCases)
    func extensionAnswers(store: FileStore) async throws {
        let path = store.file(in: directory).path
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let gate = try app(store)
        #expect(gate.decision(for: tip).reasons == [.eligible(shown: 0, limit: 1)])
        let result = try await child(["claim", store.rawValue, path, "tip", "1", "-", "never"])
        #expect(result.stdout == "granted\nfinished\n", "\(result.stderr)")
        let decision = gate.decision(for: tip)
        #expect(!decision.shouldPresent)
        #expect(decision.reasons.contains(.presentationLimitReached(shown: 1, limit: 1)))
        #expect(decision.reasons.contains { if case .neverRemind = $0 { true } else { false } })
        #expect(try gate.claim(tip).presentation == nil)
        #expect(try gate.states().first?.record?.presentations == 1, "never shown 2 of 1")
    }

    @Test("QA's prefs-tool dialogs reset, run while the app runs, is seen by the app's next decision", arguments: FileStore.allCases)
    func qaResetWhileRunning(store: FileStore) async throws {
        let path = store.file(in: directory).path
        let intro = Dialog("intro", policy: DialogPolicy(neverRemindKey: "UserHasSeenMsg"))
        let gate = try app(store)
        try #require(try gate.claim(intro).presentation).finish(.neverRemind)
        #expect(!gate.shouldPresent(intro))
        let reset = try await ChildProcess.run("prefs-tool", ["--store", path, "dialogs", "reset", "intro"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(gate.decision(for: intro).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(try gate.prefs.storedValue(forKey: "UserHasSeenMsg") == nil, "the legacy key went with the record")
    }

    @Test("a gate made without overrides ignores DIALOGGATE_OVERRIDE: a release build is not steered by its environment")
    func environmentIsOptIn() async throws {
        let path = FileStore.sqlite.file(in: directory).path
        let result = try await ChildProcess.run(
            "dialoggate-test-child", ["claim", "sqlite", path, "tip", "0", "-", "dismiss"], environment: ["DIALOGGATE_OVERRIDE": "hide-all"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "granted\nfinished\n")
        #expect(DialogOverrides.fromEnvironment(["DIALOGGATE_OVERRIDE": "hide-all"]).overrides.mode == .hideAll, "a QA build that opts in reads it")
    }

    @Test(
        "a dialog on screen in another process is not presented here; when that process is killed, it is, and the killed one was not counted",
        arguments: FileStore.allCases)
    func heldByAnotherProcess(store: FileStore) async throws {
        let path = store.file(in: directory).path
        let tip = Dialog("tip", policy: DialogPolicy(maximumPresentations: 1))
        let never = directory.file("never-released").path
        let (process, out, err) = try ChildProcess.start("dialoggate-test-child", ["claim", store.rawValue, path, "tip", "1", never, "ok"])
        #expect(await ChildProcess.readLine(out) == "granted")
        let gate = try app(store)
        #expect(gate.decision(for: tip).reasons == [.alreadyPresenting])
        #expect(try gate.claim(tip).decision.reasons == [.alreadyPresenting])

        kill(process.processIdentifier, SIGKILL)
        let result = try await ChildProcess.finish(process, out, err)
        #expect(result.signaled)
        let presentation = try #require(try gate.claim(tip).presentation, "the crashed holder binds nothing")
        #expect(presentation.decision.reasons == [.eligible(shown: 0, limit: 1)], "an interrupted presentation shows again")
        try presentation.finish(.hideForSession)
    }

    @Test("a presentation held by this process is respected by a child process until it is answered")
    func heldHere() async throws {
        let path = FileStore.sqlite.file(in: directory).path
        let gate = try app(.sqlite)
        let news = Dialog("news")
        let presentation = try #require(try gate.claim(news).presentation)
        let declined = try await child(["claim", "sqlite", path, "news", "0", "-", "ok"])
        #expect(declined.stdout == "declined: news: not presented: already being presented\n", "\(declined.stderr)")
        try presentation.finish(.dismiss)
        let granted = try await child(["claim", "sqlite", path, "news", "0", "-", "ok"])
        #expect(granted.stdout == "granted\nfinished\n", "\(granted.stderr)")
    }

    @Test("four processes racing to claim a dialog with maximumPresentations 2: two presentations in all", arguments: FileStore.allCases)
    func racingProcesses(store: FileStore) async throws {
        let path = store.file(in: directory).path
        _ = try app(store)  // create the store before the race
        let start = directory.file("start").path
        let children = try (0..<4).map { _ in
            try ChildProcess.start("dialoggate-test-child", ["race", store.rawValue, path, "tip", "2", start, "10"])
        }
        #expect(FileManager.default.createFile(atPath: start, contents: Data()))
        var granted = 0
        for (process, out, err) in children {
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.status == 0, "\(result.stderr)")
            granted += Int(result.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -100
        }
        #expect(granted == 2)
        #expect(try app(store).states().first?.record?.presentations == 2)
    }
}
