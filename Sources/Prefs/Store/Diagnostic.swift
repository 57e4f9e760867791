import Foundation

extension Prefs {
    /// Something a store noticed and handled without failing a call: a stored value of the wrong type,
    /// a write from a subscript setter that failed, a file moved aside by recovery.
    ///
    /// Observe them with `onDiagnostic` at creation or read ``Prefs/diagnostics``.
    /// ```swift
    /// let prefs = try Prefs(.sqlite(url)) { diagnostic in log(diagnostic.description) }
    /// ```
    public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
        /// What happened. A failure keeps the error the store threw (a ``PrefsError`` in practice), so that code can
        /// tell a full disk from a lock timeout:
        ///
        /// ```swift
        /// if case .writeFailed(let error as PrefsError, _) = diagnostic.kind, case .lockTimeout = error { … }
        /// ```
        public enum Kind: Sendable, Hashable {
            /// The stored value cannot be read as the key's type; the initial value was returned and the bytes kept.
            case typeMismatch(ValueMismatch)
            /// A write that could not report its error (a subscript setter, a background flush, a key rename), with
            /// what was being done when it is not a plain write of the key (`"background flush"`).
            case writeFailed(any Error, during: String?)
            /// Reading from the store failed (looking for other processes' changes, a read that returned the initial
            /// value instead), with what was being read when it is not the key's value (`"reading the declarations"`).
            case refreshFailed(any Error, during: String?)
            /// An unreadable store file was moved aside by ``Recovery/moveAsideAndStartEmpty``.
            case recovered(movedTo: String, reason: String)
            /// A JSON store's journal ends in a torn record (a writer died mid-append, before acknowledging it), from
            /// `line` on, `bytes` long: it is not applied, and the next write removes it.
            case journalTornTail(path: String, line: Int, bytes: Int)
            /// A JSON store's file (`path`) was edited, by hand or by another program, while its journal held changes to
            /// `keys`: the edit is kept for those keys, and the journal's changes to other keys still apply. The next
            /// write folds the journal into the file.
            case handEditKept(path: String, keys: [String])
            /// A JSON store's journal (`path`) does not continue its file (another generation, or a file in format 1,
            /// which has no journal) and holds changes to `keys` that the file lacks: they are not applied. The next
            /// write moves the journal aside, byte for byte, to `movedTo` (nil until it has).
            case journalNotApplied(path: String, keys: [String], movedTo: String?)
            /// Writes to `keys` that ``Prefs/standard`` kept in memory while its store could not be opened (see
            /// ``Prefs/waitingReason``) did not reach the store, for `reason`: when it opened, it already held values
            /// for them (stored by another process or an earlier launch, which are kept), or the process exited, or the
            /// store was released, while it still waited.
            case pendingWritesDropped(keys: [String], reason: String)
            /// A launch argument names the key (`-launchCount five`) but cannot be read as its type: it is ignored, and
            /// the key reads as without it (its stored value, else its initial value). The mismatch's `stored` is the
            /// argument's value. Reported once per key and type.
            ///
            /// ```swift
            /// if case .argumentIgnored(let mismatch) = diagnostic.kind { print("-\(diagnostic.key ?? "") ignored: \(mismatch.reason)") }
            /// ```
            case argumentIgnored(ValueMismatch)
            /// A file beside the store (`path`: its lock file, journal, `-wal`, `-shm` or `-journal`) that another user
            /// (`owner`) put in a shared folder such as /tmp before the store made its own: never read, written or
            /// removed. The store is read without it; writes fail with ``PrefsError/untrustedFile(path:owner:)`` until
            /// that user or root removes it.
            ///
            /// ```swift
            /// if case .untrustedFileIgnored(let path, _) = diagnostic.kind { print("not read: \(path): \(diagnostic)") }
            /// ```
            case untrustedFileIgnored(path: String, owner: UInt32)
            /// The store checks its files for other processes' replacements the slower way, with `stat` before each
            /// write, because the system's inotify limit is reached (`reason` says which). Reported once a process.
            ///
            /// ```swift
            /// if case .fileWatchUnavailable(let reason) = diagnostic.kind { print("slower file checks: \(reason)") }
            /// ```
            case fileWatchUnavailable(reason: String)
        }

        /// The key concerned, if one is.
        public var key: String?
        public var kind: Kind
        /// The store, in call-site form.
        public var store: String

        package init(key: String?, kind: Kind, store: String) {
            self.key = key
            self.kind = kind
            self.store = store
        }

        public var description: String {
            let subject = key.map { "key \(PrefsError.quoted($0)) in \(store)" } ?? store
            switch kind {
            case .typeMismatch(let mismatch): return "\(subject): \(mismatch); reading the initial value, the stored value is kept"
            case .writeFailed(let error, let during): return "\(subject): write failed: \(during.map { "\($0): " } ?? "")\(error)"
            case .refreshFailed(let error, let during): return "\(subject): refresh failed: \(during.map { "\($0): " } ?? "")\(error)"
            case .recovered(let movedTo, let reason): return "\(subject): unreadable file moved to \(movedTo) (\(reason)); starting empty"
            case .journalTornTail(let path, let line, let bytes):
                return
                    "\(subject): the journal \(path) ends in a torn record at line \(line) (\(bytes) bytes; a writer died mid-append): not applied; the next write removes it"
            case .handEditKept(let path, let keys):
                return
                    "\(subject): \(path) was edited while its journal held changes to \(JSONFileBackend.list(keys)): the edit is kept for those keys, the journal's other changes apply; the next write folds the journal into the file"
            case .journalNotApplied(let path, let keys, let movedTo):
                let moved = movedTo.map { "; moved aside to \($0)" } ?? "; the next write moves it aside"
                return
                    "\(subject): the journal \(path) does not continue the store file and holds changes to \(JSONFileBackend.list(keys)) that the file lacks: not applied\(moved)"
            case .pendingWritesDropped(let keys, let reason):
                return "\(subject): writes to \(JSONFileBackend.list(keys)), kept in memory while the store waited to open, were not stored: \(reason)"
            case .argumentIgnored(let mismatch):
                let target = mismatch.swiftType.map { "\($0) (stored form \(mismatch.expected))" } ?? "\(mismatch.expected)"
                let name = key.map { "-\($0) " } ?? ""
                return
                    "\(subject): the launch argument \(name)\(mismatch.stored.preview()) cannot be read as \(target): \(mismatch.reason); ignored, the key reads as without it"
            case .untrustedFileIgnored(let path, let owner):
                return
                    "\(subject): \(path), a file owned by another user (uid \(owner)) in a shared folder\(UserNames.ownerClause(owner)), is not read: the store is read without it, and writes fail until it is removed (\(PrefsError.squatterRemedy))"
            case .fileWatchUnavailable(let reason):
                return "\(subject): \(reason): stores check their files with stat before each write, which is slower"
            }
        }
    }

    /// The result of reading a key: what was stored, or the initial value and why.
    ///
    /// ```swift
    /// switch prefs.lookup(.launchCount) {
    /// case .stored(let count): print("launched \(count) times")
    /// case .initial: print("first launch")
    /// case .unreadable(_, let mismatch): print("kept unreadable value: \(mismatch)")
    /// case .argument(let count): print("-launchCount \(count) for this launch")
    /// }
    /// ```
    public enum Lookup<Value: Sendable>: Sendable {
        case stored(Value)
        case initial(Value)
        /// A value is stored but cannot be read as `Value`; `initial` is what reads return.
        case unreadable(initial: Value, ValueMismatch)
        /// A launch argument names the key (`-launchCount 5`): this process reads its value, above whatever is stored
        /// (`prefs.isStored(key)` says whether something is), until it exits. See <doc:LaunchArguments>.
        ///
        /// ```swift
        /// if case .argument(let count) = prefs.lookup(.launchCount) { print("launched with -launchCount \(count)") }
        /// ```
        case argument(Value)

        /// The value a read returns.
        public var value: Value {
            switch self {
            case .stored(let value), .initial(let value), .unreadable(let value, _), .argument(let value): value
            }
        }

        /// Whether a readable value is stored and read (as opposed to the initial value, or a launch argument's).
        public var isStored: Bool {
            if case .stored = self { return true }
            return false
        }
    }
}

extension Prefs.Diagnostic.Kind {
    /// Equal when of the same case with equal payloads; errors compare by their description (an `any Error` has no
    /// equality of its own).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.typeMismatch(let a), .typeMismatch(let b)): a == b
        case (.writeFailed(let a, let during), .writeFailed(let b, let other)): "\(a)" == "\(b)" && during == other
        case (.refreshFailed(let a, let during), .refreshFailed(let b, let other)): "\(a)" == "\(b)" && during == other
        case (.recovered(let a, let reason), .recovered(let b, let other)): a == b && reason == other
        case (.journalTornTail(let path, let line, let bytes), .journalTornTail(let otherPath, let otherLine, let otherBytes)):
            path == otherPath && line == otherLine && bytes == otherBytes
        case (.handEditKept(let path, let keys), .handEditKept(let otherPath, let otherKeys)): path == otherPath && keys == otherKeys
        case (.journalNotApplied(let path, let keys, let movedTo), .journalNotApplied(let otherPath, let otherKeys, let otherMovedTo)):
            path == otherPath && keys == otherKeys && movedTo == otherMovedTo
        case (.pendingWritesDropped(let keys, let reason), .pendingWritesDropped(let otherKeys, let otherReason)): keys == otherKeys && reason == otherReason
        case (.argumentIgnored(let a), .argumentIgnored(let b)): a == b
        case (.untrustedFileIgnored(let path, let owner), .untrustedFileIgnored(let otherPath, let otherOwner)): path == otherPath && owner == otherOwner
        case (.fileWatchUnavailable(let reason), .fileWatchUnavailable(let otherReason)): reason == otherReason
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .typeMismatch(let mismatch): hasher.combine(0); hasher.combine(mismatch)
        case .writeFailed(let error, let during): hasher.combine(1); hasher.combine("\(error)"); hasher.combine(during)
        case .refreshFailed(let error, let during): hasher.combine(2); hasher.combine("\(error)"); hasher.combine(during)
        case .recovered(let movedTo, let reason): hasher.combine(3); hasher.combine(movedTo); hasher.combine(reason)
        case .journalTornTail(let path, let line, let bytes): hasher.combine(4); hasher.combine(path); hasher.combine(line); hasher.combine(bytes)
        case .handEditKept(let path, let keys): hasher.combine(5); hasher.combine(path); hasher.combine(keys)
        case .journalNotApplied(let path, let keys, let movedTo): hasher.combine(6); hasher.combine(path); hasher.combine(keys); hasher.combine(movedTo)
        case .pendingWritesDropped(let keys, let reason): hasher.combine(7); hasher.combine(keys); hasher.combine(reason)
        case .argumentIgnored(let mismatch): hasher.combine(8); hasher.combine(mismatch)
        case .untrustedFileIgnored(let path, let owner): hasher.combine(9); hasher.combine(path); hasher.combine(owner)
        case .fileWatchUnavailable(let reason): hasher.combine(10); hasher.combine(reason)
        }
    }
}
