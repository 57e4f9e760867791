import Foundation
import Prefs
import PrefsPostgreSQL
import Testing

/// A row's value read from libpq's bytes, with shortcuts for the common types, by a key read from the server on its
/// own (`revisioned(_:)`) and by a check of the namespace (`refresh()`), reads what the row's text reads as
/// (`PostgreSQLBackend.storedValue(type:text:)`), whatever the row holds: rows written by another program, with
/// integers and booleans spelled as JSON does not spell them.
@Suite("PostgreSQL row text")
struct PostgreSQLRowTextTests {
    /// An initial value no planted text spells: reading it back means the row was unreadable.
    static let count = Prefs.Key<Int>("count", initial: -999)
    static let flag = Prefs.Key<Bool?>("flag", initial: nil)

    /// Plants `value` (SQL text, NULL included) with the type `type` in `key`'s row, as another program would, with a
    /// new revision so that the store's check sees the row changed.
    static func plant(_ fixture: PostgreSQLFixture, _ key: String, type: String, value: String?) throws {
        let literal = value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
        try server().psql(
            """
            UPDATE prefs_values SET type = '\(type)', value = \(literal), revision = nextval('prefs_revision'), \
            xid = pg_current_xact_id() WHERE namespace = '\(fixture.namespace)' AND key = '\(key)'
            """)
    }

    /// What a check reads (`nil` for an unreadable value), and what a read of the key alone reads (`nil` likewise).
    static func bothReads<Value: PrefsStorable & Equatable>(_ fixture: PostgreSQLFixture, _ key: Prefs.Key<Value>) throws -> (checked: Value?, alone: Value?) {
        try fixture.prefs.refresh()
        let checked: Value? =
            switch fixture.prefs.lookup(key) {
            case .stored(let value), .initial(let value), .argument(let value): value
            case .unreadable: nil
            }
        let alone = try fixture.prefs.revisioned(key)
        return (checked, alone.isStored && alone.value == key.initial ? nil : alone.value)
    }

    @Test(
        "an int row reads alike either way, spelled canonically or not",
        arguments: [
            "5", "-12", "0", "-0", "007", "-007", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            " 5", "5 ", "+5", "5.0", "1e3", "", "-", "\"5\"", "12345678901234567890",
        ])
    func integers(text: String) throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(stalenessBound: .seconds(600), listens: false))
        try fixture.prefs.set(1, for: Self.count)
        try Self.plant(fixture, "count", type: "int", value: text)
        let (checked, alone) = try Self.bothReads(fixture, Self.count)
        let expected = try? PostgreSQLBackend.storedValue(type: "int", text: text).decode(Int.self)
        #expect(checked == expected, "\(text.debugDescription): a check read \(String(describing: checked)), the text reads \(String(describing: expected))")
        #expect(alone == expected, "\(text.debugDescription): the key alone read \(String(describing: alone)), the text reads \(String(describing: expected))")
        if text == "5" || text == "5 " { #expect(alone == 5) }
        if text == "007" || text == "+5" { #expect(alone == nil, "not JSON: unreadable") }
    }

    @Test(
        "a bool row reads alike either way, and a type named in another case is not a bool",
        arguments: [("bool", "true"), ("bool", "false"), ("bool", "TRUE"), ("bool", "1"), ("bool", " true"), ("Bool", "true"), ("boo", "true")])
    func booleans(type: String, text: String) throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(stalenessBound: .seconds(600), listens: false))
        try fixture.prefs.set(false, for: Self.flag)
        try Self.plant(fixture, "flag", type: type, value: text)
        try fixture.prefs.refresh()
        let checked: Bool?? =
            switch fixture.prefs.lookup(Self.flag) {
            case .stored(let value), .initial(let value), .argument(let value): .some(value)
            case .unreadable: nil
            }
        let alone = try fixture.prefs.revisioned(Self.flag)
        let expected: Bool?? = (try? PostgreSQLBackend.storedValue(type: type, text: text).decode(Bool.self)).map { .some($0) }
        #expect(checked == expected, "\(type) \(text.debugDescription): a check read \(String(describing: checked))")
        #expect(
            expected == nil ? alone.value == nil : expected == .some(alone.value),
            "\(type) \(text.debugDescription): alone \(String(describing: alone.value))")
        if type == "bool", text == "true" { #expect(alone.value == true) }
        if type == "Bool" { #expect(checked == nil, "an unknown type: unreadable as a Bool") }
    }
}
