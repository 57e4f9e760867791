// A child process for DialogGate's cross-process tests: an app, an extension or a second scene on one store.
//
//   dialoggate-test-child claim json|sqlite PATH ID MAX RELEASE ANSWER
//       claims dialog ID (MAX presentations, 0 for no limit); prints "granted" or "declined: DECISION". When
//       granted, waits until the file RELEASE exists ("-": at once), then ends the presentation with ANSWER
//       (ok, never, dismiss or cancel) and prints "finished".
//   dialoggate-test-child race json|sqlite PATH ID MAX START ROUNDS
//       waits until the file START exists, then ROUNDS times claims dialog ID and, when granted, answers
//       dismiss; prints "granted N" with the number of presentations it was granted.
@_spi(Tooling) import DialogGate
import Foundation
@_spi(Tooling) import Prefs

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

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 7, let maximum = Int(arguments[4]) else {
    fail("usage: dialoggate-test-child claim|race json|sqlite PATH ID MAX FILE ARG")
}
let url = URL(fileURLWithPath: arguments[2])
let storage: Prefs.Storage = arguments[1] == "json" ? .jsonFile(url, lockTimeout: .seconds(30)) : .sqlite(url, busyTimeout: .seconds(30))
let dialog = Dialog(arguments[3], policy: DialogPolicy(maximumPresentations: maximum == 0 ? nil : maximum))

do {
    // No overrides argument: the default, which must not read DIALOGGATE_OVERRIDE (a test sets it for this child).
    let gate = DialogGate(prefs: try Prefs(storage), session: DialogSession(), appVersion: "1.0")
    switch arguments[0] {
    case "claim":
        switch try gate.claim(dialog) {
        case .declined(let decision):
            say("declined: \(decision)")
        case .granted(let presentation):
            say("granted")
            waitFor(arguments[5])
            switch arguments[6] {
            case "ok": try presentation.finish(.ok)
            case "never": try presentation.finish(.neverRemind)
            case "dismiss": try presentation.finish(.dismiss)
            case "cancel": try presentation.cancel()
            default: fail("unknown answer \(arguments[6])")
            }
            say("finished")
        }
    case "race":
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
    default:
        fail("unknown mode \(arguments[0])")
    }
} catch {
    fail("\(error)")
}
