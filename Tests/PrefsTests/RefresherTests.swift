@testable import Prefs
import Testing

/// The poll's bookkeeping on its own (``Refresher``): which run is live, and which failures are reported.
@Suite("Refresher")
struct RefresherTests {
    @Test("one run at a time; a stopped run's ticks find it is no longer the live one; a restart is a new run")
    func runs() throws {
        var refresher = Refresher()
        #expect(refresher.running == nil)
        let started = refresher.start()
        let again = refresher.start()
        #expect(again == nil, "already running")
        let first = try #require(started)
        #expect(refresher.isRunning(first))
        refresher.stop()
        #expect(!refresher.isRunning(first))
        let restarted = refresher.start()
        let second = try #require(restarted)
        #expect(second != first && refresher.isRunning(second) && !refresher.isRunning(first))
        refresher.tick()
        refresher.tick()
        #expect(refresher.ticks == 2)
    }

    @Test("a failure is reported once while it stays the same, again after a success or a different failure")
    func failures() {
        var refresher = Refresher()
        var reported: [Bool] = []
        for reason in ["disk full", "disk full", "locked"] { reported.append(refresher.failed(reason)) }
        #expect(reported == [true, false, true])
        #expect(refresher.lastFailure == "locked")
        refresher.succeeded()
        #expect(refresher.lastFailure == nil)
        let afterSuccess = refresher.failed("locked")
        #expect(afterSuccess)
    }
}
