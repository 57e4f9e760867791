/// The engine's side of a ``Prefs/Backend`` of the app's own (``Prefs/Storage/custom(_:)``): it offers the small public
/// backend as the store's internal ``StoreBackend``.
///
/// What the public protocol leaves out is kept or answered here: key declarations live in this adapter's memory (for
/// this store's life, as a memory store keeps them), integrity checks find nothing to check, writes are durable on
/// return (no flush). A ``Prefs/TransactionalBackend`` is discovered once, when the store opens; without one, a
/// transaction's writes are one ``Prefs/Backend/commit(_:)`` under the store's lock. Errors the backend throws that
/// are not ``PrefsError`` values become ``PrefsError/backend(_:reason:)``, naming the call.
final class CustomBackend: StoreBackend {
    private let base: any Prefs.Backend
    /// `base` as a ``Prefs/TransactionalBackend``, when it is one.
    private let transactional: (any Prefs.TransactionalBackend)?
    private var recorded: [String: KeyDeclaration] = [:]

    /// Makes the app's backend; an error it throws (not a ``PrefsError``) is reported under `description`, the
    /// storage's, since there is no backend yet to name.
    init(description: String, making make: () throws -> any Prefs.Backend) throws(PrefsError) {
        do {
            base = try make()
        } catch let error as PrefsError {
            throw error
        } catch {
            throw .backend(description, reason: "opening failed: \(error)")
        }
        transactional = base as? any Prefs.TransactionalBackend
    }

    var description: String { base.description }

    func value(forKey key: String) throws -> StoredValue? {
        do {
            return try base.value(forKey: key)
        } catch let mismatch as ValueMismatch {
            throw PrefsError.typeMismatch(key: key, mismatch)  // a StoredValue(type:jsonText:) the backend could not make
        } catch {
            throw mapped(error, during: "value(forKey: \(PrefsError.quoted(key)))")
        }
    }

    func allValues() throws -> [String: StoredValue] {
        try calling("allValues()") { try base.allValues() }
    }

    func declarations() -> [String: KeyDeclaration] { recorded }

    func apply(_ changes: Changeset) throws {
        let values = Prefs.Changes(changes)
        if !values.isEmpty { try calling("commit(_:)") { try base.commit(values) } }
        record(changes)
    }

    func beginTransaction() throws {
        guard let transactional else { return }  // the store's lock serializes this store's writers
        try calling("beginTransaction()") { try transactional.beginTransaction() }
    }

    func commitTransaction(_ changes: Changeset) throws {
        let values = Prefs.Changes(changes)
        if let transactional {
            try calling("commitTransaction(_:)") { try transactional.commitTransaction(values) }
        } else if !values.isEmpty {
            try calling("commit(_:)") { try base.commit(values) }
        }
        record(changes)
    }

    func rollbackTransaction() {
        transactional?.rollbackTransaction()
    }

    func refresh() throws -> Bool {
        try calling("refresh()") { try base.refresh() }
    }

    /// Nothing to check: the backend's medium is its own, and every value reached it through the store's checks.
    func integrityProblems() -> [String] { [] }

    func close() {
        base.close()
    }

    /// Keeps the declarations of a committed change set.
    private func record(_ changes: Changeset) {
        for name in changes.removedDeclarations { recorded.removeValue(forKey: name) }
        recorded.merge(changes.declarations) { _, new in new }
    }

    /// `body`'s result; an error other than a ``PrefsError`` becomes ``PrefsError/backend(_:reason:)`` naming `call`.
    private func calling<Result>(_ call: String, _ body: () throws -> Result) throws(PrefsError) -> Result {
        do {
            return try body()
        } catch {
            throw mapped(error, during: call)
        }
    }

    private func mapped(_ error: any Error, during call: String) -> PrefsError {
        (error as? PrefsError) ?? .backend(base.description, reason: "\(call) failed: \(error)")
    }
}
