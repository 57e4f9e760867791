import Foundation
internal import PrefsJSON
import PrefsSupport

extension Prefs {
    /// What the store keeps behind its lock (``Prefs/state``): its parts, each with one job (the cache, the
    /// observers, the poll, the flush of coalesced writes), and what the façade keeps itself (the declarations this
    /// process has checked, the launch arguments, the diagnostics).
    struct State: ~Copyable {
        /// The cache of keys: the fast path (``StoreCache``).
        var cache = StoreCache()
        /// Keys this process declared, set or observed in this store, by name (``Known``): one table for what a `Set`
        /// of declared names and a `Dictionary` of keys kept apart (some 105 bytes a key at 100,000 keys, now 52).
        var known = NameTable<Known>()
        /// Bumped when declarations are removed, so that a set that checked its key's declaration before the removal
        /// does not mark its cache entry declared after it.
        var declarationEpoch: UInt64 = 0
        /// Who observes which keys (``ObserverHub``).
        var observers = ObserverHub()
        /// The poll while something observes the store (``Refresher``).
        var refresher = Refresher()
        /// The coalesced writes' flush (``Committer``).
        var committer = Committer()
        var closed = false
        var diagnostics: [Diagnostic] = []
        var reportedMismatches: Set<ValueMismatch> = []
        /// The argument domain (``LaunchArguments``): the launch arguments' values by name, read above the stored
        /// values and never written. Empty for most stores, and then no read looks at it.
        var arguments: [String: StoredValue] = [:]
        /// The launch arguments reported as ignored, by key name and the type read, so each is reported once.
        var reportedArguments: Set<String> = []

        /// Puts what a commit wrote into the cache. `declaring`: a key whose declaration is now known to be recorded
        /// (the one a ``Prefs/set(_:for:)`` wrote), with the ``declarationEpoch`` at which that was checked. `backend`:
        /// the backend that committed them (one that serves its reads from memory gets no copy in the cache).
        mutating func cacheCommitted(_ changes: Changeset, by backend: any StoreBackend, declaring: (name: CacheName, epoch: UInt64)? = nil) {
            let declaredName = declaring?.epoch == declarationEpoch ? declaring?.name : nil
            cache.takeCommitted(changes, declared: declaredName, arguments: arguments, copiesValues: !backend.servesReadsFromMemory)
        }

        /// Whether `name`'s declaration is known to be recorded: one lookup when its cache slot says so.
        func isDeclared(_ name: CacheName) -> Bool {
            cache[name]?.declared == true || known[name]?.isDeclared == true
        }

        /// What the store knows of a name.
        struct Known {
            /// The key this process declared or observed under the name: its initial value is what code that reads by
            /// name (UserDefaults' API) sees while nothing is stored. The last key told of a name wins.
            var key: Keys?
            /// Whether this process has checked or recorded the name's declaration. A cache slot may say so too.
            var isDeclared: Bool
        }

        /// Notes `key`, declared (`declared`) or observed.
        mutating func noteKnown(_ key: Keys, declared: Bool) {
            known.update(CacheName(key), default: Known(key: key, isDeclared: declared)) { known in
                known.key = key
                if declared { known.isDeclared = true }
            }
        }

        /// Notes that the declaration of `name` is checked or recorded.
        mutating func noteDeclared(_ name: CacheName) {
            known.update(name, default: Known(key: nil, isDeclared: true)) { $0.isDeclared = true }
        }

        /// Forgets that the declaration of `name` is recorded (its key, if any, is still known).
        mutating func forgetDeclared(_ name: CacheName) {
            guard let found = known[name] else { return }
            if found.key == nil { known.remove(name) } else { known.update(name) { $0.isDeclared = false } }
        }

        /// The key known under `name`, if any.
        func knownKey(_ name: String) -> Keys? {
            known[CacheName(name)]?.key
        }

        /// Every key known, by name.
        func knownKeys() -> [(name: String, key: Keys)] {
            var keys: [(name: String, key: Keys)] = []
            known.forEach { name, known in if let key = known.key { keys.append((name, key)) } }
            return keys
        }

        /// Caches `stored` for `name` (``StoreCache/cache(_:for:arguments:)``).
        @discardableResult
        mutating func cache(_ stored: StoredValue?, for name: String) -> StoreCache.Slot {
            cache.cache(stored, for: name, arguments: arguments)
        }
    }
}
