/// What happened to a local dialog or a remote message, for analytics: the `onEvent` of ``DialogGate/DialogGate``
/// and of ``MessageCenter``, so one handler can log both.
///
/// ```swift
/// DialogGate(prefs: prefs, onEvent: { event in analytics.log("\(event)") })   // "presented rate", "answered rate: never remind"
/// center.onEvent = { event in analytics.log("\(event)") }                     // "impression 7", "acknowledged 7 (confirm)"
/// ```
public enum DialogEvent: Sendable, Hashable, CustomStringConvertible {
    // MARK: Local dialogs, by id

    /// A presentation was claimed (or recorded): the dialog goes on screen.
    case presented(String)
    /// A presentation ended with the user's answer.
    case answered(String, DialogResponse)
    /// A presentation was cancelled: not shown after all.
    case cancelled(String)

    // MARK: Remote messages

    /// The message became pending: the app presents it.
    case impression(RemoteMessage)
    /// The user acknowledged it (confirm, link, or skip this version).
    case acknowledged(RemoteMessage, MessageCenter.Acknowledgement)
    /// It was put away without an acknowledgement (``MessageCenter/dismissWithoutAcknowledging()``).
    case dismissed(RemoteMessage)

    /// `presented ID`, `answered ID: RESPONSE`, `cancelled ID`; `impression N`, `acknowledged N (confirm|link|skip version)`,
    /// `dismissed N` for a message's id.
    public var description: String {
        switch self {
        case .presented(let id): "presented \(id)"
        case .answered(let id, let response): "answered \(id): \(response)"
        case .cancelled(let id): "cancelled \(id)"
        case .impression(let message): "impression \(message.id)"
        case .acknowledged(let message, let action):
            "acknowledged \(message.id) (\(action == .link ? "link" : action == .skipVersion ? "skip version" : "confirm"))"
        case .dismissed(let message): "dismissed \(message.id)"
        }
    }
}
