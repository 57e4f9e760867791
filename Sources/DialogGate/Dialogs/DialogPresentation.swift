import Foundation
import Prefs
import PrefsSupport

/// What ``DialogGate/claim(_:)`` answered: a presentation to show, or the decision that declined it.
///
/// ```swift
/// if let presentation = try gate.claim(welcome).presentation {
///     try presentation.finish(.hideForSession)
/// }
/// ```
public enum DialogClaim: Sendable {
    /// The dialog is the caller's to present; no other gate or process presents it until this ends.
    case granted(DialogPresentation)
    /// The rules, or another presentation on screen, decline it; the decision says why.
    case declined(DialogDecision)

    /// The presentation, when granted.
    public var presentation: DialogPresentation? {
        if case .granted(let presentation) = self { return presentation }
        return nil
    }

    /// The decision behind the answer: why it may be presented, or why not.
    public var decision: DialogDecision {
        switch self {
        case .granted(let presentation): presentation.decision
        case .declined(let decision): decision
        }
    }
}

/// One presentation of a dialog, claimed by ``DialogGate/claim(_:)``: while it is held, no other gate or
/// process on the store presents the dialog. End it exactly once: ``finish(_:)`` with the user's answer, or
/// ``cancel()`` when the dialog was not shown after all.
///
/// A presentation released without either (the app dropped it) is cancelled on release; one whose process
/// crashed binds nothing: the dialog may be presented again at once, and is, since it was never answered.
///
/// ```swift
/// guard let presentation = try gate.claim(rate).presentation else { return }
/// let answer = await showRateAlert()          // .hideForSession, .neverRemind, .remindLaterAfter(.seconds(86_400)), .dismiss
/// try presentation.finish(answer)
/// ```
public final class DialogPresentation: Sendable {
    /// The dialog presented.
    public let dialog: Dialog
    /// Why it could be presented.
    public let decision: DialogDecision
    let token: String
    /// When it was claimed: recorded as the time it was shown.
    let claimedAt: Date
    private let gate: DialogGate
    private let phase = Locked(Phase.open)

    private enum Phase { case open, ending, ended }

    /// The tokens of the presentations this process holds. A stored claim of this process binds only while its
    /// token is here, so one this process dropped or failed to release never blocks it.
    static let activeTokens = Locked<Set<String>>([])

    init(dialog: Dialog, decision: DialogDecision, token: String, claimedAt: Date, gate: DialogGate) {
        self.dialog = dialog
        self.decision = decision
        self.token = token
        self.claimedAt = claimedAt
        self.gate = gate
    }

    deinit {
        guard phase.withLock({ $0 == .open }) else { return }
        do { try gate.release(self) } catch {
            gate.prefs.reportWriteFailure(error, key: DialogRecord.storeKeyName(for: dialog.id))
        }
        Self.activeTokens.withLock { _ = $0.remove(token) }
    }

    /// Records the user's answer, counts the presentation and releases it, in one transaction.
    ///
    /// - Throws: ``DialogGateError/presentationEnded(dialogID:)`` if it was ended already; a store error (the
    ///   presentation then stays open, and may be finished again).
    public func finish(_ response: DialogResponse) throws(DialogGateError) {
        try end { try gate.record(response, for: dialog, ending: self) }
    }

    /// Releases the presentation without counting it or recording an answer: the dialog was not shown after
    /// all (another modal took over).
    ///
    /// - Throws: ``DialogGateError/presentationEnded(dialogID:)`` if it was ended already, or a store error.
    public func cancel() throws(DialogGateError) {
        try end { try gate.release(self) }
    }

    /// Whether ``finish(_:)`` or ``cancel()`` ended it.
    public var isEnded: Bool {
        phase.withLock { $0 == .ended }
    }

    private func end(_ write: () throws -> Void) throws(DialogGateError) {
        let wasOpen = phase.withLock { phase in
            guard phase == .open else { return false }
            phase = .ending
            return true
        }
        guard wasOpen else { throw .presentationEnded(dialogID: dialog.id) }
        do {
            try DialogGateError.converting(write)
        } catch {
            phase.withLock { $0 = .open }
            throw error
        }
        phase.withLock { $0 = .ended }
        Self.activeTokens.withLock { _ = $0.remove(token) }
    }
}

/// Why a DialogGate call did nothing: the rules, the presentation's state, or the store under it.
///
/// ```swift
/// do {
///     try gate.recordPresentation(of: tips)
/// } catch .notPresentable(let decision) {
///     print(decision)   // "tips: not presented: snoozed until …"
/// } catch .store(let error) {
///     print(error.path ?? "", error)   // where the store failed, and why
/// } catch {
///     print(error)
/// }
/// ```
public enum DialogGateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// ``DialogGate/recordPresentation(of:)`` found that the rules no longer allow presenting: another gate,
    /// thread or process presented or answered the dialog since the caller decided.
    case notPresentable(DialogDecision)
    /// ``DialogPresentation/finish(_:)`` or ``DialogPresentation/cancel()`` on a presentation already ended.
    case presentationEnded(dialogID: String)
    /// The store failed (a lock timeout, a full disk, a file another user owns, a server's SQLSTATE), or a dialog's id
    /// or never-remind key is not a name the store accepts: the store's own error, which says what and where.
    case store(PrefsError)

    public var description: String {
        switch self {
        case .notPresentable(let decision): "not recorded: \(decision)"
        case .presentationEnded(let id): "the presentation of \(id) has ended already"
        case .store(let error): "\(error)"
        }
    }

    /// Runs `body` (store calls and DialogGate's own checks), throwing what it throws as a `DialogGateError`.
    static func converting<Result>(_ body: () throws -> Result) throws(DialogGateError) -> Result {
        do {
            return try body()
        } catch let error as DialogGateError {
            throw error
        } catch {
            throw .store(PrefsError(error))
        }
    }
}
