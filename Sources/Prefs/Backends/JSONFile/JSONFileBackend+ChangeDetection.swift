import Foundation
internal import PrefsJSON
import PrefsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
private let closeFile = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let closeFile = Darwin.close
#endif

extension JSONFileBackend {
    /// Catches up with the files: the journal's new records when only they changed, the snapshot and the whole journal
    /// when the snapshot or the journal was replaced. Returns true when anything changed. The pending coalesced changes
    /// stay on top.
    func reload() throws(PrefsError) -> Bool {
        defer { noteSquatter() }
        #if os(Linux)
        if stamp != nil, let watch = replacementWatch, watch.isQuiet(), let records = try journal.readAppended() {
            return applyNew(records)  // only appends since the last check: the journal's new records, found by size
        }
        // Watch the files held now, then check them: a change made after this point is reported next time.
        if snapshotDescriptor >= 0, let snapshot = snapshotDescriptorIdentity, let appending = journal.appendDescriptor,
            let watch = writerWatch()
        {
            do throws(FileWatcher.Unavailable) {
                try watch.watch(snapshot: (snapshotDescriptor, snapshot), journal: appending)
            } catch {
                watchUnavailable(error)
            }
        } else {
            replacementWatch?.stop()
        }
        do {
            let changed = try reloadChecking()
            // The watch vouches only for the files the store holds after the check.
            if let watch = replacementWatch, let watched = watch.watched,
                watched != [snapshotDescriptorIdentity, journal.appendDescriptor?.identity]
            {
                watch.stop()
            }
            return changed
        } catch {
            replacementWatch?.stop()
            throw error
        }
        #else
        return try reloadChecking()
        #endif
    }

    #if os(Linux)
    /// The writer's watch, made on first use; nil when the system has no inotify instance to give.
    private func writerWatch() -> FileReplacementWatch? {
        if replacementWatch == nil, !replacementWatchUnavailable {
            replacementWatch = FileReplacementWatch()
            if replacementWatch == nil {
                replacementWatchUnavailable = true
                if let reason = FileWatcher.shared.takeInstanceLimitReport() { reports.append(.fileWatchUnavailable(reason: reason)) }
            }
        }
        return replacementWatch
    }

    /// The system's limit of watches is reached: this store checks the long way from now on (the process says so once).
    private func watchUnavailable(_ failure: FileWatcher.Unavailable) {
        replacementWatch = nil
        replacementWatchUnavailable = true
        if let reason = FileWatcher.shared.takeLimitReport(failure) { reports.append(.fileWatchUnavailable(reason: reason)) }
    }
    #endif

    /// Reports, once, a journal another user put beside the store in a shared folder: the store reads its file without it.
    private func noteSquatter() {
        guard journal.squatter != reportedSquatter else { return }
        reportedSquatter = journal.squatter
        if let owner = journal.squatter { reports.append(.untrustedFileIgnored(path: journal.path, owner: owner)) }
    }

    /// ``reload()`` by the files' status: the snapshot's (see ``snapshotStamp()``), then the journal's.
    private func reloadChecking() throws(PrefsError) -> Bool {
        FileChecks.slow.add(1, ordering: .relaxed)
        let current = try snapshotStamp()
        if current == stamp {
            guard current != nil else { return false }  // no snapshot: a journal beside it is a leftover, never read
            if let records = try journal.readNew() { return applyNew(records) }
        }
        return try reloadAll(current)
    }

    /// Applies records read from the journal since the last read; returns whether any changed the document.
    private func applyNew(_ records: [Changeset]) -> Bool {
        guard journalApplies, !records.isEmpty else { return false }
        for record in records { document.apply(record, keeping: editedKeys) }
        if !pending.isEmpty { document.apply(pending) }
        return true
    }

    /// The snapshot's stamp now, nil when there is none. When the file read last is still the one at the path,
    /// unchanged, its open descriptor says so, without a path lookup: a file renamed over or removed has one link
    /// fewer, and a file written in place has another size or time. Otherwise the path's `stat`, and a descriptor is
    /// kept for next time when the path still holds the file read.
    private func snapshotStamp() throws(PrefsError) -> FileSystem.Stamp? {
        var info = stat()
        if snapshotDescriptor >= 0, fstat(snapshotDescriptor, &info) == 0, UInt64(info.st_nlink) == snapshotLinks, FileSystem.Stamp(info) == stamp {
            return stamp
        }
        closeSnapshotDescriptor()
        guard let directory = try folder.existing() else { return nil }
        let current = try directory.stamp(of: folder.name)
        if let current, current == stamp, let (fd, opened) = try? directory.open(folder.name, O_RDONLY | O_NONBLOCK) {
            if FileSystem.Stamp(opened) == current {
                snapshotDescriptor = fd
                snapshotLinks = UInt64(opened.st_nlink)
                snapshotDescriptorIdentity = FileIdentity(opened)
            } else {
                _ = closeFile(fd)
            }
        }
        return current
    }

    func closeSnapshotDescriptor() {
        if snapshotDescriptor >= 0 { _ = closeFile(snapshotDescriptor) }
        snapshotDescriptor = -1
        snapshotDescriptorIdentity = nil
    }

    func refresh() throws -> Bool {
        let changed = try reload()
        defer { changedSinceRefresh = false }
        return changed || changedSinceRefresh
    }
}
