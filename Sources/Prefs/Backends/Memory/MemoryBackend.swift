/// Keeps values in memory only: for tests and previews. Can start from a snapshot.
///
/// Memory: one table of records by name (a ``NameTable``, at most 13/16 full, where a `Dictionary` may be 3/8 full),
/// each a key's value and its declaration, so a name is held once for both; a declaration is a 4-byte index into
/// ``Declarations``, which holds each distinct declaration once (a store's keys share a handful: the same type and
/// initial value). A value is held compact (``Compact``): an `Int` or a `String` as itself, any other value in an
/// object of its own. At 100,000 keys: 131,072 buckets of 48 bytes, where a `Dictionary` of values beside one of
/// declarations took 262,144 buckets of 48 bytes and 262,144 of 56 (and a record holding a whole ``StoredValue``, 56).
final class MemoryBackend: StoreBackend {
    private struct Record {
        /// The value (nil: none stored).
        private var compact: Compact?
        /// The declaration's index in the backend's ``Declarations`` (``Declarations/none``: none recorded).
        var declaration: UInt32

        init(value: StoredValue?, declaration: UInt32) {
            compact = value.map(Compact.init)
            self.declaration = declaration
        }

        var value: StoredValue? {
            get { compact?.value }
            set { compact = newValue.map(Compact.init) }
        }

        /// Whether a value is stored (without making it).
        var holdsValue: Bool { compact != nil }
    }

    /// A stored value in as few bytes as it needs: an `Int` or a `String` (of their own types, held as trees, as
    /// their keys' sets make them) as itself, 17 bytes with its case, where a ``StoredValue`` takes 25; any other value
    /// in an object of its own. Made back into exactly the stored value it was made from.
    private enum Compact {
        case int(Int)
        case string(String)
        case other(Boxed)

        init(_ value: StoredValue) {
            switch (value.type, value.form) {
            case (.int, .tree(.int(let number))): self = .int(number)
            case (.string, .tree(.string(let text))): self = .string(text)
            default: self = .other(Boxed(value))
            }
        }

        var value: StoredValue {
            switch self {
            case .int(let number): StoredValue(type: .int, json: .int(number))
            case .string(let text): StoredValue(type: .string, json: .string(text))
            case .other(let boxed): boxed.value
            }
        }
    }

    private final class Boxed: Sendable {
        let value: StoredValue
        init(_ value: StoredValue) { self.value = value }
    }

    private var records = NameTable<Record>()
    private var table = Declarations()

    init(snapshot: [String: StoredValue]) {
        records.reserveCapacity(snapshot.count)
        for (name, value) in snapshot { records.insert(Record(value: value, declaration: Declarations.none), for: CacheName(name)) }
    }

    var description: String { ".memory" }

    /// A read is a probe of ``records``: the store's cache keeps no copy of what a commit wrote.
    var servesReadsFromMemory: Bool { true }

    func value(forKey key: String) -> StoredValue? { records[CacheName(key)]?.value }

    func allValues() -> [String: StoredValue] {
        var values: [String: StoredValue] = [:]
        values.reserveCapacity(records.count)
        records.forEach { name, record in if let value = record.value { values[name] = value } }
        return values
    }

    func declarations() -> [String: KeyDeclaration] {
        var result: [String: KeyDeclaration] = [:]
        records.forEach { name, record in if record.declaration != Declarations.none { result[name] = table[record.declaration] } }
        return result
    }

    func declaration(forKey key: String) -> KeyDeclaration? {
        guard let index = records[CacheName(key)]?.declaration, index != Declarations.none else { return nil }
        return table[index]
    }

    /// How many distinct declarations the records name (tests check that alike declarations are held once).
    var distinctDeclarationCount: Int { table.count }

    func apply(_ changes: Changeset) {
        // Room for every new name at once (a store's keys, set or declared at launch, are one change set), counting only
        // names not recorded yet: declarations of keys already set would otherwise double a table that needs no room.
        if changes.values.count + changes.declarations.count > 1 {
            var added = 0
            changes.values.forEachName { name, _ in if records[name] == nil { added += 1 } }
            for name in changes.declarations.keys where changes.values[name] == nil && records[CacheName(name)] == nil { added += 1 }
            records.reserveCapacity(records.count + added)
        }
        let empty = Record(value: nil, declaration: Declarations.none)
        changes.values.forEachName { name, change in  // the names' hashes as the change set keeps them: no hashing
            switch change {
            case .set(let value):
                records.update(name, default: empty) { $0.value = value }
            case .remove:
                guard let record = records[name] else { return }
                if record.declaration == Declarations.none { records.remove(name) } else { records.update(name) { $0.value = nil } }
            }
        }
        for key in changes.removedDeclarations {
            let name = CacheName(key)
            guard let record = records[name], record.declaration != Declarations.none else { continue }
            table.release(record.declaration)
            if !record.holdsValue { records.remove(name) } else { records.update(name) { $0.declaration = Declarations.none } }
        }
        for (key, declaration) in changes.declarations {
            let name = CacheName(key)
            let index = table.retain(declaration)  // before the old one is released: the same one is kept, not remade
            var old = Declarations.none
            records.update(name, default: empty) { record in
                old = record.declaration
                record.declaration = index
            }
            if old != Declarations.none { table.release(old) }
        }
    }

    func beginTransaction() {}
    func commitTransaction(_ changes: Changeset) { apply(changes) }
    func rollbackTransaction() {}
    func refresh() -> Bool { false }
    func integrityProblems() -> [String] { [] }
    func close() {}
}

/// The distinct declarations of a ``MemoryBackend``, each held once and counted by the records that name it: a
/// declaration no record names any more is forgotten, and its index used again.
private struct Declarations {
    /// The index that names no declaration.
    static let none: UInt32 = 0

    /// By index - 1; a nil where a declaration was forgotten.
    private var declarations: [KeyDeclaration?] = []
    private var counts: [Int] = []
    private var indices: [KeyDeclaration: UInt32] = [:]
    private var free: [UInt32] = []
    /// The index retained last (``none`` when it was forgotten since): compared before `indices` is looked up, since
    /// keys are declared in runs of one type and initial value, and a comparison costs a tenth of hashing one.
    private var last = Declarations.none

    /// How many distinct declarations are held.
    var count: Int { indices.count }

    subscript(index: UInt32) -> KeyDeclaration {
        declarations[Int(index) - 1].unsafelyUnwrapped
    }

    /// The index of `declaration`, counted once more.
    mutating func retain(_ declaration: KeyDeclaration) -> UInt32 {
        if last != Self.none, declarations[Int(last) - 1] == declaration {
            counts[Int(last) - 1] += 1
            return last
        }
        if let index = indices[declaration] {
            counts[Int(index) - 1] += 1
            last = index
            return index
        }
        let index: UInt32
        if let reused = free.popLast() {
            index = reused
            declarations[Int(index) - 1] = declaration
            counts[Int(index) - 1] = 1
        } else {
            declarations.append(declaration)
            counts.append(1)
            index = UInt32(declarations.count)
        }
        indices[declaration] = index
        last = index
        return index
    }

    /// Counts `index` once less, forgetting its declaration when nothing names it.
    mutating func release(_ index: UInt32) {
        let slot = Int(index) - 1
        counts[slot] -= 1
        guard counts[slot] == 0, let declaration = declarations[slot] else { return }
        indices.removeValue(forKey: declaration)
        declarations[slot] = nil
        free.append(index)
        if last == index { last = Self.none }
    }
}
