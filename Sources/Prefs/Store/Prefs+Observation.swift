import Foundation
import Observation
import PrefsSupport

extension Prefs {
    /// The values of `key`: the current value first, then each change, whether made in this process or,
    /// while the stream is alive, by another (seen within `pollInterval`). Repeated equal values are skipped.
    /// The stream finishes when the store is closed or released.
    ///
    /// ```swift
    /// for await count in prefs.values(for: .launchCount) { print(count) }
    /// ```
    public func values<Value>(for key: Key<Value>) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let observer = Observer(key: key, finish: { continuation.finish() }) { [weak self] stored in
            continuation.yield(self?.decodeForObserver(stored, key: key) ?? key.initial)
        }
        let registered = register(observer)
        continuation.onTermination = { [weak self] _ in self?.unregister(observer) }
        observer.update(from: self)
        if !registered { continuation.finish() }  // closed: the current value, then the end, as for a stream open at close()
        return stream
    }

    /// An `Observable` view of one key for UI binding: reading `value` is tracked by `withObservationTracking`
    /// (and SwiftUI); changes from any process notify it; setting writes through the store.
    ///
    /// ```swift
    /// let count = prefs.observable(.launchCount)
    /// withObservationTracking { _ = count.value } onChange: { print("changed") }
    /// ```
    /// Made on the main actor, it notifies on the main actor.
    public func observable<Value>(_ key: Key<Value>, isolation: isolated (any Actor)? = #isolation) -> ObservableValue<Value> {
        ObservableValue(prefs: self, key: key, onMainActor: isolation === MainActor.shared)
    }

    func decodeForObserver<Value>(_ stored: StoredValue?, key: Key<Value>) -> Value {
        guard let stored else { return key.initial }
        do {
            return try stored.decode(Value.self)
        } catch {
            reportMismatch(error, key: key.name)
            return key.initial
        }
    }

    /// Adds `observer`, unless the store is closed (then nothing would ever finish it): returns whether it was added.
    @discardableResult
    func register(_ observer: Observer) -> Bool {
        let start = state.withLock { state -> UInt64?? in
            guard !state.closed else { return .none }
            state.observers[ObjectIdentifier(observer)] = observer
            state.knownKeys[observer.key.name] = observer.key
            guard state.polling == nil else { return .some(nil) }
            state.pollGeneration &+= 1
            state.polling = state.pollGeneration
            return state.pollGeneration
        }
        guard let start else { return false }
        guard let start else { return true }  // already polling
        if let listener = (try? io.withBackendAllowingReentry({ backend in backend.makeChangeListener() })) ?? nil {
            listenForChanges(listener, generation: start)
        } else {
            schedulePoll(generation: start)
        }
        return true
    }

    /// Polling with a listener: a thread of its own waits on it up to `pollInterval`, then refreshes, so another
    /// process's change is seen as soon as it is signalled, and at the next interval when a signal is lost.
    ///
    /// The listener starts listening before this returns (a first, short wait connects), so a change made after
    /// ``values(for:)`` or ``observable(_:isolation:)`` returns is signalled.
    private func listenForChanges(_ listener: any BackendChangeListener, generation: UInt64) {
        listener.startListening()
        let box = UncheckedListener(listener)
        let thread = Thread { [weak self, pollInterval] in
            defer { box.listener.close() }
            while true {
                _ = box.listener.wait(upTo: pollInterval)
                guard let self, self.state.withLock({ $0.polling == generation }) else { return }
                self.refreshReportingErrors()
                self.state.withLock { $0.pollTicks += 1 }
            }
        }
        thread.name = "Prefs.listener"
        thread.start()
    }

    /// One poll tick after `pollInterval`, then the next, for as long as this generation of polling runs.
    private func schedulePoll(generation: UInt64) {
        Background.after(pollInterval) { [weak self] in
            guard let self, self.state.withLock({ $0.polling == generation }) else { return }
            self.refreshReportingErrors()
            self.state.withLock { $0.pollTicks += 1 }
            self.schedulePoll(generation: generation)
        }
    }

    /// Ends every observation: called when the store is closed or released, so `for await` loops over
    /// ``values(for:)`` end instead of waiting for ever.
    func finishObservers() {
        let observers = state.withLock { state in
            defer { state.observers = [:]; state.polling = nil }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish?() }
    }

    func unregister(_ observer: Observer) {
        state.withLock { state in
            state.observers.removeValue(forKey: ObjectIdentifier(observer))
            if state.observers.isEmpty { state.polling = nil }
        }
    }

    /// Tells the observers of the keys `changes` touches (of every key when nil) to look at their key again.
    func notifyObservers(of changes: Changeset?) {
        let targets = state.withLock { state -> [Observer] in
            guard !state.observers.isEmpty else { return [] }
            return state.observers.values.filter { observer in changes.map { $0.values[observer.key.name] != nil } ?? true }
        }
        for observer in targets { observer.update(from: self) }
    }

    /// The stored value of `key` now, and the cache generation it was read at.
    func currentStored(_ key: Keys) -> (StoredValue?, UInt64) {
        let entry = cachedEntry(for: key)
        let generation = state.withLock { $0.generation }
        return (entry.stored, generation)
    }

    /// One subscriber to one key. Deliveries happen in order, one at a time, and never repeat a value.
    final class Observer: Sendable {
        let key: Keys
        /// Ends the subscriber's stream, if it has one.
        let finish: (@Sendable () -> Void)?
        /// Whether the value found by the first update is delivered (a stream's first element) or only noted as the
        /// baseline (an `Observable`, whose readers read the current value themselves and want only changes).
        private let deliversInitialValue: Bool
        private let deliver: @Sendable (StoredValue?) -> Void
        /// The generation and value last delivered (`.none`: nothing delivered yet).
        private let progress = Locked<(generation: UInt64, last: StoredValue??)>((0, .none))

        init(
            key: Keys,
            deliversInitialValue: Bool = true,
            finish: (@Sendable () -> Void)? = nil,
            deliver: @escaping @Sendable (StoredValue?) -> Void
        ) {
            self.key = key
            self.deliversInitialValue = deliversInitialValue
            self.finish = finish
            self.deliver = deliver
        }

        /// Reads the key's current value and delivers it if it is new. Reading inside the lock keeps
        /// deliveries in commit order: a later reader never delivers an older value.
        func update(from prefs: Prefs) {
            UserCallbacks.deferring { update(locked: prefs) }
        }

        private func update(locked prefs: Prefs) {
            progress.withLock { progress in
                let (value, generation) = prefs.currentStored(key)
                guard generation >= progress.generation else { return }
                progress.generation = generation
                let isFirst: Bool
                switch progress.last {
                case .some(let last):
                    if last == value { return }
                    isFirst = false
                case .none:
                    isFirst = true
                }
                progress.last = .some(value)
                if isFirst && !deliversInitialValue { return }
                deliver(value)
            }
        }
    }
}

/// A listener handed to the one thread that uses it.
// @unchecked Sendable: created before the thread starts, then used by that thread alone.
private final class UncheckedListener: @unchecked Sendable {
    let listener: any BackendChangeListener
    init(_ listener: any BackendChangeListener) { self.listener = listener }
}

// MARK: - Waiting for another process's change, for tools

extension Prefs {
    /// A way to wait for another process's change to this store, when its backend signals changes (PostgreSQL's
    /// `LISTEN`/`NOTIFY`); nil when changes can only be polled (the file stores). `prefs-tool watch` waits on it between
    /// two checks, so it sees a change when it is made instead of at its next interval.
    @_spi(Tooling) public func makeChangeSignal() -> ChangeSignal? {
        ((try? io.withBackendAllowingReentry { backend in backend.makeChangeListener() }) ?? nil).map(ChangeSignal.init)
    }

    /// Signals of another process's change to one store (see ``Prefs/makeChangeSignal()``), on a connection of its own.
    /// Used by one thread at a time.
    // @unchecked Sendable: handed between the threads that take turns waiting on it, never used by two at once.
    @_spi(Tooling) public final class ChangeSignal: @unchecked Sendable {
        private let listener: any BackendChangeListener
        private let closed = Locked(false)

        /// Starts listening at once (a first, short wait connects), so no change made after this returns is missed.
        init(_ listener: any BackendChangeListener) {
            self.listener = listener
            listener.startListening()
        }

        deinit { close() }

        /// Blocks up to `timeout`; true as soon as a change was signalled, false when the time passed without one (a
        /// lost connection included: check the store anyway).
        public func wait(upTo timeout: Duration) -> Bool {
            listener.wait(upTo: timeout)
        }

        /// Releases the connection. Idempotent.
        public func close() {
            let wasClosed = closed.withLock { closed in
                defer { closed = true }
                return closed
            }
            if !wasClosed { listener.close() }
        }
    }
}
