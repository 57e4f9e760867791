import Foundation
@testable import Prefs
import PrefsTestHarness
import Testing

/// A change set's values (``ChangeTable``) against a `Dictionary` doing the same, and its copies: a copy keeps what
/// it held while the original changes, as a `Dictionary`'s does.
@Suite("Change table")
struct ChangeTableTests {
    static func change(_ index: Int) -> Changeset.Change {
        index % 5 == 0 ? .remove : .set(StoredValue(type: .int, json: .int(index)))
    }

    static func dictionary(_ table: ChangeTable) -> [String: Changeset.Change] {
        var result: [String: Changeset.Change] = [:]
        for (key, change) in table {
            #expect(result[key] == nil, "\(key) iterated twice")
            result[key] = change
        }
        return result
    }

    @Test("random sets, removals and copies read as a Dictionary's do", arguments: [UInt64(1), 2, 3])
    func matchesDictionary(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = ChangeTable()
        var model: [String: Changeset.Change] = [:]
        var copies: [(ChangeTable, [String: Changeset.Change])] = []
        for step in 0..<3_000 {
            let key = "k\(Int.random(in: 0..<400, using: &random))"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<60:
                let change = Self.change(step)
                table[key] = change
                model[key] = change
            case 60..<90:
                table[key] = nil
                model[key] = nil
            case 90..<98:
                #expect(table[key] == model[key], "step \(step)")
            default:
                copies.append((table, model))
            }
            #expect(table.count == model.count && table.isEmpty == model.isEmpty, "step \(step)")
        }
        #expect(Self.dictionary(table) == model)
        #expect(Set(table.keys) == Set(model.keys) && table.keys.count == model.count)
        for (copy, expected) in copies {
            #expect(Self.dictionary(copy) == expected, "a copy changed with its original")
            #expect((copy == table) == (expected == model))
        }
    }

    @Test("equal tables are equal and hash alike whatever their order; merge keeps the later change of a key")
    func equalityAndMerge() {
        var forward = ChangeTable()
        var backward = ChangeTable()
        for index in 0..<200 { forward["k\(index)"] = Self.change(index) }
        for index in (0..<200).reversed() { backward["k\(index)"] = Self.change(index) }
        #expect(forward == backward && forward.hashValue == backward.hashValue)
        backward["k7"] = .remove
        #expect(forward != backward)
        var merged = forward
        merged.merge(["k7": .remove, "new": .remove])
        #expect(merged.count == 201 && merged["k7"] == .remove && merged["new"] == .remove && forward["k7"] == Self.change(7))
        var empty = ChangeTable()
        empty.merge(forward)
        #expect(empty == forward && ChangeTable().first == nil && ChangeTable().keys.isEmpty)
        let one: ChangeTable = ["only": .remove]
        #expect(one.first?.key == "only" && one.count == 1)
        let sets = forward.compactMapValues { change -> Int? in
            if case .set(let value) = change, case .int(let number) = value.json { return number }
            return nil
        }
        #expect(sets.count == 160 && sets["k3"] == 3 && sets["k5"] == nil)
        #expect(ChangeTable(Self.dictionary(forward)) == forward)
    }

    @Test("a table of none or one change (kept inline) grows, shrinks, copies and merges as a Dictionary", arguments: [UInt64(4), 5])
    func smallTables(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = ChangeTable()
        var model: [String: Changeset.Change] = [:]
        var copies: [(ChangeTable, [String: Changeset.Change])] = []
        for step in 0..<2_000 {
            // Three names: the table keeps crossing between empty, one change and a table of two or three.
            let key = "k\(Int.random(in: 0..<3, using: &random))"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let change = Self.change(step)
                table.insert(change, for: CacheName(key))
                model[key] = change
            case 40..<80:
                table[key] = nil
                model[key] = nil
            case 80..<85:
                table.reserveCapacity(Int.random(in: 0..<4, using: &random))
            case 85..<90:
                let later: ChangeTable = [key: .remove]
                table.merge(later)
                model[key] = .remove
            default:
                copies.append((table, model))
            }
            #expect(table.count == model.count && Self.dictionary(table) == model, "step \(step)")
            #expect(table.first.map { model[$0.key] == $0.value } ?? model.isEmpty, "step \(step)")
        }
        for (copy, expected) in copies { #expect(Self.dictionary(copy) == expected, "a copy changed with its original") }
    }

    @Test("names come out of a table with a hash that finds them in another table, as their own hash does")
    func keptHashes() {
        for count in [1, 2, 50] {
            var table = ChangeTable()
            for index in 0..<count { table["name\(index)"] = Self.change(index) }
            var other = NameTable<Int>()
            var seen = 0
            table.forEachName { name, _ in
                other.insert(seen, for: name)
                seen += 1
            }
            #expect(seen == count)
            for index in 0..<count { #expect(other[CacheName("name\(index)")] != nil, "name\(index) of \(count)") }
        }
    }
}
