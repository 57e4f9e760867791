import Foundation
import Prefs
import PrefsSupport
import Synchronization

// MARK: - Change listener

extension PostgreSQLBackend {
    /// A wait for this namespace's notifications, heard by the pool's listening connection, so an observed store sees
    /// another instance's write as soon as its notification arrives; nil where the pool cannot listen (behind a pooler in
    /// transaction mode, on a standby, with ``PostgreSQLOptions/listens`` off): the store polls.
    package func makeChangeListener() -> (any BackendChangeListener)? {
        guard subscription != nil else { return nil }
        return waiters.makeWaiter()
    }

    /// Whether the pool's listening connection listens for this store now: another instance's write from here on is
    /// notified to it (until the connection breaks). Until then, such a write is seen at the next check: when the
    /// staleness bound passes, or the one that starting to listen asks for.
    var isListening: Bool {
        guard let subscription, let listener = pool.listener else { return false }
        return listener.isListening(subscription)
    }
}

/// The waits of one backend's observers, each woken by a notification for its namespace.
final class PostgreSQLChangeWaiters: Sendable {
    private let waiters = Locked<[ObjectIdentifier: PostgreSQLChangeWaiter]>([:])

    func makeWaiter() -> PostgreSQLChangeWaiter {
        let waiter = PostgreSQLChangeWaiter(owner: self)
        waiters.withLock { $0[ObjectIdentifier(waiter)] = waiter }
        return waiter
    }

    func signal() {
        for waiter in waiters.withLock({ Array($0.values) }) { waiter.signal() }
    }

    func remove(_ waiter: PostgreSQLChangeWaiter) {
        waiters.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    func closeAll() {
        let all = waiters.withLock { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in all { waiter.signal() }
    }
}

/// One observer's wait: returns as soon as a notification for the namespace arrived since the last wait.
// @unchecked Sendable: `signalled` is read and written under `condition`.
final class PostgreSQLChangeWaiter: BackendChangeListener, @unchecked Sendable {
    private let condition = NSCondition()
    private var signalled = false
    private weak var owner: PostgreSQLChangeWaiters?

    init(owner: PostgreSQLChangeWaiters) {
        self.owner = owner
    }

    func wait(upTo timeout: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout.timeInterval)
        while !signalled, condition.wait(until: deadline) {}
        defer { signalled = false }
        return signalled
    }

    func signal() {
        condition.withLock {
            signalled = true
            condition.broadcast()
        }
    }

    func close() {
        owner?.remove(self)
    }
}

/// A flag one thread raises and another takes down, without a lock: the listener's "the namespace's settings changed",
/// which every write looks at.
final class RaisedFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() {
        raised.store(true, ordering: .releasing)
    }

    /// Whether the flag was raised since the last take, lowering it.
    func take() -> Bool {
        raised.load(ordering: .relaxed) && raised.exchange(false, ordering: .acquiringAndReleasing)
    }
}
