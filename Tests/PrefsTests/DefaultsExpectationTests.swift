import Foundation
import PrefsTestSupport
import PrefsUserDefaults
import Synchronization
import TestFixtures
import Testing

@_spi(Tooling) import Prefs

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
}
