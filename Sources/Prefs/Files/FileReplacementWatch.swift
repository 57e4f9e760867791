#if os(Linux)
import Glibc
import PrefsSupport

/// Tells a JSON store's writer, with one cheap system call, that nothing but appends touched its snapshot or its
/// journal since it last checked them (and an SQLite store's, that its database was not removed, renamed or replaced;
/// see ``watch(fileAt:)``): an inotify instance watching the two files it holds open (by their
/// descriptors, `/proc/self/fd/N`, so the watch is on exactly those inodes) for a removal, a rename, a change of link
/// count or attributes, and, on the snapshot, any write. Appends to the journal are not watched (this writer makes
/// them); their size is read with `lseek`.
///
/// Checking is an `ioctl(FIONREAD)` that finds no event queued (0.35–0.41 µs here, against 0.44–0.53 µs for a
/// non-blocking `read` that finds nothing, and 1.3 µs for the `fstat` and `statx` it replaces). An event, an overflow
/// of the queue, or any failure means "look again the long way"; the watch is then set up again on whatever files the
/// long way finds. Without inotify (or `/proc`), there is no watch, and every check is the long way.
final class FileReplacementWatch {
    private let descriptor: Int32
    private var watches: [Int32] = []
    /// The files watched, while the watch vouches for them.
    private(set) var watched: [FileIdentity]?

    init?() {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Whether nothing happened to the watched files since ``watch(snapshot:journal:)``: no event is queued (asked
    /// with `FIONREAD`, which costs less than a `read` that finds nothing). After an event, the watch vouches for
    /// nothing until it is set up again, which discards the events.
    func isQuiet() -> Bool {
        guard watched != nil else { return false }
        var queued: Int32 = 0
        if ioctl(descriptor, UInt(FIONREAD), &queued) == 0, queued == 0 { return true }
        watched = nil  // an event, or an ioctl that failed, which vouches for nothing either
        return false
    }

    /// Watches the files open at `snapshot` and `journal` from now on, forgetting earlier watches and events. A change
    /// made to them before this call is not reported: the caller checks the files after it.
    func watch(snapshot: (Int32, FileIdentity), journal: (Int32, FileIdentity)) {
        stop()
        let common = UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
        for (fd, mask) in [(snapshot.0, common | UInt32(IN_MODIFY)), (journal.0, common)] {
            let watch = inotify_add_watch(descriptor, "/proc/self/fd/\(fd)", mask)
            guard watch >= 0 else { return stop() }
            watches.append(watch)
        }
        watched = [snapshot.1, journal.1]
    }

    /// Watches the file `path` names now (an SQLite store's database) for a removal, a rename or a change of link
    /// count or attributes, forgetting earlier watches and events; writes to it, by this process or another, are not
    /// watched. The caller then checks that `path` still names the file it uses, and trusts ``isQuiet()`` from there:
    /// a replacement made between this call and that check changes the watched file's link count, which is an event.
    func watch(fileAt path: String) {
        stop()
        // A link put at the path is watched as a link, never followed: the check after this call then finds the path
        // no longer names the file in use.
        let watch = inotify_add_watch(descriptor, path, UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) | UInt32(IN_DONT_FOLLOW))
        guard watch >= 0 else { return }
        watches.append(watch)
        watched = []
    }

    /// Removes the watches and discards pending events.
    func stop() {
        watched = nil
        for watch in watches { inotify_rm_watch(descriptor, watch) }
        watches = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
#endif
