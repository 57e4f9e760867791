/// A change set's value changes by key (``Changeset/values``): a ``NameTable`` behind a reference that is copied on
/// write, with the part of `Dictionary`'s interface the store and the backends use.
///
/// Why not `[String: Change]`: a batch of 100,000 sets held 262,144 buckets of 48 bytes (12.6 MB: a `Dictionary` is at
/// most 3/4 full, and 98,304 keys fill 131,072 buckets), beside the backend's and the cache's own tables while it
/// committed; here they take 131,072 buckets of 56 bytes (7.3 MB). An empty table allocates nothing, nor does a table of
/// one change (a `set`'s).
///
/// Iteration is in no order, as a `Dictionary`'s; a backend that writes in key order sorts.
package struct ChangeTable: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    package typealias Change = Changeset.Change
    package typealias Element = (key: String, value: Change)

    private var contents = Contents.empty

    /// What a table holds. One change is one object with its name's hash (a `set`'s: one allocation, where a table's
    /// object and its buckets took two, and their setup a sixth of a memory store's set). An object, not the change
    /// itself inline: a change set is copied several times a commit, and a reference is the cheapest copy.
    fileprivate enum Contents: Sendable {
        case empty
        case one(Single)
        /// Two changes or more (or room reserved for them), shared between copies until one of them changes.
        case table(Storage)
    }

    fileprivate final class Single: Sendable {
        let name: CacheName
        let change: Change

        init(_ name: CacheName, _ change: Change) {
            self.name = name
            self.change = change
        }
    }

    fileprivate final class Storage: @unchecked Sendable {
        // @unchecked Sendable: a storage referenced by more than one table is never changed (copied on write).
        // Unchecked exclusivity: a table changes its storage only when it holds the one reference (copied on write), so
        // no two accesses overlap; checked, every access of a lookup or an iteration step paid two runtime calls.
        @exclusivity(unchecked) var table = NameTable<Change>()

        func copy() -> Storage {
            let copy = Storage()
            copy.table.reserveCapacity(table.count)
            table.forEachName { name, change in copy.table.insert(change, for: name) }
            return copy
        }
    }

    package init() {}

    package init(dictionaryLiteral elements: (String, Change)...) {
        for (key, change) in elements { self[key] = change }
    }

    /// The changes of `dictionary`.
    package init(_ dictionary: [String: Change]) {
        reserveCapacity(dictionary.count)
        for (key, change) in dictionary { self[key] = change }
    }

    package var count: Int {
        switch contents {
        case .empty: 0
        case .one: 1
        case .table(let storage): storage.table.count
        }
    }

    package var isEmpty: Bool { count == 0 }
    package var underestimatedCount: Int { count }

    /// The change of `key`, or nil; setting nil removes it.
    package subscript(key: String) -> Change? {
        get {
            switch contents {
            case .empty: nil
            case .one(let single): single.name.name == key ? single.change : nil
            case .table(let storage): storage.table[CacheName(key)]
            }
        }
        set {
            if let newValue {
                insert(newValue, for: CacheName(key))
            } else {
                remove(key)
            }
        }
    }

    /// Whether `name` has a change; its hash (a typed key's, or this table's own) is not computed again.
    func contains(_ name: CacheName) -> Bool {
        switch contents {
        case .empty: false
        case .one(let single): single.name.name == name.name
        case .table(let storage): storage.table[name] != nil
        }
    }

    /// Sets the change of `name`, whose hash (a typed key's, kept) is not computed again.
    mutating func insert(_ change: Change, for name: CacheName) {
        switch contents {
        case .empty:
            contents = .one(Single(name, change))
        case .one(let single) where single.name.name == name.name:
            contents = .one(Single(single.name, change))
        case .one, .table:
            uniqueStorage().table.insert(change, for: name)
        }
    }

    private mutating func remove(_ key: String) {
        switch contents {
        case .empty: return
        case .one(let single): if single.name.name == key { contents = .empty }
        case .table(let storage): if storage.table[CacheName(key)] != nil { uniqueStorage().table.remove(CacheName(key)) }
        }
    }

    /// The keys, in iteration order.
    package var keys: [String] { map(\.key) }

    /// One change, or nil when there is none (`if count == 1, let (key, change) = first`).
    package var first: Element? {
        var iterator = makeIterator()
        return iterator.next()
    }

    /// Calls `body` with every change and its name, with the hash the table keeps (another ``NameTable`` finds the name
    /// by it without hashing it again), in no order.
    func forEachName(_ body: (CacheName, Change) throws -> Void) rethrows {
        switch contents {
        case .empty: return
        case .one(let single): try body(single.name, single.change)
        case .table(let storage): try storage.table.forEachName(body)
        }
    }

    /// The number of buckets: ``entry(atBucket:)`` takes an index below it (one for a table of one change).
    package var bucketCount: Int {
        switch contents {
        case .empty: 0
        case .one: 1
        case .table(let storage): storage.table.bucketCount
        }
    }

    /// The change in bucket `index` (below ``bucketCount``), or nil when it is empty: a walk in an order of the caller's
    /// own (the SQLite backend's key order, sorting 16 bytes a row rather than copies of the rows).
    package func entry(atBucket index: Int) -> Element? {
        switch contents {
        case .empty: nil
        case .one(let single): (single.name.name, single.change)
        case .table(let storage): storage.table.entry(at: index).map { ($0.name, $0.slot) }
        }
    }

    /// The key in bucket `index` (below ``bucketCount``), or nil when it is empty.
    package func key(atBucket index: Int) -> String? {
        switch contents {
        case .empty: nil
        case .one(let single): single.name.name
        case .table(let storage): storage.table.name(at: index)
        }
    }

    /// Makes room for `minimumCount` changes without another allocation.
    package mutating func reserveCapacity(_ minimumCount: Int) {
        guard minimumCount > 1 else { return }
        uniqueStorage().table.reserveCapacity(minimumCount)
    }

    /// Adds `later`'s changes, each replacing this table's change of its key.
    package mutating func merge(_ later: ChangeTable) {
        guard !later.isEmpty else { return }
        if isEmpty {
            self = later
            return
        }
        reserveCapacity(count + later.count)
        later.forEachName { name, change in insert(change, for: name) }
    }

    /// The values whose changes `transform` maps to a value, by key.
    package func compactMapValues<Value>(_ transform: (Change) throws -> Value?) rethrows -> [String: Value] {
        var result: [String: Value] = [:]
        for (key, change) in self { if let value = try transform(change) { result[key] = value } }
        return result
    }

    /// The table's storage, made (holding the inline change, if any) or copied so that this table holds the one
    /// reference to it.
    private mutating func uniqueStorage() -> Storage {
        switch contents {
        case .table(var storage):
            contents = .empty  // this table's reference is the storage's only one if no copy shares it
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            contents = .table(storage)
            return storage
        case .one(let single):
            let storage = Storage()
            storage.table.insert(single.change, for: single.name)
            contents = .table(storage)
            return storage
        case .empty:
            let storage = Storage()
            contents = .table(storage)
            return storage
        }
    }

    package struct Iterator: IteratorProtocol {
        fileprivate let contents: Contents
        fileprivate var index = 0
        /// The changes not returned yet: the walk stops at the last one, not at the end of the table.
        fileprivate var remaining: Int

        package mutating func next() -> Element? {
            guard remaining > 0 else { return nil }
            switch contents {
            case .empty:
                return nil
            case .one(let single):
                remaining = 0
                return (single.name.name, single.change)
            case .table(let storage):
                while true {
                    defer { index += 1 }
                    if let entry = storage.table.entry(at: index) {
                        remaining -= 1
                        return (entry.name, entry.slot)
                    }
                }
            }
        }
    }

    package func makeIterator() -> Iterator {
        Iterator(contents: contents, remaining: count)
    }

    package static func == (lhs: ChangeTable, rhs: ChangeTable) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if case .table(let left) = lhs.contents, case .table(let right) = rhs.contents, left === right { return true }
        return lhs.allSatisfy { key, change in rhs[key] == change }
    }

    package func hash(into hasher: inout Hasher) {
        // In no order: the sum of the entries' own hashes, as equal tables may hold their keys in different orders.
        var sum = 0
        for (key, change) in self {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(change)
            sum &+= entry.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}
