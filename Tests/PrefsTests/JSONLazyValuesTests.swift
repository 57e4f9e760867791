import Foundation
import TestFixtures
@testable import Prefs
import PrefsJSON
import PrefsTestHarness
import PrefsTesting
import Testing

/// Opening a JSON store checks its whole file but decodes a value or a declaration only when it is read
/// (`JSONStoreDocument.Entries`): what a store reads, refuses and writes is what it was when the whole file was decoded
/// at open.
@Suite("JSON store: values and declarations decoded when read")
struct JSONLazyValuesTests {
    static let count = Prefs.Key<Int>("count", initial: 0)

    /// A store file of format 2 holding `values` and `declared` (the text of the objects' members) as written.
    static func storeFile(_ values: String, declared: String = "") -> Data {
        Data(
            """
            {
              "declared": {\(declared)},
              "format": "prefs",
              "formatVersion": 2,
              "values": {
            \(values)
              }
            }

            """.utf8)
    }

    /// The reason `JSONStoreDocument` gave for bad JSON before it kept values as bytes: `JSON.parse`'s error.
    static func wholeFileReason(_ data: Data) -> String? {
        do {
            _ = try JSON.parse(data)
            return nil
        } catch {
            return "invalid JSON at \(error.location.line):\(error.location.column): \(error.message)"
        }
    }

    @Test("a store opens without decoding its values, and a read decodes that value alone")
    func readsDecodeOnlyWhatIsRead() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.batch { transaction in
            for index in 0..<50 { try transaction.set(index * 7, for: Prefs.Key<Int>("k\(index)", initial: 0)) }
            try transaction.set(["a", "b"], for: .tags)
            try transaction.set(WindowFrame(width: 1, height: 2, title: "t"), for: .frame)
        }
        try prefs.close()

        var document = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        #expect(document.values.count == 52 && document.values.undecodedCount == 52, "nothing decoded at open")
        #expect(document.values.decodedValue(forKey: "k3") == StoredValue(type: .int, json: .int(21)))
        #expect(document.values.undecodedCount == 51, "the value read, and no other")
        #expect(document.values["tags"] == StoredValue(type: .array(.string), json: .array([.string("a"), .string("b")])))
        #expect(document.values.undecodedCount == 51, "a plain read decodes without keeping it")

        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[Prefs.Key<Int>("k49", initial: 0)] == 343)
        #expect(reopened[.frame] == WindowFrame(width: 1, height: 2, title: "t"))
        #expect(reopened[.tags] == ["a", "b"])
        #expect(try reopened.snapshot().count == 52)
    }

    @Test(
        "bad JSON in a value nobody reads still fails the open, with the line and column it always had",
        arguments: [
            (#"    "a": {"type": "int", "value": 01}"#, "invalid JSON at 7:35: leading zeros are not allowed in numbers"),
            (#"    "a": {"type": "int", "value": 1, "type": "int"}"#, #"invalid JSON at 7:38: duplicate key "type""#),
            (#"    "a": {"type": "int", "value": 1},\#n    "a": {"type": "int", "value": 2}"#, #"invalid JSON at 8:5: duplicate key "a""#),
            (#"    "a": {"type": "[int]", "value": [1, 2,]}"#, "invalid JSON at 7:43: expected a value, found ']' (trailing commas are not allowed)"),
            (#"    "a": {"type": "string", "value": "\x"}"#, #"invalid JSON at 7:40: expected one of " \ / b f n r t u after '\', found 'x'"#),
            (#"    "a": {"type": "int", "value": 9223372036854775808}"#, "invalid JSON at 7:35: number 9223372036854775808 is out of range"),
            (#"    "a": {"type": "json", "value": {"b": tru}}"#, "invalid JSON at 7:42: expected a value, found 'tru'"),
            (#"    "a": {"type": "json", "value": "#, "invalid JSON at 8:3: expected a value, found '}'"),
            (#"    "a": 1,"#, "invalid JSON at 8:3: expected a string key, found '}' (trailing commas are not allowed)"),
            (
                #"    "a": {"type": "json", "value": \#(String(repeating: "[", count: 255))\#(String(repeating: "]", count: 255))}"#,
                "invalid JSON at 7:289: nesting deeper than 256 levels"
            ),
        ])
    func badValueFailsTheOpen(values: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let data = Self.storeFile(#"    "good": {"type": "int", "value": 1},"# + "\n" + values)
        try data.write(to: url)
        #expect(Self.wholeFileReason(data) == reason, "the message a whole-file parse gives")
        #expect(throws: PrefsError.corruptStore(path: url.path, reason: reason)) { _ = try Prefs(.jsonFile(url)) }
        #expect(throws: PrefsError.corruptStore(path: url.path, reason: reason)) { _ = try JSONStoreDocument(data: data, path: url.path) }
        #expect(try Data(contentsOf: url) == data, "kept byte for byte")
    }

    @Test("values written by hand read as before: bare values by the type their JSON implies, tags in any order and spacing")
    func handWrittenValues() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try Self.storeFile(
            """
                "launchCount"   :3,
                "name": "by hand",
                "tags": ["x",
                   "y"],
                "ratio": { "value" : 0.25 , "type":"double" },
                "count": {"type": "int", "value": 4, "note": "three members: a bare object"}
            """
        ).write(to: url)
        let prefs = try Prefs(.jsonFile(url))
        #expect(prefs[.launchCount] == 3)
        #expect(prefs[.name] == "by hand")
        #expect(prefs[.tags] == ["x", "y"])
        #expect(prefs[.ratio] == 0.25)
        let eager = try JSON.parse(Data(contentsOf: url))
        guard case .object(let entries)? = eager["values"] else {
            Issue.record("no values")
            return
        }
        #expect(try prefs.snapshot() == entries.mapValues(JSONStoreDocument.storedValue(from:)), "as a whole-file decode reads them")
    }

    @Test("a document is written entry by entry exactly as its whole tree serializes: raw, decoded and set entries, other members")
    func streamedEncodingIsTheTreeText() throws {
        let file = Data(
            """
            {
              "aaa": [1, {"z": null, "a": "\\u00e9"}],
              "declared": {
                "b": {"initial": 2, "type": "int"},
                "a": {"type": "[string]", "formerNames": ["old", "older"], "initial": ["x"]}
              },
              "format": "prefs",
              "formatVersion": 2,
              "journalGeneration": "9f2c4e7a01b3d586",
              "values": {
                "b": {"type": "int", "value": 2},
                "\\u00e9": {"value": {"k": [1.5, true]}, "type": "json"},
                "a": 7,
                "A": {"type": "string", "value": "line\\nbreak \\u2028"}
              },
              "zzz": {}
            }

            """.utf8)
        var document = try JSONStoreDocument(data: file, path: "/p.json")
        _ = document.values.decodedValue(forKey: "b")  // one decoded, the others raw
        document.values["new"] = StoredValue(type: .double, json: .double(0.25))
        document.declarations["new"] = KeyDeclaration(type: .double, initial: .double(0))
        // Every shape of declaration entry: with or without an initial value, with or without former names.
        document.declarations["bare"] = KeyDeclaration(type: .string, initial: nil)
        document.declarations["renamed"] = KeyDeclaration(type: .date, initial: nil, formerNames: ["was"])
        #expect(document.values.undecodedCount == 3 && document.declarations.undecodedCount == 2)

        var root = document.unknownMembers
        root["format"] = .string("prefs")
        root["formatVersion"] = .int(2)
        root["values"] = .object(document.values.decoded().mapValues { .object(["type": .string($0.type.description), "value": $0.json]) })
        root["declared"] = .object(document.declarations.decoded().mapValues(\.json))
        var tree = JSON.object(root).serializedData(.pretty)
        tree.append(0x0A)
        #expect(String(decoding: document.encoded(), as: UTF8.self) == String(decoding: tree, as: UTF8.self))
        #expect(String(decoding: JSONStoreDocument().encoded(), as: UTF8.self).hasPrefix("{\n  \"declared\": {},\n  \"format\""))
    }

    @Test("a compaction after reading a few values writes every other value as it was, hand-written ones in their written form")
    func compactionKeepsUnreadValues() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let writer = try Prefs(.jsonFile(url))
        try writer.batch { transaction in
            for index in 0..<40 {
                let key = "k\(index)"
                switch index % 4 {
                case 0: try transaction.set(index, for: Prefs.Key<Int>(key, initial: 0))
                case 1: try transaction.set("text \(index) \u{e9}\n\"", for: Prefs.Key<String>(key, initial: ""))
                case 2: try transaction.set([Double(index) / 3, -0.0, 1e300], for: Prefs.Key<[Double]>(key, initial: []))
                default:
                    try transaction.set(
                        WindowFrame(width: index, height: 1, title: "w\(index)"),
                        for: Prefs.Key<WindowFrame>(key, initial: .init(width: 0, height: 0, title: "")))
                }
            }
        }
        try writer.close()
        // Values a person added by hand, in no canonical form.
        var text = try String(contentsOf: url, encoding: .utf8)
        text = text.replacingOccurrences(
            of: "\"values\": {",
            with: #""values": {"bare": 3, "spaced" : { "value" : [1.50,2E0] , "type":"[double]" }, "escaped": {"type": "string", "value": "\u0041\/"},"#)
        try Data(text.utf8).write(to: url)
        let before = try Data(contentsOf: url)
        var expected = try JSONStoreDocument(data: before, path: url.path)
        expected.values.decodeAll()  // as the whole file was decoded at open before

        let prefs = try Prefs(.jsonFile(url))
        #expect(prefs[Prefs.Key<Int>("k4", initial: 0)] == 4)
        #expect(prefs[Prefs.Key<String>("k5", initial: "")] == "text 5 \u{e9}\n\"")
        try prefs.set(41, for: Self.count)
        try prefs.close()  // folds the journal: the whole file written again

        let after = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        expected.values["count"] = StoredValue(type: .int, json: .int(41))
        expected.declarations = after.declarations
        expected.unknownMembers = after.unknownMembers  // the new journal generation
        #expect(try Data(contentsOf: url) == expected.encoded(), "every value as a whole-file decode writes it")
        let written = try String(contentsOf: url, encoding: .utf8)
        #expect(written.contains(#""bare": {\#n      "type": "int",\#n      "value": 3\#n    }"#))
        #expect(written.contains(#""spaced": {\#n      "type": "[double]",\#n      "value": [\#n        1.5,\#n        2.0\#n      ]\#n    }"#))
        #expect(written.contains(#""escaped": {\#n      "type": "string",\#n      "value": "A/"\#n    }"#))
        // The lines of the file before, in order, but for those of the hand-written values, declarations and generation.
        var lines = written.split(separator: "\n")[...]
        for line in String(decoding: before, as: UTF8.self).split(separator: "\n")
        where !line.contains(#""bare""#) && !line.contains("journalGeneration") && !line.contains("declared") {
            guard let index = lines.firstIndex(of: line) else {
                Issue.record("not written as it was: \(line)")
                break
            }
            lines = lines[(index + 1)...]
        }
    }

    @Test("what reads every value reads the values nobody read: the integrity check, a snapshot, an export")
    func everyValue() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try Self.storeFile(
            """
                "a": {"type": "int", "value": 1},
                "b": {"type": "int", "value": "not a number"},
                "c": {"type": "[int]", "value": {"x": 1}}
            """
        ).write(to: url)
        let prefs = try Prefs(.jsonFile(url))
        #expect(prefs[Prefs.Key<Int>("a", initial: 0)] == 1)
        let problems = try prefs.integrityProblems()
        #expect(problems.count == 2 && problems[0].hasPrefix("$.values.b: ") && problems[1].hasPrefix("$.values.c: "), "\(problems)")
        #expect(try prefs.snapshot().keys.sorted() == ["a", "b", "c"])
        #expect(try prefs.storedValue(forKey: "b") == StoredValue(type: .int, json: .string("not a number")))
        do {
            _ = try StoreArchive.contents(of: Data(contentsOf: url), source: "export.json")
            Issue.record("an archive with a bad value was read")
        } catch let PrefsError.corruptStore(path, reason) {
            #expect(path == "export.json" && reason.hasPrefix("$.values.b.value: "), "\(reason)")
        }
    }

    @Test("declarations are checked at open and decoded when read; declaredKeys and a declaration's key read as before")
    func declarationsDecodedWhenRead() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.declare(.launchCount, .name, .tags, .frame, .renamed, .nickname)
        try prefs.set(2, for: .launchCount)
        try prefs.close()

        let data = try Data(contentsOf: url)
        var document = try JSONStoreDocument(data: data, path: url.path)
        #expect(document.declarations.count == 6 && document.declarations.undecodedCount == 6, "nothing decoded at open")
        #expect(document.declarations.decodedValue(forKey: "newName") == Prefs.Keys.renamed.declaration)
        #expect(document.declarations.undecodedCount == 5)
        let eager = try JSONStoreDocument.declarations(from: #require(JSON.parse(data)["declared"]), named: "declared", path: url.path)
        #expect(document.declarations.decoded() == eager)

        let reopened = try Prefs(.jsonFile(url))
        #expect(try reopened.declaredKeys() == eager)
        #expect(try reopened.recordedDeclaration(for: "frame") == Prefs.Keys.frame.declaration)
        #expect(try reopened.storedValue(forKey: "newName") == nil)
    }

    @Test(
        "a bad declaration fails the open with the message it always had, wherever it is",
        arguments: [
            (#""a": {"initial": 0}"#, #"$.declared.a.type: expected a type name such as "int""#),
            (#""a": {"initial": 0, "type": 3}"#, #"$.declared.a.type: expected a type name such as "int""#),
            (#""a": {"initial": 0, "type": "[int"}"#, #"$.declared.a.type: expected a type name such as "int""#),
            (
                #""a": {"type": "\#(String(repeating: "[", count: 131))int\#(String(repeating: "]", count: 131))"}"#,
                #"$.declared.a.type: expected a type name such as "int", found a type name nested more than 130 levels deep"#
            ),
            (#""a": 3"#, #"$.declared.a.type: expected a type name such as "int""#),
            (#""a": {"type": "int", "formerNames": "b"}"#, "$.declared.a.formerNames: expected an array of key names, found string"),
            (#""a": {"type": "int", "formerNames": ["b", 2.5]}"#, "$.declared.a.formerNames[1]: expected a key name, found number"),
            (#""a b": {"initial": 0, "type": "int]"}"#, #"$.declared["a b"].type: expected a type name such as "int""#),
        ])
    func badDeclarationFailsTheOpen(declared: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let good = #""g1": {"initial": 0, "type": "int"}, "g2": {"formerNames": ["old"], "type": "[string]"}, "#
        let data = Self.storeFile(#"    "g1": {"type": "int", "value": 1}"#, declared: good + declared)
        try data.write(to: url)
        // What reading every declaration whole says (the order aside: only one entry is bad).
        #expect(throws: PrefsError.corruptStore(path: url.path, reason: reason)) {
            _ = try JSONStoreDocument.declarations(from: #require(JSON.parse(data)["declared"]), named: "declared", path: url.path)
        }
        #expect(throws: PrefsError.corruptStore(path: url.path, reason: reason)) { _ = try Prefs(.jsonFile(url)) }
        #expect(try Data(contentsOf: url) == data, "kept byte for byte")
    }

    @Test("declarations in any spelling read as before: escapes, other members, former names, nested types, spacing")
    func declarationsInAnySpelling() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let longType = "[" + String(repeating: "[", count: 7) + "int" + String(repeating: "]", count: 8)
        let declared =
            #""a": {"type": "int", "initial": 1}, "b": {"type": "string", "note": "by hand"}, "c": {"formerNames": ["x", "y"], "initial": [], "type": "[int]"}, "d": {"type": "\#(longType)"}, "e": {"type" : "date" , "initial" : "2024-01-01T00:00:00Z" }"#
        let data = Self.storeFile("", declared: declared)
        try data.write(to: url)
        let eager = try JSONStoreDocument.declarations(from: #require(JSON.parse(data)["declared"]), named: "declared", path: url.path)
        #expect(eager.count == 5)
        #expect(try Prefs(.jsonFile(url)).declaredKeys() == eager)
        var document = try JSONStoreDocument(data: data, path: url.path)
        for key in ["e", "a", "c"] { #expect(document.declarations.decodedValue(forKey: key) == eager[key], "\(key)") }
        #expect(document.declarations.decoded() == eager)
    }

    @Test("a compaction after reading a few declarations writes the others as a whole-file decode did")
    func compactionKeepsUnreadDeclarations() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let writer = try Prefs(.jsonFile(url))
        try writer.declare(.launchCount, .name, .tags, .frame, .renamed, .nickname, .visits)
        try writer.close()
        var text = try String(contentsOf: url, encoding: .utf8)
        text = text.replacingOccurrences(of: #""declared": {"#, with: #""declared": {"byHand": {"type" : "bool", "initial": false, "note": 1},"#)
        try Data(text.utf8).write(to: url)
        var expected = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        expected.values.decodeAll()
        expected.declarations.decodeAll()

        let prefs = try Prefs(.jsonFile(url))
        #expect(try prefs.recordedDeclaration(for: "tags") == Prefs.Keys.tags.declaration)
        try prefs.set(7, for: .launchCount)  // its declaration is recorded already: only the value is written
        try prefs.close()

        let after = try JSONStoreDocument(data: Data(contentsOf: url), path: url.path)
        expected.values["launchCount"] = StoredValue(type: .int, json: .int(7))
        expected.unknownMembers = after.unknownMembers  // the new journal generation
        #expect(try Data(contentsOf: url) == expected.encoded())
        #expect(try String(contentsOf: url, encoding: .utf8).contains(#""byHand": {\#n      "initial": false,\#n      "type": "bool"\#n    }"#))
    }

    @Test("a value or declaration set, removed or changed after the file was read replaces what the file held")
    func changesReplaceTheFile() throws {
        let data = Self.storeFile(
            """
                "a": {"type": "int", "value": 1},
                "b": {"type": "int", "value": 2},
                "c": {"type": "int", "value": 3},
                "d": {"type": "int", "value": 4}
            """, declared: #""a": {"initial": 0, "type": "int"}, "b": {"initial": 0, "type": "int"}"#)
        var document = try JSONStoreDocument(data: data, path: "p.json")
        let int = { (value: Int) in StoredValue(type: .int, json: .int(value)) }
        document.values["a"] = int(10)
        document.values["b"] = nil
        document.apply(Changeset(values: ["c": .set(int(30)), "e": .set(int(50)), "d": .remove], removedDeclarations: ["a"]))
        document.apply(Changeset(declarations: ["b": KeyDeclaration(type: .string, initial: .string("x"))]))
        #expect(document.values.count == 3 && document.values.undecodedCount == 0)
        #expect(document.values.keys.sorted() == ["a", "c", "e"])
        #expect(document.values.decoded() == ["a": int(10), "c": int(30), "e": int(50)])
        #expect(document.declarations.decoded() == ["b": KeyDeclaration(type: .string, initial: .string("x"))])

        var other = try JSONStoreDocument(data: data, path: "p.json")
        #expect(other.values.decodedValue(forKey: "d") == int(4) && other.values.undecodedCount == 3)
        #expect(other.values.decodedValue(forKey: "d") == int(4) && other.values.count == 4, "decoded once, counted once")
        var eager = other
        eager.values.decodeAll()
        eager.declarations.decodeAll()
        #expect(eager == other && eager.values.undecodedCount == 0, "equal whatever is still raw")
        #expect(eager.encoded() == other.encoded())
    }
}
