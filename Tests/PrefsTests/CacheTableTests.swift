import Foundation
@testable import Prefs
import PrefsTestHarness
import Testing

/// The store's cache table against a `Dictionary` doing the same: random insertions, updates and removals, with names
/// whose hashes collide on purpose, so probes wrap around the table and removals shift runs of buckets back.
@Suite("Cache table")
struct CacheTableTests {
    static let entries = (0..<8).map { try? StoredValue($0) }

    /// The name `k<index>`; its hash one of `spread` values (all alike for 1), or its own.
    static func name(_ index: Int, spread: Int?) -> CacheName {
        let text = "k\(index)"
        guard let spread else { return CacheName(text) }
        // Hashes near the top of the table too, so a run wraps around to the start.
        return CacheName(text, hash: (index % spread) &* 7 &- 3)
    }

    @Test("random operations read as a Dictionary does", arguments: [nil, 1, 3, 64] as [Int?], [UInt64(1), 2, 3])
    func matchesDictionary(spread: Int?, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = CacheTable()
        var model: [String: (entry: Int, declared: Bool)] = [:]
        for step in 0..<4_000 {
            let index = Int.random(in: 0..<300, using: &random)
            let name = Self.name(index, spread: spread)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let entry = Int.random(in: 0..<Self.entries.count, using: &random)
                table[name] = StoreCache.Slot(stored: Self.entries[entry])
                model[name.name] = (entry, false)
            case 40..<55:
                table.update(name) { $0.declared = true }
                model[name.name]?.declared = true
            case 55..<65:
                table.update(name, default: StoreCache.Slot(stored: Self.entries[0])) { $0.declared.toggle() }
                let current = model[name.name] ?? (0, false)
                model[name.name] = (current.entry, !current.declared)
            case 65..<95:
                table[name] = nil
                model[name.name] = nil
            case 95..<98:
                table.reserveCapacity(Int.random(in: 0..<600, using: &random))
            default:
                let keep = Bool.random(using: &random)
                table.removeAll(keepingCapacity: keep)
                model.removeAll()
            }
            #expect(table.count == model.count, "step \(step)")
            if step % 97 == 0 || step > 3_900 {
                for probe in 0..<300 {
                    let slot = table[Self.name(probe, spread: spread)]
                    let expected = model["k\(probe)"]
                    #expect(slot?.stored == expected.flatMap { Self.entries[$0.entry] }, "step \(step), k\(probe)")
                    #expect(slot?.declared == expected?.declared, "step \(step), k\(probe)")
                }
            }
        }
    }

    @Test("growing in place, from small blocks to ones malloc maps, keeps every slot findable and removable", arguments: [nil, 1, 4_096] as [Int?])
    func growsInPlace(spread: Int?) {
        var table = CacheTable()
        var sizes: [Int] = []
        // Runs of one hash (spread 1: a single run of them all, kept short, as every probe walks it) land at the top of
        // the table, wrap around to its start, and move both ways as it grows: the growth must leave no empty bucket
        // between a slot and its own.
        let count = spread == 1 ? 500 : 20_000
        for index in 0..<count {
            table[Self.name(index, spread: spread)] = StoreCache.Slot(stored: Self.entries[index % Self.entries.count])
            if sizes.last != table.bucketCount { sizes.append(table.bucketCount) }
            if index % 997 == 0 {
                for probe in stride(from: 0, through: index, by: 7) {
                    #expect(table[Self.name(probe, spread: spread)]?.stored == Self.entries[probe % Self.entries.count], "\(index) names, k\(probe)")
                }
            }
        }
        #expect(table.count == count)
        let mapped = 128 * 1_024 / 64  // 2,048 buckets: glibc maps a block from 128 KiB
        #expect(count < mapped || sizes.contains { $0 < mapped } && sizes.contains { $0 > mapped }, "grown through \(sizes)")
        for index in 0..<count {
            let slot = table[Self.name(index, spread: spread)]
            #expect(slot?.stored == Self.entries[index % Self.entries.count], "k\(index)")
            if slot == nil { break }
        }
        // Removing every other name shifts runs back over the grown table; the rest stay findable.
        for index in stride(from: 0, to: count, by: 2) { table[Self.name(index, spread: spread)] = nil }
        #expect(table.count == count / 2)
        for index in 0..<count {
            let expected = index % 2 == 0 ? nil : Self.entries[index % Self.entries.count]
            #expect(table[Self.name(index, spread: spread)]?.stored == expected, "k\(index) after the removals")
        }
        table.reserveCapacity(100_000)
        #expect(table.count == count / 2 && table[Self.name(count - 1, spread: spread)]?.stored == Self.entries[(count - 1) % Self.entries.count])
    }

    @Test("a name is found by its text, not its hash alone; equal texts with the cache's own hashes agree")
    func namesCompareByText() {
        var table = CacheTable()
        table[CacheName("a", hash: 5)] = StoreCache.Slot(stored: Self.entries[1])
        #expect(table[CacheName("b", hash: 5)] == nil)
        #expect(table[CacheName("a", hash: 5)]?.stored == Self.entries[1])
        table[CacheName("name")] = StoreCache.Slot(stored: Self.entries[2])
        #expect(table[CacheName(Prefs.Key<Int>("name", initial: 0))]?.stored == Self.entries[2])
    }
}
