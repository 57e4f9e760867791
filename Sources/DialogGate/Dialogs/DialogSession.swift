@_spi(Tooling) import Prefs
import PrefsSupport

/// The scope of an "OK" answer: the dialogs it hides until the session ends.
///
/// ``process`` lasts as long as the app process, like the seeds' in-memory flag. Make your own to scope
/// "OK" differently (a login session, a document window, a test).
public final class DialogSession: Sendable {
    /// The session of this process: it ends when the app quits.
    public static let process = DialogSession()

    private let suppressed = Locked<Set<String>>([])
    /// Whether a dialog was presented in this session (for ``DisplayFrequency/oncePerSession``).
    private let presentedAny = Locked(false)

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
