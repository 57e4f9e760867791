import Foundation
import Observation
import PrefsSupport

/// One key of a ``Prefs`` store as an `Observable` object, for UI binding, and the projected value of ``Pref``.
///
/// `value` reads through the store's cache and is tracked by the Observation framework; a change from
/// this or another process calls the `onChange` of every `withObservationTracking` that read it, once per change.
/// Notifications arrive on the main actor (the main queue) when the object was made there (as a view model's is), and
/// on a serial queue of the store's otherwise; never under the store's locks, so an `onChange` may use the store freely.
///
/// ```swift
/// let count = prefs.observable(.launchCount)
/// withObservationTracking { _ = count.value } onChange: { print("changed") }
/// try count.set(3)           // throws where `count.value = 3` reports a diagnostic
/// try await count.write(4)   // does its I/O off the caller's actor
/// count.lookup.isStored      // true
/// ```
///
/// `Value` is a ``PrefsStorable`` type, as the key's; the class does not require it itself, so that the runtime makes
/// `ObservableValue<T>` (or `Pref<T>`) from its name, as reflection over a view's fields does, without searching the
/// process's conformance tables (see ``Prefs/Key``).
public final class ObservableValue<Value>: Observable, Sendable {
    public let prefs: Prefs
    public let key: Prefs.Key<Value>
    private let registrar = ObservationRegistrar()
    /// Where change notifications are delivered: the main queue, or the store's serial queue for them.
    let queue: DispatchQueue
    private let subscription = Locked<Prefs.Observer?>(nil)
    /// The store's subscript for the key, made where `Value` is known to be ``PrefsStorable``.
    private let read: @Sendable () -> Value
    private let write: @Sendable (Value) -> Void

    init(prefs: Prefs, key: Prefs.Key<Value>, onMainActor: Bool) where Value: PrefsStorable {
        self.prefs = prefs
        self.key = key
        read = { prefs[key] }
        write = { prefs[key] = $0 }
        queue = onMainActor ? .main : prefs.observationQueue
        let observer = Prefs.Observer(keys: [key], deliversInitialValue: false) { [weak self] _ in
            guard let self else { return }
            self.queue.async {
                self.registrar.withMutation(of: self, keyPath: \.value) {}
            }
        }
        subscription.withLock { $0 = observer }
        prefs.register(observer)
        observer.update(from: prefs)
    }

    deinit {
        if let observer = subscription.withLock({ $0 }) { prefs.unregister(observer) }
    }

    /// The key's current value; setting writes it through the store (a failure becomes a ``Prefs/Diagnostic``).
    public var value: Value {
        get {
            registrar.access(self, keyPath: \.value)
            return read()
        }
        set {
            write(newValue)
        }
    }
}

extension ObservableValue where Value: PrefsStorable {
    /// The key's value, telling a stored value apart from the initial value (see ``Prefs/lookup(_:)``).
    public var lookup: Prefs.Lookup<Value> {
        registrar.access(self, keyPath: \.value)
        return prefs.lookup(key)
    }

    /// Writes `newValue`, throwing what ``value``'s setter reports (see ``Prefs/set(_:for:)-(_,Prefs.Key<Value>)``).
    public func set(_ newValue: Value) throws(PrefsError) {
        try prefs.set(newValue, for: key)
    }

    /// Writes `newValue` off the caller's thread or actor; see ``Prefs/write(_:for:)``.
    public func write(_ newValue: Value) async throws(PrefsError) {
        try await prefs.write(newValue, for: key)
    }

    /// Changes the value atomically; see ``Prefs/update(_:_:)``, which throws as this does.
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) throws -> Result {
        try prefs.update(key, body)
    }

    /// Removes the stored value, so the key reads its initial value.
    public func reset() throws(PrefsError) {
        try prefs.reset(key)
    }
}
