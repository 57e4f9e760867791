import Foundation
import PrefsSupport

/// The PostgreSQL store's fixed facts: its format version, the namespace limit, and the channel a namespace notifies.
public enum PostgreSQLStore {
    /// The format this release writes (2: revisions, tombstones and history; 1 until this release, which upgrades a
    /// format-1 database when it first opens it writable); a database marked with a newer one is refused.
    public static let formatVersion = 2
    /// The channel a namespace's writes notify, with the namespace as payload: `prefs_` and a 64-bit FNV-1a hash of
    /// the namespace in hex, so that a connection hears its own namespace's commits and not a whole fleet's (two
    /// namespaces sharing a hash only cost each other a spurious refresh: the payload is checked).
    public static func notificationChannel(for namespace: String) -> String {
        "prefs_" + StableHash.hex(namespace)
    }
    /// The payload with which a namespace's settings change is notified on its channel (its history retention): the
    /// namespace and a suffix no namespace's payload has.
    static func settingsPayload(for namespace: String) -> String {
        namespace + "\u{1}settings"
    }

    /// The longest namespace name, in bytes (it is a `NOTIFY` payload and part of every key).
    public static let maximumNamespaceBytes = 200

    /// Whether `text` is a libpq connection string rather than something else (a file path): a `postgresql://` or
    /// `postgres://` URL, or `key=value` pairs whose first keyword is one of libpq's (`host=db dbname=prefs`).
    ///
    /// ```swift
    /// PostgreSQLStore.isConnectionString("host=db.internal dbname=prefs")   // true
    /// PostgreSQLStore.isConnectionString("/var/lib/app/prefs.sqlite")       // false
    /// ```
    public static func isConnectionString(_ text: String) -> Bool {
        PostgreSQLConnectionString.isConnectionString(text)
    }
}
