import Foundation
public import Prefs

/// One version of one synced key, as it travels between devices: the value (nil: the key was removed, a tombstone), the
/// hybrid clock reading that orders it against other versions, and an id that makes it safe to send twice.
///
/// ```swift
/// let change = SyncChange(key: "theme", value: try StoredValue("dark"), timestamp: stamp, id: "0F1E…")
/// change.isTombstone   // false
/// ```
public struct SyncChange: Sendable, Hashable, CustomStringConvertible {
    /// The key's name in the store.
    public var key: String
    /// The value as the store holds it (its type and JSON); nil for a removal.
    public var value: StoredValue?
    /// When the change was made, by the device's hybrid clock: the greatest timestamp of a key wins.
    public var timestamp: HybridTimestamp
    /// Unique to this change; a transport ignores a change whose id it already holds, so a push repeated after a crash
    /// applies once.
    public var id: String

    /// A change of `key` to `value` (nil: removed), made at `timestamp`.
    ///
    /// ```swift
    /// let removal = SyncChange(key: "theme", value: nil, timestamp: stamp, id: UUID().uuidString)
    /// ```
    public init(key: String, value: StoredValue?, timestamp: HybridTimestamp, id: String) {
        self.key = key
        self.value = value
        self.timestamp = timestamp
        self.id = id
    }

    /// Whether the change removes the key.
    ///
    /// ```swift
    /// if change.isTombstone { print("\(change.key) removed") }
    /// ```
    public var isTombstone: Bool { value == nil }

    /// The key, the value (or "removed") and the timestamp.
    ///
    /// ```swift
    /// print(change)   // theme = string "dark" @ 001800000000000-0000000000-phone
    /// ```
    public var description: String {
        "\(key) = \(value.map { "\($0)" } ?? "removed") @ \(timestamp)"
    }

    /// The value's type and JSON text in one line (`string "dark"`'s `string\t"dark"`), or nil for a tombstone: the
    /// form the transports store and send.
    package var valueText: (type: String, json: String)? {
        value.map { ("\($0.type)", $0.jsonText) }
    }

    /// Reads a value back from ``valueText``'s parts; throws what and where when they are not a value.
    package static func value(type: String, json: String, key: String) throws(PrefsError) -> StoredValue {
        guard let valueType = ValueType(type) else {
            throw .backend("sync", reason: "key \(key): unknown value type \(type)")
        }
        do {
            return try StoredValue(type: valueType, jsonText: json)
        } catch {
            throw .backend("sync", reason: "key \(key): the value does not read as \(type): \(error.reason)")
        }
    }
}
