// release-fixtures: writes the stores of Prefs release 0.1 (commit 3b44638) that this release's tests read
// (Tests/PrefsTests/ReleaseFixtureTests.swift), with 0.1's own code. Built against 0.1 by Tests/Releases/build-release.sh
// (its `main.swift`), never against this tree; `make-fixtures.sh` runs it once and the output is committed.
//
//   release-fixtures write DIRECTORY        writes json/store.json and sqlite/store.sqlite, each with every value type of
//                                           0.1, enum keys, a renamed key, dialogs answered "never remind", a snooze, an
//                                           acknowledged remote message and a cached feed; and expected.json: each
//                                           store's values and declarations as 0.1 reads them
//   release-fixtures rewrite PATH KEY INT   sets one key of a JSON store with 0.1 (0.1 rewrites the whole file)
//   release-fixtures export json|sqlite PATH
//                                           prints the store's values and declarations as 0.1 reads them
import DialogGate
import Foundation
import Prefs

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum Theme: String, PrefsStorable, Codable { case light, dark }

struct WindowFrame: Codable, Hashable, PrefsStorable {
    var width: Int
    var height: Int
    var title: String
}

/// The seeds' enum style.
enum AppKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain"
    case greeting
    case volume

    var initialValue: any PrefsStorable {
        switch self {
        case .dialogNoMore: false
        case .greeting: String?.none
        case .volume: 0.5
        }
    }
}

extension Prefs.Keys {
    static let flag = Key<Bool>("flag", initial: false)
    static let launchCount = Key<Int>("launchCount", initial: 0)
    static let largest = Key<Int>("largest", initial: 0)
    static let smallest = Key<Int>("smallest", initial: 0)
    static let ratio = Key<Double>("ratio", initial: 0)
    static let tiny = Key<Double>("tiny", initial: 0)
    static let infinite = Key<Double>("infinite", initial: 0)
    static let name = Key<String>("name", initial: "")
    static let lastLaunch = Key<Date>("lastLaunch", initial: Date(timeIntervalSince1970: 0))
    static let blob = Key<Data>("blob", initial: Data())
    static let homepage = Key<URL>("homepage", initial: URL(string: "https://example.com")!)
    static let tags = Key<[String]>("tags", initial: [])
    static let scores = Key<[String: Int]>("scores", initial: [:])
    static let visits = Key<[String: [Date]]>("visits", initial: [:])
    static let nickname = Key<String?>("nickname")
    static let theme = Key<Theme>("theme", initial: .light)
    static let frame = Key<WindowFrame>("frame", initial: WindowFrame(width: 800, height: 600, title: "Main"))
    /// Written under its old name by an earlier version of the app; 0.1's app never read it under the new one.
    static let launchCounter = Key<Int>("launchCounter", initial: 0)
    /// Renamed, and read once by 0.1 under its new name (0.1 moves the value on that read).
    static let visitCounter = Key<Int>("visitCounter", initial: 0)
    static let visitCount = Key<Int>("visitCount", initial: 0, formerNames: ["visitCounter"])
}

/// 2026-11-30T00:00:00Z: the clock of every dated record, so the fixtures are the same on every run.
let now = Date(timeIntervalSince1970: 1_795_996_800)
let feedURL = URL(string: "https://fixtures.example/messages.json")!

/// A feed loader that serves one canned `messages.json` (no network, no file).
struct CannedFeed: FeedLoader {
    let body: Data
    func load(_ request: URLRequest, limits: FeedLoadLimits) async throws -> FeedResponse {
        FeedResponse(statusCode: 200, headers: ["ETag": "\"fixture-1\"", "Cache-Control": "max-age=600"], body: body)
    }
}

let feed = Data(
    """
    [
      {"id": 1, "bundleId": "com.example.fixtures", "title": "First", "text": "The first message.", "confirmLabel": "OK"},
      {"id": 2, "bundleId": "com.example.fixtures", "title": "Second", "text": "The second message.", "confirmLabel": "OK",
       "appVersions": [">=1.0"]},
      {"id": 3, "bundleId": "com.example.fixtures", "title": "Later", "text": "For version 9.", "confirmLabel": "OK",
       "appVersions": ["9.*"]}
    ]
    """.utf8)

@MainActor
func fill(_ prefs: Prefs) async throws {
    try prefs.declare(AppKey.self)
    try prefs.set(true, for: .flag)
    try prefs.set(42, for: .launchCount)
    try prefs.set(Int.max, for: .largest)
    try prefs.set(Int.min, for: .smallest)
    try prefs.set(0.1, for: .ratio)
    try prefs.set(Double.leastNonzeroMagnitude, for: .tiny)
    try prefs.set(-Double.infinity, for: .infinite)
    try prefs.set("Ada \u{2713} \u{65E5}\u{672C} \u{1F600} \"quoted\"\n\ttab", for: .name)
    try prefs.set(Date(timeIntervalSince1970: 1_700_000_000.123_456_789), for: .lastLaunch)
    try prefs.set(Data([0, 1, 2, 254, 255]), for: .blob)
    try prefs.set(URL(string: "https://user@example.com:8443/a%20b/c?q=1&r=%C3%A9#frag")!, for: .homepage)
    try prefs.set(["b", "a", ""], for: .tags)
    try prefs.set(["x": 1, "y": -2], for: .scores)
    try prefs.set(["home": [now, Date(timeIntervalSince1970: 0.5)]], for: .visits)
    try prefs.set("nick", for: .nickname)
    try prefs.set(.dark, for: .theme)
    try prefs.set(WindowFrame(width: 1024, height: 768, title: "Éditeur"), for: .frame)
    prefs[AppKey.greeting] = "hello"
    prefs[AppKey.volume] = 0.8
    try prefs.set(7, for: .launchCounter)
    try prefs.set(3, for: .visitCounter)
    _ = prefs[.visitCount]  // 0.1 moves the value to the new name on this read

    let gate = DialogGate(prefs: prefs, appVersion: "1.0", overrides: DialogOverrides(), clock: { now })
    let welcome = Dialog("welcome")
    try gate.recordPresentation(of: welcome)
    try gate.record(.neverRemind, for: welcome)
    let seed = Dialog("dialog", policy: DialogPolicy(neverRemindKey: "dialog_neverAgain"))
    try gate.recordPresentation(of: seed)
    try gate.record(.neverRemind, for: seed)
    let rate = Dialog("rate", policy: DialogPolicy(maximumPresentations: 3))
    try gate.recordPresentation(of: rate)
    try gate.record(.remindLater(until: Date(timeIntervalSince1970: 4_102_444_800)), for: rate)  // 2100-01-01

    let center = MessageCenter(
        feedURL: feedURL, prefs: prefs,
        context: MessageContext(bundleIdentifier: "com.example.fixtures", appVersion: "1.0", osVersion: "17.0", localeIdentifier: "en_US"),
        loader: CannedFeed(body: feed), clock: { now }, random: { 0.5 })
    await center.refresh()
    guard let message = center.pendingMessage, message.id == 2 else {
        throw FixtureError("expected message 2 pending, found \(String(describing: center.pendingMessage)); \(String(describing: center.lastError))")
    }
    _ = center.acknowledge(.confirm, for: message)
    _ = center.installationId()
    try prefs.flush()
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The store's values and declarations as 0.1 reads them: {"declared": {...}, "values": {...}}.
func export(_ prefs: Prefs) throws -> Data {
    var declared: [String: JSON] = [:]
    for (name, declaration) in try prefs.declaredKeys() {
        var members: [String: JSON] = ["type": .string(declaration.type.description)]
        if let initial = declaration.initial { members["initial"] = initial }
        declared[name] = .object(members)
    }
    var values: [String: JSON] = [:]
    for (name, value) in try prefs.snapshot() {
        values[name] = .object(["type": .string(value.type.description), "value": value.json])
    }
    return JSON.object(["declared": .object(declared), "values": .object(values)]).serializedData(.pretty)
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "write" where arguments.count == 2:
        let directory = URL(fileURLWithPath: arguments[1])
        var expected: [String: JSON] = [:]
        for (kind, file) in [("json", "json/store.json"), ("sqlite", "sqlite/store.sqlite")] {
            let url = directory.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let prefs = try Prefs(kind == "json" ? .jsonFile(url) : .sqlite(url))
            try await fill(prefs)
            expected[kind] = try JSON.parse(export(prefs))
            try prefs.close()
        }
        try JSON.object(expected).serializedData(.pretty).write(to: directory.appendingPathComponent("expected.json"))
    case "rewrite" where arguments.count == 4:
        let prefs = try Prefs(.jsonFile(URL(fileURLWithPath: arguments[1])))
        try prefs.set(Int(arguments[3]) ?? 0, for: try Prefs.Key(validating: arguments[2], initial: 0))
        try prefs.close()
    case "export" where arguments.count == 3:
        let url = URL(fileURLWithPath: arguments[2])
        let prefs = try Prefs(arguments[1] == "json" ? .jsonFile(url) : .sqlite(url))
        FileHandle.standardOutput.write(try export(prefs))
    default:
        throw FixtureError("usage: release-fixtures write DIRECTORY | rewrite PATH KEY INT | export json|sqlite PATH")
    }
} catch {
    FileHandle.standardError.write(Data("release-fixtures: \(error)\n".utf8))
    exit(1)
}
