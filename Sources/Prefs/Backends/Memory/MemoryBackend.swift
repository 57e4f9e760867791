/// Keeps values in memory only: for tests and previews. Can start from a snapshot.
final class MemoryBackend: StoreBackend {
    private var values: [String: StoredValue]
    private var recorded: [String: KeyDeclaration] = [:]

    init(snapshot: [String: StoredValue]) {
        values = snapshot
    }

    var description: String { ".memory" }

    func value(forKey key: String) -> StoredValue? { values[key] }
    func allValues() -> [String: StoredValue] { values }
    func declarations() -> [String: KeyDeclaration] { recorded }

    func apply(_ changes: Changeset) { changes.apply(to: &values, declarations: &recorded) }
    func beginTransaction() {}
    func commitTransaction(_ changes: Changeset) { apply(changes) }
    func rollbackTransaction() {}
    func refresh() -> Bool { false }
    func integrityProblems() -> [String] { [] }
    func close() {}
}
