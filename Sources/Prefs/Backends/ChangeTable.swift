/// A change set's value changes by key (``Changeset/values``): a ``NameTable`` behind a reference that is copied on
/// write, with the part of `Dictionary`'s interface the store and the backends use.
///
/// Why not `[String: Change]`: a batch of 100,000 sets held 262,144 buckets of 48 bytes (12.6 MB: a `Dictionary` is at
/// most 3/4 full, and 98,304 keys fill 131,072 buckets), beside the backend's and the cache's own tables while it
/// committed; here they take 131,072 buckets of 56 bytes (7.3 MB). An empty table allocates nothing.
///
/// Iteration is in no order, as a `Dictionary`'s; a backend that writes in key order sorts.
package struct ChangeTable: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    package typealias Change = Changeset.Change
    package typealias Element = (key: String, value: Change)

    /// The table, shared between copies until one of them changes (nil: empty, nothing allocated).
    private var storage: Storage?

    fileprivate final class Storage: @unchecked Sendable {
        // @unchecked Sendable: a storage referenced by more than one table is never changed (copied on write).
        // Unchecked exclusivity: a table changes its storage only when it holds the one reference (copied on write), so
        // no two accesses overlap; checked, every access of a lookup or an iteration step paid two runtime calls.
        @exclusivity(unchecked) var table = NameTable<Change>()

        func copy() -> Storage {
            let copy = Storage()
            copy.table.reserveCapacity(table.count)
            table.forEach { name, change in copy.table.insert(change, for: CacheName(name)) }
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

    package var count: Int { storage?.table.count ?? 0 }
    package var isEmpty: Bool { count == 0 }
    package var underestimatedCount: Int { count }

    /// The change of `key`, or nil; setting nil removes it.
    package subscript(key: String) -> Change? {
        get { storage?.table[CacheName(key)] }
        set {
            if let newValue {
                uniqueStorage().table.insert(newValue, for: CacheName(key))
            } else if storage?.table[CacheName(key)] != nil {
                uniqueStorage().table.remove(CacheName(key))
            }
        }
    }

    /// The keys, in iteration order.
    package var keys: [String] { map(\.key) }

    /// One change, or nil when there is none (`if count == 1, let (key, change) = first`).
    package var first: Element? {
        var iterator = makeIterator()
        return iterator.next()
    }

    /// Makes room for `minimumCount` changes without another allocation.
    package mutating func reserveCapacity(_ minimumCount: Int) {
        guard minimumCount > 0 else { return }
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
        for (key, change) in later { self[key] = change }
    }

    /// The values whose changes `transform` maps to a value, by key.
    package func compactMapValues<Value>(_ transform: (Change) throws -> Value?) rethrows -> [String: Value] {
        var result: [String: Value] = [:]
        for (key, change) in self { if let value = try transform(change) { result[key] = value } }
        return result
    }

    private mutating func uniqueStorage() -> Storage {
        if storage == nil { storage = Storage() } else if !isKnownUniquelyReferenced(&storage) { storage = storage.unsafelyUnwrapped.copy() }
        return storage.unsafelyUnwrapped
    }

    package struct Iterator: IteratorProtocol {
        fileprivate let storage: Storage?
        fileprivate var index = 0
        /// The changes not returned yet: the walk stops at the last one, not at the end of the table.
        fileprivate var remaining: Int

        package mutating func next() -> Element? {
            guard remaining > 0, let storage else { return nil }
            while true {
                defer { index += 1 }
                if let entry = storage.table.entry(at: index) {
                    remaining -= 1
                    return (entry.name, entry.slot)
                }
            }
        }
    }

    package func makeIterator() -> Iterator {
        Iterator(storage: storage, remaining: count)
    }

    package static func == (lhs: ChangeTable, rhs: ChangeTable) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.storage === rhs.storage { return true }
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
