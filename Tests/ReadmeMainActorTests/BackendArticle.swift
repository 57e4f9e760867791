// swift-format-ignore-file
// (The article's lines, verbatim: the formatter would rewrap them.)
// WritingABackend.md's swift blocks, in this target whose code is main-actor isolated by default: the backends are
// declared as an app target declares them, and their store is opened from the view controller.
import Foundation
import Prefs
import PrefsTesting
import Testing

final class DictionaryBackend: Prefs.Backend {
    private var values: [String: StoredValue] = [:]

    var description: String { ".dictionary" }
    func allValues() -> [String: StoredValue] { values }
    func commit(_ changes: Prefs.Changes) { changes.apply(to: &values) }
}

final class LockingBackend: Prefs.TransactionalBackend {
    private let lock = NSLock()   // stands for a lock other processes share: flock(2), a database transaction
    private var values: [String: StoredValue] = [:]

    var description: String { ".locking" }
    func allValues() -> [String: StoredValue] { values }
    func beginTransaction() { lock.lock() }
    func commitTransaction(_ changes: Prefs.Changes) {
        changes.apply(to: &values)
        lock.unlock()
    }
    func rollbackTransaction() { lock.unlock() }
}

extension ArticleViewController {
    func writingABackend(stored: StoredValue) throws -> (Prefs, StoredValue) {
        let prefs = try Prefs(.custom { DictionaryBackend() })
        let row = (type: stored.type.description, text: stored.jsonText)   // what a backend writes: "int", "42"
        let back = try StoredValue(type: ValueType(row.type) ?? .other(row.type), jsonText: row.text)
        return (prefs, back)
    }
}

@Test func dictionaryBackendConforms() async {
    await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) {
        .custom { DictionaryBackend() }
    }
}

@Test("WritingABackend.md, run on the main actor: a store on the article's backends keeps values")
func writingABackendOnTheMainActor() throws {
    let controller = ArticleViewController(prefs: try Prefs(.memory))
    let (prefs, back) = try controller.writingABackend(stored: try StoredValue(42))
    #expect(back == (try StoredValue(42)))
    try prefs.update(.launchCount) { $0 += 1 }
    #expect(prefs[.launchCount] == 1)
    let locking = try Prefs(.custom { LockingBackend() })
    try locking.update(.launchCount) { $0 += 1 }
    #expect(locking[.launchCount] == 1)
}
