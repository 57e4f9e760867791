import Foundation
import PrefsSupport

/// A pool's signalling connection and its thread: it `LISTEN`s for every namespace the pool's stores have open and tells
/// each store of its namespace's notifications, and it sends the notifications of the pool's own writes.
///
/// A write does not `NOTIFY` itself: PostgreSQL takes one lock for the whole cluster from a notifying transaction's
/// commit until it ends (so that notifications queue in commit order), which would make every writer of every
/// namespace wait for the others' commits. Instead, a write that committed asks for a notification here
/// (``notifyLater(_:except:addedInRound:)``): the other stores of this process are told at once, and this thread sends one
/// `pg_notify` per namespace for all the writes since its last (one short transaction, while the writers go on).
///
/// Notifications make stores fresher than their staleness bound, never the other way round: a store's reads check the
/// server once the bound has passed whatever arrives here. When the connection breaks, every store is told (a
/// notification may have been missed), and the thread connects again, with a growing pause while the server is away.
// @unchecked Sendable: the mutable fields are read and written under `lock`; `connection` is used by the thread alone.
final class PostgreSQLListener: @unchecked Sendable {
    /// What a store gives to be told: its namespace, and what to call for each notification.
    struct Subscriber {
        var namespace: String
        var notify: @Sendable (Event) -> Void
    }

    /// A notification for a namespace.
    enum Event {
        /// Another instance wrote, or another store of this process.
        case write
        /// The namespace's settings changed (its history retention): ``PostgreSQLStore/settingsPayload(for:)``.
        case settings
        /// Notifications may have been missed (the listening connection was made again).
        case missed
    }

    private weak var pool: PostgreSQLPool?
    /// Guards the state below. Unchecked exclusivity: it is read and written only while `lock` is held, so no two
    /// accesses overlap; checked, every write's notification paid runtime calls for them.
    private let lock = NSCondition()
    @exclusivity(unchecked) private var subscribers: [UInt64: Subscriber] = [:]
    private var nextID: UInt64 = 0
    /// Namespaces written by this process since the last notifications were sent.
    @exclusivity(unchecked) private var pending: Set<String> = []
    /// How many times ``pending`` was taken: a namespace added in the same round is still there.
    @exclusivity(unchecked) private var pendingRound: UInt64 = 0
    /// How many times notifications were asked for, and how many of those the thread has dealt with (sent, or given
    /// up on): ``flush(until:)`` waits for the second to reach the first.
    @exclusivity(unchecked) private var requested: UInt64 = 0
    @exclusivity(unchecked) private var handled: UInt64 = 0
    /// Set while ``flush(until:)`` waits: pending notifications go at once.
    @exclusivity(unchecked) private var flushing = false
    /// Set while the thread waits without a round open (nothing sent in the last interval, nothing pending): the next
    /// write wakes it. While a round is open, the thread wakes by itself when it is due, and writers do not wake it.
    @exclusivity(unchecked) private var idle = false
    /// The subscriptions the thread listens for now: their channels are listened to on its connection, and a
    /// notification arriving on it reaches them (``isListening(_:)``).
    private var listening: Set<UInt64> = []
    /// The least time between two sendings of notifications: the writes of that time share one `pg_notify` per
    /// namespace, so that a process writing in a loop does not double the server's work with notifications.
    static let notificationInterval: Duration = .milliseconds(5)
    /// $1 the channels, $2 their namespaces (the payload): one notification each.
    static let notifyStatement = PreparedSQL("SELECT pg_notify(c, n) FROM unnest($1::text[], $2::text[]) AS u(c, n)")
    /// The longest time between two sendings while a process writes on: a round that carried two writes or more
    /// doubles the next one's length, up to this; a round of one write (or none) brings it back to
    /// ``notificationInterval``. A write now and then is heard at once, one after another's notification within 5 ms
    /// (a write each time the last was seen), and a process writing thousands a second sends 25 notifications a
    /// second, not 200: every notification wakes every listening server process, and in a fleet writing one
    /// namespace every listening instance too.
    static let longestNotificationInterval: Duration = .milliseconds(40)
    private var running = false
    private var stopped = false
    /// Written to wake the thread when the channels to listen to change, a notification is to be sent, or to stop it.
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
        let id = lock.withLock { () -> UInt64 in
            nextID += 1
            subscribers[nextID] = subscriber
            return nextID
        }
        startOrPoke()
        return id
    }

    func unsubscribe(_ id: UInt64) {
        lock.withLock { _ = subscribers.removeValue(forKey: id) }
        poke()
    }

    /// Whether a notification sent from now on reaches subscription `id` (until the connection breaks): its channel is
    /// listened to, and the thread knows it. For tests, which wait for it before a write elsewhere that only a
    /// notification brings in time.
    func isListening(_ id: UInt64) -> Bool {
        lock.withLock { listening.contains(id) }
    }

    /// A write to `namespace` committed: tells the other stores of this process on that namespace now (all but the
    /// subscription `writer`), and other processes soon (the thread's next `pg_notify`).
    ///
    /// `addedInRound` is the writer's: the round in which it last added `namespace` to the pending notifications, so
    /// that a store writing in a loop does not hash its namespace into the set again at every write.
    func notifyLater(_ namespace: String, except writer: UInt64?, addedInRound: inout UInt64?) {
        let (local, wake) = lock.withLock { () -> ([Subscriber], Bool) in
            // The thread is woken only when it waits with no round open: otherwise it wakes by itself when the round
            // is due, and takes the notifications asked for meanwhile with it (a process writing in a loop wakes it
            // no more than once per round, and sends one notification per namespace per round).
            let wake = idle || !running
            idle = false
            if addedInRound != pendingRound {
                pending.insert(namespace)
                addedInRound = pendingRound
            }
            requested += 1
            var local: [Subscriber] = []
            for (id, subscriber) in subscribers where id != writer && subscriber.namespace == namespace { local.append(subscriber) }
            return (local, wake)
        }
        for subscriber in local { subscriber.notify(.write) }
        if wake { startOrPoke() }
    }

    /// Waits until the notifications asked for so far have been sent (or given up on), at most until `deadline`: a store
    /// that closes lets other processes hear of its last writes, even when its process ends right after.
    func flush(until deadline: ContinuousClock.Instant) {
        lock.lock()
        defer {
            flushing = false
            lock.unlock()
        }
        let target = requested
        if handled < target {
            flushing = true
            poke()
        }
        while handled < target, running {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return }
            _ = lock.wait(until: Date(timeIntervalSinceNow: remaining.timeInterval))
        }
    }

    /// Ends the thread (the pool is going away).
    func stop() {
        lock.withLock { stopped = true }
        poke()
    }

    private func startOrPoke() {
        let start = lock.withLock { () -> Bool in
            guard !running, !stopped else { return false }
            running = true
            return true
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "PrefsPostgreSQL.signals"
            thread.start()
        } else {
            poke()
        }
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
        var lastSent = ContinuousClock.now - Self.longestNotificationInterval
        var interval = Self.notificationInterval
        // `requested` when the last notifications were taken: the writes a round carried are the difference.
        var lastTaken: UInt64 = 0
        var wantedIDs: Set<UInt64> = []
        defer { connection?.close() }
        while true {
            // Notifications wait for the interval since the last were sent, gathering the writes of that time.
            let due = lastSent + interval
            let (wanted, toSend, taken, stop) = lock.withLock { () -> ([String: [Subscriber]], Set<String>, UInt64, Bool) in
                wantedIDs = Set(subscribers.keys)
                if stopped || (subscribers.isEmpty && pending.isEmpty) {
                    running = false
                    handled = requested
                    listening = []
                    lock.broadcast()
                    return ([:], [], 0, true)
                }
                var wanted: [String: [Subscriber]] = [:]
                for subscriber in subscribers.values {
                    wanted[PostgreSQLStore.notificationChannel(for: subscriber.namespace), default: []].append(subscriber)
                }
                guard ContinuousClock.now >= due || flushing else { return (wanted, [], handled, false) }
                defer {
                    pending = []
                    pendingRound &+= 1
                }
                return (wanted, pending, requested, false)
            }
            if stop { return }
            if !toSend.isEmpty {
                lastSent = .now
                interval = taken - lastTaken >= 2 ? min(interval * 2, Self.longestNotificationInterval) : Self.notificationInterval
                lastTaken = taken
            }
            // The notifications taken are dealt with: sent, or given up on with the connection.
            func done() {
                lock.withLock {
                    handled = max(handled, taken)
                    lock.broadcast()
                }
            }
            // Connected, and listening to exactly the channels wanted.
            if connection == nil || !(connection?.isHealthy ?? false) {
                connection?.close()
                connection = nil
                listened = []
                lock.withLock { listening = [] }
                guard let fresh = connect() else {
                    // The notifications to send are dropped: the stores of other processes see these writes at their
                    // next check.
                    done()
                    sleepUnlessWoken(pause)
                    pause = min(pause * 2, .seconds(5))
                    continue
                }
                connection = fresh
                pause = .milliseconds(50)
                // Anything may have happened while nobody listened.
                for subscriber in wanted.values.joined() { subscriber.notify(.missed) }
            }
            guard let current = connection else {
                done()
                continue
            }
            let added = Set(wanted.keys).subtracting(listened), removed = listened.subtracting(wanted.keys)
            // Whether a statement ran on the connection this time round: reading its answer may have read other
            // sessions' notifications into libpq's buffer too, where poll(2) on the socket cannot see them.
            var ranStatement = false
            do {
                if !added.isEmpty || !removed.isEmpty {
                    let script =
                        added.sorted().map { "LISTEN \(PostgreSQLConnection.quotedIdentifier($0))" }
                        + removed.sorted().map { "UNLISTEN \(PostgreSQLConnection.quotedIdentifier($0))" }
                    ranStatement = true
                    try current.executeScript(script.joined(separator: "; "), deadline: deadline(), operation: "listening for changes")
                    listened = Set(wanted.keys)
                    // A write made while the channel was not yet listened to sent nothing this connection heard.
                    for channel in added { for subscriber in wanted[channel] ?? [] { subscriber.notify(.missed) } }
                }
                if !toSend.isEmpty {
                    // The notifications of this process's writes, one per namespace.
                    let namespaces = toSend.sorted()
                    ranStatement = true
                    try current.execute(
                        Self.notifyStatement,
                        [PostgreSQLBackend.arrayLiteral(namespaces.map(PostgreSQLStore.notificationChannel)), PostgreSQLBackend.arrayLiteral(namespaces)],
                        deadline: deadline(), operation: "notifying")
                }
            } catch {
                done()
                current.close()
                continue
            }
            done()
            // Those are told now: waiting first would leave them unread until the next byte on the socket, up to the
            // idle wait (10 s) when nothing else comes.
            if ranStatement, !deliverNotifications(on: current, to: wanted) {
                current.close()
                continue
            }
            guard let socket = current.socket else { continue }
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            // A round is open while notifications wait, or were sent in the last interval: the thread wakes when it is
            // due (writes meanwhile do not wake it). Otherwise it waits for a write, a notification, or a change of
            // channels.
            let roundOpen = lock.withLock { () -> Bool in
                listening = wantedIDs
                let open = !pending.isEmpty || ContinuousClock.now < lastSent + interval
                idle = !open
                return open
            }
            let timeout = roundOpen ? max(1, Int32(clamping: (lastSent + interval - .now).milliseconds + 1)) : 10_000
            _ = poll(&descriptors, 2, timeout)
            if descriptors[1].revents != 0 { drainWake() }
            if !deliverNotifications(on: current, to: wanted) { current.close() }
        }
    }

    /// Reads what the server sent without waiting, and tells each subscriber of a notification's channel of another
    /// session's write (or settings change) to its namespace. False when the connection failed.
    private func deliverNotifications(on connection: PostgreSQLConnection, to wanted: [String: [Subscriber]]) -> Bool {
        guard let notifications = try? connection.notifications(operation: "listening for changes") else { return false }
        let own = connection.backendPID
        for notification in notifications where notification.pid != own {  // this process's own: told already
            for subscriber in wanted[notification.channel] ?? [] {
                if subscriber.namespace == notification.payload {
                    subscriber.notify(.write)
                } else if PostgreSQLStore.settingsPayload(for: subscriber.namespace) == notification.payload {
                    subscriber.notify(.settings)
                }
            }
        }
        return true
    }

    /// The signalling connection. Its notifications need no durability (a lost one costs a store a wait until its next
    /// check): without `synchronous_commit`, the server's one lock for notifying transactions is held for moments.
    private func connect() -> PostgreSQLConnection? {
        guard let pool, let connection = try? pool.makeConnection(deadline: deadline(), signals: true) else { return nil }
        // There is a signalling connection only without a pooler in transaction mode: its session is its own, and the
        // notifying statement is planned once.
        connection.preparesStatements = true
        guard (try? connection.executeScript("SET synchronous_commit = off", deadline: deadline(), operation: "setting up notifications")) != nil else {
            connection.close()
            return nil
        }
        return connection
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
