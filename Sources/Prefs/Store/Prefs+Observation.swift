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
    ///
    /// By default a stream is coalescing, as a UI wants: when changes come faster than the loop takes them, it yields
    /// the latest value, so it may skip values in between (never the last, and never out of order). With
    /// `lossless: true` it yields every value this process commits for the key, in commit order, buffering what the
    /// loop has not taken yet; another process's changes arrive as each look at the store finds them (the state a
    /// poll or a transaction sees, not every write in between).
    ///
    /// ```swift
    /// for await count in prefs.values(for: .launchCount, lossless: true) { audit(count) }   // 1, 2, 3, …: none skipped
    /// ```
    public func values<Value: PrefsStorable>(for key: Key<Value>, lossless: Bool = false) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let observer = Observer(keys: [key], isLossless: lossless, finish: { continuation.finish() }) { [weak self] stored in
            continuation.yield(self?.decodeForObserver(stored[0], key: key) ?? key.initial)
        }
        let registered = register(observer)
        continuation.onTermination = { [weak self] _ in self?.unregister(observer) }
        deliverFirst(observer)
        if !registered { continuation.finish() }  // closed: the current value, then the end, as for a stream open at close()
        return stream
    }

    /// The values of several keys at once, as one tuple: the current values first, then a new tuple after each change
    /// to any of them (one for a transaction that changes several), as ``values(for:lossless:)->AsyncStream<Value>`` gives one key's.
    ///
    /// ```swift
    /// for await (count, name) in prefs.values(for: .launchCount, .username) { print(count, name ?? "-") }
    /// ```
    public func values<each Value: PrefsStorable>(for keys: repeat Key<each Value>, lossless: Bool = false) -> AsyncStream<(repeat each Value)> {
        let (stream, continuation) = AsyncStream.makeStream(of: (repeat each Value).self)
        var names: [Keys] = []
        for key in repeat each keys { names.append(key) }
        let tuple = (repeat each keys)
        let observer = Observer(keys: names, isLossless: lossless, finish: { continuation.finish() }) { [weak self] stored in
            var index = 0
            func decode<Element: PrefsStorable>(_ key: Key<Element>) -> Element {
                defer { index += 1 }
                return self?.decodeForObserver(stored[index], key: key) ?? key.initial
            }
            continuation.yield((repeat decode(each tuple)))
        }
        let registered = register(observer)
        continuation.onTermination = { [weak self] _ in self?.unregister(observer) }
        deliverFirst(observer)
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
    /// Made on the main actor, it notifies on the main actor. Several keys are observed as one registration by reading
    /// each one's `value` in the same `withObservationTracking` (or the `@Pref` properties of one model in a SwiftUI
    /// view's body): `onChange` is called once, at the first change to any of them.
    public func observable<Value: PrefsStorable>(_ key: Key<Value>, isolation: isolated (any Actor)? = #isolation) -> ObservableValue<Value> {
        ObservableValue(prefs: self, key: key, onMainActor: isolation === MainActor.shared)
    }

    /// Runs `body`, whose writes to this store (subscript, `set`, `update`, `transaction`, `reset`, made by this thread
    /// before `body` returns) notify none of this store's observers in this process: no ``values(for:lossless:)->AsyncStream<Value>``
    /// stream yields them, no ``ObservableValue`` or ``Pref`` calls `onChange`, as Defaults' `withoutPropagation`. The
    /// observers take the written values as seen, so a later change does not bring them up either. Other processes'
    /// observers see the change as usual, and so do other stores on the same file.
    ///
    /// ```swift
    /// for await volume in prefs.values(for: .volume) {
    ///     prefs.withoutNotifyingObservers { prefs[.volume] = min(volume, 1) }   // no echo of the clamp
    /// }
    /// ```
    public func withoutNotifyingObservers<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        var silenced = Self.silencedStores
        silenced.insert(ObjectIdentifier(self))
        // `withValue` rethrows untyped: carry the body's typed error out in a `Result`.
        let outcome = Self.$silencedStores.withValue(silenced) { Swift.Result { () throws(Failure) in try body() } }
        return try outcome.get()
    }

    /// The stores whose observers the running code's writes do not notify (``withoutNotifyingObservers(_:)``).
    @TaskLocal static var silencedStores: Set<ObjectIdentifier> = []

    /// Whether writes the running code makes notify this store's observers.
    var notifiesObservers: Bool {
        !Self.silencedStores.contains(ObjectIdentifier(self))
    }

    func decodeForObserver<Value: PrefsStorable>(_ stored: StoredValue?, key: Key<Value>) -> Value {
        guard let stored else { return key.initial }
        do {
            return try key.decode(stored)
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
            state.observers.add(observer)
            for key in observer.keys { state.noteKnown(key, declared: false) }
            return .some(state.refresher.start())
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

    /// Delivers (or notes, for an observer that does not deliver it) the current value to a new observer. A lossless
    /// observer's deliveries happen under the backend lock, in commit order, so its first one does too.
    func deliverFirst(_ observer: Observer) {
        guard observer.isLossless else { return observer.update(from: self) }
        do {
            try io.withBackendAllowingReentry { _ in observer.update(from: self) }
        } catch {
            observer.update(from: self)  // closed: nothing commits any more; the value a closed store reads
        }
    }

    /// Ends every observation: called when the store is closed or released, so `for await` loops over
    /// ``values(for:lossless:)->AsyncStream<Value>`` end instead of waiting for ever.
    func finishObservers() {
        let observers = state.withLock { state in
            state.refresher.stop()
            return state.observers.removeAll()
        }
        for observer in observers { observer.finish?() }
    }

    func unregister(_ observer: Observer) {
        state.withLock { state in
            state.observers.remove(observer)
            if state.observers.isEmpty { state.refresher.stop() }
        }
    }

    /// The stored values of `keys` now, read at one cache generation (so a commit that changes two of them is never
    /// seen half done), and that generation. A key that a launch argument names has the argument's value instead, in
    /// the key's stored form, as its reads do (unless the key cannot read it: then it is ignored, as by reads).
    func currentStored(_ keys: [Keys]) -> ([StoredValue?], UInt64) {
        var attempt = 0
        while true {
            let (before, arguments) = state.withLock { ($0.cache.generation, $0.closed ? [:] : $0.arguments) }
            var values = keys.map { cachedSlot(for: $0).stored }
            if !arguments.isEmpty {
                for (index, key) in keys.enumerated() {
                    guard let argument = arguments[key.name] else { continue }
                    do {
                        values[index] = try key.readArgument(argument)
                    } catch {
                        reportIgnoredArgument(error, key: key.name)
                    }
                }
            }
            let after = state.withLock { $0.cache.generation }
            attempt += 1
            if before == after || attempt == 8 { return (values, after) }
        }
    }

}

// MARK: - Waiting for another process's change, for tools

extension Prefs {
    /// A way to wait for another process's change to this store, when its backend signals changes (PostgreSQL's
    /// `LISTEN`/`NOTIFY`); nil when changes can only be polled (the file stores). `prefs-tool watch` waits on it between
    /// two checks, so it sees a change when it is made instead of at its next interval.
    package func makeChangeSignal() -> ChangeSignal? {
        ((try? io.withBackendAllowingReentry { backend in backend.makeChangeListener() }) ?? nil).map(ChangeSignal.init)
    }

    /// Signals of another process's change to one store (see ``Prefs/makeChangeSignal()``), on a connection of its own.
    /// Used by one thread at a time.
    // @unchecked Sendable: handed between the threads that take turns waiting on it, never used by two at once.
    package final class ChangeSignal: @unchecked Sendable {
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
