import Foundation
import Observation
import PrefsTestSupport
import PrefsUserDefaults
import Synchronization
import TestFixtures
import Testing

@_spi(Tooling) @testable import Prefs

extension Prefs.Keys {
    fileprivate static let nickname = Key<String?>("nickname", initial: "Ada")
    fileprivate static let trialEnds = Key<Date>("trialEnds") { Date.now.addingTimeInterval(14 * 86_400) }
}

/// A counter the dynamic initial values of the tests read, so each evaluation is seen.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
    var value: Int { count.withLock { $0 } }
}

/// What Defaults' users (sindresorhus/Defaults) and `@AppStorage`'s (swift-sharing's `AppStorageKey`) expect of a
/// typed store, restated from their tests' intent against Prefs, on every backend. None of their code comes in.
@Suite("What Defaults' and @AppStorage's users expect")
struct DefaultsExpectationTests {
    // MARK: - nil for an optional key whose initial value is not nil

    @Test("set(nil) removes the value, so the initial value reads again (Defaults' meaning); storeNil stores nil itself", arguments: Backend.allCases)
    func nilForAnOptionalKey(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        #expect(prefs[.nickname] == "Ada")
        prefs[.nickname] = "Bob"
        try prefs.set(nil, for: .nickname)
        #expect(prefs[.nickname] == "Ada", "the decision: nil removes the stored value")
        #expect(!prefs.isStored(.nickname))

        try prefs.storeNil(for: .nickname)
        #expect(prefs[.nickname] == nil, "the explicit call: @AppStorage's meaning")
        #expect(prefs.isStored(.nickname))
        guard case .stored(nil) = prefs.lookup(.nickname) else {
            Issue.record("a stored nil, not \(prefs.lookup(.nickname))")
            return
        }
        #expect(try fixture.reopen()[.nickname] == nil, "the nil is stored, for other processes and the next launch")
        #expect(try prefs.integrityProblems().isEmpty)
        #expect(try prefs.storedValue(forKey: "nickname")?.type == .json)

        prefs[.nickname] = "Cy"
        #expect(prefs[.nickname] == "Cy")
        try prefs.transaction { transaction in transaction.storeNil(for: .nickname) }
        #expect(prefs[.nickname] == nil)
        try prefs.update(.nickname) { value in
            #expect(value == nil, "update starts from the stored nil")
            value = "Dee"
        }
        #expect(prefs[.nickname] == "Dee")
        try prefs.storeNil(for: .nickname)
        try prefs.reset(.nickname)
        #expect(prefs[.nickname] == "Ada", "reset removes the stored nil")
        #expect(fixture.diagnostics.all.isEmpty)
    }

    @Test("a stored nil read by a key that is not optional reads the initial value; a declaration accepts it", arguments: Backend.allCases)
    func storedNilAndOtherKeys(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.storeNil(for: .nickname)
        let plain = Prefs.Key<String>("nickname", initial: "plain")
        #expect(prefs[plain] == "plain")
        #expect(plain.declaration.mismatch(with: try #require(try prefs.storedValue(forKey: "nickname"))) == nil)
    }

    // MARK: - Dynamic initial values

    @Test("an initial value given as a closure is computed at each read while nothing is stored, and never recorded", arguments: Backend.allCases)
    func dynamicInitialValue(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let counter = Counter()
        let ticket = Prefs.Key<Int>("ticket") { counter.next() }
        #expect(prefs[ticket] == 1)
        #expect(prefs[ticket] == 2, "computed again at the next read")
        guard case .initial(3) = prefs.lookup(ticket) else {
            Issue.record("an initial value")
            return
        }
        #expect(try prefs.transaction { transaction in transaction[ticket] } == 4)
        try prefs.update(ticket) { $0 *= 10 }   // starts from the initial value computed now: 5
        #expect(prefs[ticket] == 50)
        #expect(counter.value == 5, "a stored value is read without calling the closure")
        try prefs.reset(ticket)
        #expect(prefs[ticket] == 6)

        try prefs.declare(ticket)
        #expect(try prefs.declaredKeys()["ticket"] == KeyDeclaration(type: .int, initial: nil), "no initial value is recorded")
        #expect(PrefsDefaults(prefs).integer(forKey: "ticket") == 7, "UserDefaults' getters compute it too")

        try prefs.setStoredValue(StoredValue("not a number"), forKey: "ticket")
        #expect(prefs[ticket] == 8, "an unreadable value reads the initial value, computed")

        let before = Date.now
        let trialEnds = prefs[.trialEnds]
        #expect(trialEnds >= before.addingTimeInterval(14 * 86_400) && trialEnds <= Date.now.addingTimeInterval(14 * 86_400))
    }

    // MARK: - Several keys at once

    @Test("values(for:) of several keys yields the current tuple, then one per change to any, one for a transaction of both", arguments: Backend.allCases)
    func severalKeysAsOneStream(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        var values = prefs.values(for: .launchCount, .name).makeAsyncIterator()
        #expect(try #require(await values.next()) == (0, "anonymous"))
        prefs[.launchCount] = 1
        #expect(try #require(await values.next()) == (1, "anonymous"))
        prefs[.name] = "x"
        #expect(try #require(await values.next()) == (1, "x"))
        try prefs.transaction { transaction in
            transaction[.launchCount] = 2
            transaction[.name] = "y"
        }
        #expect(try #require(await values.next()) == (2, "y"), "one tuple for the transaction, never half of it")
        prefs[.flag] = true   // a key the stream does not watch
        prefs[.launchCount] = 3
        #expect(try #require(await values.next()) == (3, "y"))
        if backend.isShared {
            try fixture.reopen().set("from another process", for: .name)
            #expect(try #require(await values.next()) == (3, "from another process"))
        }

        var three = prefs.values(for: .launchCount, .name, .flag, lossless: true).makeAsyncIterator()
        #expect(try #require(await three.next()) == (3, prefs[.name], true))
    }

    @Test("one withObservationTracking reading several keys is one registration: onChange once, at a change to any", arguments: [Backend.memory, .sqlite])
    func severalKeysAsOneObservation(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let count = prefs.observable(.launchCount)
        let name = prefs.observable(.name)
        let changes = Counter()
        func track() {
            withObservationTracking {
                _ = count.value
                _ = name.value
            } onChange: {
                _ = changes.next()
            }
        }
        func drain() {
            count.queue.sync {}
            name.queue.sync {}
        }
        track()
        prefs[.name] = "a"
        drain()
        #expect(changes.value == 1)
        track()
        prefs[.launchCount] = 1
        drain()
        #expect(changes.value == 2)
        track()
        try prefs.transaction { transaction in
            transaction[.launchCount] = 2
            transaction[.name] = "b"
        }
        drain()
        #expect(changes.value == 3, "one registration, one onChange")
        track()
        try fixture.reopen().set(3, for: .launchCount)   // another process (for memory, the same store)
        #expect(await eventually { changes.value == 4 })
    }

    // MARK: - Concurrent writes: coalescing and lossless streams

    @Test("under 100 concurrent updates, a stream coalesces (in order, always the last); a lossless one yields every value", arguments: Backend.allCases)
    func concurrentWrites(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let coalescing = prefs.values(for: .launchCount)
        let lossless = prefs.values(for: .launchCount, lossless: true)
        let writers = Task.detached {
            DispatchQueue.concurrentPerform(iterations: 100) { _ in
                do { try prefs.update(.launchCount) { $0 += 1 } } catch { Issue.record("\(error)") }
            }
        }
        var all: [Int] = []
        for await value in lossless {
            all.append(value)
            if value == 100 { break }
        }
        #expect(all == Array(0...100), "every committed value, in commit order")
        var seen: [Int] = []
        for await value in coalescing {
            seen.append(value)
            if value == 100 { break }
        }
        #expect(seen.first == 0 && seen.last == 100)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "never out of order, never repeated: \(seen)")
        await writers.value
    }

    @Test("a lossless stream yields every set of 100 threads, each once, in the order they committed", arguments: Backend.allCases)
    func losslessSets(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let lossless = prefs.values(for: .launchCount, lossless: true)
        let writers = Task.detached {
            DispatchQueue.concurrentPerform(iterations: 100) { index in prefs[.launchCount] = index + 1 }
        }
        var all: [Int] = []
        for await value in lossless {
            all.append(value)
            if all.count == 101 { break }
        }
        await writers.value
        #expect(all.first == 0)
        #expect(Set(all.dropFirst()) == Set(1...100))
        #expect(all.last == prefs[.launchCount], "the last value delivered is the one stored")
    }

    // MARK: - Writing without notifying

    @Test("withoutNotifyingObservers: the write is stored, and no stream or Observable of this store hears of it", arguments: Backend.allCases)
    func withoutNotifying(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        var coalescing = prefs.values(for: .launchCount).makeAsyncIterator()
        var lossless = prefs.values(for: .launchCount, lossless: true).makeAsyncIterator()
        var both = prefs.values(for: .launchCount, .name).makeAsyncIterator()
        #expect(await coalescing.next() == 0)
        #expect(await lossless.next() == 0)
        #expect(try #require(await both.next()) == (0, "anonymous"))
        let model = prefs.observable(.launchCount)
        let changed = Counter()
        withObservationTracking { _ = model.value } onChange: { _ = changed.next() }

        prefs.withoutNotifyingObservers { prefs[.launchCount] = 5 }
        try prefs.withoutNotifyingObservers { try prefs.update(.launchCount) { $0 += 1 } }
        model.queue.sync {}
        #expect(changed.value == 0, "no onChange")
        #expect(prefs[.launchCount] == 6, "the writes are stored")
        if backend.isShared { #expect(try fixture.reopen()[.launchCount] == 6) }

        prefs[.launchCount] = 7
        #expect(await coalescing.next() == 7, "the next change arrives, the silent ones never")
        #expect(await lossless.next() == 7)
        #expect(try #require(await both.next()) == (7, "anonymous"))
        model.queue.sync {}
        #expect(changed.value == 1)

        prefs.withoutNotifyingObservers { prefs[.launchCount] = 8 }
        prefs[.name] = "other key"
        #expect(try #require(await both.next()) == (8, "other key"), "a change to another key shows the current value")
    }

    @Test("a stream's loop may write without notifying itself, as Defaults' observers do", arguments: Backend.allCases)
    func writeFromTheLoop(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        var seen: [Int] = []
        for await count in prefs.values(for: .launchCount) {
            seen.append(count)
            if count == 0 { prefs.withoutNotifyingObservers { prefs[.launchCount] = 100 } }
            if seen.count == 1 { prefs[.name] = "unrelated" }
            if count == 100 { break }   // never: the loop's own write is silent
            if seen.count == 2 { break }
            if seen.count == 1 { prefs[.launchCount] = 2 }
        }
        #expect(seen == [0, 2])
        #expect(prefs[.launchCount] == 2)
    }
}
