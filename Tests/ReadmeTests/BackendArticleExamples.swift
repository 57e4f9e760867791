import Foundation
import Prefs
import PrefsTesting
import Testing

// WritingABackend.md's examples, line for line (`ReadmeSource` checks them), and run: the article's backends pass the
// public conformance suite.

final class DictionaryBackend: Prefs.Backend {
    private var values: [String: StoredValue] = [:]

    var description: String { ".dictionary" }
    func allValues() -> [String: StoredValue] { values }
    func commit(_ changes: Prefs.Changes) { changes.apply(to: &values) }
}

/// WritingABackend.md, the overview.
func dictionaryBackendAsWritten() throws -> Prefs {
    let prefs = try Prefs(.custom { DictionaryBackend() })
    return prefs
}

/// WritingABackend.md, values as text: the row a backend writes for `stored`, and the value read back from it.
func textRowAsWritten(_ stored: StoredValue) throws -> (row: (type: String, text: String), back: StoredValue) {
    let row = (type: stored.type.description, text: stored.jsonText)   // what a backend writes: "int", "42"
    let back = try StoredValue(type: ValueType(row.type) ?? .other(row.type), jsonText: row.text)
    return (row, back)
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

@Suite("Writing a backend: the article's examples, run")
struct BackendArticleTests {
    @Test func dictionaryBackendConforms() async {
        await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) {
            .custom { DictionaryBackend() }
        }
    }

    @Test("the locking backend passes the conformance suite too")
    func lockingBackendConforms() async {
        await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) { .custom { LockingBackend() } }
    }

    @Test("the overview's store is named by its backend, and keeps values")
    func overview() throws {
        let prefs = try dictionaryBackendAsWritten()
        #expect(prefs.storage.description == ".dictionary")
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(prefs[.launchCount] == 1)
    }

    @Test("a value's row reads back as the value")
    func textRow() throws {
        let (row, back) = try textRowAsWritten(try StoredValue(42))
        #expect(row.type == "int" && row.text == "42")
        #expect(back == (try StoredValue(42)))
    }
}
