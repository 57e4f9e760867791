import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport
import PrefsPostgreSQL

/// The backends the conformance suites run over: adding a backend adds a case here. `postgres` runs on the test run's
/// private PostgreSQL server (``TestPostgreSQLServer``), a namespace per test.
///
/// `shared` is ``SharedDictionaryBackend``, a backend written in the tests on the package's seam: it proves a backend
/// outside the Prefs module needs only `StoreBackend` and `Prefs.Storage.backend`.
package enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, json, sqlite, shared, postgres

    package var testDescription: String { rawValue }
    package var isFile: Bool { self == .json || self == .sqlite }
    /// Whether an integrity check reads every stored value against its type (the persistent stores; memory and the
    /// tests' backend hold only values the store checked on the way in).
    package var checksStoredValues: Bool { isFile || self == .postgres }
    /// Whether a second store opened on the same storage sees the first one's values (all but memory).
    package var isShared: Bool { self != .memory }

    package func storage(_ directory: TemporaryDirectory, name: String = "prefs") -> Prefs.Storage {
        switch self {
        case .memory: .memory
        case .json: .jsonFile(directory.file(name + ".json"))
        case .sqlite: .sqlite(directory.file(name + ".sqlite"))
        case .shared:
            .backend(".shared(\(name))") { [path = directory.file(name).path] in SharedDictionaryBackend(name: path) }
        case .postgres:
            // The run's private server (started on first use); a namespace per directory and name, so tests never share.
            .postgreSQL((try? TestPostgreSQLServer.shared())?.url ?? "postgresql://127.0.0.1:1/unavailable", namespace: directory.file(name).path)
        }
    }
}

/// A store in a fresh directory; `reopen()` opens the same files again as a new process would (memory: the same store).
/// It reads no launch arguments: a test's store holds what the test wrote, whatever the test runner was started with
/// (`--filter X` is the pair `-filter X` to a store that reads the process's arguments).
package final class StoreFixture: Sendable {
    package let backend: Backend
    package let directory: TemporaryDirectory
    package let prefs: Prefs
    package let diagnostics = DiagnosticLog()

    package init(_ backend: Backend) throws {
        self.backend = backend
        directory = try TemporaryDirectory()
        let log = diagnostics
        prefs = try Prefs(backend.storage(directory), pollInterval: .milliseconds(20), launchArguments: []) { log.append($0) }
    }

    /// A second, independent store on the same file (for memory, the same store).
    package func reopen() throws -> Prefs {
        backend.isShared ? try Prefs(backend.storage(directory), pollInterval: .milliseconds(20), launchArguments: []) : prefs
    }

    package var path: String? { backend.storage(directory).path }
}
