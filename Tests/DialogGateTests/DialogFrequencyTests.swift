@testable import DialogGate
@testable import MessageFeed
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport

/// What real apps also need (TipKit): a display frequency across dialogs, a never-remind that expires, and events.
@Suite("Local dialogs: display frequency, never-remind expiry, events")
struct DialogFrequencyTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func launch(
        _ frequency: DisplayFrequency = .unlimited, session: DialogSession = DialogSession(),
        onEvent: (@Sendable (DialogEvent) -> Void)? = nil
    ) throws -> DialogGate {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: session, appVersion: "1.0",
            overrides: DialogOverrides(), displayFrequency: frequency, onEvent: onEvent, clock: clock.function)
    }

    @Test("once per session: a second nag waits for the next launch; an exempt dialog does not")
    func oncePerSession() throws {
        let gate = try launch(.oncePerSession)
        try #require(try gate.claim(Dialog("rate")).presentation).finish(.dismiss)
        #expect(gate.decision(for: Dialog("tips")).reasons == [.anotherDialogThisSession])
        #expect(try gate.claim(Dialog("critical", policy: DialogPolicy(ignoresDisplayFrequency: true))).presentation != nil)
        #expect(try launch(.oncePerSession).claim(Dialog("tips")).presentation != nil, "a new launch")
    }

    @Test("one dialog a day, across gates and store instances (an app and its extension)")
    func daily() throws {
        let app = try launch(.every(.seconds(86_400))), other = try launch(.every(.seconds(86_400)))
        let shown = clock.now
        try #require(try app.claim(Dialog("rate")).presentation).finish(.dismiss)
        clock.advance(by: 3_600)
        #expect(
            try other.claim(Dialog("tips")).decision.reasons == [
                .displayFrequency(lastPresented: shown, nextAllowed: shown.addingTimeInterval(86_400))
            ])
        clock.advance(by: 86_400 - 3_600)
        #expect(try other.claim(Dialog("tips")).presentation != nil)
        try app.resetAll()
        #expect(try app.prefs.storedValue(forKey: "dialoggate.lastPresentation") == nil, "QA's reset --all clears it")
    }

    @Test("never remind with an expiry asks again after it, and not before")
    func neverRemindExpiry() throws {
        let dialog = Dialog("backup", policy: DialogPolicy(neverRemindKey: "backup_never", neverRemindExpiry: .seconds(180 * 86_400)))
        let gate = try launch()
        let answered = clock.now
        try #require(try gate.claim(dialog).presentation).finish(.neverRemind)
        clock.advance(by: 180 * 86_400 - 1)
        #expect(try launch().decision(for: dialog).reasons == [.neverRemind(since: answered)])
        clock.advance(by: 1)
        #expect(
            try launch().decision(for: dialog).reasons == [.neverRemindExpired(since: answered), .eligible(shown: 1, limit: nil)],
            "the legacy key written with the answer expires with it")
    }

    @Test("events: presented, answered, cancelled")
    func events() throws {
        let events = Locked<[String]>([])
        let gate = try launch(onEvent: { event in events.withLock { $0.append("\(event)") } })
        try #require(try gate.claim(Dialog("rate")).presentation).finish(.neverRemind)
        try #require(try gate.claim(Dialog("tips")).presentation).cancel()
        _ = try gate.claim(Dialog("rate"))  // declined: no event
        #expect(events.withLock { $0 } == ["presented rate", "answered rate: never remind", "presented tips", "cancelled tips"])
    }
}
