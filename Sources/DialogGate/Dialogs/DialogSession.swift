import Foundation
import Prefs
import PrefsSupport

/// The scope of an "OK" answer (``DialogResponse/hideForSession``), of ``DisplayFrequency/oncePerSession-type.property``,
/// of a launch (``DialogGate/recordLaunch()`` counts one per session) and of the parameters set in memory
/// (``DialogGate/setParameter(_:_:)``): the dialogs it hides, and whether one was presented, until the session ends.
///
/// **A session is the process, on one store.** A gate made without a session uses ``store(_:)``: every gate of the
/// process on that store (two scenes, two windows) shares it, and it ends when the app quits, like an in-memory
/// "OK for this launch" flag. A gate on another store (another user's, on a server with a store per user) has a
/// session of its own, so one user's "OK" never hides another's dialog. An app that stays in memory for days and wants "OK" to last
/// until the user comes back, not until the process ends, starts a new session when the user returns:
///
/// ```swift
/// var gate = DialogGate(prefs: prefs, session: DialogSession())
/// func userCameBack() {   // a scene's willEnterForeground, a login
///     gate = DialogGate(prefs: prefs, session: DialogSession())   // "OK" answers of the last visit no longer hide
/// }
/// ```
///
/// Make your own to scope "OK" differently (a login session, a document window, a test); ``process`` spans every store
/// of the process.
public final class DialogSession: Sendable {
    /// The session of the whole process, across every store: it ends when the app quits.
    public static let process = DialogSession()

    /// The session of this process on `prefs`' store: the same for every gate of the process on that store (the same
    /// file, or the same PostgreSQL namespace), another for each other store. A gate made without a session uses it.
    ///
    /// ```swift
    /// let gate = DialogGate(prefs: userStore, session: .store(userStore))   // the same as DialogGate(prefs: userStore)
    /// ```
    public static func store(_ prefs: Prefs) -> DialogSession {
        StoreSessions.session(for: prefs)
    }

    private let suppressed = Locked<Set<String>>([])
    /// Whether a dialog was presented in this session (for ``DisplayFrequency/oncePerSession``).
    private let presentedAny = Locked(false)
    /// Names this session in the usage record (``DialogGate/recordLaunch()``): its launch, and whether it is the first.
    let launchToken = UUID().uuidString
    /// The usage records (``UsageRecord/id``) this session counted its launch in.
    private let launchedIn = Locked<Set<String>>([])
    /// The parameters set in memory (``DialogGate/setParameter(_:_:)``).
    private let parameterValues = Locked<[String: DialogCondition.Value]>([:])

    public init() {}

    /// Whether "OK" hid dialog `id` in this session.
    public func isSuppressed(_ id: String) -> Bool {
        suppressed.withLock { $0.contains(id) }
    }

    /// Whether any dialog was presented in this session.
    public var hasPresented: Bool {
        presentedAny.withLock { $0 }
    }

    func notePresentation() {
        presentedAny.withLock { $0 = true }
    }

    /// Whether this session counted its launch in the usage record `id`.
    func hasLaunched(in id: String) -> Bool {
        launchedIn.withLock { $0.contains(id) }
    }

    func noteLaunch(in id: String) {
        launchedIn.withLock { _ = $0.insert(id) }
    }

    /// The parameters set in memory in this session.
    var parameters: [String: DialogCondition.Value] {
        parameterValues.withLock { $0 }
    }

    /// Sets (or, with nil, removes) a parameter in memory.
    func setParameter(_ name: String, _ value: DialogCondition.Value?) {
        parameterValues.withLock { $0[name] = value }
    }

    func suppress(_ id: String) {
        suppressed.withLock { _ = $0.insert(id) }
    }

    /// Forgets "OK" answers: for one dialog, or all when `ids` is empty.
    public func clear(_ ids: [String] = []) {
        suppressed.withLock { set in
            if ids.isEmpty { set.removeAll() } else { set.subtract(ids) }
        }
    }
}

/// The sessions of ``DialogSession/store(_:)``, one per store this process has made a gate for: kept for the process's
/// life (a session is the process), by the store's identity; a memory store's only while that store lives.
private enum StoreSessions {
    private struct MemoryEntry: @unchecked Sendable {  // @unchecked: a weak reference to a Sendable class, read under the lock
        weak var store: Prefs?
        let session: DialogSession
    }

    private struct Registry {
        var byIdentity: [String: DialogSession] = [:]
        var memory: [ObjectIdentifier: MemoryEntry] = [:]
    }

    private static let registry = Locked(Registry())

    static func session(for prefs: Prefs) -> DialogSession {
        registry.withLock { registry in
            if let identity = prefs.storage.storeIdentity {
                if let session = registry.byIdentity[identity] { return session }
                let session = DialogSession()
                registry.byIdentity[identity] = session
                return session
            }
            let id = ObjectIdentifier(prefs)
            if let entry = registry.memory[id], entry.store === prefs { return entry.session }
            registry.memory = registry.memory.filter { $0.value.store != nil }  // released stores, whose ids may come back
            let session = DialogSession()
            registry.memory[id] = MemoryEntry(store: prefs, session: session)
            return session
        }
    }
}
