@testable import DialogGate
import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// Conditions in a dialog's policy: launches, days since the first launch and since the version's, events, parameters,
/// combined with all/any; each unmet one a reason with its current value. A "launch" is a new store instance on the
/// file and a new session, as a new app process has.
@Suite("Local dialogs: conditions")
struct DialogConditionTests {
    static let day: TimeInterval = 86_400
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func launch(
        _ version: String = "1.0", session: DialogSession = DialogSession(), parameters: [String: DialogCondition.Value] = [:]
    ) throws
        -> DialogGate
    {
        DialogGate(
            prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: session, appVersion: version, overrides: DialogOverrides(),
            parameters: parameters, clock: clock.function)
    }

    @Test("recordLaunch counts once per session however often called, from every gate of the process on the store")
    func launchOncePerSession() throws {
        let file = directory.file("shared.sqlite")
        let app = DialogGate(prefs: try Prefs(.sqlite(file)), appVersion: "1.0", clock: clock.function)
        #expect(try app.recordLaunch() == 1)
        #expect(try app.recordLaunch() == 1)
        let scene = DialogGate(prefs: try Prefs(.sqlite(file)), appVersion: "1.0", clock: clock.function)  // another store instance
        #expect(try scene.recordLaunch() == 1, "the process's session on the store counted it already")
        let session = DialogSession()
        #expect(try DialogGate(prefs: try Prefs(.sqlite(file)), session: session, clock: clock.function).recordLaunch() == 2, "a new session")
        #expect(try DialogGate(prefs: try Prefs(.sqlite(file)), session: session, clock: clock.function).recordLaunch() == 2)
        #expect(try app.recordLaunch() == 2, "the first session, called again after another's launch, counts nothing")
        let memory = try Prefs(.memory), otherMemory = try Prefs(.memory)
        #expect(try DialogGate(prefs: memory).recordLaunch() == 1)
        #expect(try DialogGate(prefs: memory).recordLaunch() == 1)
        #expect(try DialogGate(prefs: otherMemory).recordLaunch() == 1, "another store counts its own")
    }

    @Test("launches and days since first launch: unmet reasons carry the current and the required value")
    func launchesAndDays() throws {
        let rate = Dialog("rate", policy: DialogPolicy(conditions: .all([.launches(atLeast: 3), .daysSinceFirstLaunch(atLeast: 2)])))
        #expect(
            try launch().decision(for: rate).reasons == [
                .conditionUnmet(.launches(atLeast: 3), current: "no launch recorded"),
                .conditionUnmet(.daysSinceFirstLaunch(atLeast: 2), current: "no launch recorded"),
            ])
        let first = clock.now
        for _ in 0..<2 {
            try launch().recordLaunch()
            clock.advance(by: Self.day / 2)
        }
        let gate = try launch()
        try gate.recordLaunch()
        let decision = gate.decision(for: rate)
        #expect(decision.reasons == [.conditionUnmet(.daysSinceFirstLaunch(atLeast: 2), current: "1 day")])
        #expect(decision.description == "rate: not presented: condition not met: days since first launch ≥ 2 (now 1 day)")
        clock.set(first.addingTimeInterval(2 * Self.day))
        #expect(gate.decision(for: rate).reasons == [.eligible(shown: 0, limit: nil)])
        #expect(gate.prefs[UsageRecord.key]?.firstLaunch == first)
    }

    @Test("the first launch is recorded once: a clock set back neither moves it nor satisfies days since it at once")
    func firstLaunchWithClockSetBack() throws {
        let week = Dialog("week", policy: DialogPolicy(conditions: .daysSinceFirstLaunch(atLeast: 7)))
        let first = clock.now
        try launch().recordLaunch()
        clock.advance(by: 10 * Self.day)
        #expect(try launch().shouldPresent(week))
        clock.set(first.addingTimeInterval(-365 * Self.day))  // set back a year
        let behind = try launch()
        try behind.recordLaunch()
        #expect(behind.prefs[UsageRecord.key]?.firstLaunch == first, "never moved")
        #expect(behind.decision(for: week).reasons == [.conditionUnmet(.daysSinceFirstLaunch(atLeast: 7), current: "0 days")])
        clock.advance(by: 7 * Self.day - 1)
        #expect(try launch().decision(for: week).reasons == [.conditionUnmet(.daysSinceFirstLaunch(atLeast: 7), current: "6 days")])
        clock.advance(by: 1)
        #expect(try launch().shouldPresent(week), "7 days from when the clock was first seen behind: the wait, whole")
        clock.set(first.addingTimeInterval(3 * Self.day))
        #expect(
            try launch().decision(for: week).reasons == [.conditionUnmet(.daysSinceFirstLaunch(atLeast: 7), current: "3 days")],
            "set right again, the recorded first launch applies")
    }

    @Test("days since this version was first seen: a new version starts again; its first launch is kept")
    func versionFirstSeen() throws {
        let tip = Dialog("tip", policy: DialogPolicy(conditions: .daysSinceVersionFirstSeen(atLeast: 2)))
        try launch("1.0").recordLaunch()
        clock.advance(by: 3 * Self.day)
        #expect(try launch("1.0").shouldPresent(tip))
        #expect(try launch("2.0").decision(for: tip).reasons == [.conditionUnmet(.daysSinceVersionFirstSeen(atLeast: 2), current: "\"2.0\" not launched yet")])
        let updated = try launch("2.0")
        try updated.recordLaunch()
        #expect(updated.decision(for: tip).reasons == [.conditionUnmet(.daysSinceVersionFirstSeen(atLeast: 2), current: "0 days")])
        clock.advance(by: 2 * Self.day)
        try launch("2.0").recordLaunch()
        #expect(try launch("2.0").shouldPresent(tip))
        let usage = try #require(try launch().prefs[UsageRecord.key])
        #expect(usage.versions["2.0"]?.firstSeen == clock.now.addingTimeInterval(-2 * Self.day))
        #expect(usage.versions["2.0"]?.launchesBefore == 1)
        #expect(usage.launches == 3)
    }

    @Test("events: at least 5 in the last 30 days; old donations leave the window")
    func eventsInWindow() throws {
        let review = Dialog("review", policy: DialogPolicy(conditions: .event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400))))
        let gate = try launch()
        for _ in 0..<4 {
            try gate.donate("photoSaved")
            clock.advance(by: Self.day)
        }
        #expect(gate.decision(for: review).reasons == [.conditionUnmet(.event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)), current: "4")])
        try gate.donate("photoSaved")
        #expect(gate.shouldPresent(review))
        clock.advance(by: 26.5 * Self.day)  // the first donation is 30.5 days old, the second 29.5
        #expect(gate.decision(for: review).reasons == [.conditionUnmet(.event("photoSaved", atLeast: 5, within: .seconds(30 * 86_400)), current: "4")])
        #expect(
            try launch().decision(for: Dialog("any", policy: DialogPolicy(conditions: .event("photoSaved", atLeast: 5)))).shouldPresent,
            "without a window every donation counts")
    }

    @Test("an event keeps its last 1,000 donation dates and its total")
    func eventStorageIsBounded() throws {
        let gate = try launch()
        var seeded = EventLog(name: "tap")  // 999 donations, one a second, stored at once
        seeded.dates = (0..<999).map { clock.now.addingTimeInterval(Double($0)) }
        seeded.count = 999
        try gate.prefs.set(seeded, for: try EventLog.storeKey(for: "tap"))
        clock.advance(by: 999)
        for _ in 0..<6 {
            try gate.donate("tap")
            clock.advance(by: 1)
        }
        let log = try #require(try launch().prefs[try EventLog.storeKey(for: "tap")])
        #expect(log.count == 1_005)
        #expect(log.dates.count == 1_000)
        #expect(log.dates.first == clock.now.addingTimeInterval(-1_000), "the oldest 5 were pruned")
        let all = Dialog("all", policy: DialogPolicy(conditions: .event("tap", atLeast: 1_005)))
        let windowed = Dialog("windowed", policy: DialogPolicy(conditions: .event("tap", atLeast: 1_001, within: .seconds(86_400))))
        #expect(gate.shouldPresent(all), "the total counts every donation")
        #expect(gate.decision(for: windowed).reasons == [.conditionUnmet(.event("tap", atLeast: 1_001, within: .seconds(86_400)), current: "1000")])
    }

    @Test("an event name that is not a key name is kept under a hashed key, with its name")
    func oddEventName() throws {
        let name = "saved\nphoto"
        let gate = try launch()
        try gate.donate(name)
        #expect(EventLog.storeKeyName(for: name).hasPrefix("dialoggate.events.h."))
        #expect(gate.shouldPresent(Dialog("x", policy: DialogPolicy(conditions: .event(name, atLeast: 1)))))
        #expect(DialogCondition.event(name, atLeast: 1).description == #""saved\nphoto" ≥ 1"#)
    }

    @Test("parameters: in memory for the session (init or setParameter), not stored unless asked; memory wins over stored")
    func parameters() throws {
        let upsell = Dialog("upsell", policy: DialogPolicy(conditions: .parameter("isPro", equals: false)))
        let session = DialogSession()
        let gate = try launch(session: session, parameters: ["isPro": false])
        #expect(gate.shouldPresent(upsell))
        #expect(try launch(session: session).shouldPresent(upsell), "another gate of the session sees it")
        #expect(try launch().decision(for: upsell).reasons == [.conditionUnmet(.parameter("isPro", equals: false), current: "not set")], "not stored")
        gate.setParameter("isPro", true)
        #expect(gate.decision(for: upsell).reasons == [.conditionUnmet(.parameter("isPro", equals: false), current: "true")])
        try gate.storeParameter("isPro", false)
        #expect(try launch().shouldPresent(upsell), "a stored parameter holds at the next launch")
        #expect(!gate.shouldPresent(upsell), "the session's value wins")
        gate.setParameter("isPro", nil)
        #expect(gate.shouldPresent(upsell))
        try gate.storeParameter("isPro", nil)
        #expect(try gate.prefs.storedValue(forKey: "dialoggate.parameters") == nil)
        let seats = Dialog("seats", policy: DialogPolicy(conditions: .parameter("seats", equals: 5)))
        #expect(try launch(parameters: ["seats": 5.0]).shouldPresent(seats), "5.0 equals 5")
        #expect(!(try launch(parameters: ["seats": "5"]).shouldPresent(seats)), "the string \"5\" does not")
        try gate.storeParameter("ratio", .double(.nan))
        #expect(try launch().decision(for: Dialog("r", policy: DialogPolicy(conditions: .parameter("ratio", equals: 1.5)))).reasons.count == 1)
    }

    @Test("all and any: an unmet any is one reason naming what each part saw")
    func combinations() throws {
        let either = DialogCondition.any([.launches(atLeast: 20), .event("photoSaved", atLeast: 10)])
        let dialog = Dialog("d", policy: DialogPolicy(conditions: .all([either, .parameter("plan", equals: "free")])))
        let gate = try launch(parameters: ["plan": "free"])
        try gate.recordLaunch()
        try gate.donate("photoSaved")
        #expect(gate.decision(for: dialog).reasons == [.conditionUnmet(either, current: "launches ≥ 20: 1; photoSaved ≥ 10: 1")])
        for _ in 0..<9 { try gate.donate("photoSaved") }
        #expect(gate.shouldPresent(dialog))
        #expect(!(try launch().shouldPresent(Dialog("none", policy: DialogPolicy(conditions: .any([]))))), "any of nothing is never met")
        #expect(try launch().shouldPresent(Dialog("all", policy: DialogPolicy(conditions: .all([])))), "all of nothing is")
    }

    @Test("not in the first session: the session that recorded the first launch, or one before any")
    func notInFirstSession() throws {
        let dialog = Dialog("d", policy: DialogPolicy(conditions: .notInFirstSession))
        let first = try launch()
        #expect(first.decision(for: dialog).reasons == [.conditionUnmet(.notInFirstSession, current: "no launch recorded")])
        try first.recordLaunch()
        #expect(first.decision(for: dialog).reasons == [.conditionUnmet(.notInFirstSession, current: "the first session")])
        let second = try launch()
        try second.recordLaunch()
        #expect(second.shouldPresent(dialog))
        #expect(!first.shouldPresent(dialog), "still the first session")
    }

    @Test("presented fewer than 3 times in 365 days: until the first leaves the window")
    func presentedFewerThan() throws {
        let cap = DialogCondition.presentedFewerThan(3, within: .seconds(365 * 86_400))
        let dialog = Dialog("d", policy: DialogPolicy(conditions: cap))
        let firstShown = clock.now
        for _ in 0..<3 {
            try #require(try launch().claim(dialog).presentation).finish(.dismiss)
            clock.advance(by: 100 * Self.day)
        }
        let until = firstShown.addingTimeInterval(365 * Self.day)
        #expect(try launch().decision(for: dialog).reasons == [.conditionUnmet(cap, current: "3, until \(ISO8601.format(until, fractionDigits: 0))")])
        clock.set(until)
        #expect(try launch().shouldPresent(dialog))
    }

    @Test("a usage record this release cannot read is never overwritten: recordLaunch throws, decisions say why")
    func unreadableUsage() throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        try prefs.setStoredValue(StoredValue(type: .json, json: .object(["id": .int(7)])), forKey: "dialoggate.usage")
        let gate = try launch()
        #expect(throws: DialogGateError.self) { try gate.recordLaunch() }
        #expect(try prefs.storedValue(forKey: "dialoggate.usage")?.json == .object(["id": .int(7)]))
        let decision = gate.decision(for: Dialog("d", policy: DialogPolicy(conditions: .launches(atLeast: 1))))
        #expect(!decision.shouldPresent)
        #expect(decision.description.contains("unreadable"), "\(decision)")
        try prefs.setStoredValue(StoredValue(type: .json, json: .string("nope")), forKey: EventLog.storeKeyName(for: "e"))
        #expect(throws: DialogGateError.self) { try gate.donate("e") }
        #expect(try prefs.storedValue(forKey: EventLog.storeKeyName(for: "e"))?.json == .string("nope"))
    }

    @Test("hand-edited usage and conditions (a window no Duration holds, counts at the ends of Int) crash nothing")
    func hostileStoredValues() throws {
        let prefs = try Prefs(.sqlite(directory.file("app.sqlite")))
        try prefs.setStoredValue(
            StoredValue(
                type: .json,
                json: .object([
                    "id": .string("u"), "launches": .int(Int.max),
                    "versions": .object(["1.0": .object(["firstSeen": .string("2026-01-01T00:00:00Z"), "launchesBefore": .int(Int.min)])]),
                ])), forKey: "dialoggate.usage")
        try prefs.setStoredValue(
            StoredValue(
                type: .json,
                json: .object([
                    "id": .string("odd"), "presentations": .int(0),
                    "conditions": .object([
                        "condition": .object([
                            "kind": .string("all"),
                            "of": .array([
                                .object(["kind": .string("event"), "name": .string("e"), "count": .int(1), "windowSeconds": .double(1e300)]),
                                .object(["kind": .string("launchesOnTuesdays"), "count": .int(2)]),
                                .object(["kind": .string("parameter"), "name": .string("p"), "value": .object(["date": .int(1)])]),
                            ]),
                        ])
                    ]),
                ])), forKey: "dialogs.odd")
        let gate = try launch()
        let history = Dialog("h", policy: DialogPolicy(resetsOn: .newRelease, resetClears: .history, conditions: .launches(atLeast: 1)))
        #expect(
            gate.decision(for: history).reasons == [.conditionUnmet(.launches(atLeast: 1), current: #"0 in "1.0""#)],
            "Int.max launches, Int.min of them before the version: no overflow, counted as none")
        let explained = try #require(try gate.explanation(of: "odd"))
        #expect(
            explained.conditions?.parts.map(\.condition.description) == [
                "a condition this release does not read (event)", "a condition this release does not read (launchesOnTuesdays)",
                "a condition this release does not read (parameter)",
            ])
        #expect(explained.conditions?.met == nil)
    }

    @Test("the record keeps the conditions a decision saw (for prefs-tool); a dialog without conditions writes nothing")
    func conditionsRecorded() throws {
        let gate = try launch()
        _ = gate.decision(for: Dialog("plain"))
        #expect(try gate.states().isEmpty)
        let review = Dialog("review", policy: DialogPolicy(conditions: .all([.launches(atLeast: 5), .parameter("isPro", equals: false)])))
        _ = gate.decision(for: review)
        let record = try #require(try gate.states().first?.record)
        #expect(record.conditions?.condition.condition == review.policy.conditions)
        #expect(record.appVersion == nil, "no answer recorded: no version to reset from")
        let explained = try #require(try gate.explanation(of: "review"))
        #expect(
            explained.conditions?.flattened.map(\.status.current) == [
                "launches ≥ 5: no launch recorded; isPro = false: not stored (the app may set it in memory)", "no launch recorded",
                "not stored (the app may set it in memory)",
            ])
    }

    @Test("recordLaunch and donate from four processes at once: every launch and donation counted")
    func acrossProcesses() async throws {
        let path = directory.file("app.sqlite").path
        _ = try launch()  // create the store before the race
        let start = directory.file("start").path
        let children = try (0..<4).flatMap { index in
            [
                try ChildProcess.start("dialoggate-test-child", ["launch", "sqlite", path, "1.\(index)", start, "3", "-"]),
                try ChildProcess.start("dialoggate-test-child", ["donate", "sqlite", path, "photoSaved", start, "25", "-"]),
            ]
        }
        #expect(FileManager.default.createFile(atPath: start, contents: Data()))
        for (process, out, err) in children {
            let result = try await ChildProcess.finish(process, out, err)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let gate = try launch()
        let usage = try #require(gate.prefs[UsageRecord.key])
        #expect(usage.launches == 4, "one per process, however often each called")
        #expect(Set(usage.versions.keys) == ["1.0", "1.1", "1.2", "1.3"])
        #expect(gate.prefs[try EventLog.storeKey(for: "photoSaved")]?.count == 100)
        #expect(gate.shouldPresent(Dialog("d", policy: DialogPolicy(conditions: .all([.launches(atLeast: 4), .event("photoSaved", atLeast: 100)])))))
    }
}
