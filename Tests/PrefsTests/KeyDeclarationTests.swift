import Foundation
@testable import Prefs
import PrefsJSON
import Testing

/// A key's declaration, once made, is shared by every live key recorded alike (``Prefs/Keys/DeclarationBox``), and
/// lives no longer than the keys that use it.
@Suite("Key declarations")
struct KeyDeclarationTests {
    @Test("keys recorded alike share one declaration; keys recorded otherwise do not")
    func alikeKeysShareOne() throws {
        let name = UUID().uuidString  // an initial value no other test's key has
        let first = Prefs.Key<String>("first", initial: name)
        let second = Prefs.Key<String>("second", initial: name)
        let other = Prefs.Key<String>("other", initial: name + "-other")
        let renamed = Prefs.Key<String>("renamed", initial: name, formerNames: ["old"])
        #expect(first.declarationBox == nil, "made at first use")
        #expect(first.declaration == second.declaration)
        let box = try #require(first.declarationBox)
        #expect(second.declarationBox === box)
        #expect(other.declaration != first.declaration)
        #expect(other.declarationBox !== box)
        #expect(renamed.declaration.formerNames == ["old"])
        #expect(renamed.declarationBox !== box)
        let store = try Prefs(.memory)
        try store.declare(first, second)
        #expect(try store.declaredKeys()["second"] == KeyDeclaration(type: .string, initial: .string(name)))
    }

    @Test("a shared declaration goes with the last key that uses it")
    func goesWithItsKeys() throws {
        weak var box: Prefs.Keys.DeclarationBox?
        let name = UUID().uuidString
        do {
            let key = Prefs.Key<String>("k", initial: name)
            _ = key.declaration
            box = key.declarationBox
            #expect(box != nil)
            do {
                let alike = Prefs.Key<String>("alike", initial: name)
                _ = alike.declaration
                #expect(alike.declarationBox === box)
            }
            #expect(box != nil, "still used by the first key")
        }
        #expect(box == nil, "no key uses it: not kept by the table of shared declarations")
        let again = Prefs.Key<String>("k", initial: name)
        #expect(again.declaration == KeyDeclaration(type: .string, initial: .string(name)), "made again")
    }

    /// A value type a store cannot hold.
    private struct NotStorable {}

    private struct Window: Codable, Equatable, PrefsStorable {
        var width: Int
    }

    @Test("Key, Pref and ObservableValue require no conformance: the runtime makes them without searching for one")
    func typesRequireNoConformance() {
        // Builds only while these generic parameters are unconstrained. Constrained, the runtime checks the requirement
        // each time it first makes a `Key<T>` from its mangled name (as specialized code does), searching every
        // image's conformance records: some 60 µs per value type at a launch (workload 10 of the benchmark), and for
        // `Pref<T>` when a view's fields are reflected, as SwiftUI does (three fields: 0.79–0.90 ms → 0.50–0.65 ms).
        let types: [Any.Type] = [Prefs.Key<NotStorable>.self, Pref<NotStorable>.self, ObservableValue<NotStorable>.self]
        #expect(types.map { "\($0)" } == ["Key<NotStorable>", "Pref<NotStorable>", "ObservableValue<NotStorable>"])
    }

    @Test("a key seen as Prefs.Keys declares, reads its initial value and reads launch arguments as its type")
    func typeErasedKeyActsAsItsType() throws {
        let count: Prefs.Keys = Prefs.Key<Int>("count", initial: 3, formerNames: ["oldCount"])
        #expect(count.declaration == KeyDeclaration(type: .int, initial: .int(3), formerNames: ["oldCount"]))
        #expect(count.initialStoredValue() == StoredValue(type: .int, json: .int(3)))
        #expect(try count.readArgument(StoredValue(type: .string, json: .string("7"))) == StoredValue(type: .int, json: .int(7)))
        #expect(throws: ValueMismatch.self) { try count.readArgument(StoredValue(type: .string, json: .string("seven"))) }

        let window: Prefs.Keys = Prefs.Key<Window>("window", initial: Window(width: 640))
        #expect(window.declaration.type == .json)
        #expect(window.declaration.initial == .object(["width": .int(640)]))
        #expect(try window.initialStoredValue()?.decode(Window.self) == Window(width: 640))

        let nickname: Prefs.Keys = Prefs.Key<String?>("nickname")
        #expect(nickname.declaration == KeyDeclaration(type: .string, initial: nil))
        #expect(nickname.initialStoredValue() == nil, "a nil initial value is no stored value")

        // An initial value computed at each read is not recorded, but is what a read by name sees.
        let start = Date(timeIntervalSinceReferenceDate: 1_000)
        let computed: Prefs.Keys = Prefs.Key<Date>("trialEnds") { start }
        #expect(computed.declaration == KeyDeclaration(type: .date, initial: nil))
        #expect(try computed.initialStoredValue()?.decode(Date.self) == start)
    }
}
