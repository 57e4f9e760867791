import Foundation
import TestFixtures
import Observation
@testable import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsSupport

extension Prefs.Keys {
    static let volume = Key<Double>("volume", initial: 0.8)
    static let small = Key<Int8>("small", initial: 0)
    static let huge = Key<UInt64>("huge", initial: 0)
    static let word = Key<UInt>("word", initial: 0)
    static let short = Key<Int16>("short", initial: 0)
    static let gain = Key<Float>("gain", initial: 0)
    static let scale = Key<CGFloat>("scale", initial: 1)
    static let installation = Key<UUID>("installation", initial: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)
    static let favourites = Key<Set<String>>("favourites", initial: [])
    static let window = Key<Range<Int>>("window", initial: 0..<1)
    static let allowed = Key<ClosedRange<Double>>("allowed", initial: 0...1)
    static let price = Key<Decimal>("price", initial: 0)
    static let locale = Key<Locale>("locale", initial: Locale(identifier: "en_US"))
    static let zone = Key<TimeZone>("zone", initial: TimeZone(identifier: "UTC")!)
}

/// The enum style of seed 001, with a `Double` case read by mistake as another type.
enum MixedKey: String, PrefsKeyEnum {
    case volume, title, frame
    var initialValue: any PrefsStorable {
        switch self {
        case .volume: 0.5
        case .title: "Hello"
        case .frame: WindowFrame(width: 1, height: 2, title: "w")
        }
    }
}

@Observable final class PlayerModel {
    @ObservationIgnored @Pref(.volume) var volume
    init(store: Prefs) { _volume = Pref(.volume, store: store) }
}

final class SettingsHolder {
    @Pref(.launchCount) var launches
    init(store: Prefs) { _launches = Pref(.launchCount, store: store) }
}

struct SettingsValue {
    @Pref(.name) var name
    init(store: Prefs) { _name = Pref(.name, store: store) }
}

/// Marks the main queue, to tell in a callback whether it runs there.
let mainQueueMark = DispatchSpecificKey<Bool>()

/// The API app developers reach for: every common value type, the property wrapper, the standard store.
@Suite("The app developer's API", .timeLimit(.minutes(2)))
struct AppAPITests {
    // MARK: - Value types

    @Test("every common value type round-trips exactly, in this process and after a relaunch", arguments: Backend.allCases)
    func valueTypesRoundTrip(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let prefs = fixture.prefs
        let uuid = UUID()
        prefs[.small] = Int8.min
        prefs[.short] = Int16.max
        prefs[.huge] = UInt64.max
        prefs[.word] = UInt.max - 1
        prefs[.gain] = 12.34
        prefs[.scale] = 2.5
        prefs[.installation] = uuid
        prefs[.favourites] = ["b", "a", "c"]
        prefs[.window] = -3..<7
        prefs[.allowed] = 0.25...0.75
        prefs[.price] = Decimal(string: "0.1")!
        prefs[.locale] = Locale(identifier: "zh-Hant_TW")
        prefs[.zone] = TimeZone(identifier: "Europe/Paris")!
        #expect(prefs.diagnostics.isEmpty, "\(prefs.diagnostics)")
        for store in [prefs, try fixture.reopen()] {
            #expect(store[.small] == Int8.min)
            #expect(store[.short] == Int16.max)
            #expect(store[.huge] == UInt64.max)
            #expect(store[.word] == UInt.max - 1)
            #expect(store[.gain] == Float(12.34))
            #expect(store[.scale] == 2.5)
            #expect(store[.installation] == uuid)
            #expect(store[.favourites] == ["a", "b", "c"])
            #expect(store[.window] == -3..<7)
            #expect(store[.allowed] == 0.25...0.75)
            #expect(store[.price] == Decimal(string: "0.1")!)
            #expect(store[.locale].identifier == "zh-Hant_TW")
            #expect(store[.zone].identifier == "Europe/Paris")
        }
        let stored = try fixture.reopen().snapshot()
        #expect(stored["huge"] == StoredValue(type: .uint, json: .string("18446744073709551615")))
        #expect(stored["gain"] == StoredValue(type: .double, json: .double(Double(Float(12.34)))))
        #expect(stored["favourites"] == StoredValue(type: .array(.string), json: .array([.string("a"), .string("b"), .string("c")])))
        #expect(stored["window"]?.type.description == "[string: int]")
    }

    @Test("an integer that does not fit the key's type is a diagnostic, not a wrap-around")
    func narrowIntegerMismatch() throws {
        let prefs = try Prefs(.memory(["small": StoredValue(type: .int, json: .int(300)), "huge": StoredValue(type: .int, json: .int(-1))]))
        #expect(prefs[.small] == 0)
        #expect(prefs[.huge] == 0)
        let messages = prefs.diagnostics.map(\.description)
        #expect(messages.contains { $0.contains("300 does not fit Int8 (-128...127)") }, "\(messages)")
        #expect(messages.contains { $0.contains("-1 does not fit UInt64") }, "\(messages)")
    }

    @Test("a stored range with its bounds reversed is a mismatch, not a trap")
    func reversedRange() throws {
        let prefs = try Prefs(.memory(["window": StoredValue(type: .dictionary(.int), json: .object(["lowerBound": .int(5), "upperBound": .int(1)]))]))
        #expect(prefs[.window] == 0..<1)
        #expect(prefs.diagnostics.count == 1)
    }

    // MARK: - Enum keys read as the wrong type

    @Test("reading an enum case as a type its value cannot convert to reports it and returns a defined value")
    func enumKeyWrongTypeDoesNotTrap() throws {
        let prefs = try Prefs(.memory)
        prefs[MixedKey.volume] = 0.75
        let asInt: Int = prefs[MixedKey.volume]
        #expect(asInt == 0)  // 0.5 does not convert either: the empty Int
        let asString: String = prefs[MixedKey.volume]
        #expect(asString == "")
        let asBool: Bool? = prefs[MixedKey.title]
        #expect(asBool == nil)
        let lookup = prefs.lookup(MixedKey.volume, as: Int.self)
        guard case .unreadable(let value, let mismatch) = lookup else {
            Issue.record("expected unreadable, got \(lookup)")
            return
        }
        #expect(value == 0)
        #expect(mismatch.description.contains("MixedKey.volume holds Double values"))
        #expect(prefs.diagnostics.contains { $0.description.contains("cannot be read as Int") })
        let converted: Double = prefs[MixedKey.volume]
        #expect(converted == 0.75)
    }

    @Test("checkReads finds every case that cannot be read as a type, for a one-line test")
    func checkReadsHelper() throws {
        let prefs = try Prefs(.memory)
        #expect(prefs.checkReads([MixedKey.volume], as: Double.self).isEmpty)
        let problems = prefs.checkReads(MixedKey.allCases, as: Int.self)
        #expect(problems.count == 3, "\(problems)")
    }

    // MARK: - The property wrapper

    @Test("@Pref in a class and a struct reads and writes through the store")
    func wrapperInClassAndStruct() throws {
        let prefs = try Prefs(.memory)
        let holder = SettingsHolder(store: prefs)
        #expect(holder.launches == 0)
        holder.launches += 2
        #expect(prefs[.launchCount] == 2)
        let value = SettingsValue(store: prefs)
        value.name = "ada"
        #expect(prefs[.name] == "ada")
        #expect(value.$name.lookup.isStored)
        try value.$name.reset()
        #expect(value.name == "anonymous")
        try holder.$launches.update { $0 += 1 }
        #expect(holder.launches == 3)
    }

    @Test("@Pref inside an @Observable model: one onChange per change, from this process", arguments: [Backend.memory, .sqlite])
    func wrapperInObservableModel(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        let model = PlayerModel(store: fixture.prefs)
        let fired = Locked(0)
        withObservationTracking {
            _ = model.volume
        } onChange: {
            fired.withLock { $0 += 1 }
        }
        model.volume = 0.25
        model.$volume.queue.sync {}
        #expect(fired.withLock { $0 } == 1)
        #expect(model.volume == 0.25)
        #expect(try fixture.reopen()[.volume] == 0.25)
    }

    @Test("@Pref inside an @Observable model sees another process's write, once", arguments: [Backend.json, .sqlite])
    func wrapperSeesOtherProcess(backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        let path = try #require(fixture.path)
        let model = PlayerModel(store: fixture.prefs)
        let changed = Locked(false)
        withObservationTracking {
            _ = model.volume
        } onChange: {
            changed.withLock { $0 = true }
        }
        let result = try await ChildProcess.run("prefs-test-child", ["set", backend.rawValue, path, "volume", "double", "0.1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(await eventually { changed.withLock { $0 } })
        #expect(model.volume == 0.1)
        let again = Locked(0)
        withObservationTracking {
            _ = model.volume
        } onChange: {
            again.withLock { $0 += 1 }
        }
        try fixture.prefs.refresh()  // nothing changed since: no notification
        model.$volume.queue.sync {}
        #expect(again.withLock { $0 } == 0)
    }

    @Test("an observable made on the main actor notifies on the main actor (the main queue)")
    @MainActor
    func mainActorDelivery() async throws {
        DispatchQueue.main.setSpecific(key: mainQueueMark, value: true)
        let prefs = try Prefs(.memory)
        let observable = prefs.observable(.launchCount)
        let onMain = Locked<Bool?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            withObservationTracking {
                _ = observable.value
            } onChange: {
                onMain.withLock { $0 = DispatchQueue.getSpecific(key: mainQueueMark) == true }
                continuation.resume()
            }
            Thread.detachNewThread { prefs[.launchCount] = 5 }  // the change comes from another thread
        }
        #expect(onMain.withLock { $0 } == true)
        let background = await Task.detached { prefs.observable(.launchCount) }.value
        #expect(background.queue !== DispatchQueue.main)
    }

    @Test("write(_:for:) does its I/O off the caller and keeps call order")
    func asyncWriteOrder() async throws {
        let fixture = try StoreFixture(.sqlite)
        let prefs = fixture.prefs
        for value in 1...20 {
            try await prefs.write(value, for: .launchCount)
        }
        #expect(prefs[.launchCount] == 20)
        // Started together, they run in the order they were called: the last call's value remains.
        async let first: Void = prefs.write("first", for: .name)
        try await first
        async let second: Void = prefs.write("second", for: .name)
        try await second
        #expect(try fixture.reopen()[.name] == "second")
        await #expect(throws: PrefsError.self) {
            try await prefs.write(String(repeating: "x", count: Prefs.maximumValueBytes + 1), for: .name)
        }
    }
}

/// `Prefs.standard`: its default location, and a store of each test's own.
@Suite("The standard store")
struct StandardStoreTests {
    @Test("Prefs.standard can be swapped for a memory store, and @Pref without a store uses it")
    func standardSwap() throws {
        let memory = try Prefs(.memory)
        struct Model { @Pref(.launchCount) var launches }
        withStandardStore(memory) {
            let model = Model()
            model.launches = 9
            #expect(Prefs.standard === memory)
        }
        #expect(memory[.launchCount] == 9)
    }

    @Test("until set, Prefs.standard is the default location for the process, as UserDefaults.standard is")
    func defaultStandard() async throws {
        let directory = try TemporaryDirectory()
        let result = try await ChildProcess.run("prefs-test-child", ["standard", "launches", "7"], environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let path = directory.url.appendingPathComponent("prefs/prefs-test-child.sqlite").path
        #expect(result.stdout == path + "\n")
        #expect(try Prefs(.sqlite(URL(fileURLWithPath: path)))[Prefs.Key("launches", initial: 0)] == 7)
    }
}

/// A failure the store reports as a diagnostic keeps its typed error, so an app can tell one failure from another.
@Suite("Diagnostics keep their errors")
struct DiagnosticErrorTests {
    @Test("a subscript write that fails reports writeFailed with the PrefsError itself", arguments: Backend.allCases)
    func writeFailedKeepsTheError(backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.prefs.close()
        fixture.prefs[.launchCount] = 3
        let failure = try #require(fixture.diagnostics.all.last)
        guard case .writeFailed(let error as PrefsError, let during) = failure.kind, case .closed = error else {
            Issue.record("expected writeFailed(PrefsError.closed), got \(failure.kind)")
            return
        }
        #expect(during == nil)
        #expect(failure.key == "launchCount")
        #expect(failure.description.hasSuffix("write failed: \(error)"), "\(failure)")
    }
}
