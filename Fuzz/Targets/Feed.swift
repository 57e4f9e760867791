// libFuzzer target: MessageFeed's feed decoder (`FeedDecoder.decode`), linter (`FeedLinter.lint`) and
// targeting (`MessageTargeting.explain`), on `messages.json` documents from a server.
//
// Any input must end in a feed or one `FeedIssue`, never a crash. The linter reports exactly the decoder's
// issue for a rejected document and at least every decoder issue for an accepted one; issues point inside the
// input; decoding is deterministic; a valid message is never also skipped; targeting any decoded message for
// a plausible app never crashes.
import MessageFeed
import Foundation
import Prefs

private let contexts = [
    MessageContext(bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0", osVersion: "17.2", localeIdentifier: "en_US"),
    MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.10.1-beta", osVersion: "18", localeIdentifier: "pt-BR"),
]
private let now = Date(timeIntervalSince1970: 1_790_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func feedTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let options = FeedOptions(allowedLinkSchemes: ["myapp"])
    let decoded = Result { () throws(FeedIssue) in try FeedDecoder.decode(data, options: options) }
    let lint = FeedLinter.lint(data, now: now, options: options)
    for issue in lint {
        guard (0...max(count, 0)).contains(issue.location.offset), issue.location.line >= 1, issue.location.column >= 1 else {
            fatalError("issue outside the \(count)-byte input: \(issue)")
        }
        _ = issue.description
    }
    switch decoded {
    case .failure(let issue):
        guard lint == [issue] else { fatalError("the decoder rejects with \(issue), the linter says \(lint)") }
    case .success(let feed):
        guard (try? FeedDecoder.decode(data, options: options)) == feed else { fatalError("decoding twice differs") }
        let linted = Set(lint)
        for issue in feed.issues where !linted.contains(issue) { fatalError("the linter misses the decoder's \(issue)") }
        let skipped = Set(feed.skippedIndexes)
        guard skipped.count == feed.skippedIndexes.count, feed.skippedIndexes == feed.skippedIndexes.sorted() else {
            fatalError("skipped indexes repeat or are out of order: \(feed.skippedIndexes)")
        }
        for message in feed.messages where skipped.contains(message.feedIndex) {
            fatalError("message at \(message.feedIndex) is both kept and skipped")
        }
        for context in contexts {
            let report = MessageTargeting.explain(feed.messages, context: context, now: now, lastMessageId: 1, installationId: "fuzz")
            _ = report.selected
        }
    }
    return 0
}
