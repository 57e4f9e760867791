import Foundation
import Prefs
import Synchronization

// Backends written on the public protocols only (this file imports no tooling API), for the seam's tests.

/// Values in a dictionary that every backend opened on the same name in this process shares, as a database server's
/// clients share its tables; `transactional` adds a writer lock they share (``Prefs/TransactionalBackend``).
final class SharedValuesBackend: Prefs.TransactionalBackend {
    /// What every backend on one name shares. `writer` is held from `beginTransaction()` to its end.
    final class Shared: Sendable {
        let writer = NSLock()
        let state = Mutex<(values: [String: StoredValue], generation: UInt64)>(([:], 0))
        /// Every call the store made to a backend on this name, in order, for the tests that check which calls it makes.
        let calls = Mutex<[String]>([])
    }

    private static let registry = Mutex<[String: Shared]>([:])
    private let name: String
    private let shared: Shared
    /// The generation this backend last saw, for `refresh()`.
    private var seen: UInt64
    private var writing = false

    init(name: String) {
        self.name = name
        shared = Self.registry.withLock { registry in
            if let existing = registry[name] { return existing }
            let created = Shared()
            registry[name] = created
            return created
        }
        seen = shared.state.withLock { $0.generation }
    }

    var description: String { ".sharedValues(\(name.debugDescription))" }

    /// The calls made to the backends on `name`.
    static func calls(on name: String) -> [String] {
        registry.withLock { $0[name]?.calls.withLock { $0 } ?? [] }
    }

    private func record(_ call: String) {
        shared.calls.withLock { $0.append(call) }
    }

    func value(forKey key: String) -> StoredValue? {
        shared.state.withLock { $0.values[key] }
    }

    func allValues() -> [String: StoredValue] {
        record("allValues")
        return shared.state.withLock { $0.values }
    }

    func refresh() -> Bool {
        record("refresh")
        let generation = shared.state.withLock { $0.generation }
        defer { seen = generation }
        return generation != seen
    }

    func beginTransaction() {
        record("begin")
        shared.writer.lock()
        writing = true
    }

    func commitTransaction(_ changes: Prefs.Changes) {
        record("commitTransaction(\(changes.values.count + changes.removals.count))")
        shared.state.withLock { state in
            changes.apply(to: &state.values)
            state.generation &+= 1
        }
        endTransaction()
    }

    func rollbackTransaction() {
        record("rollback")
        endTransaction()
    }

    func close() { endTransaction() }

    private func endTransaction() {
        guard writing else { return }
        writing = false
        shared.writer.unlock()
    }
}

/// A backend with the core only: values in a box that the backends made by one storage share, no writer lock, no
/// outside changes. It records its calls, and can be told to fail.
final class PlainBackend: Prefs.Backend {
    /// The values and calls of every backend a storage makes.
    final class Box: Sendable {
        let values = Mutex<[String: StoredValue]>([:])
        let calls = Mutex<[String]>([])
        /// The error the next commit throws, once.
        let failNextCommit = Mutex<(any Error & Sendable)?>(nil)
    }

    let box: Box

    init(_ box: Box) {
        self.box = box
    }

    var description: String { ".plain" }

    func allValues() -> [String: StoredValue] {
        box.calls.withLock { $0.append("allValues") }
        return box.values.withLock { $0 }
    }

    func commit(_ changes: Prefs.Changes) throws {
        box.calls.withLock { $0.append("commit(\(changes.values.keys.sorted()), removing \(changes.removals.sorted()))") }
        let failure = box.failNextCommit.withLock { failure in
            defer { failure = nil }
            return failure
        }
        if let failure { throw failure }
        box.values.withLock { changes.apply(to: &$0) }
    }
}

/// A backend that loses one change of every commit of more than one (the alphabetically first key set): the
/// conformance suite must fail on it.
final class DroppingBackend: Prefs.Backend {
    private var values: [String: StoredValue] = [:]

    var description: String { ".dropping" }

    func allValues() -> [String: StoredValue] { values }

    func commit(_ changes: Prefs.Changes) {
        var kept = Prefs.Changes()
        let dropped = changes.values.count + changes.removals.count > 1 ? changes.values.keys.min() : nil
        for (key, value) in changes.values where key != dropped { kept.set(value, forKey: key) }
        for key in changes.removals { kept.remove(key) }
        kept.apply(to: &values)
    }
}
