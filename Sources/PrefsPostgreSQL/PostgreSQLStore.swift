import Foundation
import PrefsSupport

/// The PostgreSQL store's fixed facts: its format version, the namespace limit, and the channel a namespace notifies.
public enum PostgreSQLStore {
    /// The format this release writes; a database marked with a newer one is refused.
    public static let formatVersion = 1
    /// The channel a namespace's commits notify, with the namespace as payload: `prefs_` and a 64-bit FNV-1a hash of
    /// the namespace in hex, so that a connection hears its own namespace's commits and not a whole fleet's (two
    /// namespaces sharing a hash only cost each other a spurious refresh: the payload is checked).
    public static func notificationChannel(for namespace: String) -> String {
        "prefs_" + StableHash.hex(namespace)
    }
    /// The longest namespace name, in bytes (it is a `NOTIFY` payload and part of every key).
    public static let maximumNamespaceBytes = 200
}
