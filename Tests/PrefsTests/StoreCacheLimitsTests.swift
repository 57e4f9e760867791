import Foundation
@testable import Prefs
import PrefsTesting
import Testing

/// The cache over a backend whose reads are one lookup (SQLite) keeps what it loads within its limits
/// (``StoreCache/Limits``), dropping cold values; what is known of a name is never dropped, and a dropped value reads
/// again from the backend.
@Suite("Store cache limits")
struct StoreCacheLimitsTests {
    /// Limits small enough to reach in a test: 8 slots only for values, 1 KiB of values outside their slots.
    static let small = StoreCache.Limits(valueSlots: 8, bytes: 1024, largestCopiedCommit: 4)

    @Test("loading many keys keeps at most the limit of slots only for values, and their count says so")
    func valueSlotsBounded() throws {
        var cache = StoreCache(limits: Self.small)
        for index in 0..<1_000 { cache.cache(try StoredValue(index), for: "k\(index)", arguments: [:]) }
        #expect(cache.held.valueSlots <= 8 && cache.table.count <= 8)
        var loaded = 0
        cache.table.forEach { _, slot in if slot.isLoaded { loaded += 1 } }
        #expect(loaded == cache.held.valueSlots, "the count is what the table holds")
    }

    @Test("long strings count their storage: the loaded values stay within the bytes allowed")
    func bytesBounded() throws {
        var cache = StoreCache(limits: Self.small)
        let key = Prefs.Key<String>("known", initial: "")
        cache.noteKnown(key, declared: true)
        for index in 0..<100 {
            cache.cache(try StoredValue(String(repeating: "x", count: 100) + "\(index)"), for: index == 0 ? "known" : "k\(index)", arguments: [:])
        }
        #expect(cache.held.bytes <= 1024 && cache.held.bytes > 0)
        #expect(cache.known(CacheName(key))?.key === key, "a known name's slot stays when its value is dropped")
        cache.invalidateAll()
        #expect(cache.held == StoreCache.Weight())
    }

    @Test("a key read between loads stays loaded while cold ones are dropped")
    func hotKeyStays() throws {
        var cache = StoreCache(limits: Self.small)
        let hot = CacheName("hot")
        cache.cache(try StoredValue(1), for: "hot", arguments: [:])
        for index in 0..<1_000 {
            cache.cache(try StoredValue(index), for: "k\(index)", arguments: [:])
            #expect(cache.hit(hot) != nil)
        }
    }

    @Test("a commit larger than the limit's copy is not taken into the cache; a small one is")
    func largeCommitNotCopied() throws {
        var cache = StoreCache(limits: Self.small)
        var large = Changeset()
        for index in 0..<100 { large.values["k\(index)"] = .set(try StoredValue(index)) }
        cache.takeCommitted(large, declared: nil, arguments: [:])
        #expect(cache.table.count == 0)
        var small = Changeset()
        small.values["a"] = .set(try StoredValue(1))
        cache.takeCommitted(small, declared: nil, arguments: [:])
        #expect(cache.table.count == 1 && cache.held.valueSlots == 1)
    }

    @Test("an SQLite store keeps its cache within the limits over 20,000 keys, and reads dropped values back as stored")
    func sqliteStoreBounded() throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(.sqlite(directory.file("s.sqlite")), launchArguments: [])
        #expect(prefs.state.withLock { $0.cache.limits != nil })
        let limits = StoreCache.Limits.readsCostOneLookup
        let count = limits.valueSlots + 3_616
        let keys = (0..<count).map { Prefs.Key<Int>("k\($0)", initial: -1) }
        try prefs.batch { transaction in for (index, key) in keys.enumerated() { try transaction.set(index, for: key) } }
        #expect(prefs.state.withLock { $0.cache.table.count } == 0, "a batch's values are read when read, not copied")
        for _ in 0..<2 {
            for (index, key) in keys.enumerated() { #expect(prefs[key] == index) }
            let (held, slots) = prefs.state.withLock { ($0.cache.held, $0.cache.table.count) }
            #expect(held.valueSlots <= limits.valueSlots && slots <= limits.valueSlots)
        }
    }

    @Test("declared keys' slots outlive every drop of their values: their keys and declarations stay known")
    func declaredKeysSurvive() throws {
        var cache = StoreCache(limits: Self.small)
        let keys = (0..<100).map { Prefs.Key<String>("d\($0)", initial: "initial \($0)") }
        for key in keys { cache.noteKnown(key, declared: true) }
        for key in keys { cache.cache(try StoredValue(String(repeating: "y", count: 64)), for: key.name, arguments: [:]) }
        #expect(cache.held.bytes <= 1024)
        var loaded = 0
        for key in keys {
            let known = cache.known(CacheName(key))
            let slot = try #require(known)
            let initial = StoredValue(type: .string, json: .string("initial \(key.name.dropFirst())"))
            #expect(slot.key === key && slot.declared && slot.key?.initialStoredValue() == initial)
            if slot.isLoaded { loaded += 1 }
        }
        #expect(loaded < 100, "values were dropped")
    }
}
