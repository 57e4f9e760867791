import Foundation
import MessageFeed
import MessageFeedFetching
import Prefs

// What a message center stores, in one transaction each on the store queue: an acknowledgement and an answer to an
// update message; and the forced message a QA launch asks for.
extension MessageCenter {
    /// Stores an answer to an update message in one transaction (on the store queue): the version skipped, if any, and
    /// the end of the presentation `ended`. Returns what went wrong with the store, if anything.
    nonisolated static func recordUpdateAnswer(
        skipping version: String?, ending ended: MessageClaimHolder.Held?, prefs: Prefs, keys: StoreKeys
    ) -> PrefsError? {
        do {
            try prefs.transaction { transaction in
                if let ended, try transaction.value(for: keys.presenting)?.claim.token == ended.token { transaction.reset(keys.presenting) }
                if let version { try transaction.set(version, for: keys.skippedVersion) }
            }
            return nil
        } catch {
            return PrefsError(error)
        }
    }

    /// The message a QA build is asked to force at launch: the launch argument `-DialogGateForceMessage ID` (as Xcode's
    /// scheme passes it), else the environment variable `DIALOGGATE_FORCE_MESSAGE=ID`; a value that is not an id is
    /// returned as `unrecognized`. Read it only in a QA build (a release build is not steered by whoever launches it), and
    /// give it to ``forcedMessageId``.
    ///
    /// ```swift
    /// #if DEBUG
    /// center.forcedMessageId = MessageCenter.forcedMessageId().id   // MyApp -DialogGateForceMessage 7
    /// #endif
    /// ```
    public nonisolated static func forcedMessageId(
        arguments: [String] = CommandLine.arguments, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (id: Int?, unrecognized: String?) {
        let raw: String
        if let index = arguments.lastIndex(of: "-DialogGateForceMessage") {
            guard index + 1 < arguments.count else { return (nil, "-DialogGateForceMessage without an id") }
            raw = arguments[index + 1]
        } else {
            guard let value = environment["DIALOGGATE_FORCE_MESSAGE"], !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                return (nil, nil)
            }
            raw = value
        }
        guard let id = Int(raw.trimmingCharacters(in: .whitespaces)), id > 0 else { return (nil, raw) }
        return (id, nil)
    }

    /// Stores an acknowledgement in one transaction (on the store queue): `lastMessageId` (never lowered), the ids passed
    /// over, the message's impressions, and the end of the presentation `ended`. Returns the stored `lastMessageId`
    /// (`Int.max` when it is not a whole number: it is left alone, it might be higher), or what went wrong.
    nonisolated static func recordAcknowledgement(
        of id: Int, lower: [Int], ending ended: MessageClaimHolder.Held?, prefs: Prefs, keys: StoreKeys
    ) -> Result<Int, AcknowledgementFailure> {
        do {
            return try prefs.transaction { transaction -> Result<Int, AcknowledgementFailure> in
                if let ended, try transaction.value(for: keys.presenting)?.claim.token == ended.token { transaction.reset(keys.presenting) }
                switch lastMessageId(from: try transaction.storedValue(forKey: keys.lastMessageId.name), key: keys.lastMessageId.name) {
                case .success(let current):
                    var passedOver = Set(try transaction.value(for: keys.passedOver))
                    passedOver.formUnion(lower.filter { $0 > current })
                    passedOver.remove(id)
                    try transaction.set(max(current, id), for: keys.lastMessageId)
                    if passedOver.isEmpty {
                        transaction.reset(keys.passedOver)  // nothing passed over: no key to show in prefs-tool
                    } else {
                        try transaction.set(Array(passedOver.sorted().suffix(passedOverLimit)), for: keys.passedOver)
                    }
                    if try transaction.storedValue(forKey: keys.impressions.name) != nil {
                        var impressions = try transaction.value(for: keys.impressions)
                        if impressions.messages.removeValue(forKey: String(id)) != nil { try transaction.set(impressions, for: keys.impressions) }
                    }
                    return .success(max(current, id))
                case .failure(let error):
                    return .failure(.feed(error))
                }
            }
        } catch {
            return .failure(.store(PrefsError(error)))  // the transaction's own: the body throws only through it
        }
    }

    /// Why an acknowledgement was not stored: the stored state (`unreadableState`), or the store.
    enum AcknowledgementFailure: Error {
        case feed(FeedFetchError)
        case store(PrefsError)
    }
}
