import Foundation
import PrefsSync
import PrefsTesting
import Testing

@Suite struct HybridTimestampTests {
    @Test func textFormRoundTripsAndSortsAsTheTimestamps() {
        let stamps = [
            HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 2, device: "phone"),
            HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 10, device: "a"),
            HybridTimestamp(milliseconds: 1_800_000_000_001, counter: 0, device: "a"),
            HybridTimestamp(milliseconds: 999, counter: 4_000_000_000, device: "z-9"),
            HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 2, device: "phone2"),
        ]
        for stamp in stamps { #expect(HybridTimestamp(stamp.description) == stamp) }
        #expect(stamps.sorted() == stamps.sorted { Array($0.description.utf8).lexicographicallyPrecedes(Array($1.description.utf8)) })
        #expect(HybridTimestamp(milliseconds: 5, counter: 1, device: "a").description == "000000000000005-0000000001-a")
        for text in ["", "5-1-a", "000000000000005-0000000001-", "000000000000005-0000000001-a b", "00000000000000x-0000000001-a"] {
            #expect(HybridTimestamp(text) == nil, "\(text)")
        }
    }

    @Test func localEventsNeverGoBackWhenTheWallClockDoes() {
        let wall = TestClock()
        let clock = HybridClock(device: "a", wallClock: wall.function, maximumSkew: .seconds(300), last: nil)
        let first = clock.tick()
        wall.set(wall.now.addingTimeInterval(-3600))  // the user sets the clock back an hour
        let second = clock.tick()
        #expect(second > first)
        #expect(second.milliseconds == first.milliseconds && second.counter == first.counter + 1)
        wall.advance(by: 7200)
        let third = clock.tick()
        #expect(third.milliseconds > first.milliseconds && third.counter == 0)
    }

    @Test func receivingFollowsKulkarnisRules() {
        let wall = TestClock()
        let now = Int64(wall.now.timeIntervalSince1970 * 1000)
        let clock = HybridClock(device: "a", wallClock: wall.function, maximumSkew: .seconds(300), last: nil)
        // A remote timestamp ahead of the wall clock (within bounds): adopted, counter + 1.
        clock.receive(HybridTimestamp(milliseconds: now + 1000, counter: 7, device: "b"))
        #expect(clock.current == HybridTimestamp(milliseconds: now + 1000, counter: 8, device: "a"))
        // Equal physical parts: the greater counter + 1.
        clock.receive(HybridTimestamp(milliseconds: now + 1000, counter: 20, device: "b"))
        #expect(clock.current.counter == 21)
        // An older remote: the local one goes on.
        clock.receive(HybridTimestamp(milliseconds: now - 5000, counter: 99, device: "b"))
        #expect(clock.current == HybridTimestamp(milliseconds: now + 1000, counter: 22, device: "a"))
        // The wall clock passes both: counter 0.
        wall.advance(by: 2)
        clock.receive(HybridTimestamp(milliseconds: now, counter: 3, device: "b"))
        #expect(clock.current == HybridTimestamp(milliseconds: now + 2000, counter: 0, device: "a"))
    }

    @Test func aTimestampTooFarAheadIsOutOfBounds() {
        let wall = TestClock()
        let now = Int64(wall.now.timeIntervalSince1970 * 1000)
        let clock = HybridClock(device: "a", wallClock: wall.function, maximumSkew: .seconds(300), last: nil)
        #expect(clock.excessSkew(of: HybridTimestamp(milliseconds: now + 300_000, counter: 0, device: "b")) == nil)
        #expect(clock.excessSkew(of: HybridTimestamp(milliseconds: now + 300_001, counter: 0, device: "b")) == 300_001)
    }
}
