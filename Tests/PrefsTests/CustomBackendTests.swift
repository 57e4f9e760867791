import Foundation
import Synchronization
import Prefs
import Testing

/// The public storage seam: how a store calls a backend of the app's own, what it reports, and the values a backend
/// persists as text.
@Suite("Custom backends")
struct CustomBackendTests {
    static let count = Prefs.Key<Int>("count", initial: 0)
    static let name = Prefs.Key<String>("name", initial: "")

    @Test("the storage is named by the backend's type until a store opens, then by the backend's description")
    func description() throws {
        let storage = Prefs.Storage.custom { SharedValuesBackend(name: "described") }
        #expect(storage.description == ".custom(SharedValuesBackend)")
        let prefs = try Prefs(storage)
        #expect(prefs.storage.description == #".sharedValues("described")"#)
        #expect(try Prefs(prefs.storage).storage.description == #".sharedValues("described")"#, "an open store's storage opens again")
    }

    @Test("a transactional backend runs updates between beginTransaction and commitTransaction, after a refresh")
    func transactionalCalls() throws {
        let name = UUID().uuidString
        let prefs = try Prefs(.custom { SharedValuesBackend(name: name) })
        let calls = { SharedValuesBackend.calls(on: name) }
        try prefs.update(Self.count) { $0 += 1 }
        #expect(calls() == ["refresh", "begin", "commitTransaction(1)"])
        try prefs.set("a", for: Self.name)
        #expect(calls().suffix(2) == ["begin", "commitTransaction(1)"], "a set is a transaction of its own (commit's default)")
        struct Stop: Error {}
        #expect(throws: Stop.self) { try prefs.transaction { _ in throw Stop() } }
        #expect(calls().suffix(3) == ["refresh", "begin", "rollback"])
        try prefs.transaction { _ in }
        #expect(calls().suffix(1) == ["commitTransaction(0)"], "an empty transaction still ends, releasing the lock")
    }

    @Test("without the transaction ability, a transaction is one commit under the store's lock, and nothing when empty")
    func plainCalls() throws {
        let box = PlainBackend.Box()
        let prefs = try Prefs(.custom { PlainBackend(box) })
        try prefs.update(Self.count) { $0 += 1 }
        try prefs.transaction { transaction in
            transaction[Self.count] = 5
            transaction.reset(Self.name)
        }
        try prefs.transaction { _ in }
        try prefs.declare(Self.name)
        #expect(
            box.calls.withLock { $0 } == [
                "allValues",  // value(forKey:)'s default, for the update's read
                #"commit(["count"], removing [])"#,
                #"commit(["count"], removing ["name"])"#,
            ])
        #expect(try prefs.declaredKeys()["name"]?.type == .string, "declarations are kept by the store, in memory")
        #expect(try prefs.snapshot() == ["count": StoredValue(5)])
    }

    @Test("an error a backend throws becomes PrefsError.backend, naming the backend and the call; the store keeps going")
    func errors() throws {
        struct KeychainLocked: Error, CustomStringConvertible {
            var description: String { "the keychain is locked" }
        }
        let box = PlainBackend.Box()
        let prefs = try Prefs(.custom { PlainBackend(box) })
        box.failNextCommit.withLock { $0 = KeychainLocked() }
        #expect(throws: PrefsError.backend(".plain", reason: "commit(_:) failed: the keychain is locked")) {
            try prefs.set(1, for: Self.count)
        }
        #expect(!prefs.isStored(Self.count))
        #expect(
            "\(PrefsError.backend(".plain", reason: "commit(_:) failed: the keychain is locked"))"
                == ".plain: commit(_:) failed: the keychain is locked")
        box.failNextCommit.withLock { $0 = PrefsError.readOnlyStore(path: "/x", reason: "a test") }
        #expect(throws: PrefsError.readOnlyStore(path: "/x", reason: "a test"), "a PrefsError is thrown as it is") {
            try prefs.set(1, for: Self.count)
        }
        try prefs.set(2, for: Self.count)
        #expect(prefs[Self.count] == 2)

        #expect(throws: PrefsError.backend(".custom(PlainBackend)", reason: "opening failed: the keychain is locked")) {
            _ = try Prefs(.custom { () throws -> PlainBackend in throw KeychainLocked() })
        }
    }

    @Test("a value a backend cannot make from its text is a type mismatch for that key")
    func unreadableText() throws {
        final class TextBackend: Prefs.Backend {
            var description: String { ".text" }
            func allValues() throws -> [String: StoredValue] { ["count": try StoredValue(type: .int, jsonText: #""many""#)] }
            func commit(_ changes: Prefs.Changes) {}
        }
        let prefs = try Prefs(.custom { TextBackend() })
        let stored = StoredValue(type: .int, json: .string("many"))
        let mismatch = ValueMismatch(stored: stored, expected: .int, reason: "type int: expected an integer, found string")
        #expect(throws: PrefsError.typeMismatch(key: "count", mismatch)) { try prefs.storedValue(forKey: "count") }
        #expect(prefs[Self.count] == 0, "a read reports it and reads the initial value")
        #expect(prefs.diagnostics.map(\.description).contains { $0.contains("expected an integer, found string") })
    }

    @Test("StoredValue(type:jsonText:) reads back what type and jsonText wrote, for every kind of value")
    func textRoundTrip() throws {
        struct Window: Codable, PrefsStorable { var width: Int }
        let values: [StoredValue] = [
            try StoredValue(42), try StoredValue(true), try StoredValue(0.1), try StoredValue(-Double.infinity),
            try StoredValue("a\u{0}👩‍👩‍👧"), try StoredValue(Date(timeIntervalSince1970: 1.5)), try StoredValue(Data([0, 255])),
            try StoredValue(URL(string: "https://example.com/?q=1")!), try StoredValue(["a", "b"]), try StoredValue(["a": 1]),
            try StoredValue(Window(width: 3)), try StoredValue(UInt64.max), try StoredValue([[1], [2, 3]]),
        ]
        for value in values {
            let typeName = value.type.description
            let back = try StoredValue(type: try #require(ValueType(typeName)), jsonText: value.jsonText)
            #expect(back == value, "\(typeName) \(value.jsonText)")
        }
        #expect(try StoredValue(type: .other("future"), jsonText: "[1]").type == .other("future"), "a type this release does not know takes any JSON")
    }

    @Test("StoredValue(type:jsonText:) refuses text that is not JSON of the type's shape, saying why")
    func textRefused() {
        let cases: [(ValueType, String, String)] = [
            (.int, "4 2", "stored int \"4 2\" cannot be read as int: not JSON: 1:3: unexpected character '2' after the document"),
            (.int, #""42""#, #"stored int "42" cannot be read as int: type int: expected an integer, found string"#),
            (.date, #""yesterday""#, "stored date \"yesterday\" cannot be read as date: type date: \"yesterday\" is not an ISO-8601 date"),
            (.array(.int), "[1,\"x\"]", "stored [int] [1,\"x\"] cannot be read as [int]: [1]: type int: expected an integer, found string"),
        ]
        for (type, text, message) in cases {
            #expect {
                try StoredValue(type: type, jsonText: text)
            } throws: { error in
                "\(error)".hasPrefix(message)
            }
        }
    }

    @Test("Changes keep a key in one of values and removals, and apply to a dictionary")
    func changes() throws {
        var changes = Prefs.Changes()
        #expect(changes.isEmpty)
        changes.set(try StoredValue(1), forKey: "a")
        changes.remove("a")
        changes.remove("b")
        changes.set(try StoredValue(2), forKey: "b")
        changes.set(try StoredValue(3), forKey: "c")
        #expect(changes.values == ["b": try StoredValue(2), "c": try StoredValue(3)])
        #expect(changes.removals == ["a"])
        var stored = ["a": try StoredValue(0), "d": try StoredValue(4)]
        changes.apply(to: &stored)
        #expect(stored == ["b": try StoredValue(2), "c": try StoredValue(3), "d": try StoredValue(4)])
    }
}
