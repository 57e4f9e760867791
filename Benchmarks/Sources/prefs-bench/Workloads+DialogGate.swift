import DialogGate
import Foundation
import Prefs

// Workload 7: DialogGate — one decision for a local dialog, and an explain over a 100-message feed
// (MessageTargeting.explain: every targeting rule of every message, and the one selected).

extension Bench {
    func dialogGate() throws {
        // A dialog with a policy and a stored record (presented once, dismissed), so every rule is consulted.
        let dialog = Dialog("welcome", policy: DialogPolicy(maximumPresentations: 3, minimumInterval: .seconds(86_400)))
        let data = (n: 1, label: "one dialog with a stored record", type: "DialogRecord")
        var contenders = [
            Contender(name: Name.dictionary, role: .baseline, maxOps: 1_000_000, adaptive: true, metric: "lookup") {
                let dictionary = MutexDictionary(["dialogs.welcome": DialogRecord()])
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

    /// An explain over a 100-message feed (every targeting rule of every message), beside the plain filter an app
    /// would otherwise write (bundle id, id above the last one, not cancelled, highest priority).
    func explainFeed() throws {
        let feed = try FeedDecoder.decode(Self.sampleFeed(count: 100))
        guard feed.messages.count == 100 else {
            throw BenchError("the sample feed decoded to \(feed.messages.count) messages: \(feed.issues.map(\.summary))")
        }
        let messages = feed.messages
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
            Contender(name: "MessageTargeting.explain", role: .subject, maxOps: 1_000_000, adaptive: true) {
                .init { _, ops in
                    timed(ops: ops) {
                        for _ in 0..<ops {
                            blackHole(MessageTargeting.explain(messages, context: context, now: now, lastMessageId: 10, installationId: "A1B2C3D4"))
                        }
                    }
                }
            },
        ]
        try measure(
            workload: 7, title: "DialogGate: an explain over a 100-message feed", data: (1, "100 messages", "RemoteMessage"),
            contenders: contenders, metric: "explain", rules: [Rule(subject: "MessageTargeting.explain", baseline: "plain filter")],
            budget: settings.budget(1_000))
    }

    /// A feed in the documented `messages.json` shape, with every targeting field used by some messages.
    static func sampleFeed(count: Int) -> String {
        let messages = (1...count).map { id in
            var fields = [
                "\"id\": \(id)", "\"bundleId\": \"\(id % 4 == 0 ? "com.example.other" : "com.example.app")\"",
                "\"title\": \"Message \(id)\"", "\"text\": \"Something worth knowing, number \(id).\"", "\"confirmLabel\": \"OK\"",
            ]
            if id % 2 == 0 { fields.append("\"appVersions\": [\"2.0\", \"2.1\"]") }
            if id % 3 == 0 { fields.append("\"osVersions\": [\"17.0.1\", \"17.2\"]") }
            if id % 5 == 0 { fields.append("\"startsAt\": \"2026-03-01T00:00:00Z\", \"endsAt\": \"2027-04-01T00:00:00Z\"") }
            if id % 7 == 0 { fields.append("\"locales\": [\"en\", \"de\"]") }
            if id % 11 == 0 { fields.append("\"rolloutPercent\": 50") }
            if id % 13 == 0 { fields.append("\"cancelled\": true") }
            fields.append("\"priority\": \(id % 3)")
            return "{" + fields.joined(separator: ", ") + "}"
        }
        return "[" + messages.joined(separator: ",\n") + "]"
    }
}
