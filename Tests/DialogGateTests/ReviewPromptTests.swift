@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// The review prompt recipe of the Local Dialogs article, over a simulated year and more of daily launches with an
/// injected clock: each launch a new store instance and session (a new process), `recordLaunch`, a significant event,
/// then a claim of the prompt.
@Suite("The review prompt recipe, over a simulated year")
struct ReviewPromptTests {
    static let day: TimeInterval = 86_400

    /// As in LocalDialogs.md.
    let review = Dialog(
        "review",
        policy: DialogPolicy(
            maximumPresentations: 1,  // at most once per release…
            resetsOn: .newRelease, resetClears: .history,  // …a new release may ask again; "never" holds for ever
            conditions: .all([
                .launches(atLeast: 5),  // launches and events count in this release
                .daysSinceFirstLaunch(atLeast: 3),
                .event("photoSaved", atLeast: 3),
                .notInFirstSession,
                .presentedFewerThan(1, within: .seconds(30 * 86_400)),  // not within 30 days of the last prompt
                .presentedFewerThan(3, within: .seconds(365 * 86_400)),  // at most 3 in 365 days, whatever the versions
            ])))

    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The release the app runs on `day`.
    static func version(on day: Int) -> String {
        switch day {
        case ..<40: "1.0"
        case ..<60: "1.1"
        case ..<120: "1.2"
        case ..<380: "2.0"
        default: "3.0"
        }
    }

    /// Launches the app once a day for `days` days, at 09:00; each launch saves a photo, then asks for the prompt and
    /// answers it with `answer(day)`. Returns the days the prompt was shown.
    func simulate(days: Int, donating: Bool = true, answer: (Int) -> DialogResponse = { _ in .dismiss }) throws -> [Int] {
        let start = clock.now
        var shown: [Int] = []
        for day in 0..<days {
            clock.set(start.addingTimeInterval(Double(day) * Self.day + 9 * 3_600))
            let gate = DialogGate(
                prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), appVersion: Self.version(on: day),
                overrides: DialogOverrides(), clock: clock.function)
            try gate.recordLaunch()
            if donating { try gate.donate("photoSaved") }
            if let presentation = try gate.claim(review).presentation {
                shown.append(day)
                try presentation.finish(answer(day))  // StoreKit never says whether it showed: .dismiss
            }
        }
        return shown
    }

    @Test("prompts on days 4, 44, 74, 369 and 409: once per release, 30 days apart, at most 3 in 365 days, never in the first session")
    func yearOfLaunches() throws {
        let shown = try simulate(days: 420)
        #expect(shown == [4, 44, 74, 369, 409])
        #expect(!shown.contains(0), "never in the first session")
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $1 - $0 >= 30 }, "not within 30 days of the last prompt")
        #expect(shown.allSatisfy { first in shown.filter { $0 >= first && $0 < first + 365 }.count <= 3 }, "at most 3 in 365 days")
        #expect(Set(shown.map(Self.version)).count == shown.count, "at most once per release")
    }

    @Test("never remind, answered at the second prompt, holds through every later release")
    func neverHoldsForEver() throws {
        let shown = try simulate(days: 420) { $0 == 44 ? .neverRemind : .dismiss }
        #expect(shown == [4, 44])
    }

    @Test("no significant events, no prompt, however many launches")
    func eventsRequired() throws {
        #expect(try simulate(days: 60, donating: false).isEmpty)
        let gate = DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(), appVersion: "1.1", overrides: DialogOverrides(),
            clock: clock.function)
        #expect(gate.decision(for: review).reasons == [.conditionUnmet(.event("photoSaved", atLeast: 3), current: #"0 in "1.1""#)])
    }
}
