import Foundation
import Observation
import PrefsTestHarness
import PrefsTesting
import PrefsUserDefaults
import Synchronization
import TestFixtures
import Testing

@testable import Prefs

extension Prefs.Keys {
    fileprivate static let nickname = Key<String?>("nickname", initial: "Ada")
    fileprivate static let trialEnds = Key<Date>("trialEnds") { Date.now.addingTimeInterval(14 * 86_400) }
    fileprivate static let namesByID = Key<[Int: String]>("namesByID", initial: [:])
    fileprivate static let countsByMood = Key<[Mood: Int]>("countsByMood", initial: [:])
    fileprivate static let seenByUUID = Key<[UUID: Bool]>("seenByUUID", initial: [:])
    fileprivate static let labelsByLevel = Key<[Double: String]>("labelsByLevel", initial: [:])
    fileprivate static let lastInput = Key<StoredValue?>("lastInput")
    fileprivate static let mixed = Key<[String: StoredValue]>("mixed", initial: [:])
    fileprivate static let mixedList = Key<[StoredValue]>("mixedList", initial: [])
}

/// A `String` enum used as a dictionary key.
private enum Mood: String, PrefsStorable { case calm, loud }

/// A counter the dynamic initial values of the tests read, so each evaluation is seen.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func next() -> Int {
        count.withLock {
            $0 += 1; return $0
        }
    }
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
        try prefs.update(ticket) { $0 *= 10 }  // starts from the initial value computed now: 5
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
        prefs[.flag] = true  // a key the stream does not watch
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
        try fixture.reopen().set(3, for: .launchCount)  // another process (for memory, the same store)
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
        withObservationTracking {
            _ = model.value
        } onChange: {
            _ = changed.next()
        }

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
            if count == 100 { break }  // never: the loop's own write is silent
            if seen.count == 2 { break }
            if seen.count == 1 { prefs[.launchCount] = 2 }
        }
        #expect(seen == [0, 2])
        #expect(prefs[.launchCount] == 2)
    }

    // MARK: - Keys are Hashable

    @Test("keys are equal when a store records them alike, and work in sets and dictionaries", arguments: Backend.allCases)
    func hashableKeys(backend: Backend) throws {
        #expect(Prefs.Key<Int>("a", initial: 0) == Prefs.Key<Int>("a", initial: 0))
        #expect(Prefs.Key<Int>("a", initial: 0) != Prefs.Key<Int>("b", initial: 0), "another name")
        #expect(Prefs.Key<Int>("a", initial: 0) != Prefs.Key<Int>("a", initial: 1), "another initial value")
        #expect(Prefs.Keys.Key<Int>("a", initial: 0) as Prefs.Keys != Prefs.Key<Double>("a", initial: 0), "another type")
        #expect(Prefs.Key<Int>("a", initial: 0) != Prefs.Key<Int>("a", initial: 0, formerNames: ["old"]), "other former names")
        #expect(AppKey.lastMessageId.anyKey == AppKey.lastMessageId.key(as: Int.self), "an enum case is its typed key")
        let keys: Set<Prefs.Keys> = [.launchCount, .name, AppKey.lastMessageId.anyKey, AppKey.lastMessageId.anyKey, .launchCount]
        #expect(keys.count == 3)
        let labels: [Prefs.Keys: String] = [.launchCount: "launches", .name: "name"]
        #expect(labels[Prefs.Key<Int>("launchCount", initial: 0)] == "launches")

        let fixture = try StoreFixture(backend)
        fixture.prefs[.launchCount] = 3
        fixture.prefs[AppKey.lastMessageId] = 4
        try fixture.prefs.reset(Array(keys))
        #expect(try fixture.prefs.snapshot().isEmpty)
    }

    // MARK: - Dictionaries with keys other than String

    @Test("dictionaries keyed by Int, a String enum, UUID or Double round-trip as JSON objects", arguments: Backend.allCases)
    func dictionariesWithOtherKeys(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let id = UUID()
        prefs[.namesByID] = [1: "one", -20: "minus twenty", Int.max: "max"]
        prefs[.countsByMood] = [.calm: 1, .loud: 2]
        prefs[.seenByUUID] = [id: true]
        prefs[.labelsByLevel] = [0.5: "half", 1: "full"]
        let reopened = try fixture.reopen()
        #expect(reopened[.namesByID] == [1: "one", -20: "minus twenty", Int.max: "max"])
        #expect(reopened[.countsByMood] == [.calm: 1, .loud: 2])
        #expect(reopened[.seenByUUID] == [id: true])
        #expect(reopened[.labelsByLevel] == [0.5: "half", 1: "full"])
        let stored = try #require(try prefs.storedValue(forKey: "namesByID"))
        #expect(stored.type == .dictionary(.string))
        #expect(stored.jsonText == #"{"-20":"minus twenty","1":"one","9223372036854775807":"max"}"#)
        #expect(try prefs.storedValue(forKey: "countsByMood")?.jsonText == #"{"calm":1,"loud":2}"#)
        let byDate = Prefs.Key<[Date: Int]>("byDate", initial: [:])
        let byFlag = Prefs.Key<[Bool: String]>("byFlag", initial: [:])
        let byURL = Prefs.Key<[URL: Int]>("byURL", initial: [:])
        let byByte = Prefs.Key<[UInt8: Int]>("byByte", initial: [:])
        let day = Date(timeIntervalSinceReferenceDate: 800_000_000.5)
        prefs[byDate] = [day: 1]
        prefs[byFlag] = [true: "yes", false: "no"]
        prefs[byURL] = [URL(string: "https://example.com/a?b")!: 2]
        prefs[byByte] = [255: 3]
        let again = try fixture.reopen()
        #expect(again[byDate] == [day: 1] && again[byFlag] == [true: "yes", false: "no"])
        #expect(again[byURL] == [URL(string: "https://example.com/a?b")!: 2] && again[byByte] == [255: 3])
        #expect(try prefs.integrityProblems().isEmpty)
        #expect(fixture.diagnostics.all.isEmpty)
    }

    @Test("a member name that is not a key of the dictionary's key type, or two names for one key, is a mismatch", arguments: Backend.allCases)
    func dictionaryKeyMismatch(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.setStoredValue(StoredValue(["1": "one", "x": "ex"]), forKey: "namesByID")
        guard case .unreadable(_, let mismatch) = prefs.lookup(.namesByID) else {
            Issue.record("expected an unreadable value")
            return
        }
        #expect(mismatch.reason.hasPrefix(#"member name "x" is not a Int"#), "\(mismatch.reason)")
        try prefs.setStoredValue(StoredValue(["1": "one", "01": "also one"]), forKey: "namesByID")
        guard case .unreadable(_, let duplicate) = prefs.lookup(.namesByID) else {
            Issue.record("expected an unreadable value")
            return
        }
        #expect(duplicate.reason == #"members "01" and "1" are the same Int key"#)
        #expect(prefs[.namesByID] == [:])
        try prefs.setStoredValue(StoredValue(["angry": 1]), forKey: "countsByMood")
        #expect(prefs[.countsByMood] == [:])
    }

    // MARK: - A type-erased value

    @Test("StoredValue is the type-erased value: a key of it keeps any value under that value's own type", arguments: Backend.allCases)
    func typeErasedValues(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        #expect(prefs[.lastInput] == nil)
        prefs[.lastInput] = try StoredValue(42)
        #expect(try prefs.storedValue(forKey: "lastInput")?.type == .int, "stored under its own type")
        #expect(prefs[Prefs.Key<Int>("lastInput", initial: 0)] == 42, "a typed key reads it")
        prefs[.lastInput] = try StoredValue("hello")
        #expect(try prefs[.lastInput]?.decode(String.self) == "hello")
        let date = Date(timeIntervalSinceReferenceDate: 800_000_000.25)
        prefs[.lastInput] = try StoredValue(date)
        #expect(try fixture.reopen()[.lastInput]?.decode(Date.self) == date)
        prefs[.lastInput] = try StoredValue(WindowFrame(width: 1, height: 2, title: "t"))
        #expect(try prefs[.lastInput]?.decode(WindowFrame.self) == WindowFrame(width: 1, height: 2, title: "t"))
        #expect(throws: ValueMismatch.self) { try prefs[.lastInput]?.decode(Int.self) }
        prefs[.lastInput] = nil
        #expect(!prefs.isStored(.lastInput))

        let mixed: [String: StoredValue] = [
            "volume": try StoredValue(0.8), "name": try StoredValue("Ada"), "on": try StoredValue(true), "count": try StoredValue(3),
        ]
        prefs[.mixed] = mixed
        let read = try fixture.reopen()[.mixed]
        #expect(read == mixed, "scalars read back with the types their JSON forms imply")
        #expect(try read["volume"]?.decode(Double.self) == 0.8)
        prefs[.mixedList] = [try StoredValue(1), try StoredValue("two"), try StoredValue(date), try StoredValue([3, 4])]
        let list = try fixture.reopen()[.mixedList]
        #expect(list.map(\.jsonText) == ["1", #""two""#, #""2026-05-09T06:13:20.25Z""#, "[3,4]"])
        #expect(try list[2].decode(Date.self) == date)
        #expect(try list[3].decode([Int].self) == [3, 4])
        #expect(fixture.diagnostics.all.isEmpty)
    }
}
