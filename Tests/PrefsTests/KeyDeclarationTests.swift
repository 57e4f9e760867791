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
}
