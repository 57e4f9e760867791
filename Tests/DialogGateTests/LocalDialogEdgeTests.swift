import DialogGate
import Foundation
import Prefs
import PrefsTestSupport
import Testing

/// Regressions found by review: version resets with a legacy key, ids that are not key names, dates
/// beyond what the store can write, overlapping presentations, and empty resets.
@Suite("Local dialogs: edge cases")
struct LocalDialogEdgeTests {
    let directory: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A "launch": a new store on the same file and a new session, as a new app process has.
    func launch(appVersion: String? = "1.0") throws -> DialogGate {
        DialogGate(prefs: try Prefs(.sqlite(directory.file("app.sqlite"))), session: DialogSession(),
                   appVersion: appVersion, overrides: DialogOverrides(), clock: clock.function)
    }

    @Test("a version reset removes the legacy never-remind key, so the old answer does not come back after the next presentation")
    func versionResetClearsLegacyKey() throws {
        let dialog = Dialog("w", policy: DialogPolicy(resetsOnAppVersionChange: true, neverRemindKey: "w_never"))
        let v1 = try launch(appVersion: "1.0")
        try v1.recordPresentation(of: dialog)
        try v1.record(.neverRemind, for: dialog)
        #expect(!v1.shouldPresent(dialog))

        let v2 = try launch(appVersion: "2.0")
        #expect(v2.decision(for: dialog).reasons == [.resetByAppVersionChange(from: "1.0", to: "2.0"), .eligible(shown: 0, limit: nil)])
        try v2.recordPresentation(of: dialog)
        #expect(v2.decision(for: dialog).reasons == [.eligible(shown: 1, limit: nil)])
        #expect(try v2.prefs.storedValue(forKey: "w_never") == nil, "removed in the transaction that started the new record")
        try v2.record(.dismiss, for: dialog)
        #expect(try launch(appVersion: "2.0").shouldPresent(dialog))

        try v2.record(.neverRemind, for: dialog)
        #expect(try launch(appVersion: "2.0").decision(for: dialog).reasons == [.neverRemind(since: clock.now)])
        #expect(v2.prefs[Prefs.Key("w_never", initial: false)], "a never-remind in the new version writes the key again")
    }
}
