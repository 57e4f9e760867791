import Foundation
import PrefsTestHarness
import PrefsTesting
import PrefsJSON
import Testing

/// A parse that keeps values as their bytes (`JSONTreeBuilder.keepsNextValue()`, `JSON.parse(_:keepingMembersOf:)`)
/// checks them exactly as `JSON.parse` parses them: whatever one rejects, the other rejects with the same error at the
/// same place, and what it keeps parses to the value `JSON.parse` builds in its place.
@Suite("JSON parser: kept values")
struct JSONKeptMembersTests {
    /// Keeps every value that starts at `depth` open containers (0: the whole document) as its bytes.
    struct KeepingBuilder: JSONTreeBuilder {
        let depth: Int
        var tree = JSONPlainBuilder(duplicateKeys: .reject)
        var open = 0
        var kept: [Range<Int>] = []

        func mark(at offset: Int) {}
        func makeNull(_ mark: Void) -> JSON { .null }
        func makeBool(_ value: Bool, _ mark: Void) -> JSON { .bool(value) }
        func makeInt(_ value: Int, _ mark: Void) -> JSON { .int(value) }
        func makeDouble(_ value: Double, _ mark: Void) -> JSON { .double(value) }
        func makeString(_ value: String, _ mark: Void) -> JSON { .string(value) }
        mutating func beginArray(_ mark: Void) {
            open += 1
            tree.beginArray(mark)
        }
        mutating func appendElement(_ value: JSON) { tree.appendElement(value) }
        mutating func endArray() -> JSON {
            open -= 1
            return tree.endArray()
        }
        mutating func beginObject(_ mark: Void) {
            open += 1
            tree.beginObject(mark)
        }
        mutating func beginMember(key: String, keyMark: Void) -> Bool { tree.beginMember(key: key, keyMark: keyMark) }
        mutating func endMember(_ value: JSON) { tree.endMember(value) }
        mutating func endObject() -> JSON {
            open -= 1
            return tree.endObject()
        }
        func keepsNextValue() -> Bool { open == depth }
        mutating func makeKept(_ bytes: Range<Int>) -> JSON {
            kept.append(bytes)
            return .string("kept \(kept.count - 1)")
        }
    }

    /// Parses `input` keeping the values at `depth`, and each kept value's bytes parsed on their own put back.
    static func parseKeeping(_ input: [UInt8], depth: Int, maxDepth: Int = 256) throws(JSONParseError) -> JSON {
        let result = input.withUnsafeBufferPointer { bytes in
            Result { () throws(JSONParseError) -> (JSON, KeepingBuilder) in
                try JSONParserCore<KeepingBuilder>.parseKeepingBuilder(bytes, options: JSONParseOptions(maxDepth: maxDepth)) { _, _ in
                    KeepingBuilder(depth: depth)
                }
            }
        }
        let (tree, builder) = try result.get()
        let values = try builder.kept.map { range throws(JSONParseError) in try JSON.parse(input[range]) }
        return restore(tree, values)
    }

    static func restore(_ tree: JSON, _ kept: [JSON]) -> JSON {
        switch tree {
        case .string(let text) where text.hasPrefix("kept "): kept[Int(text.dropFirst(5))!]
        case .array(let elements): .array(elements.map { restore($0, kept) })
        case .object(let members): .object(members.mapValues { restore($0, kept) })
        default: tree
        }
    }

    /// Whether keeping the values at each depth gives what `JSON.parse` gives: the same tree, or the same error.
    static func expectSameOutcome(_ input: [UInt8], maxDepth: Int = 256, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let expected = Result { () throws(JSONParseError) -> JSON in try JSON.parse(input, options: .init(maxDepth: maxDepth)) }
        for depth in 0...3 {
            let kept = Result { () throws(JSONParseError) -> JSON in try parseKeeping(input, depth: depth, maxDepth: maxDepth) }
            switch (expected, kept) {
            case (.success(let tree), .success(let other)):
                #expect(jsonIdentical(tree, other), "depth \(depth): \(String(decoding: input, as: UTF8.self))", sourceLocation: sourceLocation)
            case (.failure(let error), .failure(let other)):
                #expect(error == other, "depth \(depth): \(String(decoding: input, as: UTF8.self))", sourceLocation: sourceLocation)
            default:
                Issue.record("depth \(depth): \(expected) against \(kept) for \(String(decoding: input, as: UTF8.self))", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("every bad input of the parser's tests fails as it does, kept at any depth, alone or inside a document")
    func badInputsFailAlike() {
        for (input, _, _) in JSONParserTests.failures {
            Self.expectSameOutcome(input)
            Self.expectSameOutcome(Array(#"{"a": [1, {"b": "#.utf8) + input + Array("}]}".utf8))
            Self.expectSameOutcome(Array(#"[{"values": {"k": 1, "k2": "#.utf8) + input + Array(#", "k3": 2}}]"#.utf8))
            Self.expectSameOutcome(Array("[[[1, ".utf8) + input + Array("]]]".utf8))
        }
    }

    @Test("duplicate keys are refused as their key is read, however they are spelled")
    func duplicateKeys() {
        for text in [
            #"{"a": {"x": 1, "x": 2}}"#, #"{"a": {"x": 1, "\u0078": 2}}"#, #"{"a": {"K": 1, "\u212A": 2}}"#,
            #"{"a": {"\u212A": 1, "K": 2}}"#, #"{"a": {"é": 1, "e\u0301": 2}}"#, #"{"a": {"ab": 1, "a": 2, "b": 3}}"#,
            #"{"a": [{"x": {"x": 1}, "y": {"y": 2, "x": 3}, "x": 4}]}"#,
            #"{"a": {"x": 1, "y": [1, 2, ], "x": 2}}"#, #"{"a": {"x": 1, "x": [1, 2, ]}}"#,
            "{\"a\": {" + (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + ", \"k17\": 0}}",
            "{\"a\": {" + (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + ", \"\\u006b17\": 0}}",
            "{\"a\": {" + (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + "}}",
        ] {
            Self.expectSameOutcome(Array(text.utf8))
        }
    }

    @Test("nesting is counted from the document's root, not from the kept value")
    func depth() {
        for levels in [2, 3, 4, 5] {
            let text = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
            Self.expectSameOutcome(Array(text.utf8), maxDepth: 4)
            Self.expectSameOutcome(Array(("{\"a\": " + text + "}").utf8), maxDepth: 4)
        }
        Self.expectSameOutcome(Array((String(repeating: "[", count: 300) + String(repeating: "]", count: 300)).utf8))
    }

    @Test("random documents and every cut and one-byte change of them parse, or fail, alike")
    func randomDocuments() {
        var rng = SeededGenerator(seed: 32)
        let replacements = Array(#"{}[],:" \-0.1eE+tfnu9x"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xFF]
        for _ in 0..<300 {
            let document = JSON.object(["values": JSONTestValues.value(&rng, depth: 3), "other": JSONTestValues.value(&rng, depth: 2)])
            let bytes = document.serializedBytes(rng.next() & 1 == 0 ? .pretty : .compact)
            Self.expectSameOutcome(bytes)
            for _ in 0..<4 {
                var changed = bytes
                let index = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: changed.removeSubrange(index...)
                case 1: changed[index] = replacements[Int(rng.next() % UInt64(replacements.count))]
                default: changed.insert(replacements[Int(rng.next() % UInt64(replacements.count))], at: index)
                }
                Self.expectSameOutcome(changed)
            }
        }
    }

    @Test("several members' members are kept, each on its own; one that is not an object stays in the tree")
    func severalKeptMembers() throws {
        let text = #"{"declared": {"b": {"type": "int"}, "a": 1}, "format": "prefs", "values": {"a": [1], "b": "x"}, "other": [{"values": {}}]}"#
        let data = Data(text.utf8)
        let parsed = try JSON.parse(data, keepingMembersOf: ["values", "declared", "other", "missing"])
        #expect(parsed.root == .object(["format": .string("prefs"), "other": .array([.object(["values": .object([:])])])]))
        #expect(parsed.kept.keys.sorted() == ["declared", "values"])
        let whole = try JSON.parse(data)
        for (name, members) in parsed.kept {
            for (key, range) in members { #expect(try JSON.parse(data[range]) == whole[name]?[key], "\(name).\(key)") }
        }
        let duplicate = #"{"values": {"a": 1}, "declared": {"b": 1, "b": 2}}"#
        #expect(throws: JSONParseError(location: SourceLocation(line: 1, column: 43, offset: 42), message: #"duplicate key "b""#)) {
            try JSON.parse(Data(duplicate.utf8), keepingMembersOf: ["values", "declared"])
        }
    }

    @Test("forEachMember(ofObjectText:) walks the members of JSON text, whatever their values hold, and text cut short safely")
    func membersOfObjectText() throws {
        let text = #" { "type" : "int", "initial": {"a": [1, "]}", {"b": null}], "c\"": "x,y"}, "n": -1.5e3,"s":"\"{" ,"e": [] } "#
        let bytes = Array(text.utf8)
        var members: [(String, JSON)] = []
        let isObject = bytes.withUnsafeBufferPointer { buffer in
            JSON.forEachMember(ofObjectText: buffer) { key, value in
                members.append((String(decoding: buffer[key], as: UTF8.self), (try? JSON.parse(buffer[value])) ?? .string("not JSON")))
                return true
            }
        }
        #expect(isObject)
        #expect(members.map(\.0) == ["type", "initial", "n", "s", "e"])
        let whole = try JSON.parse(text)
        for (key, value) in members { #expect(value == whole[key], "\(key)") }
        for text in ["[1]", "\"x\"", "1", " null"] {
            #expect(!Array(text.utf8).withUnsafeBufferPointer { JSON.forEachMember(ofObjectText: $0) { _, _ in true } })
        }
        var seen = 0
        _ = bytes.withUnsafeBufferPointer { buffer in
            JSON.forEachMember(ofObjectText: buffer) { _, _ in
                seen += 1
                return seen < 2
            }
        }
        #expect(seen == 2, "stops when asked")
        for text in [#"{"a"#, #"{"a":"#, #"{"a" 1}"#, #"{"a":"x"#, #"{"a":[1,"#, #"{"a\"#, "{", #"{"a":1,"#, #"{"a":}"#] {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBufferPointer { buffer in
                JSON.forEachMember(ofObjectText: buffer) { key, value in
                    #expect(key.upperBound <= buffer.count && value.upperBound <= buffer.count && !value.isEmpty, "\(text)")
                    return true
                }
            }
        }
    }

    @Test("parse(_:keepingMembersOf:) keeps the named member's members as ranges and leaves it out of the tree")
    func keepingMembersOf() throws {
        let text = #"{"format": "prefs", "values": {"a": [1, 2], "b": {"type": "int", "value": 3}, "c": "x"}, "z": {"values": {}}}"#
        let data = Data(text.utf8)
        let parsed = try JSON.parse(data, keepingMembersOf: ["values"])
        #expect(parsed.root == .object(["format": .string("prefs"), "z": .object(["values": .object([:])])]))
        let kept = try #require(parsed.kept["values"])
        #expect(kept.count == 3)
        let whole = try JSON.parse(data)
        for (key, range) in kept {
            #expect(try JSON.parse(data[range]) == whole["values"]?[key], "\(key)")
        }
        #expect(try JSON.parse(Data(#"{"values": [1]}"#.utf8), keepingMembersOf: ["values"]).kept["values"] == nil)
        #expect(try JSON.parse(Data(#"{"values": [1]}"#.utf8), keepingMembersOf: ["values"]).root == .object(["values": .array([.int(1)])]))
        #expect(try JSON.parse(Data(#"[{"values": {"a": 1}}]"#.utf8), keepingMembersOf: ["values"]).kept["values"] == nil)
        #expect(try JSON.parse(Data(#"{"values": {}}"#.utf8), keepingMembersOf: ["values"]).kept["values"] == [:])
        let ascending = (0..<100).map { #""k\#(1000 + $0)": \#($0)"# }.joined(separator: ", ")
        #expect(try JSON.parse(Data(#"{"values": {"b": 1, "a": 2, "é": 3, "c": 4}}"#.utf8), keepingMembersOf: ["values"]).kept["values"]?.count == 4)
        #expect(try JSON.parse(Data("{\"values\": {\(ascending)}}".utf8), keepingMembersOf: ["values"]).kept["values"]?.count == 100)
        for text in [
            #"{"values": {"a": 1, "a": 2}}"#, #"{"values": {}, "values": {}}"#, #"{"values": {"a": 1, "b": [1,]}}"#,
            #"{"values": {"a": {"b": 1, "b": 2}}}"#, #"{"values": {"a": 1, "b": 2, "a": 3}}"#, #"{"values": {"b": 1, "a": 2, "b": 3}}"#,
            #"{"values": {"K": 1, "\u212A": 2}}"#, #"{"values": {"e\u0301": 1, "é": 2}}"#, #"{"values": {"a": 1, "\u0061": 2}}"#,
            "{\"values\": {\(ascending), \"k1050\": 0}}", "{\"values\": {\(ascending), \"k1050\": [1,]}}",
        ] {
            let expected = Result { () throws(JSONParseError) -> JSON in try JSON.parse(Data(text.utf8)) }
            let kept = Result { () throws(JSONParseError) -> JSON.KeptMembers in try JSON.parse(Data(text.utf8), keepingMembersOf: ["values"]) }
            guard case .failure(let error) = expected, case .failure(let other) = kept else {
                Issue.record("\(text): \(expected), \(kept)")
                continue
            }
            #expect(error == other, "\(text)")
        }
    }
}
