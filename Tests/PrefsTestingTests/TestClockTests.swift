import DialogGate
import Foundation
import Prefs
import PrefsTesting
import Testing

@Suite("TestClock")
struct TestClockTests {
    private let day = 86_400.0

    @Test("a snooze of three days ends when the clock is moved three days, with no sleep")
    func snoozeEndsWhenAdvanced() throws {
        let clock = TestClock()
        let gate = DialogGate(prefs: try Prefs(.memory), clock: clock.function)
        let rateApp = Dialog("rateApp")
        try gate.record(.remindLaterAfter(.seconds(3 * day)), for: rateApp)
        clock.advance(by: 2 * day)
        #expect(!gate.decision(for: rateApp).shouldPresent)
        clock.advance(by: .seconds(day))
        #expect(gate.decision(for: rateApp).shouldPresent)
    }

    @Test("advance moves both faces; set moves the wall clock alone; a negative advance never moves the monotonic one")
    func faces() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = TestClock(start)
        let monotonicStart = clock.store.uptimeNanoseconds
        clock.advance(by: .milliseconds(1_500))
        #expect(clock.now == start.addingTimeInterval(1.5))
        #expect(clock.function() == clock.now)
        #expect(clock.store.uptimeNanoseconds - monotonicStart == 1_500_000_000)
        clock.set(start.addingTimeInterval(-3_600))
        clock.advance(by: -60)
        #expect(clock.now == start.addingTimeInterval(-3_660))
        #expect(clock.store.uptimeNanoseconds - monotonicStart == 1_500_000_000)
    }
}
