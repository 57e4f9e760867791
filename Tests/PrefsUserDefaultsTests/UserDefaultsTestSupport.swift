import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsUserDefaults
import PrefsSupport

/// A ``PrefsDefaults`` over a fresh store of one backend, with the store's diagnostics collected.
final class DefaultsFixture: Sendable {
    let store: StoreFixture
    let defaults: PrefsDefaults

    init(_ backend: Backend) throws {
        store = try StoreFixture(backend)
        defaults = PrefsDefaults(store.prefs)
    }

    var prefs: Prefs { store.prefs }
    var diagnostics: [Prefs.Diagnostic] { store.diagnostics.all }

    /// The raw stored value under `key`.
    func stored(_ key: String) throws -> StoredValue? {
        try prefs.storedValue(forKey: key)
    }
}

/// A point: not a property-list type.
struct Point: Sendable {
    var x: Int
    var y: Int
}

/// Collects the `PrefsDefaultsDidChange` notifications one instance posts (the changed key names of each).
final class NotificationLog {
    private final class Entries: Sendable {
        let keys = Locked<[[String]]>([])
    }
    private let entries = Entries()
    private let token: any NSObjectProtocol

    init(_ defaults: PrefsDefaults) {
        token = NotificationCenter.default.addObserver(forName: PrefsDefaults.didChangeNotification, object: defaults, queue: nil) { [entries] note in
            let changed = note.userInfo?[PrefsDefaults.changedKeysUserInfoKey] as? [String] ?? ["<missing userInfo>"]
            entries.keys.withLock { $0.append(changed) }
        }
    }

    var posted: [[String]] { entries.keys.withLock { $0 } }

    deinit {
        NotificationCenter.default.removeObserver(token)
    }
}
