import Foundation
import Prefs
import Testing

@testable import DialogGate

/// The JSON that DialogGate's records are stored as, member for member: what earlier releases wrote and read. Each
/// record is filled in whole (every optional member set) and compared with its stored text, then read back; the
/// texts were written by the records' synthesized `Codable` conformances, before the records coded their members by
/// hand (``StoredMember``), so a renamed, dropped or retyped member fails here.
@Suite("DialogGate's stored records: the same JSON, member for member")
struct StoredRecordFormatTests {
    static let day = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let later = Date(timeIntervalSinceReferenceDate: 800_000_000.25)

    static let claim = DialogRecord.Claim(
        token: "T-0A", claimedAt: day, expiresAt: later, holder: ProcessIdentity(host: "h", processID: 42, started: 9))

    static var record: DialogRecord {
        var record = DialogRecord()
        record.id = "review"
        record.presentations = 3
        record.firstPresented = day
        record.lastPresented = day
        record.lastResponse = "later"
        record.lastResponseDate = day
        record.neverRemindSince = day
        record.neverRemindReanchoredAt = day
        record.snoozedUntil = later
        record.snoozedAt = day
        record.snoozeReanchoredAt = day
        record.lastPresentedReanchoredAt = day
        record.appVersion = "2.1"
        record.neverRemindKey = "neverAgain"
        record.recentPresentations = [day, later]
        record.recentPresentationsReanchoredAt = day
        record.conditions = StoredConditions(
            DialogPolicy(resetsOn: .newRelease, resetClears: .history),
            .all([
                .launches(atLeast: 5), .event("saved", atLeast: 2, within: .seconds(60)), .parameter("isPro", equals: true),
                .parameter("ratio", equals: .double(.infinity)), .notInFirstSession,
            ]))
        record.claim = claim
        return record
    }

    static var usage: UsageRecord {
        var usage = UsageRecord(id: "U-0B")
        usage.launches = 7
        usage.firstLaunch = day
        usage.firstLaunchReanchoredAt = day
        usage.firstSession = "S-01"
        usage.lastLaunch = later
        usage.lastSession = "S-02"
        usage.lastVersion = "2.1"
        usage.versions = ["2.1": .init(firstSeen: day, launchesBefore: 2, reanchoredAt: later)]
        return usage
    }

    /// The stored text of `value`, and `value` read back from it.
    func roundTrip<Value: PrefsStorable & Equatable>(_ value: Value, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try value.storedValue()
        #expect(stored.jsonText == expected, sourceLocation: sourceLocation)
        #expect(try Value(storedValue: StoredValue(type: .json, jsonText: expected)) == value, sourceLocation: sourceLocation)
    }

    @Test("a dialog's record, its claim and its conditions")
    func dialogRecord() throws {
        try roundTrip(
            Self.record,
            #"{"appVersion":"2.1","claim":{"claimedAt":"2026-05-09T06:13:20Z","expiresAt":"2026-05-09T06:13:20.25Z","host":"h","processID":42,"processStarted":9,"token":"T-0A"},"conditions":{"condition":{"kind":"all","of":[{"count":5,"kind":"launches"},{"count":2,"kind":"event","name":"saved","windowSeconds":60},{"kind":"parameter","name":"isPro","value":{"bool":true}},{"kind":"parameter","name":"ratio","value":{"double":"inf"}},{"kind":"notInFirstSession"}]},"resetClearsHistory":true,"resetsOn":"newRelease"},"firstPresented":"2026-05-09T06:13:20Z","id":"review","lastPresented":"2026-05-09T06:13:20Z","lastPresentedReanchoredAt":"2026-05-09T06:13:20Z","lastResponse":"later","lastResponseDate":"2026-05-09T06:13:20Z","neverRemindKey":"neverAgain","neverRemindReanchoredAt":"2026-05-09T06:13:20Z","neverRemindSince":"2026-05-09T06:13:20Z","presentations":3,"recentPresentations":["2026-05-09T06:13:20Z","2026-05-09T06:13:20.25Z"],"recentPresentationsReanchoredAt":"2026-05-09T06:13:20Z","snoozeReanchoredAt":"2026-05-09T06:13:20Z","snoozedAt":"2026-05-09T06:13:20Z","snoozedUntil":"2026-05-09T06:13:20.25Z"}"#
        )
        try roundTrip(DialogRecord(), #"{"presentations":0}"#)
        #expect(throws: (any Error).self, "presentations is required, as it always was") {
            try DialogRecord(storedValue: StoredValue(type: .json, jsonText: "{}"))
        }
    }

    @Test("the app's launches, and each version's first launch")
    func usageRecord() throws {
        try roundTrip(
            Self.usage,
            #"{"firstLaunch":"2026-05-09T06:13:20Z","firstLaunchReanchoredAt":"2026-05-09T06:13:20Z","firstSession":"S-01","id":"U-0B","lastLaunch":"2026-05-09T06:13:20.25Z","lastSession":"S-02","lastVersion":"2.1","launches":7,"versions":{"2.1":{"firstSeen":"2026-05-09T06:13:20Z","launchesBefore":2,"reanchoredAt":"2026-05-09T06:13:20.25Z"}}}"#
        )
        try roundTrip(UsageRecord(id: "u"), #"{"id":"u","launches":0,"versions":{}}"#)
    }

    @Test("events, parameters, message impressions and the message on screen")
    func otherRecords() throws {
        var log = EventLog(name: "saved")
        log.count = 2
        log.dates = [Self.day, Self.later]
        log.reanchoredAt = Self.day
        try roundTrip(log, #"{"count":2,"name":"saved","reanchoredAt":"2026-05-09T06:13:20Z","times":[800000000,800000000.25]}"#)
        let parameters: [String: DialogCondition.Value] = ["plan": "team", "seats": 5, "floor": .double(-.infinity)]
        try roundTrip(
            StoredParameters(values: parameters.mapValues(StoredParameterValue.init)),
            #"{"values":{"floor":{"double":"-inf"},"plan":{"string":"team"},"seats":{"int":5}}}"#)
        try roundTrip(
            MessageImpressions(messages: ["7": .init(count: 2, last: Self.day, reanchoredAt: Self.later), "8": .init(count: 1, last: Self.day)]),
            #"{"messages":{"7":{"count":2,"last":"2026-05-09T06:13:20Z","reanchoredAt":"2026-05-09T06:13:20.25Z"},"8":{"count":1,"last":"2026-05-09T06:13:20Z"}}}"#
        )
        try roundTrip(
            MessagePresentationRecord(messageId: 7, claim: Self.claim),
            #"{"claim":{"claimedAt":"2026-05-09T06:13:20Z","expiresAt":"2026-05-09T06:13:20.25Z","host":"h","processID":42,"processStarted":9,"token":"T-0A"},"messageId":7}"#
        )
    }
}
