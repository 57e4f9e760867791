import Foundation
import Prefs

/// What a device knows of one synced key, stored in the local store itself under ``SyncNames/record(_:)``: the
/// version the store's value is (its timestamp and id), and whether it is a local change not yet pushed. The pending
/// records are the device's durable queue: written in the same transaction as what they describe, so that a crash
/// neither loses a change nor makes one up.
struct SyncRecord: Codable, PrefsStorable, Hashable {
    var timestamp: String
    var id: String
    /// The value's type and JSON text (``SyncChange/valueText``); nil: removed.
    var type: String?
    var json: String?
    var pending: Bool

    init(_ change: SyncChange, pending: Bool) {
        timestamp = change.timestamp.description
        id = change.id
        type = change.valueText?.type
        json = change.valueText?.json
        self.pending = pending
    }

    func change(key: String) throws(PrefsError) -> SyncChange {
        guard let stamp = HybridTimestamp(timestamp) else {
            throw .backend("sync", reason: "key \(key): the sync record's timestamp \(timestamp) is not one")
        }
        var value: StoredValue?
        if let type, let json { value = try SyncChange.value(type: type, json: json, key: key) }
        return SyncChange(key: key, value: value, timestamp: stamp, id: id)
    }
}

/// The names sync reserves in a local store: all under `prefs.sync.`, which no synced key may use.
package enum SyncNames {
    package static let prefix = "prefs.sync."
    package static let device = "prefs.sync.device"
    package static let clock = "prefs.sync.clock"
    package static let cursor = "prefs.sync.cursor"
    package static let conflicts = "prefs.sync.conflicts"
    package static let lastSync = "prefs.sync.lastSync"
    package static let log = "prefs.sync.log"
    package static let recordPrefix = "prefs.sync.record."
    /// How many lines ``log`` keeps, newest last.
    package static let logLength = 200

    package static func record(_ key: String) -> String { recordPrefix + key }
}

/// A store's sync state as `prefs-tool sync status` and `sync log` show it, read from the reserved names alone (no
/// engine, no transport).
package struct SyncStatus: Sendable {
    package var device: String?
    package var cursor: String?
    package var clock: String?
    package var lastSync: Date?
    package var conflicts: Int
    package var pending: [SyncChange]
    package var tombstones: Int
    package var synced: Int
    package var log: [String]

    /// Reads the status from `values` (a store's snapshot); throws when a record does not read.
    package init(_ values: [String: StoredValue]) throws(PrefsError) {
        func string(_ name: String) -> String? { try? values[name]?.decode(String.self) }
        device = string(SyncNames.device)
        cursor = string(SyncNames.cursor)
        clock = string(SyncNames.clock)
        lastSync = try? values[SyncNames.lastSync]?.decode(Date.self)
        conflicts = (try? values[SyncNames.conflicts]?.decode(Int.self)) ?? 0
        log = (try? values[SyncNames.log]?.decode([String].self)) ?? []
        pending = []
        tombstones = 0
        synced = 0
        for (name, value) in values where name.hasPrefix(SyncNames.recordPrefix) {
            let key = String(name.dropFirst(SyncNames.recordPrefix.count))
            let record: SyncRecord
            do {
                record = try value.decode(SyncRecord.self)
            } catch {
                throw .typeMismatch(key: name, error)
            }
            synced += 1
            if record.type == nil { tombstones += 1 }
            if record.pending { pending.append(try record.change(key: key)) }
        }
        pending.sort { $0.key < $1.key }
    }
}
