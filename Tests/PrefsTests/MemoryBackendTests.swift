import Foundation
@testable import Prefs
import PrefsJSON
import PrefsTestHarness
import TestFixtures
import Testing

/// The memory backend keeps a key's value and declaration in one record, and each distinct declaration once: checked
/// against two dictionaries doing the same (what it kept before), and by counting what it holds.
@Suite("Memory backend")
struct MemoryBackendTests {
    static let declarations = [
        KeyDeclaration(type: .int, initial: .int(0)),
        KeyDeclaration(type: .int, initial: .int(1)),
        KeyDeclaration(type: .string, initial: nil, formerNames: ["old"]),
    ]

    @Test("random changes read as two dictionaries do", arguments: [UInt64(1), 2, 3, 4])
    func matchesDictionaries(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let backend = MemoryBackend(snapshot: ["k0": try StoredValue(7)])
        var values: [String: StoredValue] = ["k0": try StoredValue(7)]
        var recorded: [String: KeyDeclaration] = [:]
        for step in 0..<400 {
            var changes = Changeset()
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let name = "k\(Int.random(in: 0..<12, using: &random))"
                switch Int.random(in: 0..<4, using: &random) {
                case 0: changes.values[name] = .set(try StoredValue(step))
                case 1: changes.values[name] = .remove
                case 2: changes.declarations[name] = Self.declarations.randomElement(using: &random)
                default: changes.removedDeclarations.insert(name)
                }
            }
            changes.apply(to: &values, declarations: &recorded)
            backend.apply(changes)
            #expect(backend.allValues() == values, "step \(step)")
            #expect(backend.declarations() == recorded, "step \(step)")
            for index in 0..<12 {
                #expect(backend.value(forKey: "k\(index)") == values["k\(index)"], "step \(step), k\(index)")
                #expect(backend.declaration(forKey: "k\(index)") == recorded["k\(index)"], "step \(step), k\(index)")
            }
            #expect(backend.distinctDeclarationCount == Set(recorded.values).count, "a declaration no key names is forgotten")
        }
    }

    /// More keys than one commit of ``Prefs/declare(_:)-([Prefs.Keys])`` records: every one is recorded, and the
    /// backend holds their one declaration once.
    @Test("every value reads back as it was stored, its type and form included, whether held compact or not")
    func valuesReadBackExactly() throws {
        let values: [String: StoredValue] = [
            "int": try StoredValue(42), "intText": StoredValue(type: .int, uncheckedJSONText: "42"),
            "intAsJSON": StoredValue(type: .json, json: .int(42)), "string": try StoredValue("dark"),
            "stringText": StoredValue(type: .string, uncheckedJSONText: #""dark""#), "stringAsDate": try StoredValue(Date(timeIntervalSince1970: 5)),
            "double": try StoredValue(2.5), "list": try StoredValue([1, 2]), "nil": StoredValue(type: .json, json: .null),
            "notJSON": StoredValue(type: .string, uncheckedJSONText: "plain text"),
        ]
        let backend = MemoryBackend(snapshot: [:])
        backend.apply(Changeset(values: ChangeTable(values.mapValues { .set($0) })))
        func form(_ value: StoredValue?) -> String {
            switch value?.form {
            case .tree(let json)?: "tree \(json)"
            case .text(let text)?: "text \(text)"
            case nil: "none"
            }
        }
        for (name, value) in values {
            let read = backend.value(forKey: name)
            #expect(read == value && read?.type == value.type && form(read) == form(value), "\(name)")
        }
        #expect(backend.allValues() == values)
        let light = try StoredValue("light")
        backend.apply(Changeset(values: ["int": .remove, "string": .set(light)]))
        #expect(backend.value(forKey: "int") == nil && backend.value(forKey: "string") == light)
    }

    @Test("declaring many alike keys records each, and their declaration once")
    func declaresManyKeys() throws {
        let count = Prefs.declarationsPerCommit * 2 + 5
        let keys = (0..<count).map { Prefs.Key<Int>("k\($0)", initial: 3) }
        let backend = MemoryBackend(snapshot: [:])
        let prefs = Prefs(storage: .memory, backend: backend, pollInterval: .seconds(1), onDiagnostic: nil)
        try prefs.declare(keys)
        let declared = try prefs.declaredKeys()
        #expect(declared.count == count)
        #expect(declared["k0"] == KeyDeclaration(type: .int, initial: .int(3)))
        #expect(declared["k\(count - 1)"] == KeyDeclaration(type: .int, initial: .int(3)), "the last, partial commit")
        #expect(backend.distinctDeclarationCount == 1)
        try prefs.set(5, for: keys[count - 1])
        try prefs.removeDeclarations(["k\(count - 1)"])
        #expect(try prefs.declaredKeys().count == count - 1)
        #expect(prefs[keys[count - 1]] == 5, "the value outlives its declaration")
    }
}
