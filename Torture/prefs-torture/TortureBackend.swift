import Foundation
import Prefs
import PrefsJSON

/// The store configurations the harness exercises.
enum TortureBackend: String, CaseIterable, Sendable {
    /// A JSON file, every write replacing the file before it returns.
    case json
    /// An SQLite database in WAL mode.
    case sqlite
    /// A JSON file in coalesced mode: only what `flush()` returned for is promised.
    case jsonCoalesced = "json-coalesced"

    /// The file backends (coalesced JSON is the JSON backend in another write mode).
    static let fileBackends: [TortureBackend] = [.json, .sqlite]

    var fileName: String { self == .sqlite ? "prefs.sqlite" : "prefs.json" }

    /// The storage a writer uses; `flushInterval` only matters for ``jsonCoalesced``.
    func storage(
        _ path: String, durability: Prefs.Durability = .processCrash, flushInterval: Duration = .milliseconds(50),
        timeout: Duration = .seconds(30)
    ) -> Prefs.Storage {
        let url = URL(fileURLWithPath: path)
        switch self {
        case .json: return .jsonFile(url, durability: durability, lockTimeout: timeout)
        case .sqlite: return .sqlite(url, durability: durability, busyTimeout: timeout)
        case .jsonCoalesced: return .jsonFile(url, durability: durability, writeMode: .coalesced(flushInterval), lockTimeout: timeout)
        }
    }

    /// The storage a checker opens afterwards: the same file, plain settings.
    func checkerStorage(_ path: String) -> Prefs.Storage {
        self == .sqlite ? .sqlite(URL(fileURLWithPath: path)) : .jsonFile(URL(fileURLWithPath: path))
    }
}
