import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import PrefsJSON
import PrefsSupport

/// One store's journal file: what has been read of it, and the descriptor a writer appends with.
///
/// Readers keep the offset of the end of the last good line and read only bytes appended after it; a journal that
/// was replaced (another inode: compaction or reset), removed or shortened is read again from its start.
final class JSONJournalFile {
    // `@exclusivity(unchecked)` on the state an append uses: a journal belongs to one backend, which the store calls
    // from one thread at a time, so no two accesses overlap.
    /// The store's folder, through which the journal is read and written, and the journal's name in it.
    private let folder: StoreFolder
    let name: String
    /// The journal's path, for messages.
    var path: String { folder.path(of: name) }
    /// Identity of the file read; nil when there was none.
    @exclusivity(unchecked) private(set) var identity: FileIdentity?
    /// The header's generation; nil when there is no journal (or no header could be read).
    private(set) var generation: String?
    /// The header's record of the snapshot the journal began on; nil without one.
    private(set) var snapshot: JSONJournal.SnapshotDigest?
    /// What the keys the records read so far change held in that snapshot (their `"was"` digests).
    @exclusivity(unchecked) private(set) var was = JSONJournal.KeyDigests()
    /// End of the last good line: the append position for a writer, the read position for a reader.
    @exclusivity(unchecked) private(set) var offset = 0
    @exclusivity(unchecked) private(set) var lines = 0
    @exclusivity(unchecked) private(set) var lastSeq = 0
    @exclusivity(unchecked) private(set) var tail: JSONJournal.Tail = .clean
    @exclusivity(unchecked) private var descriptor: Int32 = -1
    @exclusivity(unchecked) private var descriptorIdentity: FileIdentity?
    /// The owner of the journal found last when another user put it there, in a shared folder, before this store made
    /// its own: never read nor written (see ``Directory/foreignOwner(of:)``); the store reads its file without it.
    private(set) var squatter: UInt32?
    /// The buffer each record is written into before its append, kept from one append to the next.
    @exclusivity(unchecked) private var recordWriter = JSONWriter(indentWidth: 0)
    /// The largest record buffer kept between appends.
    private static let keptRecordCapacity = 64 * 1024

    /// Where this journal's file events go (the simulated power cuts); nil in a store without a trace.
    private let trace: FileSystem.Trace?

    init(folder: StoreFolder, name: String, trace: FileSystem.Trace? = nil) {
        self.folder = folder
        self.name = name
        self.trace = trace
    }

    deinit { closeDescriptor() }

    /// Bytes in the file as last seen.
    var size: Int { offset + tail.bytes }
    /// Whether any record was read or appended.
    var hasRecords: Bool { lastSeq > 0 }

    /// Reads the journal from its start; returns its records, or nil when there is none. A torn tail is left in
    /// ``tail``; corruption and a newer format throw.
    func readAll() throws(PrefsError) -> [Changeset]? {
        forget()
        guard let (data, info) = try read(from: 0) else { return nil }
        identity = FileIdentity(info)
        let scan = try data.withUnsafeBytes { bytes in
            Result { () throws(PrefsError) in try JSONJournal.scan(bytes, firstLine: 1, lastSeq: nil, path: path) }
        }.get()
        generation = scan.generation
        snapshot = scan.snapshot
        take(scan)
        return scan.records
    }

    /// The records appended since the last read, or nil when the journal must be read again from its start
    /// (it was replaced, removed, created or shortened).
    func readNew() throws(PrefsError) -> [Changeset]? {
        // The file this writer appends to, still linked: its size without a path lookup (a replaced or removed
        // journal has no links left), and without reading its times (see `FileSystem.linksAndSize`). Otherwise the path's.
        var size = 0
        if descriptor >= 0, descriptorIdentity == identity, case let (links, descriptorSize) = FileSystem.linksAndSize(descriptor), links > 0 {
            size = descriptorSize
        } else {
            let found = try unlessForeign { () throws(PrefsError) in try folder.existing()?.trustedStatus(of: name) }
            guard let info = found else { return identity == nil ? [] : nil }
            guard identity == FileIdentity(info) else { return nil }
            size = Int(info.st_size)
        }
        return try readNew(upTo: size)
    }

    /// ``readNew()`` for a writer that knows its journal was neither replaced, removed nor linked elsewhere since it
    /// last looked (nothing but appends: see `FileReplacementWatch`): the size from `lseek`, the cheapest system call
    /// that tells it. Nil when the journal must be read by ``readNew()`` instead.
    func readAppended() throws(PrefsError) -> [Changeset]? {
        guard descriptor >= 0, descriptorIdentity == identity, identity != nil else { return nil }
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else { return nil }
        return try readNew(upTo: Int(end))
    }

    /// The records between the last read and `size`, the journal's size now; nil when it must be read again from its start.
    private func readNew(upTo size: Int) throws(PrefsError) -> [Changeset]? {
        if size == self.size { return [] }
        if size < offset || generation == nil { return nil }
        guard let (data, after) = try read(from: offset), FileIdentity(after) == identity else { return nil }
        let scan = try data.withUnsafeBytes { bytes in
            Result { () throws(PrefsError) in try JSONJournal.scan(bytes, firstLine: lines + 1, lastSeq: lastSeq, path: path) }
        }.get()
        take(scan)
        return scan.records
    }

    /// The descriptor a writer appends with, and the identity of its file; nil before the first append.
    var appendDescriptor: (descriptor: Int32, identity: FileIdentity)? {
        guard descriptor >= 0, let descriptorIdentity, descriptorIdentity == identity else { return nil }
        return (descriptor, descriptorIdentity)
    }

    private func take(_ scan: JSONJournal.Scan) {
        if !scan.was.isEmpty { was.add(scan.was) }
        offset += scan.goodBytes
        lines += scan.goodLines
        lastSeq = scan.lastSeq
        tail = scan.tail
    }

    /// Forgets what was read (the journal will be read from its start).
    func forget() {
        identity = nil
        generation = nil
        snapshot = nil
        was = JSONJournal.KeyDigests()
        offset = 0
        lines = 0
        lastSeq = 0
        tail = .clean
    }

    /// The bytes from `start` to the end, with the file's status; nil when there is no file.
    private func read(from start: Int) throws(PrefsError) -> (Data, stat)? {
        let opened = try unlessForeign { () throws(PrefsError) in try folder.existing()?.openRegularFile(name) }
        guard let (fd, info) = opened else { return nil }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: max(4096, min(Int(info.st_size) - start + 1, 1 << 20)))
        var position = off_t(start)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, position) }
            if count < 0 { if errno == EINTR { continue }; throw .io(path: path, operation: "read", errno: errno) }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<count])
            position += off_t(count)
        }
        return (data, info)
    }

    /// `body`'s result, or nil when it refused the journal as another user's file or link in a shared folder: then
    /// ``squatter`` names them (and otherwise no one).
    private func unlessForeign<Found>(_ body: () throws(PrefsError) -> Found?) throws(PrefsError) -> Found? {
        do {
            let found = try body()
            squatter = nil
            return found
        } catch .untrustedFile(let at, let owner) where at == path {
            squatter = owner
        } catch .untrustedLink(let at, let owner) where at == path {
            squatter = owner
        }
        return nil
    }

    // MARK: - Writing (under the writer lock)

    /// Makes the journal ready to take records that continue `generation`, whose snapshot file `snapshot` describes:
    /// a missing or stale journal is replaced by an empty one, a torn tail is cut off. Returns the tail that was cut
    /// off, if any.
    @discardableResult
    func prepareForAppend(generation: String, snapshot: JSONJournal.SnapshotDigest?, sync: Bool) throws(PrefsError) -> JSONJournal.Tail {
        guard identity != nil, self.generation == generation else {
            try reset(generation: generation, snapshot: snapshot, sync: sync)
            return .clean
        }
        try openDescriptor()
        let cut = tail
        if cut != .clean {
            guard ftruncate(descriptor, off_t(offset)) == 0 else { throw .io(path: path, operation: "truncate", errno: errno) }
            trace?.observe(.truncated(path: path, length: offset))
            if sync, fdatasync(descriptor) != 0 { throw .io(path: path, operation: "fsync", errno: errno) }
            if sync { trace?.observe(.syncedFile(path: path)) }
            tail = .clean
        }
        return cut
    }

    /// Replaces the journal by one holding only a header for `generation` (atomic replace), recording `snapshot`.
    func reset(generation: String, snapshot: JSONJournal.SnapshotDigest?, sync: Bool) throws(PrefsError) {
        let header = JSONJournal.header(generation: generation, snapshot: snapshot)
        try folder.created().replace(name, with: header, sync: sync, trace: trace)
        closeDescriptor()
        forget()
        try openDescriptor()
        identity = descriptorIdentity
        self.generation = generation
        self.snapshot = snapshot
        offset = header.count
        lines = 1
    }

    /// Appends one record with one `write(2)`; with `sync`, `fdatasync` before returning. A failed append is cut
    /// off again, so the journal never keeps a partial line this process wrote. `was`: what the keys this record is
    /// the first to change held in the snapshot.
    func append(_ changes: Changeset, was: JSONJournal.RecordDigests, sync: Bool) throws(PrefsError) {
        recordWriter.removeAll()
        JSONJournal.writeRecord(seq: lastSeq + 1, changes: changes, was: was, into: &recordWriter)
        let length = recordWriter.count
        // The buffer of an ordinary record is kept for the next one; that of a large one (a batch of thousands of
        // keys) is let go, rather than held as long as the store is open (8 MiB after one record of 100k keys).
        defer { if recordWriter.capacity > Self.keptRecordCapacity { recordWriter = JSONWriter(indentWidth: 0) } }
        if let failure = recordWriter.withOutput({ FileSystem.writeFully(descriptor, $0) }) {
            _ = ftruncate(descriptor, off_t(offset))
            throw .io(path: path, operation: "write", errno: failure)
        }
        if let trace { trace.observe(.appended(path: path, data: recordWriter.withOutput { Data($0) })) }
        if sync {
            guard fdatasync(descriptor) == 0 else {
                let code = errno
                _ = ftruncate(descriptor, off_t(offset))
                throw .io(path: path, operation: "fsync", errno: code)
            }
            trace?.observe(.syncedFile(path: path))
        }
        offset += length
        lines += 1
        lastSeq += 1
        // The writer found these keys without a digest: each is inserted once, without looking again.
        for entry in was.values { self.was.values[entry.key] = entry.digest }
        for entry in was.declarations { self.was.declarations[entry.key] = entry.digest }
    }

    private func openDescriptor() throws(PrefsError) {
        if descriptor >= 0, descriptorIdentity == identity, identity != nil { return }
        closeDescriptor()
        guard let (fd, info) = try folder.created().open(name, O_WRONLY | O_APPEND | O_NONBLOCK) else {
            throw .io(path: path, operation: "open", errno: ENOENT)
        }
        do throws(PrefsError) { try FileSystem.requireRegularFile(info, path: path) } catch {
            close(fd)
            throw error
        }
        descriptor = fd
        descriptorIdentity = FileIdentity(info)
    }

    func closeDescriptor() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        descriptorIdentity = nil
    }
}
