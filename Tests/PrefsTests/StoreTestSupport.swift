import Foundation
@_spi(Tooling) import Prefs
import PrefsTestSupport
import Testing
import PrefsSupport

/// The three backends, for suites that run over each.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, json, sqlite

    var testDescription: String { rawValue }
    var isFile: Bool { self != .memory }

    func storage(_ directory: TemporaryDirectory, name: String = "prefs") -> Prefs.Storage {
        switch self {
        case .memory: .memory
        case .json: .jsonFile(directory.file(name + ".json"))
        case .sqlite: .sqlite(directory.file(name + ".sqlite"))
        }
    }
}

/// A store in a fresh directory; `reopen()` opens the same files again as a new process would (memory: the same store).
final class StoreFixture: Sendable {
    let backend: Backend
    let directory: TemporaryDirectory
    let prefs: Prefs
    let diagnostics = DiagnosticLog()

    init(_ backend: Backend) throws {
        self.backend = backend
        directory = try TemporaryDirectory()
        let log = diagnostics
        prefs = try Prefs(backend.storage(directory), pollInterval: .milliseconds(20)) { log.append($0) }
    }

    /// A second, independent store on the same file (for memory, the same store).
    func reopen() throws -> Prefs {
        backend == .memory ? prefs : try Prefs(backend.storage(directory), pollInterval: .milliseconds(20))
    }

    var path: String? { backend.storage(directory).path }
}


final class DiagnosticLog: Sendable {
    private let entries = Locked<[Prefs.Diagnostic]>([])
    func append(_ diagnostic: Prefs.Diagnostic) { entries.withLock { $0.append(diagnostic) } }
    var all: [Prefs.Diagnostic] { entries.withLock { $0 } }
}

/// Waits (polling) until `condition` holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}
