import DialogGate
import Foundation
import PrefsTestHarness
import PrefsTesting
import PrefsUserDefaults
import TestFixtures
import Testing

import Prefs

/// A never-remind key named as older code named it for UserDefaults, with any string UserDefaults accepted: white
/// space at either end (`"Intro tip "`), a tab, a line break, the empty string.
@Suite("Local dialogs: never-remind keys with any name UserDefaults accepted")
struct LegacyKeyNameTests {
    static let names = ["Intro tip ", " leading", "tab\tkey", "two\nlines", ""]

    @Test("older code's true under \"Intro tip \" hides the dialog; Never remind writes it there; reset clears it", arguments: Backend.allCases)
    func trailingSpace(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let defaults = PrefsDefaults(prefs)
        let gate = DialogGate(prefs: prefs, session: DialogSession(), overrides: DialogOverrides())
        let tip = Dialog("Intro tip ", policy: DialogPolicy(neverRemindKey: "Intro tip "))

        #expect(gate.shouldPresent(tip))
        var shown = 0
        try await gate.presentIfNeeded(tip) { _ in
            shown += 1
            return .neverRemind
        }
        #expect(shown == 1)
        #expect(defaults.bool(forKey: "Intro tip "), "written under the legacy name, which the seed's own read finds")
        #expect(try prefs.storedValue(forKey: "Intro tip ") == StoredValue(true))
        #expect(!defaults.bool(forKey: "Intro tip"), "a different key from the name without its space")
        try await gate.presentIfNeeded(tip) { _ in
            shown += 1
            return .hideForSession
        }
        #expect(shown == 1)

        try gate.reset([tip])
        #expect(try prefs.storedValue(forKey: "Intro tip ") == nil)
        defaults.set(true, forKey: "Intro tip ")  // older code answered "Don't Remind"
        #expect(!gate.shouldPresent(tip))
        #expect(gate.decision(for: tip).description.contains("legacy key"), "\(gate.decision(for: tip))")
        #expect(fixture.diagnostics.all.isEmpty)
    }

    @Test("every name UserDefaults accepts works through PrefsDefaults and as a never-remind key", arguments: Backend.allCases)
    func anyName(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let defaults = PrefsDefaults(fixture.prefs)
        for (index, name) in Self.names.enumerated() {
            defaults.set(index, forKey: name)
        }
        let reopened = PrefsDefaults(try fixture.reopen())
        for (index, name) in Self.names.enumerated() {
            #expect(reopened.integer(forKey: name) == index, "\(name.debugDescription)")
        }
        #expect(Set(reopened.dictionaryRepresentation().keys) == Set(Self.names))
        #expect(try fixture.prefs.integrityProblems().isEmpty)
        defaults.removeObject(forKey: "Intro tip ")
        #expect(defaults.object(forKey: "Intro tip ") == nil)

        let gate = DialogGate(prefs: fixture.prefs, session: DialogSession(), overrides: DialogOverrides())
        for name in Self.names {
            defaults.set("YES", forKey: name)
            #expect(!gate.shouldPresent(Dialog("d", policy: DialogPolicy(neverRemindKey: name))), "\(name.debugDescription)")
        }
        #expect(fixture.diagnostics.all.isEmpty)

        defaults.set(true, forKey: "nul\u{0}key")
        #expect(defaults.object(forKey: "nul\u{0}key") == nil)
        #expect(fixture.diagnostics.all.map(\.description).contains { $0.contains("cannot contain the character U+0000") })
    }

    @Test("a typed key adopts a legacy name as a former name; archives keep such names", arguments: Backend.allCases)
    func formerNameAndArchive(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        PrefsDefaults(prefs).set(true, forKey: "Intro tip ")
        let introSeen = Prefs.Key<Bool>("introSeen", initial: false, formerNames: ["Intro tip "])
        #expect(prefs[introSeen])
        prefs[introSeen] = true
        #expect(try prefs.storedValue(forKey: "Intro tip ") == nil, "moved to the key's own name by its write")

        PrefsDefaults(prefs).set("kept", forKey: " padded ")
        let archive = try StoreArchive.contents(of: StoreArchive.export(prefs), source: "export")
        #expect(archive.values[" padded "] == StoredValue(type: .string, json: .string("kept")))
        let copy = try Prefs(.memory)
        try copy.importArchive(archive)
        #expect(PrefsDefaults(copy).string(forKey: " padded ") == "kept")
    }
}
