import Synchronization

/// How often stores took the long way to check their files (a `stat` or `fstat` of the snapshot, SQLite's
/// `SQLITE_FCNTL_HAS_MOVED`) and how often a watch vouched for them instead: for tests that prove the fast path is taken.
package enum FileChecks {
    /// Checks that looked at the files' status.
    package static let slow = Atomic<Int>(0)
    /// Checks a watch answered (see `FileReplacementWatch`).
    package static let fast = Atomic<Int>(0)
}

#if os(Linux)
import Glibc
import PrefsSupport

/// Tells a JSON store's writer, without a system call of its own, that nothing but appends touched its snapshot or its
/// journal since it last checked them (and an SQLite store's, that its database was not removed, renamed or replaced;
/// see ``watch(fileAt:)``): watches on the two files it holds open (by their descriptors, `/proc/self/fd/N`, so the
/// watch is on exactly those inodes) for a removal, a rename, a change of link count or attributes, and, on the
/// snapshot, any write. Appends to the journal are not watched (this writer makes them); their size is read with `lseek`.
///
/// The watches are on the process's one inotify instance (``FileWatcher``), shared by every store: a user has 128
/// instances by default, for all their programs. Checking is an `ioctl(FIONREAD)` on it that finds no event queued
/// and a load of this watch's change count, which the instance's reader bumps for each event on its files. An event,
/// an overflow of the queue, or any failure means "look again the long way"; the watch is then set up again on
/// whatever files the long way finds. Without inotify (or `/proc`), or past the system's limits, there is no watch,
/// and every check is the long way.
///
/// Used by one thread at a time (its store's).
final class FileReplacementWatch {
    private let watcher: FileWatcher
    private let subscriber = FileWatcher.Subscriber()
    /// The watch descriptors this watch added, on the shared instance.
    private var watches: [Int32] = []
    /// The subscriber's change count when the watches were set up.
    private var armed: UInt64 = 0
    /// The files watched, while the watch vouches for them.
    private(set) var watched: [FileIdentity]?

    /// A watch on the process's instance; nil when there is none (the system's limit of instances is reached).
    init?(watcher: FileWatcher = .shared) {
        guard watcher.isAvailable() else { return nil }
        self.watcher = watcher
    }

    deinit { stop() }

    /// Whether nothing happened to the watched files since ``watch(snapshot:journal:)``. After an event, the watch
    /// vouches for nothing until it is set up again.
    func isQuiet() -> Bool {
        guard watched != nil else { return false }
        if watcher.isQuiet(subscriber, since: armed) {
            FileChecks.fast.add(1, ordering: .relaxed)
            return true
        }
        watched = nil  // an event, or a failure, which vouches for nothing either
        return false
    }

    /// Watches the files open at `snapshot` and `journal` from now on, forgetting earlier watches and events. A change
    /// made to them before this call is not reported: the caller checks the files after it. Throws (having set up
    /// nothing) when the system's limit of watches is reached.
    func watch(snapshot: (Int32, FileIdentity), journal: (Int32, FileIdentity)) throws(FileWatcher.Unavailable) {
        stop()
        let common = UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
        for (fd, mask) in [(snapshot.0, common | UInt32(IN_MODIFY)), (journal.0, common)] {
            switch watcher.add(subscriber, path: "/proc/self/fd/\(fd)", mask: mask) {
            case .success(let watch): watches.append(watch)
            case .failure(let failure):
                stop()
                guard case .ignored = failure else { throw failure }
                return
            }
        }
        armed = subscriber.changes.load(ordering: .sequentiallyConsistent)
        watched = [snapshot.1, journal.1]
    }

    /// Watches the file `path` names now (an SQLite store's database) for a removal, a rename or a change of link
    /// count or attributes, forgetting earlier watches and events; writes to it, by this process or another, are not
    /// watched. The caller then checks that `path` still names the file it uses, and trusts ``isQuiet()`` from there:
    /// a replacement made between this call and that check changes the watched file's link count, which is an event.
    /// Throws (having set up nothing) when the system's limit of watches is reached.
    func watch(fileAt path: String) throws(FileWatcher.Unavailable) {
        stop()
        // A link put at the path is watched as a link, never followed: the check after this call then finds the path
        // no longer names the file in use.
        let mask = UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) | UInt32(IN_DONT_FOLLOW)
        switch watcher.add(subscriber, path: path, mask: mask) {
        case .success(let watch): watches.append(watch)
        case .failure(.ignored): return
        case .failure(let failure): throw failure
        }
        armed = subscriber.changes.load(ordering: .sequentiallyConsistent)
        watched = []
    }

    /// Removes the watches: the shared instance stops watching a file no store watches any more.
    func stop() {
        watched = nil
        guard !watches.isEmpty else { return }
        watcher.remove(subscriber, watches)
        watches = []
    }
}

/// The process's one inotify instance, on which every store's ``FileReplacementWatch`` adds its watches: a user's
/// instances are few (128 by default, `fs.inotify.max_user_instances`) and shared by all their programs, so a process
/// with hundreds of stores takes one, not one a store. Made when a store first watches a file.
///
/// Events are read on demand, by whichever store checks while some are queued: a check is an `ioctl(FIONREAD)` that
/// finds none (and no read under way) and a load of the store's change count. Reading them under the lock, the reader
/// bumps the change count of every store watching the file an event is for; an overflow of the queue bumps every
/// store's, and a watch the kernel dropped (`IN_IGNORED`) its stores'. No thread: an event another process caused is
/// queued before its system call returns, so a check after it (after that process released the store's lock) sees it
/// queued or already counted.
final class FileWatcher: Sendable {
    static let shared = FileWatcher()

    /// One store's view of the instance: a count of the events on its files.
    final class Subscriber: Sendable {
        let changes = Atomic<UInt64>(0)
    }

    /// Why a watch could not be set up.
    enum Unavailable: Error, Equatable {
        /// The system's limit: of instances (`EMFILE`: `fs.inotify.max_user_instances`, or the process's descriptors)
        /// or of watches (`ENOSPC`: `fs.inotify.max_user_watches`).
        case limit(errno: Int32)
        /// Anything else (the file is gone, no `/proc`): this time only; the caller looks the long way.
        case ignored
    }

    private struct Entry {
        let subscriber: Subscriber
        var mask: UInt32
        var count: Int
    }

    private struct State {
        var descriptor: Int32 = -1
        /// Why the instance could not be made, while it could not.
        var failure: Int32?
        /// The stores watching each watch descriptor, by subscriber.
        var watches: [Int32: [ObjectIdentifier: Entry]] = [:]
    }

    private let state = Locked(State())
    /// The instance's descriptor once made (-1 before), read by checks without the lock.
    private let descriptor = Atomic<Int32>(-1)
    /// Odd while events are read and counted: a check that sees the queue empty then counts for nothing.
    private let readEpoch = Atomic<UInt64>(0)
    /// The first time the system's limit was hit, for the one diagnostic a process gives (``takeLimitReport()``).
    private let limitReported = Atomic<Bool>(false)

    init() {}

    deinit {
        let fd = descriptor.load(ordering: .sequentiallyConsistent)
        if fd >= 0 { close(fd) }
    }

    /// Whether the instance exists, making it if needed. False when the system refuses one (its limit of instances).
    func isAvailable() -> Bool {
        state.withLock { state in makeIfNeeded(&state) == nil }
    }

    /// The number of watches on the instance: one for each file some store watches.
    var watchCount: Int { state.withLock { $0.watches.count } }

    /// The instance's descriptor, -1 while none was made.
    var instanceDescriptor: Int32 { descriptor.load(ordering: .sequentiallyConsistent) }

    private func makeIfNeeded(_ state: inout State) -> Int32? {
        guard state.descriptor < 0 else { return nil }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            state.failure = errno
            return errno
        }
        state.descriptor = fd
        state.failure = nil
        descriptor.store(fd, ordering: .sequentiallyConsistent)
        return nil
    }

    /// Watches the file at `path` for `mask` on behalf of `subscriber`; returns the watch descriptor to give back to
    /// ``remove(_:_:)``. A file another store watches already is the same watch, its mask widened (`IN_MASK_ADD`):
    /// events outside a store's own mask are not counted for it.
    func add(_ subscriber: Subscriber, path: String, mask: UInt32) -> Result<Int32, Unavailable> {
        state.withLock { state in
            if let code = makeIfNeeded(&state) { return .failure(.limit(errno: code)) }
            let watch = inotify_add_watch(state.descriptor, path, mask | UInt32(IN_MASK_ADD))
            guard watch >= 0 else { return .failure(errno == ENOSPC ? .limit(errno: ENOSPC) : .ignored) }
            let own = mask & 0x0000_0FFF  // the events (IN_ALL_EVENTS), without the flags
            state.watches[watch, default: [:]][ObjectIdentifier(subscriber), default: Entry(subscriber: subscriber, mask: 0, count: 0)].mask |= own
            state.watches[watch]?[ObjectIdentifier(subscriber)]?.count += 1
            return .success(watch)
        }
    }

    /// Gives back `watches` that ``add(_:path:mask:)`` returned for `subscriber`; a file no store watches any more is
    /// no longer watched.
    func remove(_ subscriber: Subscriber, _ watches: [Int32]) {
        state.withLock { state in
            let key = ObjectIdentifier(subscriber)
            for watch in watches {
                guard var entries = state.watches[watch], var entry = entries[key] else { continue }  // the kernel dropped it
                entry.count -= 1
                entries[key] = entry.count > 0 ? entry : nil
                if entries.isEmpty {
                    state.watches[watch] = nil
                    inotify_rm_watch(state.descriptor, watch)
                } else {
                    state.watches[watch] = entries
                }
            }
        }
    }

    /// Whether no event for `subscriber`'s files happened since its change count was `armed`: no event queued and none
    /// being read, else the queued ones read and counted first.
    func isQuiet(_ subscriber: Subscriber, since armed: UInt64) -> Bool {
        let fd = descriptor.load(ordering: .sequentiallyConsistent)
        guard fd >= 0 else { return false }
        let epoch = readEpoch.load(ordering: .sequentiallyConsistent)
        var queued: Int32 = 0
        if epoch & 1 == 0, ioctl(fd, UInt(FIONREAD), &queued) == 0, queued == 0,
            subscriber.changes.load(ordering: .sequentiallyConsistent) == armed,
            readEpoch.load(ordering: .sequentiallyConsistent) == epoch
        {
            return true
        }
        guard readEvents() else { return false }
        return subscriber.changes.load(ordering: .sequentiallyConsistent) == armed
    }

    /// Reads every queued event and counts each for the stores watching its file; false when reading failed (then
    /// every store's count is bumped: nothing vouches for anything).
    @discardableResult
    func readEvents() -> Bool {
        state.withLock { state in
            readEpoch.add(1, ordering: .sequentiallyConsistent)
            defer { readEpoch.add(1, ordering: .sequentiallyConsistent) }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(state.descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN { return true }
                guard count > 0 else {
                    bumpAll(state)
                    return false
                }
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset + 16 <= count {
                        let watch = bytes.load(fromByteOffset: offset, as: Int32.self)
                        let mask = bytes.load(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.load(fromByteOffset: offset + 12, as: UInt32.self))
                        offset += 16 + length
                        tally(watch: watch, mask: mask, in: &state)
                    }
                }
            }
        }
    }

    private func tally(watch: Int32, mask: UInt32, in state: inout State) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return bumpAll(state) }
        guard let entries = state.watches[watch] else { return }  // a watch since removed
        if mask & UInt32(IN_IGNORED) != 0 {
            // The kernel dropped the watch (its file is gone): its stores must look the long way.
            state.watches[watch] = nil
            for entry in entries.values { entry.subscriber.changes.add(1, ordering: .sequentiallyConsistent) }
            return
        }
        for entry in entries.values where entry.mask & mask != 0 {
            entry.subscriber.changes.add(1, ordering: .sequentiallyConsistent)
        }
    }

    private func bumpAll(_ state: State) {
        for entries in state.watches.values {
            for entry in entries.values { entry.subscriber.changes.add(1, ordering: .sequentiallyConsistent) }
        }
    }

    /// Why stores check the long way, the first time a store of this process meets the system's limit; nil after that
    /// (a process reports it once).
    func takeLimitReport(_ failure: Unavailable) -> String? {
        guard case .limit(let code) = failure, !limitReported.exchange(true, ordering: .sequentiallyConsistent) else { return nil }
        return code == ENOSPC
            ? "this user's inotify watches are all in use (fs.inotify.max_user_watches)"
            : "no inotify instance could be made (\(String(cString: strerror(code))): fs.inotify.max_user_instances, or the process's open files)"
    }

    /// ``takeLimitReport(_:)`` for a store that found no instance.
    func takeInstanceLimitReport() -> String? {
        let code = state.withLock { $0.failure } ?? EMFILE
        return takeLimitReport(.limit(errno: code))
    }
}
#endif
