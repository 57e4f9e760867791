import Foundation
import Prefs
import Testing
import PrefsSupport

/// Proves a storage keeps what a store promises, in a Swift Testing test: the same checks the built-in storages pass.
///
/// ```swift
/// @Test func keychainBackendConforms() async {
///     await BackendConformance.check(persistsAcrossReopen: true, sharedBetweenStores: false) {
///         .custom { try KeychainBackend(service: "test-\(UUID())") }   // a fresh, empty storage each call
///     }
/// }
/// ```
///
/// Each check calls `makeStorage` once for a fresh, empty storage, and opens its stores on that one value (as two
/// stores opened on the same `.sqlite(url)` share the file). A failure is an issue recorded at the call of ``check(persistsAcrossReopen:sharedBetweenStores:sourceLocation:_:)``,
/// naming the check and the storage; the checks go on after one fails. What they cover:
///
/// - a key nothing stored reads its initial value, and the store holds no values;
/// - every kind of value reads back as written, with its type: `Int`, `Bool`, `Double` (infinity too), a `String`
///   with a NUL and emoji, `Date`, `Data`, `URL`, `[String]`, `[String: Int]`, a `Codable` struct, a `String` enum;
/// - reset, resetAll and setting `nil` remove values;
/// - a transaction whose body throws stores nothing, and one that returns stores everything;
/// - `update` from 8 threads, 100 increments each, on one store ends at exactly 800;
/// - a 1,000,000-character value and 1,000 keys written in one batch read back;
/// - with `persistsAcrossReopen`, all of it through a second store opened after the first is closed;
/// - with `sharedBetweenStores`, each of two stores open at once sees the other's writes and removals after
///   ``Prefs/Prefs/refresh()``.
public enum BackendConformance {
    /// Runs every check over storages from `makeStorage`, recording each failure as an issue at `sourceLocation`.
    ///
    /// ```swift
    /// await BackendConformance.check(persistsAcrossReopen: false, sharedBetweenStores: false) { .memory }
    /// ```
    ///
    /// - Parameters:
    ///   - persistsAcrossReopen: whether values outlive the store that wrote them: a store opened on the same storage
    ///     after the first is closed reads them (a file, a database; not `.memory`).
    ///   - sharedBetweenStores: whether two stores open at once on the same storage see each other's writes after
    ///     ``Prefs/Prefs/refresh()`` (another process, another device, another store in this process).
    ///   - makeStorage: a fresh, empty storage at each call.
    public static func check(
        persistsAcrossReopen: Bool = true,
        sharedBetweenStores: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ makeStorage: @escaping @Sendable () throws -> Prefs.Storage
    ) async {
        let checks = Checks(persists: persistsAcrossReopen, shared: sharedBetweenStores, location: sourceLocation, makeStorage: makeStorage)
        checks.run("initial values", checks.initialValues)
        checks.run("round trip", checks.roundTrip)
        checks.run("remove and reset", checks.removeAndReset)
        checks.run("transactions", checks.transactions)
        await checks.runOffPool("concurrent updates", checks.concurrentUpdates)
        checks.run("large value and many keys", checks.largeValueAndManyKeys)
        if sharedBetweenStores { checks.run("two stores at once", checks.twoStoresAtOnce) }
    }
}

// MARK: - The checks

/// The values the checks write, one key for each kind.
private enum Values {
    enum Theme: String, PrefsStorable { case light, dark }
    struct Window: Codable, Hashable, PrefsStorable {
        var width: Int
        var title: String
        var tags: [String]
    }

    static let int = Prefs.Key<Int>("conformance.int", initial: 7)
    static let bool = Prefs.Key<Bool>("conformance.bool", initial: false)
    static let double = Prefs.Key<Double>("conformance.double", initial: 0.5)
    static let infinity = Prefs.Key<Double>("conformance.infinity", initial: 0)
    static let string = Prefs.Key<String>("conformance.string", initial: "initial")
    static let date = Prefs.Key<Date>("conformance.date", initial: Date(timeIntervalSince1970: 0))
    static let data = Prefs.Key<Data>("conformance.data", initial: Data())
    static let url = Prefs.Key<URL?>("conformance.url")
    static let strings = Prefs.Key<[String]>("conformance.strings", initial: [])
    static let counts = Prefs.Key<[String: Int]>("conformance.counts", initial: [:])
    static let window = Prefs.Key<Window?>("conformance.window")
    static let theme = Prefs.Key<Theme>("conformance.theme", initial: .light)
    static let counter = Prefs.Key<Int>("conformance.counter", initial: 0)
    static let large = Prefs.Key<String>("conformance.large", initial: "")
    static let many = (0..<1_000).map { Prefs.Key<Int>("conformance.many.\($0)", initial: -1) }

    static let writtenString = "NUL \u{0} emoji 👩‍👩‍👧 é \"quoted\" \\ tab\t line\n end"
    static let writtenDate = Date(timeIntervalSince1970: 1_700_000_000.25)
    static let writtenData = Data((0...255).map { UInt8($0) })
    static let writtenURL = URL(string: "https://example.com/a%20b?q=1&r=%C3%A9#part")!
    static let writtenWindow = Window(width: 800, title: "Main ✓", tags: ["a", "b"])
    static let largeText = String(repeating: "abcdefghij", count: 100_000)
}

/// The checks over one kind of storage, recording issues at `location`.
private struct Checks: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let persists: Bool
    let shared: Bool
    let location: SourceLocation
    let makeStorage: @Sendable () throws -> Prefs.Storage

    init(persists: Bool, shared: Bool, location: SourceLocation, makeStorage: @escaping @Sendable () throws -> Prefs.Storage) {
        self.persists = persists
        self.shared = shared
        self.location = location
        self.makeStorage = makeStorage
    }

    /// Runs one check with a fresh storage; an error it throws is an issue naming it.
    func run(_ name: String, _ check: (Prefs.Storage, _ expect: Expect) throws -> Void) {
        var described = "a storage"
        do {
            let storage = try makeStorage()
            described = storage.description
            try check(storage, Expect(check: name, storage: described, location: location))
        } catch {
            Issue.record("\(name), \(described): \(error)", sourceLocation: location)
        }
    }

    /// ``run(_:_:)`` on a thread of its own, for a check that blocks threads while it waits.
    func runOffPool(_ name: String, _ check: @escaping @Sendable (Prefs.Storage, _ expect: Expect) throws -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                run(name, check)
                continuation.resume()
            }
        }
    }

    /// Opens a store on `storage`, runs `body` with it, and closes it. The store reads no launch arguments: the checks
    /// read what they wrote, whatever the test runner was started with.
    func withStore<Result>(_ storage: Prefs.Storage, _ body: (Prefs) throws -> Result) throws -> Result {
        let prefs = try Prefs(storage, launchArguments: [])
        do {
            let result = try body(prefs)
            try prefs.close()
            return result
        } catch {
            try? prefs.close()  // the first error is the one to report
            throw error
        }
    }

    /// Runs `verify` on a store that wrote, then (when the storage persists) on a second store opened after the
    /// first closed; `write` runs on the first store only. `verify` reads through ``Fresh``: the store that wrote
    /// would answer typed reads from its cache, without asking the backend.
    func writeThenVerify(_ storage: Prefs.Storage, _ expect: Expect, write: (Prefs) throws -> Void, verify: (Fresh, _ when: String) throws -> Void) throws {
        try withStore(storage) { prefs in
            try write(prefs)
            try verify(Fresh(prefs: prefs), "in the store that wrote")
        }
        if persists { try withStore(storage) { prefs in try verify(Fresh(prefs: prefs), "in a store opened after the writer closed") } }
    }

    func initialValues(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try withStore(storage) { prefs in
            expect(prefs[Values.int] == 7, "an unset Int reads \(prefs[Values.int]), not its initial value 7")
            expect(prefs[Values.string] == "initial", "an unset String reads \(prefs[Values.string].debugDescription)")
            expect(prefs[Values.url] == nil, "an unset optional reads \(String(describing: prefs[Values.url]))")
            expect(!prefs.isStored(Values.int), "isStored is true for a key nothing stored")
            let snapshot = try prefs.snapshot()
            expect(snapshot.isEmpty, "a fresh storage holds \(snapshot.count) values: \(snapshot.keys.sorted().prefix(5))")
        }
    }

    func roundTrip(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try writeThenVerify(storage, expect) { prefs in
            try prefs.set(Int.min, for: Values.int)
            try prefs.set(true, for: Values.bool)
            try prefs.set(0.1 + 0.2, for: Values.double)
            try prefs.set(.infinity, for: Values.infinity)
            try prefs.set(Values.writtenString, for: Values.string)
            try prefs.set(Values.writtenDate, for: Values.date)
            try prefs.set(Values.writtenData, for: Values.data)
            try prefs.set(Values.writtenURL, for: Values.url)
            try prefs.set(["a", "", "ü", "b"], for: Values.strings)
            try prefs.set(["a": 1, "b": -2, "": 0], for: Values.counts)
            try prefs.set(Values.writtenWindow, for: Values.window)
            try prefs.set(.dark, for: Values.theme)
        } verify: { read, when in
            func same<Value: PrefsStorable & Equatable>(_ key: Prefs.Key<Value>, _ written: Value, _ what: String) throws {
                let value = try read(key)
                expect(value == written, "\(what) \(when) reads \(String(reflecting: value)), not \(String(reflecting: written))")
            }
            try same(Values.int, Int.min, "Int")
            try same(Values.bool, true, "Bool")
            try same(Values.double, 0.1 + 0.2, "Double")
            try same(Values.infinity, .infinity, "Double infinity")
            try same(Values.string, Values.writtenString, "a String with a NUL and emoji")
            try same(Values.date, Values.writtenDate, "Date")
            try same(Values.data, Values.writtenData, "Data")
            try same(Values.url, Values.writtenURL, "URL")
            try same(Values.strings, ["a", "", "ü", "b"], "[String]")
            try same(Values.counts, ["a": 1, "b": -2, "": 0], "[String: Int]")
            try same(Values.window, Values.writtenWindow, "a Codable struct")
            try same(Values.theme, .dark, "a String enum")
            let types: [(Prefs.Keys, ValueType)] = [
                (Values.int, .int), (Values.bool, .bool), (Values.double, .double), (Values.string, .string), (Values.date, .date),
                (Values.data, .data), (Values.url, .url), (Values.strings, .array(.string)), (Values.counts, .dictionary(.int)),
                (Values.window, .json), (Values.theme, .string),
            ]
            for (key, type) in types {
                let stored = try read.prefs.storedValue(forKey: key.name)?.type
                expect(stored == type, "\(key.name) \(when) is stored as \(stored.map { "\($0)" } ?? "nothing"), not \(type)")
            }
        }
    }

    func removeAndReset(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try writeThenVerify(storage, expect) { prefs in
            try prefs.set(1, for: Values.int)
            try prefs.set("kept", for: Values.string)
            try prefs.set(Values.writtenURL, for: Values.url)
            try prefs.reset(Values.int)
            expect(prefs[Values.int] == 7 && !prefs.isStored(Values.int), "reset left \(prefs[Values.int])")
            try prefs.set(nil, for: Values.url)
            expect(!prefs.isStored(Values.url), "setting nil left \(String(describing: prefs[Values.url]))")
            try prefs.set(true, for: Values.bool)
            try prefs.resetAll(keeping: [Values.string])
        } verify: { read, when in
            let stored = try read.prefs.snapshot().keys.sorted()
            expect(stored == [Values.string.name], "after reset, resetAll and nil, \(stored) are stored \(when), not only \(Values.string.name)")
            let kept = try read(Values.string)
            expect(kept == "kept", "resetAll(keeping:) lost the kept value \(when): it reads \(kept.debugDescription)")
        }
    }

    func transactions(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try writeThenVerify(storage, expect) { prefs in
            try prefs.set(1, for: Values.int)
            do {
                try prefs.transaction { transaction in
                    transaction[Values.int] = 2
                    transaction[Values.string] = "not stored"
                    throw Failure(description: "the body's own error")
                }
                expect(false, "a transaction whose body threw did not throw")
            } catch let error as Failure {
                expect(error.description == "the body's own error", "the transaction threw \(error)")
            }
            try prefs.transaction { transaction in
                transaction[Values.bool] = true
                transaction[Values.theme] = .dark
            }
        } verify: { read, when in
            let (int, string) = (try read(Values.int), try read.prefs.storedValue(forKey: Values.string.name))
            expect(int == 1, "a transaction that threw \(when) left Int \(int), not 1")
            expect(string == nil, "a transaction that threw \(when) stored \(string.map { "\($0)" } ?? "")")
            let (bool, theme) = (try read(Values.bool), try read(Values.theme))
            expect(bool && theme == .dark, "a transaction that returned \(when) stored only part of its writes: \(bool), \(theme)")
        }
    }

    func concurrentUpdates(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try writeThenVerify(storage, expect) { prefs in
            let group = DispatchGroup()
            let errors = ErrorList()
            for _ in 0..<8 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    do {
                        for _ in 0..<100 { try prefs.update(Values.counter) { $0 += 1 } }
                    } catch {
                        errors.append(error)
                    }
                }
            }
            group.wait()
            expect(errors.all.isEmpty, "update threw: \(errors.all.prefix(3))")
        } verify: { read, when in
            let counter = try read(Values.counter)
            expect(counter == 800, "8 threads × 100 updates \(when) read \(counter), not 800")
        }
    }

    func largeValueAndManyKeys(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try writeThenVerify(storage, expect) { prefs in
            try prefs.set(Values.largeText, for: Values.large)
            try prefs.batch { transaction in
                for (index, key) in Values.many.enumerated() { transaction[key] = index }
            }
        } verify: { read, when in
            let large = try read(Values.large)
            expect(large == Values.largeText, "a 1,000,000-character value \(when) reads \(large.count) characters")
            let wrong = try Values.many.enumerated().filter { try read($0.element) != $0.offset }.map(\.element.name)
            expect(wrong.isEmpty, "\(wrong.count) of 1,000 keys written in one batch \(when) read back wrong, e.g. \(wrong.prefix(3))")
            let count = try read.prefs.snapshot().count
            expect(count == 1_001, "\(count) values are stored \(when), not 1,001")
        }
    }

    func twoStoresAtOnce(_ storage: Prefs.Storage, _ expect: Expect) throws {
        try withStore(storage) { first in
            try withStore(storage) { second in
                _ = (second[Values.int], first[Values.string])  // cached as unset: refresh() must say they changed
                try first.set(42, for: Values.int)
                try second.set("from the second", for: Values.string)
                try second.refresh()
                try first.refresh()
                expect(second[Values.int] == 42, "a store reads \(second[Values.int]) after refresh(), not the other store's 42")
                expect(first[Values.string] == "from the second", "a store reads \(first[Values.string].debugDescription) after refresh()")
                try second.update(Values.int) { $0 += 1 }
                try first.refresh()
                expect(first[Values.int] == 43, "an update by the other store reads \(first[Values.int]) after refresh(), not 43")
                try first.reset(Values.int)
                try second.refresh()
                expect(!second.isStored(Values.int), "a removal by the other store is not seen after refresh(): \(second[Values.int])")
            }
        }
    }
}

/// Reads a key's value as the backend returns it now (``Prefs/Prefs/storedValue(forKey:)``), decoded, or its initial
/// value when none is stored.
private struct Fresh {
    let prefs: Prefs

    func callAsFunction<Value: PrefsStorable>(_ key: Prefs.Key<Value>) throws -> Value {
        guard let stored = try prefs.storedValue(forKey: key.name) else { return key.initial }
        return try stored.decode(Value.self)
    }
}

/// Records an issue naming the check and the storage when a condition is false.
private struct Expect: Sendable {
    let check: String
    let storage: String
    let location: SourceLocation

    func callAsFunction(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { Issue.record("\(check), \(storage): \(message())", sourceLocation: location) }
    }
}

/// Errors collected from several threads.
private final class ErrorList: Sendable {
    private let errors = Locked<[String]>([])
    func append(_ error: any Error) { errors.withLock { $0.append("\(error)") } }
    var all: [String] { errors.withLock { $0 } }
}
