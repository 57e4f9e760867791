import Foundation
import PrefsSupport

/// The store's observers (``Prefs/Observer``: the streams of ``Prefs/values(for:lossless:)->AsyncStream<Value>``, the
/// ``ObservableValue``s) and the fan-out of a change to them. Its one job is to know who watches which keys: a
/// change goes to the lossless observers under the backend lock, in commit order (``Prefs/deliverInOrder(_:silencing:)``),
/// and to the coalescing ones after it is released (``Prefs/notifyObservers(of:silencing:)``).
///
/// A part of ``Prefs/State``: it lives under the store's one lock and takes no lock of its own; the observers it
/// picks are told outside that lock.
struct ObserverHub {
    private var observers: [ObjectIdentifier: Prefs.Observer] = [:]
    /// Who is told the names of every change (``Prefs/onChange(_:)``), by subscription.
    private(set) var changeListeners: [ObjectIdentifier: @Sendable (Set<String>?) -> Void] = [:]

    /// Whether nothing observes the store (a commit then tells no one, and the poll stops).
    var isEmpty: Bool { observers.isEmpty }

    /// No observer and no change listener: nothing to tell of a change.
    var hasNoOneToTell: Bool { observers.isEmpty && changeListeners.isEmpty }

    var count: Int { observers.count }

    /// Adds `observer` (again: a no-op).
    mutating func add(_ observer: Prefs.Observer) {
        observers[ObjectIdentifier(observer)] = observer
    }

    /// Removes `observer`, if it is here.
    mutating func remove(_ observer: Prefs.Observer) {
        observers.removeValue(forKey: ObjectIdentifier(observer))
    }

    mutating func addChangeListener(_ subscription: Prefs.ChangeSubscription, _ listener: @escaping @Sendable (Set<String>?) -> Void) {
        changeListeners[ObjectIdentifier(subscription)] = listener
    }

    mutating func removeChangeListener(_ subscription: ObjectIdentifier) {
        changeListeners.removeValue(forKey: subscription)
    }

    /// Removes every observer, returning them (to finish them outside the store's lock).
    mutating func removeAll() -> [Prefs.Observer] {
        defer { observers = [:] }
        return Array(observers.values)
    }

    /// The lossless observers (`lossless`) or the coalescing ones that watch a key `changes` touches (every one of
    /// them when nil: anything may have changed).
    func observers(of changes: Changeset?, lossless: Bool) -> [Prefs.Observer] {
        guard !observers.isEmpty else { return [] }
        return observers.values.filter { observer in
            observer.isLossless == lossless && (changes.map { observer.watches($0) } ?? true)
        }
    }
}

extension Prefs {
    /// Tells the coalescing observers of the keys `changes` touches (of every key when nil) to look at their keys again,
    /// after the backend lock is released. The observers of the keys `silenced` touches (the writes of
    /// ``withoutNotifyingObservers(_:)``) note their values as seen without delivering them.
    func notifyObservers(of changes: Changeset?, silencing silenced: Changeset? = nil) {
        let (observers, listeners) = state.withLock { state in
            (state.observers.observers(of: changes, lossless: false), state.observers.changeListeners)
        }
        for observer in observers {
            observer.update(from: self, delivering: !(silenced.map { observer.watches($0) } ?? false))
        }
        if !listeners.isEmpty {
            let names = changes.map { Set($0.values.keys) }
            for listener in listeners.values { listener(names) }
        }
    }

    /// Tells `listener` the names of the keys each change of this store touched, after the change is committed and the
    /// store's locks are released, on the thread that made it: a commit of this process gives its names, a change found
    /// otherwise (another process's write seen by a refresh or a poll) gives nil. Silenced writes
    /// (``withoutNotifyingObservers(_:)``) are told too. Until the subscription is released or cancelled.
    ///
    /// For the package's own layers (sync stamps a change when it is made); apps observe keys with
    /// ``values(for:lossless:)->AsyncStream<Value>``.
    package func onChange(_ listener: @escaping @Sendable (Set<String>?) -> Void) -> ChangeSubscription {
        let subscription = ChangeSubscription(self)
        state.withLock { $0.observers.addChangeListener(subscription, listener) }
        return subscription
    }

    /// A listener of ``onChange(_:)``, removed by ``cancel()`` or when the subscription is released.
    package final class ChangeSubscription: Sendable {
        private let removing: @Sendable (ObjectIdentifier) -> Void

        init(_ prefs: Prefs) {
            removing = { [weak prefs] id in prefs?.state.withLock { $0.observers.removeChangeListener(id) } }
        }

        package func cancel() { removing(ObjectIdentifier(self)) }

        deinit { cancel() }
    }

    /// Delivers to the lossless observers of the keys `changes` touches (of every key when nil), silencing as
    /// ``notifyObservers(of:silencing:)`` does: called under the backend lock right after the cache took a commit (or
    /// a refresh), so each gets every commit, in order.
    func deliverInOrder(_ changes: Changeset?, silencing silenced: Changeset? = nil) {
        for observer in observers(of: changes, lossless: true) {
            observer.update(from: self, delivering: !(silenced.map { observer.watches($0) } ?? false))
        }
    }

    /// The observers of the keys `changes` touches (every observer when nil), lossless or coalescing.
    private func observers(of changes: Changeset?, lossless: Bool) -> [Observer] {
        state.withLock { $0.observers.observers(of: changes, lossless: lossless) }
    }

    /// One subscriber to one or more keys. Deliveries happen in order, one at a time, and never repeat a value.
    ///
    /// A coalescing observer looks at its keys when told of a change, after the backend lock is released, and delivers
    /// what it finds if it is new: a burst of changes may reach it as its last value. A lossless one is told under the
    /// backend lock, right after each commit enters the cache, so it delivers every committed value in commit order.
    /// Lock order: a lossless observer's `lock` is taken only under the backend lock (backend, progress, state);
    /// a coalescing one's never is (progress, state, then the backend to load an uncached key).
    final class Observer: @unchecked Sendable {
        // @unchecked Sendable: `progress` and `updating` are read and written only under `lock`.
        let keys: [Keys]
        let isLossless: Bool
        /// Ends the subscriber's stream, if it has one.
        let finish: (@Sendable () -> Void)?
        /// Whether the value found by the first update is delivered (a stream's first element) or only noted as the
        /// baseline (an `Observable`, whose readers read the current value themselves and want only changes).
        private let deliversInitialValue: Bool
        private let deliver: @Sendable ([StoredValue?]) -> Void
        /// The generation and values last delivered (nil: nothing delivered yet), and whether an update is running,
        /// behind `lock`.
        private var progress: (generation: UInt64, last: [StoredValue?]?) = (0, nil)
        private var updating = false
        /// Recursive: reading the keys may refresh a store whose cache has a staleness bound (PostgreSQL), and the
        /// refresh notifies the observers, this one included, on this thread. That inner update returns at once (the
        /// outer one reads, after the refresh, what it brought); a lock that is not recursive deadlocked there.
        private let lock = NSRecursiveLock()

        init(
            keys: [Keys],
            isLossless: Bool = false,
            deliversInitialValue: Bool = true,
            finish: (@Sendable () -> Void)? = nil,
            deliver: @escaping @Sendable ([StoredValue?]) -> Void
        ) {
            self.keys = keys
            self.isLossless = isLossless
            self.deliversInitialValue = deliversInitialValue
            self.finish = finish
            self.deliver = deliver
        }

        /// Whether `changes` touches one of the keys.
        func watches(_ changes: Changeset) -> Bool {
            keys.contains { changes.values[$0.name] != nil }
        }

        /// Reads the keys' current values and delivers them if they are new (`delivering` false: notes them as seen).
        /// Reading inside the lock keeps deliveries in commit order: a later reader never delivers an older value.
        func update(from prefs: Prefs, delivering: Bool = true) {
            UserCallbacks.deferring { update(locked: prefs, delivering: delivering) }
        }

        private func update(locked prefs: Prefs, delivering: Bool) {
            lock.lock()
            defer { lock.unlock() }
            guard !updating else { return }  // called back by a refresh this update's read made: see `lock`
            updating = true
            defer { updating = false }
            let (values, generation) = prefs.currentStored(keys)
            guard generation >= progress.generation else { return }
            progress.generation = generation
            let isFirst = progress.last == nil
            if progress.last == values { return }
            progress.last = values
            if isFirst && !deliversInitialValue { return }
            if delivering { deliver(values) }
        }
    }
}
