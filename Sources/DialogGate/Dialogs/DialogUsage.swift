import Foundation
import Prefs
import PrefsSupport
internal import PrefsJSON

// The usage that conditions read, kept in the store beside the dialogs' records: launches, the first launch and each
// version's first launch (`dialoggate.usage`), each event's donations (`dialoggate.events.NAME`) and the stored
// parameters (`dialoggate.parameters`). Keys a release before conditions never reads.

/// The app's launches, as ``DialogGate/recordLaunch()`` records them. Package API: `prefs-tool dialogs explain` reads it.
package struct UsageRecord: Codable, Hashable, Sendable, PrefsStorable {
    /// Names this record: a session remembers the records it counted its launch in (a reset starts a new one).
    package var id: String
    /// Launches recorded, each once per session.
    package var launches = 0
    /// The first launch recorded: written once, never moved (a clock set back does not move it).
    package var firstLaunch: Date?
    /// When the clock was first seen behind ``firstLaunch`` (see ``ClockRule``).
    package var firstLaunchReanchoredAt: Date?
    /// The session that recorded the first launch (``DialogCondition/notInFirstSession``).
    package var firstSession: String?
    package var lastLaunch: Date?
    /// The session that recorded the last launch: another call in it counts nothing.
    package var lastSession: String?
    /// The app version of the last launch (what `prefs-tool dialogs explain` judges by).
    package var lastVersion: String?
    /// Each app version's first launch, for the most recent ``versionLimit`` versions.
    package var versions: [String: VersionSeen] = [:]

    package struct VersionSeen: Codable, Hashable, Sendable {
        /// When the version was first launched: written once, never moved.
        package var firstSeen: Date
        /// Launches recorded before it: the version's launches are ``UsageRecord/launches`` minus these.
        package var launchesBefore: Int
        /// When the clock was first seen behind ``firstSeen``.
        package var reanchoredAt: Date?
    }

    package init(id: String) {
        self.id = id
    }

    /// How many versions' first launches are kept; the earliest go first.
    static let versionLimit = 64
    package static let key = Prefs.Key<UsageRecord?>("dialoggate.usage")

    /// The record with its clock anchors brought up to `now` for `version` (the running one); the dates never change.
    func reanchored(now: Date, version: String?) -> UsageRecord {
        var record = self
        record.firstLaunchReanchoredAt = ClockRule.anchor(firstLaunchReanchoredAt, behind: firstLaunch, now: now)
        if let version, var seen = versions[version] {
            seen.reanchoredAt = ClockRule.anchor(seen.reanchoredAt, behind: seen.firstSeen, now: now)
            record.versions[version] = seen
        }
        return record
    }

    /// The first launch of the versions that count as `version` under `change` (the exact version when nil): the
    /// earliest first launch among them, and the launches before it.
    func firstLaunch(of version: String, counting change: DialogPolicy.VersionChange?) -> VersionSeen? {
        let same = versions.filter { recorded, _ in
            change.map { !DialogRules.isNewVersion(version, since: recorded, $0) } ?? (recorded == version)
        }
        return same.values.min { ($0.firstSeen, $0.launchesBefore) < ($1.firstSeen, $1.launchesBefore) }
    }
}

/// The donations of one event (``DialogGate/donate(_:)``): its total and its last ``limit`` dates.
package struct EventLog: Codable, Hashable, Sendable, PrefsStorable {
    /// The event's name, so that a log stored under a hashed key is told apart from another event's.
    package var name: String
    /// Donations in all (saturating at `Int.max`).
    package var count = 0
    /// The last ``limit`` donation dates, in the order donated.
    package var dates: [Date] = []
    /// When the clock was first seen behind the latest date (see ``ClockRule``).
    package var reanchoredAt: Date?

    package init(name: String) {
        self.name = name
    }

    /// The dates are stored as seconds since 2001 (`"times": [786_000_000.5, …]`): a thousand of them encode and decode
    /// at each donation, as numbers rather than ISO-8601 strings.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        name = try container.decode(String.self, forKey: "name")
        count = try container.decode(Int.self, forKey: "count")
        dates = try container.decode([Double].self, forKey: "times").map(Date.init(timeIntervalSinceReferenceDate:))
        reanchoredAt = try container.decodeIfPresent(Date.self, forKey: "reanchoredAt")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(name, forKey: "name")
        try container.encode(count, forKey: "count")
        try container.encode(dates.map(\.timeIntervalSinceReferenceDate), forKey: "times")
        try container.encodeIfPresent(reanchoredAt, forKey: "reanchoredAt")
    }

    /// How many donation dates an event keeps, as TipKit does: older ones are pruned by count, whatever windows the
    /// dialogs ask for (the store does not know them when a donation is recorded).
    package static let limit = 1_000

    package static let keyPrefix = "dialoggate.events."
    package static let hashedKeyPrefix = "dialoggate.events.h."

    /// The key an event's log is stored under: the prefix and the name, or, for a name that is not a valid key name,
    /// the hashed prefix and 16 hex digits of its FNV-1a 64 hash in Unicode NFC (as a dialog's record).
    package static func storeKeyName(for name: String) -> String {
        let plain = keyPrefix + name
        return KeyName.problem(with: plain) == nil ? plain : hashedKeyPrefix + StableHash.hex(name.precomposedStringWithCanonicalMapping)
    }

    /// The store key of an event's log (see ``storeKeyName(for:)``).
    package static func storeKey(for name: String) throws -> Prefs.Key<EventLog?> {
        try Prefs.Key(validating: storeKeyName(for: name), initial: nil)
    }

    /// The latest date donated.
    var latest: Date? { dates.max() }

    /// The log with its anchor brought up to `now`.
    func reanchored(now: Date) -> EventLog {
        var log = self
        log.reanchoredAt = ClockRule.anchor(reanchoredAt, behind: latest, now: now)
        return log
    }
}

/// What a store holds under one of the usage keys: nothing, a value, or bytes this release cannot read (never
/// overwritten: a write that would replace them throws instead).
enum StoredUsage<Value: Hashable & Sendable>: Hashable, Sendable {
    case absent
    case present(Value)
    /// The typed read's error (``PrefsError/typeMismatch(key:_:)``), which says what and where.
    case unreadable(PrefsError)

    var value: Value? {
        if case .present(let value) = self { return value }
        return nil
    }

    /// `stored`, the value under the key `name`, decoded.
    static func decoding(_ stored: StoredValue?, key name: String) -> StoredUsage where Value: PrefsStorable {
        guard let stored else { return .absent }
        do {
            return .present(try stored.decode(Value.self))
        } catch {
            return .unreadable(.typeMismatch(key: name, error))
        }
    }

    /// The value to change, or nil when none is stored; throws the read's error when the stored bytes cannot be read.
    func forWriting() throws(PrefsError) -> Value? {
        switch self {
        case .absent: return nil
        case .present(let value): return value
        case .unreadable(let error): throw error
        }
    }

    /// What a condition shows for a value it cannot read.
    var problem: String? {
        if case .unreadable(let error) = self { return "unreadable: \(error)" }
        return nil
    }
}

/// A parameter value as stored (`dialoggate.parameters`) and in a recorded condition: `{"bool": true}`, `{"int": 5}`,
/// `{"double": 2.5}` (`"nan"`, `"inf"`, `"-inf"` for those), `{"string": "team"}`, so that its type survives.
struct StoredParameterValue: Codable, Hashable, Sendable {
    var value: DialogCondition.Value

    init(_ value: DialogCondition.Value) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        if let bool = try container.decodeIfPresent(Bool.self, forKey: "bool") {
            value = .bool(bool)
        } else if let int = try container.decodeIfPresent(Int.self, forKey: "int") {
            value = .int(int)
        } else if let string = try container.decodeIfPresent(String.self, forKey: "string") {
            value = .string(string)
        } else if container.contains("double") {
            if let text = try? container.decode(String.self, forKey: "double"), let double = Double(text) {  // a non-finite double
                value = .double(double)
            } else {
                value = .double(try container.decode(Double.self, forKey: "double"))
            }
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a parameter value holds bool, int, double or string"))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        switch value {
        case .bool(let bool): try container.encode(bool, forKey: "bool")
        case .int(let int): try container.encode(int, forKey: "int")
        case .double(let double) where double.isFinite: try container.encode(double, forKey: "double")
        case .double(let double): try container.encode("\(double)", forKey: "double")
        case .string(let string): try container.encode(string, forKey: "string")
        }
    }
}

/// The parameters stored with ``DialogGate/storeParameter(_:_:)``.
struct StoredParameters: Codable, Hashable, Sendable, PrefsStorable {
    var values: [String: StoredParameterValue]

    static let keyName = "dialoggate.parameters"
}

/// A dialog's conditions as its record keeps them, for `prefs-tool dialogs explain`: the condition and how its policy
/// counts versions. Read leniently: a kind this release does not know reads as ``DialogCondition/Kind/unrecognized(_:)``.
package struct StoredConditions: Codable, Hashable, Sendable {
    var condition: StoredCondition
    /// The policy's ``DialogPolicy/resetsOn`` (`newRelease`, `newVersion`, `newBuild`), which groups versions.
    var resetsOn: String?
    /// Whether a version reset clears the history, so that usage counts from the version's first launch.
    var resetClearsHistory: Bool?

    init(_ policy: DialogPolicy, _ condition: DialogCondition) {
        self.condition = StoredCondition(condition)
        resetsOn = policy.resetsOn.map(\.name)
        resetClearsHistory = policy.resetsOn != nil && policy.resetClears.contains(.history) ? true : nil
    }

    /// The version change the conditions group versions by, and the one usage counts from (nil for all usage).
    var counting: (grouping: DialogPolicy.VersionChange?, historySince: DialogPolicy.VersionChange?) {
        let change = resetsOn.flatMap(DialogPolicy.VersionChange.init(name:))
        return (change, resetClearsHistory == true ? change : nil)
    }
}

/// One condition as stored: `{"kind": "launches", "count": 5}`, `{"kind": "all", "of": […]}`.
struct StoredCondition: Codable, Hashable, Sendable {
    var kind: String
    var count: Int?
    var days: Int?
    var name: String?
    var windowSeconds: Double?
    var value: StoredParameterValue?
    var of: [StoredCondition]?
    /// Why a condition could not be read (a value of a kind this release does not know); never written.
    var problem: String?

    init(kind: String) {
        self.kind = kind
    }

    init(_ condition: DialogCondition) {
        switch condition.kind {
        case .launches(let count): self.init(kind: "launches"); self.count = count
        case .daysSinceFirstLaunch(let days): self.init(kind: "daysSinceFirstLaunch"); self.days = days
        case .daysSinceVersionFirstSeen(let days): self.init(kind: "daysSinceVersionFirstSeen"); self.days = days
        case .event(let name, let count, let window):
            self.init(kind: "event")
            self.name = name
            self.count = count
            windowSeconds = window?.timeInterval
        case .parameter(let name, let value):
            self.init(kind: "parameter")
            self.name = name
            self.value = StoredParameterValue(value)
        case .notInFirstSession: self.init(kind: "notInFirstSession")
        case .presentedFewerThan(let count, let window):
            self.init(kind: "presentedFewerThan")
            self.count = count
            windowSeconds = window.timeInterval
        case .all(let conditions): self.init(kind: "all"); of = conditions.map(StoredCondition.init)
        case .any(let conditions): self.init(kind: "any"); of = conditions.map(StoredCondition.init)
        case .unrecognized(let kind): self.init(kind: kind)
        }
    }

    /// Reads every member it can: a member of an unknown shape makes this condition unrecognized, never the record
    /// that holds it unreadable.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredMember.self)
        kind = "?"
        do {
            kind = try container.decodeIfPresent(String.self, forKey: "kind") ?? "?"
            count = try container.decodeIfPresent(Int.self, forKey: "count")
            days = try container.decodeIfPresent(Int.self, forKey: "days")
            name = try container.decodeIfPresent(String.self, forKey: "name")
            windowSeconds = try container.decodeIfPresent(Double.self, forKey: "windowSeconds")
            value = try container.decodeIfPresent(StoredParameterValue.self, forKey: "value")
            of = try container.decodeIfPresent([StoredCondition].self, forKey: "of")
        } catch {
            problem = "\(error)"
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StoredMember.self)
        try container.encode(kind, forKey: "kind")
        try container.encodeIfPresent(count, forKey: "count")
        try container.encodeIfPresent(days, forKey: "days")
        try container.encodeIfPresent(name, forKey: "name")
        try container.encodeIfPresent(windowSeconds.map { $0.isFinite ? $0 : .greatestFiniteMagnitude }, forKey: "windowSeconds")
        try container.encodeIfPresent(value, forKey: "value")
        try container.encodeIfPresent(of, forKey: "of")
    }

    /// The condition it records; one this release does not read is ``DialogCondition/Kind/unrecognized(_:)``.
    var condition: DialogCondition {
        // A window a store holds may be any number: one no Duration holds (NaN, ±1e300) reads as unrecognized.
        let window = windowSeconds.flatMap { abs($0) < 1e18 ? Duration.seconds($0) : nil }
        let windowUnreadable = windowSeconds != nil && window == nil
        let known: DialogCondition.Kind? =
            if problem != nil || windowUnreadable {
                nil
            } else {
                switch kind {
                case "launches": count.map { .launches(atLeast: $0) }
                case "daysSinceFirstLaunch": days.map { .daysSinceFirstLaunch(atLeast: $0) }
                case "daysSinceVersionFirstSeen": days.map { .daysSinceVersionFirstSeen(atLeast: $0) }
                case "event": name.flatMap { name in count.map { .event(name, atLeast: $0, within: window) } }
                case "parameter": name.flatMap { name in value.map { .parameter(name, equals: $0.value) } }
                case "notInFirstSession": .notInFirstSession
                case "presentedFewerThan": count.flatMap { count in window.map { .presentedFewerThan(count, within: $0) } }
                case "all": of.map { .all($0.map(\.condition)) }
                case "any": of.map { .any($0.map(\.condition)) }
                default: nil
                }
            }
        return DialogCondition(known ?? .unrecognized(kind))
    }
}

extension DialogPolicy.VersionChange {
    /// The name a recorded condition keeps.
    var name: String {
        switch self {
        case .newRelease: "newRelease"
        case .newVersion: "newVersion"
        case .newBuild: "newBuild"
        }
    }

    init?(name: String) {
        switch name {
        case "newRelease": self = .newRelease
        case "newVersion": self = .newVersion
        case "newBuild": self = .newBuild
        default: return nil
        }
    }
}

extension DialogCondition {
    /// The names of the events the condition counts.
    var eventNames: Set<String> {
        switch kind {
        case .event(let name, _, _): [name]
        case .all(let conditions), .any(let conditions): conditions.reduce(into: []) { $0.formUnion($1.eventNames) }
        default: []
        }
    }

    /// The most presentation dates the condition counts (a record keeps at least ``DialogRecord/presentationLogMinimum``).
    var presentationsCounted: Int {
        switch kind {
        case .presentedFewerThan(let count, _): max(0, count)
        case .all(let conditions), .any(let conditions): conditions.map(\.presentationsCounted).max() ?? 0
        default: 0
        }
    }
}
