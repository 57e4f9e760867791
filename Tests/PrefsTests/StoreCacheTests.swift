import Foundation
@testable import Prefs
import Testing

/// The store's cache on its own (``StoreCache``): what a read finds, what a commit, a load and an invalidation leave,
/// and the generation that keeps a read that raced with a write from filling the cache.
@Suite("Store cache")
struct StoreCacheTests {
    static let a = CacheName("a")
    static let b = CacheName("b")

    static func changes(_ values: [String: StoredValue?]) -> Changeset {
        var changes = Changeset()
        for (name, value) in values { changes.values[name] = value.map { .set($0) } ?? .remove }
        return changes
    }

    /// What `hit` says, without the entry's identity.
    static func describe(_ hit: StoreCache.Hit?) -> String {
        switch hit {
        case nil: "miss"
        case .absent?: "absent"
        case .undecoded?: "undecoded"
        case .entry(let entry)?: "entry\(entry.isArgument ? " (argument)" : "")"
        case .bits(let bits, let type)?: "bits \(bits) \(type == ObjectIdentifier(Int.self) ? "Int" : "other")"
        case .string(let string)?: "string \(string)"
        }
    }

    @Test("a read finds nothing, the absent value, a stored value not decoded, then the value decoded inline or in an entry")
    func hits() throws {
        var cache = StoreCache()
        #expect(Self.describe(cache.hit(Self.a)) == "miss")
        cache.cache(nil, for: "a", arguments: [:])
        #expect(Self.describe(cache.hit(Self.a)) == "absent")
        let stored = try StoredValue(7)
        cache.cache(stored, for: "a", arguments: [:])
        #expect(Self.describe(cache.hit(Self.a)) == "undecoded")
        cache.update(Self.a) { $0.keepInline(7) }
        #expect(Self.describe(cache.hit(Self.a)) == "bits 7 Int")
        #expect(cache[Self.a]?.stored == stored, "the stored value is made again from the value kept inline")
        cache.update(Self.a) { $0.keep(StoreCache.Entry(decoded: [7], stored: stored)) }
        #expect(Self.describe(cache.hit(Self.a)) == "entry")
        #expect(cache[Self.a]?.stored == stored, "the stored value stays beside what was decoded")
        let seven = try StoredValue("seven")
        cache.cache(seven, for: "a", arguments: [:])
        #expect(Self.describe(cache.hit(Self.a)) == "undecoded", "a new stored value forgets what was decoded from the old one")
        cache.update(Self.a) { $0.keepInline("seven") }
        #expect(Self.describe(cache.hit(Self.a)) == "string seven")
        #expect(cache[Self.a]?.stored == seven && cache[Self.a]?.holdsStored == true)
    }

    @Test("a decoded value is kept without its stored value only when that is its type's own form, which reads back equal")
    func inlineOnlyWithItsOwnForm() throws {
        func kept<Value: PrefsStorable>(_ value: Value, from stored: StoredValue) -> (inline: Bool, stored: StoredValue?) {
            var slot = StoreCache.Slot(stored: stored)
            slot.keepInline(value)
            if case .entry = slot.decoded { return (false, slot.stored) }
            return (true, slot.stored)
        }
        func ownForm<Value: PrefsStorable>(_ value: Value) throws -> Bool {
            let stored = try StoredValue(value)
            let result = kept(value, from: stored)
            return result.inline && result.stored == stored
        }
        for own in [try ownForm(5), try ownForm(true), try ownForm(2.5), try ownForm(Double.infinity), try ownForm("dark")] { #expect(own) }
        #expect(try ownForm(Date(timeIntervalSince1970: 1_700_000_000.25)))
        // The same values read from stored forms that are not their types' own: kept beside them, which read back exactly.
        let asJSON = StoredValue(type: .json, json: .int(5))
        #expect(!kept(5, from: asJSON).inline && kept(5, from: asJSON).stored?.type == .json)
        let textual = StoredValue(type: .string, json: .string("5"))
        #expect(!kept(5, from: textual).inline && kept(5, from: textual).stored == textual)
        let whole = StoredValue(type: .int, json: .int(3))
        #expect(!kept(3.0, from: whole).inline && kept(3.0, from: whole).stored == whole, "an Int read as a Double keeps its Int form")
        let mode = try StoredValue(Mode.dark)
        #expect(!kept(Mode.dark, from: mode).inline && kept(Mode.dark, from: mode).stored == mode, "a type with no inline form of its own")
    }

    @Test("a slot holds a stored value or a decoded one, and what is known of its name, in 40 bytes; a bucket in 64")
    func slotLayout() {
        #expect(MemoryLayout<StoreCache.Slot>.size <= 40)
        struct Bucket {
            var tag: Int
            var name: String
            var slot: StoreCache.Slot
        }
        #expect(MemoryLayout<Bucket>.stride <= 64)
    }

    @Test("a table's buckets start at a cache line at every size, so that a 64-byte bucket lies in one line")
    func bucketsLineAligned() {
        var table = CacheTable()
        #expect(table.bucketsAddress == nil)
        var seen = Set<Int>()
        for index in 0..<20_000 {
            table.insert(StoreCache.Slot(stored: nil), for: CacheName("key-\(index)"))
            if seen.insert(table.bucketCount).inserted { #expect(table.bucketsAddress.map { $0 % 64 } == 0, "\(table.bucketCount) buckets") }
        }
        #expect(seen.count > 10, "grown through \(seen.sorted())")
        table.reserveCapacity(100_000)
        #expect(table.bucketsAddress.map { $0 % 64 } == 0)
    }

    @Test("what is known of a name outlives its value: invalidating unloads the value, and drops a slot only when it says nothing else")
    func knownNames() throws {
        var cache = StoreCache()
        let key = Prefs.Key<Int>("a", initial: 3)
        cache.noteKnown(key, declared: false)
        cache.noteDeclared(Self.b)
        cache.cache(try StoredValue(1), for: "a", arguments: [:])
        cache.cache(try StoredValue(2), for: "b", arguments: [:])
        cache.cache(try StoredValue(3), for: "c", arguments: [:])
        let one = try StoredValue(1)
        #expect(cache.table.count == 3 && cache[Self.a]?.key === key && cache[Self.a]?.stored == one)
        cache.invalidateAll()
        #expect(Self.describe(cache.hit(Self.a)) == "miss" && cache[Self.a] == nil && cache[Self.b] == nil)
        #expect(cache.known(Self.a)?.key === key && cache.known(Self.b)?.declared == true)
        #expect(cache.known(CacheName("c")) == nil && cache.table.count == 2, "a slot that knew nothing else is gone")
        cache.cache(nil, for: "a", arguments: [:])
        #expect(Self.describe(cache.hit(Self.a)) == "absent" && cache[Self.a]?.key === key, "loading keeps the key")
        cache.takeCommitted(Self.changes(["a": try StoredValue(4)]), declared: nil, arguments: [:], copiesValues: false)
        #expect(Self.describe(cache.hit(Self.a)) == "miss" && cache.known(Self.a)?.key === key, "a commit the backend serves unloads it")
        cache.forgetDeclared(Self.b)
        #expect(cache.known(Self.b) == nil && cache.table.count == 1)
        cache.invalidateAll(keepingCapacity: false)
        #expect(cache.knownKeys().map(\.name) == ["a"])
    }

    @Test("declaring keys the cache holds already takes no more room: their slots keep them")
    func declaringCachedKeys() throws {
        let prefs = try Prefs(.memory)
        let keys = (0..<200).map { Prefs.Key<Int>("k\($0)", initial: 0) }
        try prefs.batch { transaction in for key in keys { try transaction.set(1, for: key) } }
        for key in keys { #expect(prefs[key] == 1) }
        let buckets = prefs.state.withLock { $0.cache.table.bucketCount }
        try prefs.declare(keys)
        #expect(prefs.state.withLock { ($0.cache.table.bucketCount, $0.cache.table.count) } == (buckets, 200))
        #expect(keys.allSatisfy { key in prefs.state.withLock { $0.knownKey(key.name) === key && $0.isDeclared(CacheName(key)) } })
    }

    @Test("a removed key that a launch argument names is not absent: a read looks past it to the argument")
    func absentUnderArgument() {
        var cache = StoreCache()
        let arguments = ["a": StoredValue(type: .string, json: .string("5"))]
        let slot = cache.cache(nil, for: "a", arguments: arguments)
        #expect(slot.argumentNamed && slot.stored == nil)
        #expect(Self.describe(cache.hit(Self.a)) == "undecoded", "the read looks past it to the argument")
        cache.takeCommitted(Self.changes(["a": nil, "b": nil]), declared: nil, arguments: arguments)
        #expect(Self.describe(cache.hit(Self.a)) == "undecoded")
        #expect(Self.describe(cache.hit(Self.b)) == "absent")
        cache.update(Self.a) { $0.keep(StoreCache.Entry(argument: 5, stored: nil)) }
        #expect(Self.describe(cache.hit(Self.a)) == "entry (argument)")
    }

    @Test("a commit bumps the generation, caches what it wrote, and marks the declared key's slot")
    func commits() throws {
        var cache = StoreCache()
        let before = cache.generation
        cache.cache(nil, for: "b", arguments: [:])
        cache.update(Self.b) { $0.declared = true }
        let one = try StoredValue(1)
        cache.takeCommitted(Self.changes(["a": one, "b": nil, "c": try StoredValue("x")]), declared: Self.a, arguments: [:])
        #expect(cache.generation != before)
        #expect(cache[Self.a]?.stored == one && cache[Self.a]?.declared == true)
        #expect(cache[Self.b]?.stored == nil && cache[Self.b]?.declared == true, "the slot keeps what it knew")
        #expect(cache[CacheName("c")]?.declared == false)
        #expect(cache.table.count == 3)
    }

    @Test("invalidating drops the named slots or all of them, each time under a new generation")
    func invalidates() throws {
        var cache = StoreCache()
        cache.takeCommitted(Self.changes(["a": try StoredValue(1), "b": try StoredValue(2)]), declared: nil, arguments: [:])
        let committed = cache.generation
        cache.invalidate(["a"])
        #expect(cache.generation != committed)
        #expect(cache[Self.a] == nil && cache[Self.b] != nil)
        let dropped = cache.generation
        cache.invalidateAll()
        #expect(cache.generation != dropped)
        #expect(cache[Self.b] == nil && cache.table.count == 0)
        cache.update(Self.b) { $0.declared = true }
        #expect(cache[Self.b] == nil, "an update finds no slot to change")
    }

    @Test("an entry keeps its decoded value by its type's identity")
    func decodedEntries() throws {
        let entry = StoreCache.Entry(decoded: [1, 2], stored: try StoredValue([1, 2]))
        #expect(entry.holdsDecoded([Int].self) && !entry.holdsDecoded([String].self) && !entry.holdsDecoded(Int.self))
        #expect(entry.decodedValue(as: [Int].self) == [1, 2])
        #expect(!entry.isArgument)
        #expect(entry.stored == (try StoredValue([1, 2])))
        let argument = StoreCache.Entry(argument: "from the scheme", stored: nil)
        #expect(argument.isArgument && argument.holdsDecoded(String.self) && argument.stored == nil)
    }

    @Test("a store's read keeps the stored value and what it decoded in the key's slot: an object only for an array or a Codable")
    func readsKeepNoObjectPerValue() throws {
        let prefs = try Prefs(.memory)
        let count = Prefs.Key<Int>("count", initial: 0)
        let title = Prefs.Key<String>("title", initial: "")
        let list = Prefs.Key<[Int]>("list", initial: [])
        try prefs.set(5, for: count)
        try prefs.set("five", for: title)
        try prefs.set([5], for: list)
        func slot(_ key: Prefs.Keys) -> StoreCache.Slot? { prefs.state.withLock { $0.cache[CacheName(key)] } }
        let five = try StoredValue(5)
        let list5 = try StoredValue([5])
        #expect(slot(count) == nil, "the memory backend holds what was written: the cache keeps no copy")
        #expect(prefs.isStored(count))
        #expect(slot(count)?.stored == five)
        guard case .none? = slot(count)?.decoded else { Issue.record("decoded before any read"); return }
        #expect(prefs[count] == 5 && prefs[title] == "five" && prefs[list] == [5])
        let storedFive = try StoredValue("five")
        #expect(slot(count)?.stored == five && slot(title)?.stored == storedFive)
        guard case .bits(5, ObjectIdentifier(Int.self))? = slot(count)?.decoded else { Issue.record("the Int is not inline"); return }
        guard case .string("five")? = slot(title)?.decoded else { Issue.record("the String is not inline"); return }
        weak var released: StoreCache.Entry?
        do {
            guard case .entry(let entry)? = slot(list)?.decoded else { Issue.record("the array has no entry"); return }
            #expect(entry.holdsDecoded([Int].self) && slot(list)?.stored == list5)
            released = entry
        }
        try prefs.set([6], for: list)
        #expect(released == nil, "a new value lets go of what was decoded from the old one")
        #expect(prefs[list] == [6] && prefs[count] == 5 && prefs.isStored(count))
    }

    enum Mode: UInt8, PrefsStorable { case light, dark }

    @Test("strings and trivial values of up to 8 bytes are kept inline, and read back bit for bit")
    func inlineValues() {
        #expect(StoreCache.Slot.holdsInline(String.self) && StoreCache.Slot.holdsInline(Int.self))
        #expect(StoreCache.Slot.holdsInline(Bool.self) && StoreCache.Slot.holdsInline(Date.self) && StoreCache.Slot.holdsInline(Mode.self))
        #expect(!StoreCache.Slot.holdsInline([Int].self) && !StoreCache.Slot.holdsInline(Data.self))
        #expect(!StoreCache.Slot.holdsInline((Int, Int).self), "16 bytes")
        func roundTrip<Value: Equatable>(_ value: Value) -> Bool {
            StoreCache.Slot.inlineValue(StoreCache.Slot.bits(of: value), as: Value.self) == value
        }
        #expect(roundTrip(-3) && roundTrip(true) && roundTrip(Mode.dark) && roundTrip(Int8(-7)) && roundTrip(UInt16(65_000)))
        #expect(roundTrip(Float(1.5)) && roundTrip(2.25) && roundTrip(Date(timeIntervalSince1970: 1_000)))
    }

    @Test("a hit's string moves into the read's result: its reference is neither copied nor dropped")
    func stringMovesOut() {
        let original = String(repeating: "a string of its own on the heap ", count: 3)
        var hit = original  // a second reference, as a hit takes out of the lock
        func read<Value>(_ string: inout String, as _: Value.Type) -> Value {  // generic, as the store's read
            StoreCache.Slot.stringValue(&string, as: Value.self)
        }
        let value = read(&hit, as: String.self)
        #expect(value == original)
        #expect(hit.isEmpty, "moved, not copied: the hit no longer holds the reference")
    }

    @Test("cache-hit reads of a heap string, in a generic caller, give the stored string and keep it for later reads")
    func stringHits() throws {
        let prefs = try Prefs(.memory)
        let key = Prefs.Key<String>("title", initial: "")
        let first = String(repeating: "the first title, long enough for the heap ", count: 2)
        try prefs.set(first, for: key)
        func reads<Value: PrefsStorable & Equatable>(_ key: Prefs.Key<Value>, _ expected: Value) -> Bool {
            (0..<1_000).allSatisfy { _ in
                guard case .stored(let looked) = prefs.lookup(key) else { return false }
                return prefs[key] == expected && looked == expected
            }
        }
        #expect(reads(key, first))
        let kept = prefs[key]
        try prefs.set("second", for: key)
        #expect(reads(key, "second"))
        #expect(kept == first, "a value read earlier outlives the cache's")
    }
}
