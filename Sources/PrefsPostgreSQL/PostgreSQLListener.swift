import Foundation
import PrefsSupport

/// The one connection of a pool that `LISTEN`s, for every namespace its stores have open, and a thread that waits on
/// it in `poll(2)` and tells each store of its namespace's notifications.
///
/// Notifications make stores fresher than their staleness bound, never the other way round: a store's reads check the
/// server once the bound has passed whatever arrives here. When the connection breaks, every store is told (a
/// notification may have been missed), and the thread connects again, with a growing pause while the server is away.
// @unchecked Sendable: the mutable fields are read and written under `lock`; `connection` is used by the thread alone.
final class PostgreSQLListener: @unchecked Sendable {
    /// What a store gives to be told: its namespace, and what to call with the server process that sent each
    /// notification (nil when notifications may have been missed).
    struct Subscriber {
        var namespace: String
        var notify: @Sendable (_ senderPID: Int32?) -> Void
    }

    private weak var pool: PostgreSQLPool?
    private let lock = NSLock()
    private var subscribers: [UInt64: Subscriber] = [:]
    private var nextID: UInt64 = 0
    private var running = false
    private var stopped = false
    /// Written to wake the thread when the channels to listen to change, or to stop it.
    private let wake: (read: Int32, write: Int32)

    init(pool: PostgreSQLPool) {
        self.pool = pool
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) == 0 {
            for descriptor in descriptors { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
            for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        wake = (descriptors[0], descriptors[1])
    }

    deinit {
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Starts telling `subscriber` of its namespace's notifications; returns the id to ``unsubscribe(_:)`` with. The
    /// channel is listened to before long, not before this returns: the store's staleness check covers the moments
    /// in between.
    func subscribe(_ subscriber: Subscriber) -> UInt64 {
        let (id, start) = lock.withLock { () -> (UInt64, Bool) in
            nextID += 1
            subscribers[nextID] = subscriber
            let start = !running && !stopped
            if start { running = true }
            return (nextID, start)
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "PrefsPostgreSQL.listener"
            thread.start()
        } else {
            poke()
        }
        return id
    }

    func unsubscribe(_ id: UInt64) {
        lock.withLock { _ = subscribers.removeValue(forKey: id) }
        poke()
    }

    /// Ends the thread (the pool is going away).
    func stop() {
        lock.withLock { stopped = true }
        poke()
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    // MARK: - The thread

    private func run() {
        var connection: PostgreSQLConnection?
        var listened: Set<String> = []
        var pause: Duration = .milliseconds(50)
        defer { connection?.close() }
        while true {
            let (wanted, stop) = lock.withLock { () -> ([String: [Subscriber]], Bool) in
                if stopped || subscribers.isEmpty {
                    running = false
                    return ([:], true)
                }
                var wanted: [String: [Subscriber]] = [:]
                for subscriber in subscribers.values {
                    wanted[PostgreSQLStore.notificationChannel(for: subscriber.namespace), default: []].append(subscriber)
                }
                return (wanted, false)
            }
            if stop { return }
            // Connected, and listening to exactly the channels wanted.
            if connection == nil || !(connection?.isHealthy ?? false) {
                connection?.close()
                connection = nil
                listened = []
                guard let fresh = connect() else {
                    sleepUnlessWoken(pause)
                    pause = min(pause * 2, .seconds(5))
                    continue
                }
                connection = fresh
                pause = .milliseconds(50)
                // Anything may have happened while nobody listened.
                for subscriber in wanted.values.joined() { subscriber.notify(nil) }
            }
            guard let current = connection else { continue }
            let added = Set(wanted.keys).subtracting(listened), removed = listened.subtracting(wanted.keys)
            if !added.isEmpty || !removed.isEmpty {
                let script =
                    added.sorted().map { "LISTEN \(PostgreSQLConnection.quotedIdentifier($0))" }
                    + removed.sorted().map { "UNLISTEN \(PostgreSQLConnection.quotedIdentifier($0))" }
                do {
                    try current.executeScript(script.joined(separator: "; "), deadline: deadline(), operation: "listening for changes")
                    listened = Set(wanted.keys)
                    // A write made while the channel was not yet listened to sent nothing this connection heard.
                    for channel in added { for subscriber in wanted[channel] ?? [] { subscriber.notify(nil) } }
                } catch {
                    current.close()
                    continue
                }
            }
            guard let socket = current.socket else { continue }
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            _ = poll(&descriptors, 2, 10_000)
            if descriptors[1].revents != 0 { drainWake() }
            guard let notifications = try? current.notifications(operation: "listening for changes") else {
                current.close()
                continue
            }
            for notification in notifications {
                for subscriber in wanted[notification.channel] ?? [] where subscriber.namespace == notification.payload {
                    subscriber.notify(notification.pid)
                }
            }
        }
    }

    private func connect() -> PostgreSQLConnection? {
        guard let pool else { return nil }
        return try? pool.makeConnection(deadline: deadline())
    }

    private func deadline() -> ContinuousClock.Instant {
        ContinuousClock.now + (pool?.options.timeout ?? .seconds(5))
    }

    private func sleepUnlessWoken(_ duration: Duration) {
        var descriptor = pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, Int32(clamping: duration.milliseconds)) > 0 { drainWake() }
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &buffer, buffer.count) > 0 {}
    }
}
