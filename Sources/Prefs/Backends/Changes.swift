extension Prefs {
    /// What one commit stores: values to set and keys to remove, applied together by ``Backend/commit(_:)``, all or
    /// none. A key is in one of the two at most.
    ///
    /// ```swift
    /// func commit(_ changes: Prefs.Changes) throws {
    ///     for (key, value) in changes.values { try upsert(key, type: value.type.description, json: value.jsonText) }
    ///     for key in changes.removals { try delete(key) }
    /// }
    /// ```
    ///
    /// A struct rather than a dictionary, so that what a commit carries can grow without breaking backends.
    public struct Changes: Sendable, Hashable {
        /// The values to store, by key, each replacing what is stored under its key.
        ///
        /// ```swift
        /// for (key, value) in changes.values { rows[key] = (value.type.description, value.jsonText) }
        /// ```
        public private(set) var values: [String: StoredValue] = [:]

        /// The keys whose stored values to remove (a key with none stored is no error).
        ///
        /// ```swift
        /// for key in changes.removals { rows[key] = nil }
        /// ```
        public private(set) var removals: Set<String> = []

        /// No changes; add them with ``set(_:forKey:)`` and ``remove(_:)``.
        ///
        /// ```swift
        /// var changes = Prefs.Changes()
        /// changes.set(try StoredValue(42), forKey: "launchCount")
        /// ```
        public init() {}

        /// Stores `value` under `key` (undoing an earlier ``remove(_:)`` of it).
        ///
        /// ```swift
        /// changes.set(try StoredValue("dark"), forKey: "theme")
        /// ```
        public mutating func set(_ value: StoredValue, forKey key: String) {
            values[key] = value
            removals.remove(key)
        }

        /// Removes the value stored under `key` (undoing an earlier ``set(_:forKey:)`` of it).
        ///
        /// ```swift
        /// changes.remove("theme")
        /// ```
        public mutating func remove(_ key: String) {
            values.removeValue(forKey: key)
            removals.insert(key)
        }

        /// Whether there is nothing to store or remove.
        ///
        /// ```swift
        /// Prefs.Changes().isEmpty   // true
        /// ```
        public var isEmpty: Bool { values.isEmpty && removals.isEmpty }

        /// Applies the changes to a dictionary of values, for a backend that keeps them all in memory.
        ///
        /// ```swift
        /// func commit(_ changes: Prefs.Changes) { changes.apply(to: &values) }
        /// ```
        public func apply(to stored: inout [String: StoredValue]) {
            stored.merge(values) { _, new in new }
            for key in removals { stored.removeValue(forKey: key) }
        }
    }
}

extension Prefs.Changes {
    /// The value changes of a store's change set (its declarations stay with the store).
    init(_ changeset: Changeset) {
        for (key, change) in changeset.values {
            switch change {
            case .set(let value): set(value, forKey: key)
            case .remove: remove(key)
            }
        }
    }
}
