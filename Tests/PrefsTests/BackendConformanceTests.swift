import Foundation
import Synchronization
import Prefs
import PrefsTestHarness
import PrefsTesting
import TestFixtures
import Testing

/// The public conformance suite (`BackendConformance`), over the built-in storages, the tests' own backend on the
/// package's seam, and backends written on the public protocols; and over a broken backend, where it must fail.
@Suite("Backend conformance")
struct BackendConformanceTests {
    @Test("memory keeps what a store promises, within one store")
    func memory() async {
        await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) { .memory }
    }

    @Test("a JSON file keeps what a store promises, shared and across reopening")
    func jsonFile() async throws {
        let directory = try TemporaryDirectory()
        await BackendConformance.check { .jsonFile(directory.file("\(UUID()).json")) }
    }

    @Test("an SQLite database keeps what a store promises, shared and across reopening")
    func sqlite() async throws {
        let directory = try TemporaryDirectory()
        await BackendConformance.check { .sqlite(directory.file("\(UUID()).sqlite")) }
    }

    @Test("the tests' backend on the package's seam keeps what a store promises")
    func sharedDictionary() async throws {
        let directory = try TemporaryDirectory()
        await BackendConformance.check { Backend.shared.storage(directory, name: UUID().uuidString) }
    }

    @Test("a transactional backend written on the public protocols keeps what a store promises")
    func publicTransactional() async {
        await BackendConformance.check {
            let name = UUID().uuidString
            return .custom { SharedValuesBackend(name: name) }
        }
    }

    /// It persists (the box outlives a store) but never reports outside changes: two stores at once would not see
    /// each other's writes.
    @Test("a backend with the public core only keeps what a store promises")
    func publicCore() async {
        await BackendConformance.check(sharedBetweenStores: false) {
            let box = PlainBackend.Box()
            return .custom { PlainBackend(box) }
        }
    }

    /// The suite can fail: a backend that loses one change of each multi-key commit is caught.
    @Test("a backend that drops a key of a commit fails the suite")
    func droppingBackendFails() async {
        let comments = Mutex<[String]>([])
        await withKnownIssue {
            await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) { .custom { DroppingBackend() } }
        } matching: { issue in
            comments.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
            return true
        }
        let recorded = comments.withLock { $0 }
        #expect(recorded.contains { $0.hasPrefix("transactions, .custom(DroppingBackend): a transaction that returned in the store that wrote") })
        #expect(recorded.contains { $0.hasPrefix("large value and many keys, .custom(DroppingBackend): 1 of 1,000 keys") })
    }
}
