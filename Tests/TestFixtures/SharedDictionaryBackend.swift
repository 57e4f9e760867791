import Foundation
import Prefs
import PrefsSupport

/// A backend written outside the Prefs module, on the package's seam (`StoreBackend`, `Prefs.Storage.backend`), to
/// show a new backend needs nothing else: values live in a dictionary shared by every store opened on the same name in
/// this process, so a reopened store is a second client of one shared state, as a database server's clients are.
/// The conformance suites run it beside memory, JSON and SQLite (`Backend.shared`).
package final class SharedDictionaryBackend: StoreBackend {
    /// The state every store on one name shares. `writer` is held from `beginTransaction` to its commit or rollback;
    /// `state` guards the values.
    package final class Shared: Sendable {
        package let writer = NSLock()
        package let state = Locked(State())
        package struct State {
            package var values: [String: StoredValue] = [:]
            package var declarations: [String: KeyDeclaration] = [:]
            package var generation: UInt64 = 0
        }
    }

    private static let registry = Locked<[String: Shared]>([:])
    private let name: String
    private let shared: Shared
    /// The generation this client last looked at, for `refresh()`.
    private var seen: UInt64
    private var writing = false

    package init(name: String) {
        self.name = name
        shared = Self.registry.withLock { registry in
            if let existing = registry[name] { return existing }
            let created = Shared()
            registry[name] = created
            return created
        }
        seen = shared.state.withLock { $0.generation }
    }

    package var description: String { ".shared(\(name.debugDescription))" }

    package func value(forKey key: String) throws -> StoredValue? { shared.state.withLock { $0.values[key] } }
    package func allValues() throws -> [String: StoredValue] { shared.state.withLock { $0.values } }
    package func declarations() throws -> [String: KeyDeclaration] { shared.state.withLock { $0.declarations } }

    package func beginTransaction() throws {
        shared.writer.lock()
        writing = true
    }

    package func commitTransaction(_ changes: Changeset) throws {
        shared.state.withLock { state in
            changes.apply(to: &state.values, declarations: &state.declarations)
            state.generation &+= 1
        }
        endTransaction()
    }

    package func rollbackTransaction() { endTransaction() }

    private func endTransaction() {
        guard writing else { return }
        writing = false
        shared.writer.unlock()
    }

    package func refresh() throws -> Bool {
        let generation = shared.state.withLock { $0.generation }
        defer { seen = generation }
        return generation != seen
    }

    /// Nothing to check: the values never leave memory, and every write went through the store's checks.
    package func integrityProblems() throws -> [String] { [] }

    package func close() { endTransaction() }
}

extension Changeset {
    /// Applies the changes to a dictionary of values and one of declarations: values set or removed, declarations
    /// removed, then set (this backend's storage, and the model the memory backend's records are checked against).
    package func apply(to stored: inout [String: StoredValue], declarations recorded: inout [String: KeyDeclaration]) {
        for (key, change) in values {
            switch change {
            case .set(let value): stored[key] = value
            case .remove: stored.removeValue(forKey: key)
            }
        }
        for name in removedDeclarations { recorded.removeValue(forKey: name) }
        recorded.merge(declarations) { _, new in new }
    }
}
