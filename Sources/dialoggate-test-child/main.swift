// A child process for DialogGate's cross-process tests: an app, an extension or a second scene on one store.
//
//   dialoggate-test-child claim json|sqlite PATH ID MAX RELEASE ANSWER
//       claims dialog ID (MAX presentations, 0 for no limit); prints "granted" or "declined: DECISION". When
//       granted, waits until the file RELEASE exists ("-": at once), then ends the presentation with ANSWER
//       (ok, never, dismiss or cancel) and prints "finished".
//   dialoggate-test-child race json|sqlite PATH ID MAX START ROUNDS
//       waits until the file START exists, then ROUNDS times claims dialog ID and, when granted, answers
//       dismiss; prints "granted N" with the number of presentations it was granted.
//   dialoggate-test-child message json|sqlite PATH FEED - RELEASE ANSWER
//       refreshes a MessageCenter on the feed file FEED (the sample app, 1.0 on 17.2); prints "pending N", or "none"
//       with " (presented elsewhere: N)" when another center holds message N. When pending, waits until the file
//       RELEASE exists ("-": at once), then answers with ANSWER (confirm or dismiss), waits for the store write and
//       prints "finished"; ANSWER confirm-exit acknowledges and calls exit(0) at once, without waiting. As a QA build
//       does, it reads -DialogGateForceMessage ID or DIALOGGATE_FORCE_MESSAGE=ID (MessageCenter.forcedMessageId).
//   dialoggate-test-child next json|sqlite PATH IDS MAX RELEASE ANSWER
//       claims the next of the dialogs IDS (comma-separated, in order; MAX presentations each, 0 for no limit) with
//       claim(nextOf:); prints "granted ID" or "declined: DECISION", then as claim.
//   dialoggate-test-child launch json|sqlite PATH VERSION START ROUNDS -
//       waits until the file START exists, then calls recordLaunch ROUNDS times on one gate (app version VERSION, the
//       process's session on the store); prints "launches N" with the count the last call returned.
//   dialoggate-test-child donate json|sqlite PATH EVENT START ROUNDS -
//       waits until the file START exists, then donates EVENT ROUNDS times; prints "donated".
//   dialoggate-test-child hold json|sqlite PATH KEY - RELEASE -
//       sets KEY = 1 inside a transaction, prints "holding", and holds the store's write lock until the file RELEASE
//       exists; then commits and prints "released".
import DialogGate
import Foundation
import Prefs

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("dialoggate-test-child: \(message)\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func waitFor(_ path: String) {
    while path != "-", !FileManager.default.fileExists(atPath: path) { usleep(2_000) }
}

/// Once the file `go` exists, ends `presentation` with `answer` (`ok`, `never`, `dismiss` or `cancel`) and says so.
func answer(_ presentation: DialogPresentation, after go: String, with answer: String) throws {
    waitFor(go)
    switch answer {
    case "ok": try presentation.finish(.hideForSession)
    case "never": try presentation.finish(.neverRemind)
    case "dismiss": try presentation.finish(.dismiss)
    case "cancel": try presentation.cancel()
    default: fail("unknown answer \(answer)")
    }
    say("finished")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 7 else {
    fail("usage: dialoggate-test-child claim|race|next|launch|donate|message|hold json|sqlite PATH ID|FEED|KEY MAX|- FILE ARG")
}
let url = URL(fileURLWithPath: arguments[2])
let storage: Prefs.Storage = arguments[1] == "json" ? .jsonFile(url, lockTimeout: .seconds(30)) : .sqlite(url, busyTimeout: .seconds(30))

do {
    switch arguments[0] {
    case "claim", "race":
        guard let maximum = Int(arguments[4]) else { fail("MAX must be a number") }
        let dialog = Dialog(arguments[3], policy: DialogPolicy(maximumPresentations: maximum == 0 ? nil : maximum))
        // No overrides argument: the default, which must not read DIALOGGATE_OVERRIDE (a test sets it for this child).
        let gate = DialogGate(prefs: try Prefs(storage), session: DialogSession(), appVersion: "1.0")
        if arguments[0] == "claim" {
            switch try gate.claim(dialog) {
            case .declined(let decision):
                say("declined: \(decision)")
            case .granted(let presentation):
                say("granted")
                try answer(presentation, after: arguments[5], with: arguments[6])
            }
        } else {
            guard let rounds = Int(arguments[6]) else { fail("race needs ROUNDS") }
            waitFor(arguments[5])
            var granted = 0
            for _ in 0..<rounds {
                if let presentation = try gate.claim(dialog).presentation {
                    granted += 1
                    try presentation.finish(.dismiss)
                }
            }
            say("granted \(granted)")
        }
    case "next":
        guard let maximum = Int(arguments[4]) else { fail("MAX must be a number") }
        let dialogs = arguments[3].split(separator: ",").map {
            Dialog(String($0), policy: DialogPolicy(maximumPresentations: maximum == 0 ? nil : maximum))
        }
        let gate = DialogGate(prefs: try Prefs(storage), session: DialogSession(), appVersion: "1.0")
        switch try gate.claim(nextOf: dialogs) {
        case .declined(let decision):
            say("declined: \(decision)")
        case .granted(let presentation):
            say("granted \(presentation.dialog.id)")
            try answer(presentation, after: arguments[5], with: arguments[6])
        }
    case "launch", "donate":
        guard let rounds = Int(arguments[5]) else { fail("ROUNDS must be a number") }
        let isLaunch = arguments[0] == "launch"
        let gate = DialogGate(prefs: try Prefs(storage), appVersion: isLaunch ? arguments[3] : "1.0")
        waitFor(arguments[4])
        var launches = 0
        for _ in 0..<rounds {
            if isLaunch { launches = try gate.recordLaunch() } else { try gate.donate(arguments[3]) }
        }
        say(isLaunch ? "launches \(launches)" : "donated")
    case "message":
        let context = MessageContext(
            bundleIdentifier: "com.createchsol.AppAlertExample", appVersion: "1.0", osVersion: "17.2", localeIdentifier: "en_US")
        let center = MessageCenter(feedURL: URL(fileURLWithPath: arguments[3]), prefs: try Prefs(storage), context: context)
        center.forcedMessageId = MessageCenter.forcedMessageId().id  // a QA build's opt-in
        await center.refresh()
        guard let message = center.pendingMessage else {
            say("none" + (center.presentedElsewhere.map { " (presented elsewhere: \($0))" } ?? ""))
            exit(0)
        }
        say("pending \(message.id)")
        waitFor(arguments[5])
        switch arguments[6] {
        case "confirm": center.acknowledge(.confirm, for: message)
        case "dismiss": center.dismissWithoutAcknowledging()
        case "confirm-exit":
            center.acknowledge(.confirm, for: message)
            exit(0)
        default: fail("unknown answer \(arguments[6])")
        }
        await center.flush()
        say("finished")
    case "hold":
        let prefs = try Prefs(storage)
        try prefs.transaction { transaction in
            try transaction.set(1, for: Prefs.Key<Int>(arguments[3], initial: 0))
            say("holding")
            waitFor(arguments[5])
        }
        say("released")
    default:
        fail("unknown mode \(arguments[0])")
    }
} catch {
    fail("\(error)")
}
