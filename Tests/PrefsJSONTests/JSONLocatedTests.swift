import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("Located JSON and paths")
struct JSONLocatedTests {
    static let document = """
        {
          "name": "Prefs",
          "appVersions": ["1.0", "2.0",
            "3.0"],
          "nested": {"id": 1, "id": 2},
          "wéird key": null
        }
        """

    @Test func valuesAndKeysHaveExactLocations() throws {
        let root = try JSON.parseLocated(Self.document)
        #expect(root.location == SourceLocation(line: 1, column: 1, offset: 0))
        let members = try #require(root.members)
        #expect(members.map(\.key) == ["name", "appVersions", "nested", "wéird key"])
        #expect(members.map(\.keyLocation.description) == ["2:3", "3:3", "5:3", "6:3"])
        #expect(members[0].keyLocation.offset == 4)
        #expect(members[1].keyLocation.offset == 23)
        #expect(members[3].keyLocation.offset == 99)
        #expect(root["name"]?.location == SourceLocation(line: 2, column: 11, offset: 12))
        #expect(root["appVersions"]?.location == SourceLocation(line: 3, column: 18, offset: 38))
        #expect(root[JSONPath.root / "appVersions" / 1]?.location.description == "3:26")
        #expect(root[JSONPath.root / "appVersions" / 2]?.location == SourceLocation(line: 4, column: 5, offset: 57))
        #expect(root["nested"]?.location == SourceLocation(line: 5, column: 13, offset: 77))
        // Columns count scalars: "é" is two bytes but one column.
        #expect(root["wéird key"]?.location == SourceLocation(line: 6, column: 16, offset: 113))
        #expect(root["wéird key"]?.kindName == "null")
    }

    @Test func duplicateKeysAreKeptInOrder() throws {
        let root = try JSON.parseLocated(Self.document)
        let nested = try #require(root["nested"]?.members)
        #expect(nested.map(\.key) == ["id", "id"])
        #expect(nested.map(\.keyLocation.description) == ["5:14", "5:23"])
        #expect(nested[1].keyLocation.offset == 87)
        #expect(nested.map(\.value.json) == [.int(1), .int(2)])
        #expect(nested[1].value.location == SourceLocation(line: 5, column: 29, offset: 93))
        // Lookup and conversion: the last occurrence wins.
        #expect(root["nested"]?["id"]?.json == .int(2))
        #expect(root["nested"]?.json == .object(["id": .int(2)]))
        let duplicates = root.duplicateKeys()
        #expect(duplicates.count == 1)
        #expect(duplicates.first?.objectPath == JSONPath.root / "nested")
        #expect(duplicates.first?.key == "id")
        #expect(duplicates.first?.locations.map(\.description) == ["5:14", "5:23"])
        // Even with the reject policy, which only applies to `parse`.
        #expect(throws: Never.self) { try JSON.parseLocated(Self.document, options: .init(duplicateKeys: .reject)) }
        #expect(throws: JSONParseError.self) { try JSON.parse(Self.document) }
    }

    @Test func walkVisitsEveryValueInSourceOrder() throws {
        let root = try JSON.parseLocated(Self.document)
        var visited: [String] = []
        root.walk { path, node in visited.append("\(path) \(node.location)") }
        #expect(
            visited == [
                "$ 1:1", "$.name 2:11", "$.appVersions 3:18", "$.appVersions[0] 3:19", "$.appVersions[1] 3:26",
                "$.appVersions[2] 4:5", "$.nested 5:13", "$.nested.id 5:20", "$.nested.id 5:29", #"$["wéird key"] 6:16"#,
            ])
    }

    @Test func jsonMatchesThePlainParser() throws {
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let value = JSONTestValues.value(&rng, depth: 4)
            let text = value.serialized(.pretty)
            #expect(jsonIdentical(try JSON.parseLocated(text).json, try JSON.parse(text)))
            #expect(jsonIdentical(try JSON.parseLocated(Data(text.utf8)).json, value))
        }
    }

    @Test func locatedParsingReportsTheSameErrors() throws {
        for input in [#"{"a": 1"#, "[1, 2,]", "xyz", "", "[\r\n1,\r\n x]"] {
            #expect(throws: Self.plainError(input)) { try JSON.parseLocated(input) }
        }
        let bom = [0xEF, 0xBB, 0xBF] + Array("\n [true]".utf8)
        #expect(try JSON.parseLocated(bom)[0]?.location == SourceLocation(line: 2, column: 3, offset: 6))
        #expect(try JSON.parseLocated("[\r\n1,\r 2]")[1]?.location.description == "3:2")
    }

    private static func plainError(_ input: String) -> JSONParseError {
        do {
            _ = try JSON.parse(input)
            return JSONParseError(location: SourceLocation(line: 0, column: 0, offset: 0), message: "no error")
        } catch {
            return error
        }
    }

    // MARK: - JSONPath

    @Test func pathDescriptions() {
        #expect(JSONPath.root.description == "$")
        #expect(JSONPath([.index(0), .key("appVersions"), .index(2)]).description == "$[0].appVersions[2]")
        #expect((JSONPath.root / "weird key").description == #"$["weird key"]"#)
        #expect((JSONPath.root / "1abc" / "_ok" / "a1").description == #"$["1abc"]._ok.a1"#)
        #expect((JSONPath.root / "quo\"te" / "" / "é").description == #"$["quo\"te"][""]["é"]"#)
        #expect((JSONPath.root / "a.b" / "a-b").description == #"$["a.b"]["a-b"]"#)
        let literal: JSONPath = [.key("messages"), .index(10)]
        #expect(literal.description == "$.messages[10]")
        #expect(literal.parent == JSONPath.root / "messages")
        #expect(JSONPath.root.parent == nil)
    }

    @Test func pathsOrderComponentByComponent() {
        let paths: [JSONPath] = [
            JSONPath.root / "b", JSONPath.root / "a" / 10, JSONPath.root / "a" / 2, JSONPath.root,
            JSONPath.root / 1, JSONPath.root / "a", JSONPath.root / "a" / "x",
        ]
        #expect(paths.sorted().map(\.description) == ["$", "$[1]", "$.a", "$.a[2]", "$.a[10]", "$.a.x", "$.b"])
    }
}
