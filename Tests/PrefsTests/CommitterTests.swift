@testable import Prefs
import Testing

/// The coalesced writes' flush on its own (``Committer``): one flush scheduled at a time, none for a closed store.
@Suite("Committer")
struct CommitterTests {
    @Test("one flush is scheduled however many writes ask; the next write after it ran schedules another")
    func coalesces() {
        var committer = Committer()
        #expect(!committer.joinedExitFlush)
        let first = committer.scheduleFlush(storeClosed: false)
        #expect(first && committer.flushScheduled && committer.joinedExitFlush)
        let second = committer.scheduleFlush(storeClosed: false)
        #expect(!second, "one is scheduled already")
        let runs = committer.flushFired(storeClosed: false)
        #expect(runs && !committer.flushScheduled && committer.joinedExitFlush, "the store stays in the exit flush")
        let next = committer.scheduleFlush(storeClosed: false)
        #expect(next)
    }

    @Test("a closed store schedules no flush, and a flush due after it closed does not run")
    func closedStore() {
        var committer = Committer()
        let refused = committer.scheduleFlush(storeClosed: true)
        #expect(!refused && !committer.flushScheduled && !committer.joinedExitFlush)
        let scheduled = committer.scheduleFlush(storeClosed: false)
        let runs = committer.flushFired(storeClosed: true)
        #expect(scheduled && !runs)
        #expect(!committer.flushScheduled, "a later write may schedule again; the closed store then refuses")
        committer.joinExitFlush()
        #expect(committer.joinedExitFlush)
    }
}
