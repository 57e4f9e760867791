import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Every value type an app stores goes through prefs-tool export and import exactly, between both file backends.
@Suite("prefs-tool and every value type")
struct ValueTypeToolTests {
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    func fill(_ prefs: Prefs) throws {
        try prefs.set(Int8.min, for: Prefs.Key("int8", initial: 0))
        try prefs.set(UInt64.max, for: Prefs.Key("uint64", initial: 0))
        try prefs.set(UInt8.max, for: Prefs.Key("uint8", initial: 0))
        try prefs.set(Float(12.34), for: Prefs.Key("float", initial: 0))
        try prefs.set(Self.uuid, for: Prefs.Key("uuid", initial: UUID()))
        try prefs.set(Set([3, 1, 2]), for: Prefs.Key("set", initial: Set<Int>()))
        try prefs.set(1..<5, for: Prefs.Key("range", initial: 0..<1))
        try prefs.set(Decimal(string: "0.1")!, for: Prefs.Key("decimal", initial: Decimal(0)))
        try prefs.set(TimeZone(identifier: "Asia/Tokyo")!, for: Prefs.Key("zone", initial: TimeZone(identifier: "UTC")!))
    }

    func check(_ prefs: Prefs) {
        #expect(prefs[Prefs.Key<Int8>("int8", initial: 0)] == Int8.min)
        #expect(prefs[Prefs.Key<UInt64>("uint64", initial: 0)] == UInt64.max)
        #expect(prefs[Prefs.Key<UInt8>("uint8", initial: 0)] == UInt8.max)
        #expect(prefs[Prefs.Key<Float>("float", initial: 0)] == Float(12.34))
        #expect(prefs[Prefs.Key("uuid", initial: UUID())] == Self.uuid)
        #expect(prefs[Prefs.Key("set", initial: Set<Int>())] == [1, 2, 3])
        #expect(prefs[Prefs.Key("range", initial: 0..<1)] == 1..<5)
        #expect(prefs[Prefs.Key("decimal", initial: Decimal(0))] == Decimal(string: "0.1")!)
        #expect(prefs[Prefs.Key("zone", initial: TimeZone(identifier: "UTC")!)].identifier == "Asia/Tokyo")
        #expect(prefs.diagnostics.isEmpty, "\(prefs.diagnostics)")
    }

    @Test(
        "export from one backend and import --replace into the other reads back every type exactly",
        arguments: [(StoreFile.json, StoreFile.sqlite), (.sqlite, .json)])
    func exportImport(from source: StoreFile, to target: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let sourcePath = source.path(in: directory)
        try fill(Prefs(.file(URL(fileURLWithPath: sourcePath))))
        let snapshot = directory.file("snapshot.json").path
        let exported = try await tool("--store", sourcePath, "export", snapshot)
        #expect(exported.status == 0, "\(exported.stderr)")
        let targetPath = directory.file("copy." + target.rawValue).path
        let imported = try await tool("--store", targetPath, "import", snapshot, "--replace")
        #expect(imported.status == 0, "\(imported.stderr)")
        let copy = try Prefs(.file(URL(fileURLWithPath: targetPath)))
        check(copy)
        #expect(try copy.snapshot() == Prefs(.file(URL(fileURLWithPath: sourcePath))).snapshot())
    }

    @Test("get and list print the new types under plain names", arguments: StoreFile.allCases)
    func getAndList(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let path = file.path(in: directory)
        try fill(Prefs(.file(URL(fileURLWithPath: path))))
        #expect(try await tool("--store", path, "get", "uint64").stdout == "18446744073709551615\n")
        #expect(try await tool("--store", path, "get", "uuid").stdout == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F\n")
        #expect(try await tool("--store", path, "get", "float").stdout == "12.34000015258789\n")
        let list = try await tool("--store", path, "list", "uint64", "range")
        #expect(list.stdout == "range\t[string: int]\t{\"lowerBound\":1,\"upperBound\":5}\nuint64\tuint\t18446744073709551615\n")
        let set = try await tool("--store", path, "set", "uint64", "18446744073709551614")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try Prefs(.file(URL(fileURLWithPath: path)))[Prefs.Key<UInt64>("uint64", initial: 0)] == UInt64.max - 1)
    }
}
