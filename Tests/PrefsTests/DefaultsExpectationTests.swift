import Foundation
import PrefsTestSupport
import TestFixtures
import Testing

@_spi(Tooling) import Prefs

extension Prefs.Keys {
    fileprivate static let nickname = Key<String?>("nickname", initial: "Ada")
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
}
