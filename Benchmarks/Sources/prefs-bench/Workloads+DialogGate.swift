import DialogGate
import Foundation
import Prefs

// Workload 7: DialogGate — one decision for a local dialog, and an explain over a 100-message feed
// (MessageSelection: every targeting rule of every message, and the one selected).

extension Bench {
    func dialogGate() throws {
        // A dialog with a policy and a stored record (presented once, dismissed), so every rule is consulted.
        let dialog = Dialog("welcome", policy: DialogPolicy(maximumPresentations: 3, minimumInterval: .seconds(86_400)))
        let data = (n: 1, label: "one dialog with a stored record", type: "DialogRecord")
        var contenders = [
            Contender(name: Name.dictionary, role: .baseline, maxOps: 1_000_000, adaptive: true, metric: "lookup") {
                let dictionary = MutexDictionary(["dialogs.welcome": DialogRecordFields()])
                return .init { _, ops in timed(ops: ops) { for _ in 0..<ops { blackHole(dictionary.get("dialogs.welcome")) } } }
            }
        ]
        for backend in [Backend.memory, .sqlite] {
            contenders.append(
                Contender(name: "DialogGate on " + backend.contenderName, role: .subject, maxOps: 1_000_000, adaptive: true) {
                    let store = try OpenStore(backend)
                    let gate = DialogGate(prefs: store.prefs, session: DialogSession(), appVersion: "2.1", overrides: DialogOverrides())
                    try gate.claim(dialog).presentation?.finish(.dismiss)
                    return .init(
                        run: { _, ops in timed(ops: ops) { for _ in 0..<ops { blackHole(gate.decision(for: dialog)) } } },
                        finish: { store.close() })
                })
        }
        try measure(
            workload: 7, title: "DialogGate: one decision for a local dialog", data: data, contenders: contenders, metric: "decision",
            rules: [
                Rule(subject: "DialogGate on " + Backend.memory.contenderName, baseline: Name.dictionary),
                Rule(subject: "DialogGate on " + Backend.sqlite.contenderName, baseline: Name.dictionary),
            ],
            budget: settings.budget(1_000))
        try explainFeed()
    }

    /// An explain over a 100-message feed (``MessageSelection``: every targeting rule of every message, and the one
    /// selected), beside the plain filter an app would otherwise write (bundle id, id above the last one, not cancelled,
    /// highest priority).
    func explainFeed() throws {
        let messages = Self.sampleMessages(count: 100)
        let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.1", osVersion: "17.2", localeIdentifier: "en_US")
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let contenders = [
            Contender(name: "plain filter", role: .baseline, maxOps: 1_000_000, adaptive: true, metric: "select") {
                .init { _, ops in
                    timed(ops: ops) {
                        for _ in 0..<ops {
                            blackHole(
                                messages.filter { $0.bundleId == context.bundleIdentifier && $0.id > 10 && !$0.cancelled }
                                    .max { ($0.priority, $0.id) < ($1.priority, $1.id) })
                        }
                    }
                }
            },
            Contender(name: "MessageSelection", role: .subject, maxOps: 1_000_000, adaptive: true) {
                .init { _, ops in
                    timed(ops: ops) {
                        for _ in 0..<ops {
                            blackHole(MessageSelection(messages, context: context, now: now, lastMessageId: 10, installationId: "A1B2C3D4"))
                        }
                    }
                }
            },
        ]
        try measure(
            workload: 7, title: "DialogGate: an explain over a 100-message feed", data: (1, "100 messages", "RemoteMessage"),
            contenders: contenders, metric: "explain", rules: [Rule(subject: "MessageSelection", baseline: "plain filter")],
            budget: settings.budget(1_000))
    }

    /// The messages of a feed in the documented `messages.json` shape, as the feed decoder gives them, with every
    /// targeting field used by some messages.
    static func sampleMessages(count: Int) -> [RemoteMessage] {
        let starts = Date(timeIntervalSince1970: 1_772_323_200)  // 2026-03-01T00:00:00Z
        let ends = Date(timeIntervalSince1970: 1_806_537_600)  // 2027-04-01T00:00:00Z
        return (1...count).map { id in
            RemoteMessage(
                id: id, bundleId: id % 4 == 0 ? "com.example.other" : "com.example.app", title: "Message \(id)",
                text: "Something worth knowing, number \(id).", confirmLabel: "OK",
                appVersions: id % 2 == 0 ? ["2.0", "2.1"] : nil, osVersions: id % 3 == 0 ? ["17.0.1", "17.2"] : nil,
                cancelled: id % 13 == 0, startsAt: id % 5 == 0 ? starts : nil, endsAt: id % 5 == 0 ? ends : nil, priority: id % 3,
                locales: id % 7 == 0 ? ["en", "de"] : nil, rolloutPercent: id % 11 == 0 ? 50 : nil, feedIndex: id - 1)
        }
    }
}

/// The baseline's value: the fields DialogGate keeps about a dialog (presentations, dates, the last answer, a
/// presentation in progress), as an app that tracked a dialog itself would keep them.
struct DialogRecordFields: Sendable {
    struct Claim: Sendable {
        var token: String
        var claimedAt: Date
        var expiresAt: Date
        var host: String
        var processID: Int32
        var processStarted: UInt64?
    }

    var id: String?
    var presentations = 0
    var firstPresented: Date?
    var lastPresented: Date?
    var lastResponse: String?
    var lastResponseDate: Date?
    var neverRemindSince: Date?
    var neverRemindReanchoredAt: Date?
    var snoozedUntil: Date?
    var snoozedAt: Date?
    var snoozeReanchoredAt: Date?
    var lastPresentedReanchoredAt: Date?
    var appVersion: String?
    var neverRemindKey: String?
    var claim: Claim?
}
