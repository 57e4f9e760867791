import Foundation

/// The coding key of every record DialogGate stores (usage, dialog records and claims, conditions, events,
/// parameters, message impressions and presentations): a member's name.
///
/// One key type for all of them, written out in each record's `init(from:)` and `encode(to:)`, rather than the
/// `CodingKeys` enum the compiler synthesizes per type: the first container a process makes for a key type checks
/// `CodingKey` conformance by scanning every loaded image's conformance records (Foundation's and the standard
/// library's tens of thousands), 0.05–0.1 ms each on this machine, and a new process's first decision and claim made
/// six or more such key types. The stored form is the same JSON (members by name, sorted by the encoder).
struct StoredMember: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(stringLiteral value: String) {
        stringValue = value
    }

    var intValue: Int? { nil }

    init?(intValue _: Int) {
        nil
    }
}

// Each record's members as the synthesized conformance coded them: a non-optional member is required (even one with a
// default value), an optional one is written only when set and read as nil when absent or null.

extension UsageRecord {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        id = try container.decode(String.self, forKey: "id")
        launches = try container.decode(Int.self, forKey: "launches")
        firstLaunch = try container.decodeIfPresent(Date.self, forKey: "firstLaunch")
        firstLaunchReanchoredAt = try container.decodeIfPresent(Date.self, forKey: "firstLaunchReanchoredAt")
        firstSession = try container.decodeIfPresent(String.self, forKey: "firstSession")
        lastLaunch = try container.decodeIfPresent(Date.self, forKey: "lastLaunch")
        lastSession = try container.decodeIfPresent(String.self, forKey: "lastSession")
        lastVersion = try container.decodeIfPresent(String.self, forKey: "lastVersion")
        versions = try container.decode([String: VersionSeen].self, forKey: "versions")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(id, forKey: "id")
        try container.encode(launches, forKey: "launches")
        try container.encodeIfPresent(firstLaunch, forKey: "firstLaunch")
        try container.encodeIfPresent(firstLaunchReanchoredAt, forKey: "firstLaunchReanchoredAt")
        try container.encodeIfPresent(firstSession, forKey: "firstSession")
        try container.encodeIfPresent(lastLaunch, forKey: "lastLaunch")
        try container.encodeIfPresent(lastSession, forKey: "lastSession")
        try container.encodeIfPresent(lastVersion, forKey: "lastVersion")
        try container.encode(versions, forKey: "versions")
    }
}

extension UsageRecord.VersionSeen {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        firstSeen = try container.decode(Date.self, forKey: "firstSeen")
        launchesBefore = try container.decode(Int.self, forKey: "launchesBefore")
        reanchoredAt = try container.decodeIfPresent(Date.self, forKey: "reanchoredAt")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(firstSeen, forKey: "firstSeen")
        try container.encode(launchesBefore, forKey: "launchesBefore")
        try container.encodeIfPresent(reanchoredAt, forKey: "reanchoredAt")
    }
}

extension DialogRecord {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        id = try container.decodeIfPresent(String.self, forKey: "id")
        presentations = try container.decode(Int.self, forKey: "presentations")
        firstPresented = try container.decodeIfPresent(Date.self, forKey: "firstPresented")
        lastPresented = try container.decodeIfPresent(Date.self, forKey: "lastPresented")
        lastResponse = try container.decodeIfPresent(String.self, forKey: "lastResponse")
        lastResponseDate = try container.decodeIfPresent(Date.self, forKey: "lastResponseDate")
        neverRemindSince = try container.decodeIfPresent(Date.self, forKey: "neverRemindSince")
        neverRemindReanchoredAt = try container.decodeIfPresent(Date.self, forKey: "neverRemindReanchoredAt")
        snoozedUntil = try container.decodeIfPresent(Date.self, forKey: "snoozedUntil")
        snoozedAt = try container.decodeIfPresent(Date.self, forKey: "snoozedAt")
        snoozeReanchoredAt = try container.decodeIfPresent(Date.self, forKey: "snoozeReanchoredAt")
        lastPresentedReanchoredAt = try container.decodeIfPresent(Date.self, forKey: "lastPresentedReanchoredAt")
        appVersion = try container.decodeIfPresent(String.self, forKey: "appVersion")
        neverRemindKey = try container.decodeIfPresent(String.self, forKey: "neverRemindKey")
        recentPresentations = try container.decodeIfPresent([Date].self, forKey: "recentPresentations")
        recentPresentationsReanchoredAt = try container.decodeIfPresent(Date.self, forKey: "recentPresentationsReanchoredAt")
        conditions = try container.decodeIfPresent(StoredConditions.self, forKey: "conditions")
        claim = try container.decodeIfPresent(Claim.self, forKey: "claim")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encodeIfPresent(id, forKey: "id")
        try container.encode(presentations, forKey: "presentations")
        try container.encodeIfPresent(firstPresented, forKey: "firstPresented")
        try container.encodeIfPresent(lastPresented, forKey: "lastPresented")
        try container.encodeIfPresent(lastResponse, forKey: "lastResponse")
        try container.encodeIfPresent(lastResponseDate, forKey: "lastResponseDate")
        try container.encodeIfPresent(neverRemindSince, forKey: "neverRemindSince")
        try container.encodeIfPresent(neverRemindReanchoredAt, forKey: "neverRemindReanchoredAt")
        try container.encodeIfPresent(snoozedUntil, forKey: "snoozedUntil")
        try container.encodeIfPresent(snoozedAt, forKey: "snoozedAt")
        try container.encodeIfPresent(snoozeReanchoredAt, forKey: "snoozeReanchoredAt")
        try container.encodeIfPresent(lastPresentedReanchoredAt, forKey: "lastPresentedReanchoredAt")
        try container.encodeIfPresent(appVersion, forKey: "appVersion")
        try container.encodeIfPresent(neverRemindKey, forKey: "neverRemindKey")
        try container.encodeIfPresent(recentPresentations, forKey: "recentPresentations")
        try container.encodeIfPresent(recentPresentationsReanchoredAt, forKey: "recentPresentationsReanchoredAt")
        try container.encodeIfPresent(conditions, forKey: "conditions")
        try container.encodeIfPresent(claim, forKey: "claim")
    }
}

extension DialogRecord.Claim {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        token = try container.decode(String.self, forKey: "token")
        claimedAt = try container.decode(Date.self, forKey: "claimedAt")
        expiresAt = try container.decode(Date.self, forKey: "expiresAt")
        host = try container.decode(String.self, forKey: "host")
        processID = try container.decode(Int32.self, forKey: "processID")
        processStarted = try container.decodeIfPresent(UInt64.self, forKey: "processStarted")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(token, forKey: "token")
        try container.encode(claimedAt, forKey: "claimedAt")
        try container.encode(expiresAt, forKey: "expiresAt")
        try container.encode(host, forKey: "host")
        try container.encode(processID, forKey: "processID")
        try container.encodeIfPresent(processStarted, forKey: "processStarted")
    }
}

extension StoredConditions {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        condition = try container.decode(StoredCondition.self, forKey: "condition")
        resetsOn = try container.decodeIfPresent(String.self, forKey: "resetsOn")
        resetClearsHistory = try container.decodeIfPresent(Bool.self, forKey: "resetClearsHistory")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(condition, forKey: "condition")
        try container.encodeIfPresent(resetsOn, forKey: "resetsOn")
        try container.encodeIfPresent(resetClearsHistory, forKey: "resetClearsHistory")
    }
}

extension StoredParameters {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        values = try container.decode([String: StoredParameterValue].self, forKey: "values")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(values, forKey: "values")
    }
}

extension MessageImpressions {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        messages = try container.decode([String: Entry].self, forKey: "messages")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(messages, forKey: "messages")
    }
}

extension MessageImpressions.Entry {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        count = try container.decode(Int.self, forKey: "count")
        last = try container.decode(Date.self, forKey: "last")
        reanchoredAt = try container.decodeIfPresent(Date.self, forKey: "reanchoredAt")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(count, forKey: "count")
        try container.encode(last, forKey: "last")
        try container.encodeIfPresent(reanchoredAt, forKey: "reanchoredAt")
    }
}

extension MessagePresentationRecord {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        messageId = try container.decode(Int.self, forKey: "messageId")
        claim = try container.decode(DialogRecord.Claim.self, forKey: "claim")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(messageId, forKey: "messageId")
        try container.encode(claim, forKey: "claim")
    }
}
