import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsSupport

/// The behavioural suite, run over every backend.
@Suite("Store behaviour")
struct StoreBehaviourTests {
    @Test("a key never written reads its initial value and is not stored", arguments: Backend.allCases)
    func initialValues(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        #expect(prefs[.launchCount] == 0)
        #expect(prefs[.name] == "anonymous")
        #expect(prefs[.nickname] == nil)
        #expect(!prefs.isStored(.launchCount))
        guard case .initial(0) = prefs.lookup(.launchCount) else {
            Issue.record("expected .initial(0), got \(prefs.lookup(.launchCount))")
            return
        }
        prefs[.launchCount] = 0
        #expect(prefs.isStored(.launchCount), "writing the initial value stores it")
        #expect(prefs.lookup(.launchCount).isStored)
    }

    @Test("every value type round-trips exactly, also through a reopened store", arguments: Backend.allCases)
    func roundTrips(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let now = Date()
        let data = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = URL(string: "https://user@example.com:8443/a/b%20c?q=1&r=%C3%A9#frag")!
        try prefs.set(Int.min, for: .launchCount)
        try prefs.set(true, for: .flag)
        try prefs.set(0.1, for: .ratio)
        try prefs.set("héllo\u{0}wörld\n\u{1F600}", for: .name)
        try prefs.set(now, for: .lastLaunch)
        try prefs.set(data, for: .blob)
        try prefs.set(url, for: .homepage)
        try prefs.set(["a", "", "ç"], for: .tags)
        try prefs.set(["x": 1, "y": Int.max], for: .scores)
        try prefs.set(["d": [now, Date(timeIntervalSinceReferenceDate: -1e9 + 0.25)]], for: .visits)
        try prefs.set("nick", for: .nickname)
        try prefs.set(.dark, for: .theme)
        try prefs.set(WindowFrame(width: 1, height: 2, title: "T\"itle"), for: .frame)

        for store in [prefs, try fixture.reopen()] {
            #expect(store[.launchCount] == Int.min)
            #expect(store[.flag] == true)
            #expect(store[.ratio] == 0.1)
            #expect(store[.name] == "héllo\u{0}wörld\n\u{1F600}")
            #expect(store[.lastLaunch] == now)
            #expect(store[.blob] == data)
            #expect(store[.homepage] == url)
            #expect(store[.homepage].absoluteString == url.absoluteString)
            #expect(store[.tags] == ["a", "", "ç"])
            #expect(store[.scores] == ["x": 1, "y": Int.max])
            #expect(store[.visits] == ["d": [now, Date(timeIntervalSinceReferenceDate: -1e9 + 0.25)]])
            #expect(store[.nickname] == "nick")
            #expect(store[.theme] == .dark)
            #expect(store[.frame] == WindowFrame(width: 1, height: 2, title: "T\"itle"))
            #expect(store.diagnostics.isEmpty)
        }
    }

    @Test("non-finite and signed-zero doubles round-trip", arguments: Backend.allCases)
    func specialDoubles(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        for value in [Double.infinity, -Double.infinity, -0.0, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            try fixture.prefs.set(value, for: .ratio)
            let read = try fixture.reopen()[.ratio]
            #expect(read == value && read.sign == value.sign, "\(value) read back as \(read)")
        }
        try fixture.prefs.set(.nan, for: .ratio)
        #expect(try fixture.reopen()[.ratio].isNaN)
    }

    @Test("setting nil removes an optional key's value", arguments: Backend.allCases)
    func optionalNilRemoves(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        fixture.prefs[.nickname] = "x"
        #expect(fixture.prefs.isStored(.nickname))
        fixture.prefs[.nickname] = nil
        #expect(!fixture.prefs.isStored(.nickname))
        #expect(try fixture.prefs.storedValue(forKey: "nickname") == nil)
        #expect(try fixture.reopen()[.nickname] == nil)
    }

    @Test("reset of one key, several keys, and all keys but some", arguments: Backend.allCases)
    func reset(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        prefs[.launchCount] = 3
        prefs[.name] = "x"
        prefs[.flag] = true
        prefs[.tags] = ["t"]
        try prefs.reset(.launchCount)
        #expect(prefs[.launchCount] == 0 && !prefs.isStored(.launchCount))
        #expect(prefs[.name] == "x")
        try prefs.reset(.name, .flag)
        #expect(!prefs.isStored(.name) && !prefs.isStored(.flag))
        prefs[.launchCount] = 5
        prefs[.name] = "y"
        try prefs.resetAll(keeping: [.tags])
        #expect(!prefs.isStored(.launchCount) && !prefs.isStored(.name))
        #expect(prefs[.tags] == ["t"])
        let reopened = try fixture.reopen()
        #expect(try reopened.snapshot().keys.sorted() == ["tags"])
    }

    @Test("a stored value of the wrong type reads as initial, is reported, and is kept until written", arguments: Backend.allCases)
    func typeMismatch(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.setStoredValue(StoredValue(type: .string, json: .string("twelve")), forKey: "launchCount")
        #expect(prefs[.launchCount] == 0)
        guard case .unreadable(let initial, let mismatch) = prefs.lookup(.launchCount) else {
            Issue.record("expected .unreadable")
            return
        }
        #expect(initial == 0)
        #expect(mismatch.expected == .int)
        #expect(mismatch.stored == StoredValue(type: .string, json: .string("twelve")))
        let diagnostic = try #require(fixture.diagnostics.all.first)
        #expect(diagnostic.key == "launchCount")
        #expect(diagnostic.description.contains(#"stored string "twelve" cannot be read as int"#), "\(diagnostic)")
        #expect(fixture.diagnostics.all.count == 1, "reported once, not on every read")
        #expect(try prefs.storedValue(forKey: "launchCount") == StoredValue(type: .string, json: .string("twelve")))
        #expect(try fixture.reopen().storedValue(forKey: "launchCount")?.json == .string("twelve"), "the bytes are kept")
        prefs[.launchCount] = 4
        #expect(try fixture.reopen()[.launchCount] == 4)
    }

    @Test("a Codable whose shape changed reads as initial with a diagnostic naming the path", arguments: Backend.allCases)
    func codableShapeChange(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.setStoredValue(StoredValue(type: .json, json: .object(["width": .int(1), "title": .string("x")])), forKey: "frame")
        #expect(fixture.prefs[.frame] == WindowFrame(width: 800, height: 600, title: "Main"))
        let diagnostic = try #require(fixture.diagnostics.all.first)
        #expect(diagnostic.description.contains("missing key \"height\""), "\(diagnostic)")
    }

    @Test("a key reads its former names' value; the value moves to the new name with the key's next write, not on a read", arguments: Backend.allCases)
    func renames(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.setStoredValue(StoredValue(type: .int, json: .int(7)), forKey: "olderName")
        let other = try fixture.reopen()
        #expect(other[.renamed] == 7)
        #expect(try other.snapshot().keys.sorted() == ["olderName"], "a read writes nothing")
        try other.update(.renamed) { $0 += 1 }
        #expect(try other.snapshot().keys.sorted() == ["newName"])
        #expect(try other.storedValue(forKey: "newName")?.json == .int(8))
        #expect(try fixture.reopen()[.renamed] == 8)
        try other.reset(.renamed)
        #expect(try fixture.reopen()[.renamed] == 0)
    }

    @Test("declared keys are recorded with type and initial value for other processes", arguments: Backend.allCases)
    func declarations(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        _ = fixture.prefs[.launchCount]
        #expect(try fixture.reopen().declaredKeys().isEmpty, "a read declares nothing: a read never writes")
        try fixture.prefs.declare(.launchCount, .name, .nickname)
        try fixture.prefs.declare(AppKey.self)
        let declared = try fixture.reopen().declaredKeys()
        #expect(declared["launchCount"] == KeyDeclaration(type: .int, initial: .int(0)))
        #expect(declared["name"] == KeyDeclaration(type: .string, initial: .string("anonymous")))
        #expect(declared["nickname"] == KeyDeclaration(type: .string, initial: nil))
        #expect(declared["dialog_neverAgain"] == KeyDeclaration(type: .bool, initial: .bool(false)))
        #expect(declared["lastMessageId"] == KeyDeclaration(type: .int, initial: .int(0)))
        #expect(try fixture.reopen().snapshot().isEmpty, "declaring stores no values")
    }

    @Test("a key's first set records its declaration; once removed, the next set records it again", arguments: Backend.allCases)
    func setRecordsDeclarationAgainAfterRemoval(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        try prefs.set(1, for: .launchCount)
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == KeyDeclaration(type: .int, initial: .int(0)))
        try prefs.set(2, for: .launchCount)  // a cached, declared key: nothing more is recorded
        if backend == .json, let path = fixture.path {
            let journal = try String(contentsOfFile: path + ".journal", encoding: .utf8)
            #expect(journal.contains(#""launchCount""#) && !journal.contains(#""declared":"#), "\(journal)")
        }
        try prefs.removeDeclarations(["launchCount"])
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == nil)
        #expect(prefs[.launchCount] == 2, "removing a declaration keeps the value")
        try prefs.set(3, for: .launchCount)
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == KeyDeclaration(type: .int, initial: .int(0)))
    }

    @Test(
        "a key's first set in another process records its declaration only where it differs from the recorded one",
        arguments: Backend.allCases.filter { $0.isShared })
    func firstSetElsewhereRecordsOnlyAChangedDeclaration(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.set(1, for: .launchCount)
        try fixture.prefs.close()  // the JSON store folds its journal: what follows starts one
        func journal() throws -> String {
            guard backend == .json, let path = fixture.path, FileManager.default.fileExists(atPath: path + ".journal") else { return "" }
            return try String(contentsOfFile: path + ".journal", encoding: .utf8)
        }
        let other = try fixture.reopen()
        try other.set(2, for: .launchCount)  // recorded alike: no declaration is written
        let afterAlike = try journal()
        #expect(!afterAlike.contains(#""declared":"#), "\(afterAlike)")
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == KeyDeclaration(type: .int, initial: .int(0)))
        let changed = Prefs.Key<Int>("launchCount", initial: 5)
        let third = try fixture.reopen()
        try third.set(3, for: changed)  // a new initial value: recorded
        let afterChange = try journal()
        if backend == .json { #expect(afterChange.contains(#""declared":"#), "\(afterChange)") }
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == KeyDeclaration(type: .int, initial: .int(5)))

        // Coalesced, the flush records only the declarations that differ too.
        guard backend == .json, let path = fixture.path else { return }
        try third.close()
        let coalesced = try Prefs(.jsonFile(URL(fileURLWithPath: path), writeMode: .coalesced(.seconds(60))), launchArguments: [])
        try coalesced.set(4, for: changed)
        try coalesced.set(5, for: Prefs.Key<Int>("other", initial: 0))
        try coalesced.flush()
        let record = try journal().split(separator: "\n").last.map { try JSON.parse(Data($0.utf8)) }
        guard case .object(let declared)? = record?["declared"] else {
            Issue.record("the flush recorded no declaration: \(String(describing: record))")
            return
        }
        #expect(Set(declared.keys) == ["other"], "launchCount is recorded alike already")
        #expect(try fixture.reopen().declaredKeys()["launchCount"] == KeyDeclaration(type: .int, initial: .int(5)))
    }

    @Test("enum keys with initial values: typed access, CaseIterable, reset", arguments: Backend.allCases)
    func enumKeys(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let neverAgain: Bool = prefs[AppKey.dialogNoMore]
        #expect(neverAgain == false)
        prefs[AppKey.dialogNoMore] = true
        prefs[AppKey.lastMessageId] = 3
        let greeting: String? = prefs[AppKey.greeting]
        #expect(greeting == nil)
        #expect(try fixture.reopen().storedValue(forKey: "dialog_neverAgain")?.json == .bool(true))
        let id: Int = try fixture.reopen()[AppKey.lastMessageId]
        #expect(id == 3)
        #expect(AppKey.allCases.map(\.rawValue) == ["dialog_neverAgain", "lastMessageId", "greeting"])
        try prefs.reset(AppKey.lastMessageId)
        #expect(!prefs.isStored(AppKey.lastMessageId))
        #expect(prefs.isStored(AppKey.dialogNoMore))
    }

    @Test("enum keys convert a value of another type to the case's type when they can, and never trap on a write")
    func enumKeyConversions() throws {
        let fixture = try StoreFixture(.sqlite)
        let prefs = fixture.prefs
        prefs[AudioKey.volume] = 1  // an Int literal for a Double case
        let volume: Double = prefs[AudioKey.volume]
        #expect(volume == 1.0)
        #expect(try fixture.reopen().storedValue(forKey: "volume") == StoredValue(type: .double, json: .double(1)))
        prefs[AppKey.greeting] = "hi"  // a String for a String? case
        let greeting: String? = prefs[AppKey.greeting]
        #expect(greeting == "hi")
        let asInt: Int = prefs[AppKey.lastMessageId]
        #expect(asInt == 0)

        #expect(throws: PrefsError.self) { try prefs.set("loud", for: AudioKey.volume) }
        prefs[AudioKey.volume] = true
        let unchanged: Double = prefs[AudioKey.volume]
        #expect(unchanged == 1.0, "nothing written")
        #expect(
            fixture.diagnostics.all.contains { $0.key == "volume" && "\($0)".contains("AudioKey.volume holds Double values, and Bool true is not one") },
            "\(fixture.diagnostics.all)")
    }

    @Test("update is an atomic read-modify-write across threads", arguments: Backend.allCases)
    func atomicUpdate(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<50 { try? prefs.update(.launchCount) { $0 += 1 } }
                }
            }
        }
        #expect(prefs[.launchCount] == 200)
        #expect(try fixture.reopen()[.launchCount] == 200)
    }

    @Test("a batch writes many values in one transaction", arguments: Backend.allCases)
    func batch(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.batch { transaction in
            for index in 0..<500 {
                try transaction.set(index, for: Prefs.Key(validating: "k\(index)", initial: 0))
            }
            transaction[.name] = "batched"
        }
        let reopened = try fixture.reopen()
        #expect(try reopened.snapshot().count == 501)
        #expect(reopened[Prefs.Key("k499", initial: 0)] == 499)
        #expect(reopened[.name] == "batched")
    }

    @Test("a failing transaction writes nothing", arguments: Backend.allCases)
    func transactionRollback(backend: Backend) throws {
        struct Stop: Error {}
        let fixture = try StoreFixture(backend)
        fixture.prefs[.name] = "before"
        #expect(throws: Stop.self) {
            try fixture.prefs.transaction { transaction in
                transaction[.name] = "after"
                transaction[.launchCount] = 9
                throw Stop()
            }
        }
        #expect(fixture.prefs[.name] == "before")
        #expect(try fixture.reopen()[.name] == "before")
        #expect(try fixture.reopen().storedValue(forKey: "launchCount") == nil)
    }

    @Test("values(for:) yields the current value, then each change", arguments: Backend.allCases)
    func observation(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        prefs[.launchCount] = 1
        var iterator = prefs.values(for: .launchCount).makeAsyncIterator()
        #expect(await iterator.next() == 1)
        prefs[.launchCount] = 2
        #expect(await iterator.next() == 2)
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(await iterator.next() == 3)
        try prefs.reset(.launchCount)
        #expect(await iterator.next() == 0)
    }

    @Test("values(for:) streams finish when the store is closed or released, so for-await loops end", arguments: [false, true])
    func streamsFinish(release: Bool) async throws {
        let directory = try TemporaryDirectory()
        var prefs: Prefs? = try Prefs(.sqlite(directory.file("s.sqlite")))
        let stream = try #require(prefs).values(for: Prefs.Key("n", initial: 0))
        let (started, start) = AsyncStream<Void>.makeStream()
        let loop = Task {
            var seen: [Int] = []
            for await value in stream { seen.append(value); start.yield() }
            return seen
        }
        var first = started.makeAsyncIterator()
        _ = await first.next()  // the loop is running and has its first value
        weak let released = prefs
        if release { prefs = nil } else { try prefs?.close() }
        // Bounded, so a regression fails instead of hanging the suite.
        let seen = try await withDeadline(.seconds(60), "the end of the for-await loop") { await loop.value }
        loop.cancel()
        #expect(seen == [0], "the loop ended after the first value")
        if release { #expect(released == nil, "the stream did not keep the store alive") }
    }

    /// A stream asked for after close() (or racing with it) was registered on the closed store and never finished:
    /// a for-await loop started late hung for ever.
    @Test("values(for:) on a store already closed finishes after the current value", arguments: Backend.allCases)
    func streamAfterClose(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(backend.storage(directory))
        try prefs.close()
        let stream = prefs.values(for: Prefs.Key("n", initial: 0))
        let seen = try await withDeadline(.seconds(60), "the end of a stream on a closed store") {
            var seen: [Int] = []
            for await value in stream { seen.append(value) }
            return seen
        }
        #expect(seen == [0])
    }

    @Test("values too large are refused and nothing is written", arguments: Backend.allCases)
    func sizeLimit(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let big = String(repeating: "x", count: Prefs.maximumValueBytes + 1)
        #expect(throws: PrefsError.valueTooLarge(key: "name", bytes: Prefs.maximumValueBytes + 1, limit: Prefs.maximumValueBytes)) {
            try fixture.prefs.set(big, for: .name)
        }
        #expect(!fixture.prefs.isStored(.name))

        // Data counts its base64 form: 786,432 bytes of data are exactly 1 MiB of base64, one byte more is over.
        let blob = Prefs.Key<Data>("blob", initial: Data())
        try fixture.prefs.set(Data(count: 786_432), for: blob)
        #expect(throws: PrefsError.valueTooLarge(key: "blob", bytes: 1_048_580, limit: Prefs.maximumValueBytes)) {
            try fixture.prefs.set(Data(count: 786_433), for: blob)
        }
        #expect(fixture.prefs[blob].count == 786_432)
    }

    /// A value the store's own loader could not read back would make the whole file unreadable at the next open.
    @Test(
        "nesting up to maximumValueDepth round-trips through a reopen; one level more is refused and nothing is written",
        arguments: Backend.allCases)
    func depthLimit(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let deepest = StoredValue(type: .json, json: .nested(Prefs.maximumValueDepth))
        try fixture.prefs.setStoredValue(deepest, forKey: "raw")
        let codable = Prefs.Key<Tree>("tree", initial: Tree(children: []))
        let deepTree = Tree(levels: Prefs.maximumValueDepth / 2)
        try fixture.prefs.set(deepTree, for: codable)
        try fixture.prefs.set(1, for: .launchCount)
        let reopened = try fixture.reopen()
        #expect(try reopened.storedValue(forKey: "raw") == deepest)
        #expect(reopened[codable] == deepTree)
        #expect(reopened[.launchCount] == 1)

        #expect(throws: PrefsError.valueTooDeep(key: "raw", limit: Prefs.maximumValueDepth)) {
            try fixture.prefs.setStoredValue(StoredValue(type: .json, json: .nested(Prefs.maximumValueDepth + 1)), forKey: "raw")
        }
        #expect(throws: PrefsError.valueTooDeep(key: "tree", limit: Prefs.maximumValueDepth)) {
            try fixture.prefs.set(Tree(levels: Prefs.maximumValueDepth / 2 + 1), for: codable)
        }
        // Far deeper than any parser or recursive walk could take: still a clear error, not a stack overflow.
        #expect(throws: PrefsError.valueTooDeep(key: "raw", limit: Prefs.maximumValueDepth)) {
            try fixture.prefs.setStoredValue(StoredValue(type: .json, json: .nested(10_000)), forKey: "raw")
        }
        let again = try fixture.reopen()
        #expect(try again.storedValue(forKey: "raw") == deepest, "the refused values wrote nothing")
        #expect(again[codable] == deepTree)
        #expect(fixture.prefs[codable] == deepTree)
    }

    /// ISO-8601 text for such a date is "+Infinity", which the loader refuses: the value (and, in a Codable, the
    /// whole record around it) would be lost at the next read.
    @Test(
        "a date outside ISO-8601's range is refused as encodingFailed, alone or inside a Codable, and nothing is written",
        arguments: Backend.allCases)
    func unrepresentableDate(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let date = Prefs.Key<Date?>("date")
        let stamped = Prefs.Key<Stamped?>("stamped")
        let edge = Date(timeIntervalSinceReferenceDate: 0x1p62 - 1024)
        try fixture.prefs.set(edge, for: date)
        try fixture.prefs.set(Stamped(at: edge), for: stamped)
        for huge in [1e300, -1e300, 0x1p62, .infinity, .nan] {
            let value = Date(timeIntervalSinceReferenceDate: huge)
            #expect(!ISO8601.canFormat(value))
            #expect { try fixture.prefs.set(value, for: date) } throws: { error in
                guard case PrefsError.encodingFailed("date", let reason) = error else { return false }
                return reason.contains("outside the range of ISO-8601 dates")
            }
            #expect { try fixture.prefs.set(Stamped(at: value), for: stamped) } throws: { error in
                guard case PrefsError.encodingFailed("stamped", let reason) = error else { return false }
                return reason.hasPrefix("$.at: the date")
            }
            #expect(throws: PrefsError.self) { try fixture.prefs.transaction { try $0.set(value, for: date) } }
        }
        let reopened = try fixture.reopen()
        #expect(reopened[date] == edge, "the refused writes wrote nothing")
        #expect(reopened[stamped] == Stamped(at: edge))
    }

    /// Issue 32: the cache keeps a decoded `String` or small trivial value in its slot. One name read as several
    /// types, and values of odd sizes, each read right from there, and a write replaces what the slot held.
    @Test("values kept in the cache's slots read as the type asked for, one name read as several types", arguments: Backend.allCases)
    func inlineCachedValues(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let asInt = Prefs.Key<Int>("shared", initial: -1)
        let asDouble = Prefs.Key<Double>("shared", initial: -1)
        let asText = Prefs.Key<String>("shared", initial: "none")
        let asStored = Prefs.Key<StoredValue?>("shared")
        let triple = Prefs.Key<Triple>("triple", initial: Triple(a: 0, b: 0, c: 0))
        try prefs.set(3, for: asInt)
        for _ in 0..<3 {
            #expect(prefs[asInt] == 3)
            #expect(prefs[asDouble] == 3.0)
            #expect(prefs[asText] == "none", "an int is never read as a string")
            #expect(prefs[asStored] == StoredValue(type: .int, json: .int(3)))
        }
        try prefs.set(2.5, for: asDouble)
        #expect(prefs[asDouble] == 2.5)
        #expect(prefs[asInt] == -1, "2.5 does not fit Int: the initial value")
        try prefs.set("two and a half", for: asText)
        for _ in 0..<2 {
            #expect(prefs[asText] == "two and a half")
            #expect(prefs.lookup(asText).value == "two and a half")
            #expect(prefs[asDouble] == -1)
        }
        try prefs.set(Triple(a: 1, b: 200, c: 255), for: triple)
        try prefs.set(.dark, for: .theme)
        try prefs.set(true, for: .flag)
        for _ in 0..<2 {
            #expect(prefs[triple] == Triple(a: 1, b: 200, c: 255))
            #expect(prefs[.theme] == .dark)
            #expect(prefs[.flag] == true)
        }
        let other = try fixture.reopen()
        try other.set(false, for: .flag)
        try other.set("changed", for: asText)
        try prefs.refresh()
        #expect(prefs[.flag] == false)
        #expect(prefs[asText] == "changed")
    }

    /// Issue 32: a `Codable` value's text is what `JSONEncoder` wrote, kept as it is; nothing encodes it again to store
    /// it or decodes it again to read it.
    @Test("a Codable value is encoded once per write and decoded once per read, then served decoded", arguments: Backend.allCases)
    func codableConvertedOnce(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let id = UUID().uuidString
        let key = Prefs.Key<Counted>("counted", initial: Counted(id: "initial", payload: [:]))
        let value = Counted(id: id, payload: ["width": 800, "height": -0])
        try fixture.prefs.set(value, for: key)
        #expect(Counted.calls(id) == Counted.Calls(encodes: 1, decodes: 0))
        #expect(fixture.prefs[key] == value)
        #expect(fixture.prefs[key] == value)
        #expect(Counted.calls(id) == Counted.Calls(encodes: 1, decodes: 1), "the second read is served decoded")
        let reopened = try fixture.reopen()
        #expect(reopened[key] == value)
        #expect(reopened[key] == value)
        let decodes = backend.isShared ? 2 : 1  // a store on the same file decodes it once more; memory reopens as itself
        #expect(Counted.calls(id) == Counted.Calls(encodes: 1, decodes: decodes))
    }

    /// Issue 32 (launch): a key's declaration, with its initial value's stored form, is made at its first use, so a
    /// launch that only reads encodes no initial value.
    @Test("a key encodes its initial value for its declaration only when the declaration is first used", arguments: Backend.allCases)
    func declarationMadeOnFirstUse(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let id = UUID().uuidString
        let key = Prefs.Key<Counted>("lazy", initial: Counted(id: id, payload: ["a": 1]))
        #expect(fixture.prefs[key] == Counted(id: id, payload: ["a": 1]))
        #expect(Counted.calls(id) == Counted.Calls(), "made and read: nothing encoded")
        try fixture.prefs.declare(key)
        #expect(Counted.calls(id).encodes == 1)
        #expect(key.declaration.initial == .object(["id": .string(id), "payload": .object(["a": .int(1)])]))
        #expect(Counted.calls(id).encodes == 1, "made once")
        #expect(try fixture.prefs.declaredKeys()["lazy"] == key.declaration)

        // Threads asking for a new key's declaration at once all get the same one.
        let raced = Prefs.Key<Counted>("raced", initial: Counted(id: id + "-raced", payload: [:]))
        let seen = Locked<[KeyDeclaration]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let declaration = raced.declaration
            seen.withLock { $0.append(declaration) }
        }
        #expect(seen.withLock { $0.count == 8 && Set($0).count == 1 })
    }

    /// The text is kept without parsing it, unless it holds an integer long enough to be out of the range every store
    /// reads back: such a value is refused, as before the text was kept, and one within the range is stored.
    @Test("a Codable integer out of Int's range is refused as encodingFailed; Int.min and Int.max round-trip", arguments: Backend.allCases)
    func codableLongIntegers(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let key = Prefs.Key<Wide?>("wide")
        try fixture.prefs.set(Wide(low: Int64.min, high: UInt64(Int64.max)), for: key)
        #expect { try fixture.prefs.set(Wide(low: 0, high: UInt64.max), for: key) } throws: { error in
            guard case PrefsError.encodingFailed("wide", let reason) = error else { return false }
            return reason.contains("18446744073709551615") && reason.contains("out of range")
        }
        let reopened = try fixture.reopen()
        #expect(reopened[key] == Wide(low: Int64.min, high: UInt64(Int64.max)), "the refused write wrote nothing")
        #expect(reopened.diagnostics.isEmpty)
    }
}

/// A Codable value that counts how often it is encoded and decoded, by its `id` (each test uses its own).
private struct Counted: Codable, Hashable, PrefsStorable {
    var id: String
    var payload: [String: Int]

    struct Calls: Hashable {
        var encodes = 0
        var decodes = 0
    }

    private static let counts = Locked<[String: Calls]>([:])
    static func calls(_ id: String) -> Calls { counts.withLock { $0[id] ?? Calls() } }

    init(id: String, payload: [String: Int]) {
        self.id = id
        self.payload = payload
    }

    private enum CodingKeys: String, CodingKey { case id, payload }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        payload = try container.decode([String: Int].self, forKey: .payload)
        Self.counts.withLock { [id] in $0[id, default: Calls()].decodes += 1 }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(payload, forKey: .payload)
        Self.counts.withLock { $0[id, default: Calls()].encodes += 1 }
    }
}

/// A trivial value of three bytes, stored as an array of its bytes.
private struct Triple: PrefsStorable, Hashable {
    var a, b, c: UInt8

    init(a: UInt8, b: UInt8, c: UInt8) {
        (self.a, self.b, self.c) = (a, b, c)
    }

    static var valueType: ValueType { .array(.int) }
    func storedValue() throws -> StoredValue { try StoredValue([Int(a), Int(b), Int(c)]) }
    init(storedValue: StoredValue) throws {
        let bytes = try [Int](storedValue: storedValue).map { UInt8(truncatingIfNeeded: $0) }
        guard bytes.count == 3 else { throw DecodeFailure("expected three bytes") }
        (a, b, c) = (bytes[0], bytes[1], bytes[2])
    }
}

private struct Wide: Codable, Hashable, PrefsStorable {
    var low: Int64
    var high: UInt64
}

private struct Stamped: Codable, Hashable, PrefsStorable {
    var at: Date
}

extension JSON {
    /// `[[…[0]…]]`: exactly `depth` nested arrays around a number.
    static func nested(_ depth: Int) -> JSON {
        var value = JSON.int(0)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }
}

/// `{"children":[…]}`: each level is two JSON containers, an object and an array.
private struct Tree: Codable, Hashable, PrefsStorable {
    var children: [Tree]

    init(children: [Tree]) { self.children = children }

    /// A chain of `levels` trees: `2 × levels` nested containers.
    init(levels: Int) {
        self.init(children: [])
        for _ in 1..<levels { self = Tree(children: [self]) }
    }
}
