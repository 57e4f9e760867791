import Foundation
internal import PrefsJSON
import PrefsSupport

extension Prefs {
    /// What the store keeps behind its lock (``Prefs/state``): its parts, each with one job (the cache, the
    /// observers, the poll, the flush of coalesced writes), and what the façade keeps itself (the declarations this
    /// process has checked, the launch arguments, the diagnostics).
    struct State: ~Copyable {
        /// The cache of keys, the fast path (``StoreCache``), which also keeps what the store knows of each name: the
        /// key this process declared, set or observed under it, and whether its declaration is recorded.
        var cache: StoreCache
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

        /// The state of a store whose cache is `cache`.
        init(cache: consuming StoreCache) {
            self.cache = cache
        }

        /// Puts what a commit wrote into the cache. `declaring`: a key whose declaration is now known to be recorded
        /// (the one a ``Prefs/set(_:for:)`` wrote), with the ``declarationEpoch`` at which that was checked. `backend`:
        /// the backend that committed them (one that serves its reads from memory gets no copy in the cache).
        mutating func cacheCommitted(_ changes: Changeset, by backend: any StoreBackend, declaring: (name: CacheName, epoch: UInt64)? = nil) {
            let declaredName = declaring?.epoch == declarationEpoch ? declaring?.name : nil
            cache.takeCommitted(changes, declared: declaredName, arguments: arguments, copiesValues: !backend.servesReadsFromMemory)
        }

        /// Whether `name`'s declaration is known to be recorded: one lookup.
        func isDeclared(_ name: CacheName) -> Bool {
            cache.known(name)?.declared == true
        }

        /// Notes `key`, declared (`declared`) or observed: the cache's slot for its name keeps it
        /// (``StoreCache/Slot/key``), so that code that reads by name sees its initial value.
        mutating func noteKnown(_ key: Keys, declared: Bool) {
            cache.noteKnown(key, declared: declared)
        }

        /// Notes that the declaration of `name` is checked or recorded.
        mutating func noteDeclared(_ name: CacheName) {
            cache.noteDeclared(name)
        }

        /// Forgets that the declaration of `name` is recorded (its key, if any, is still known).
        mutating func forgetDeclared(_ name: CacheName) {
            cache.forgetDeclared(name)
        }

        /// The key known under `name`, if any.
        func knownKey(_ name: String) -> Keys? {
            cache.known(CacheName(name))?.key
        }

        /// Every key known, by name.
        func knownKeys() -> [(name: String, key: Keys)] {
            cache.knownKeys()
        }

        /// Caches `stored` for `name` (``StoreCache/cache(_:for:arguments:)``).
        @discardableResult
        mutating func cache(_ stored: StoredValue?, for name: String) -> StoreCache.Slot {
            cache.cache(stored, for: name, arguments: arguments)
        }
    }
}
