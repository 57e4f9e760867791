// swift-format-ignore-file
// (The article's lines, verbatim.)
// StandardStore.md's test with a standard store of its own, as an app's test target (main-actor isolated by default)
// holds it.
import Prefs
import PrefsTesting
import Testing

struct LaunchModel {
    @Pref(.launchCount) var launchCount
    func launched() { launchCount += 1 }
}

@Test func countsLaunches() throws {
    let store = try Prefs(.memory)                // this test's own: parallel tests never see it
    withStandardStore(store) {
        LaunchModel().launched()                  // its @Pref(.launchCount) writes to `store`
        #expect(Prefs.standard[.launchCount] == 1)
    }
}
