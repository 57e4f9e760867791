import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("JSON serializer")
struct JSONSerializerTests {
    @Test("object keys sort by their UTF-8 bytes: keyPrecedes agrees with the generic comparison on every pair")
    func keyOrder() {
        // Small and large strings, bridged-looking and native ones, prefixes, non-ASCII (where String's own < differs
        // from byte order: "e\u{301}" and "é" are equal to <, not in bytes), the empty string.
        let words = [
            "", "a", "A", "ab", "a\u{0}", "key10", "key9", "key1000000000000000000", "key100000000000000000", "é", "e\u{301}",
            "z", "Ω", "😀", "\u{FFFF}", String(repeating: "x", count: 40), String(repeating: "x", count: 39) + "y",
            NSString(string: "bridged key").description,
        ]
        for left in words {
            for right in words {
                #expect(JSON.keyPrecedes(left, right) == left.utf8.lexicographicallyPrecedes(right.utf8), "\(left) < \(right)")
            }
        }
        let document = JSON.object(["é": .int(1), "z": .int(2), "b": .int(3), "B": .int(4)])
        #expect(document.serialized() == #"{"B":4,"b":3,"z":2,"é":1}"#)
    }

    static let sample: JSON = .object([
        "name": .string("Prefs"),
        "ids": .array([.int(1), .int(-2)]),
        "nested": .object(["ok": .bool(true), "none": .null, "ratio": .double(0.5)]),
        "empty": .array([]),
        "nothing": .object([:]),
    ])

    @Test func compactOutputIsExact() {
        #expect(Self.sample.serialized() == #"{"empty":[],"ids":[1,-2],"name":"Prefs","nested":{"none":null,"ok":true,"ratio":0.5},"nothing":{}}"#)
    }

    @Test(arguments: [0, 7, -7, 10, -10, 1_234_567_890, Int.max, Int.min, Int.min + 1])
    func integersAreWrittenInDecimal(_ number: Int) {
        #expect(JSON.int(number).serialized() == String(number))
        #expect(JSON.array([.int(number), .int(number)]).serialized() == "[\(number),\(number)]")
    }

    @Test func prettyOutputIsExact() {
        let expected = """
            {
              "empty": [],
              "ids": [
                1,
                -2
              ],
              "name": "Prefs",
              "nested": {
                "none": null,
                "ok": true,
                "ratio": 0.5
              },
              "nothing": {}
            }
            """
        #expect(Self.sample.serialized(.pretty) == expected)
        #expect(JSON.int(3).serialized(.pretty) == "3")
        #expect(JSON.array([]).serialized(.pretty) == "[]")
    }

    @Test func keysAreSortedByUTF8Bytes() {
        let value: JSON = .object(["b": .int(2), "a": .int(1), "B": .int(0), "é": .int(4), "aa": .int(3), "": .int(-1), "z": .int(5)])
        #expect(value.serialized() == #"{"":-1,"B":0,"a":1,"aa":3,"b":2,"z":5,"é":4}"#)
        // Identical values always serialize identically, whatever the dictionary's internal order.
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<200 {
            let random = JSONTestValues.value(&rng, depth: 3)
            guard case .object(let members) = random else { continue }
            let rebuilt = JSON.object(Dictionary(uniqueKeysWithValues: members.reversed()))
            #expect(rebuilt.serialized() == random.serialized())
        }
    }

    @Test func stringsEscapeOnlyWhatTheyMust() {
        let text = "\"\\\n\t\r\u{8}\u{C}\u{1}\u{1F}\u{7F}\u{2028}\u{2029}/é😀\u{2027}"
        #expect(JSON.string(text).serialized() == #""\"\\\n\t\r\b\f\u0001\u001f"# + "\u{7F}" + #"\u2028\u2029/é😀"# + "\u{2027}\"")
        #expect(JSON.string("").serialized() == #""""#)
        #expect(JSON.string("\u{0}").serialized() == #""\u0000""#)
    }

    @Test func numbersUseShortestRoundTrippingText() {
        let cases: [(JSON, String)] = [
            (.double(1), "1.0"), (.double(0.1), "0.1"), (.double(1e-5), "1e-05"), (.double(1e300), "1e+300"),
            (.double(-0.0), "-0.0"), (.double(.leastNonzeroMagnitude), "5e-324"), (.double(.greatestFiniteMagnitude), "1.7976931348623157e+308"),
            (.double(123.456), "123.456"), (.double(1e16), "1e+16"),
            (.int(.min), "-9223372036854775808"), (.int(.max), "9223372036854775807"), (.int(0), "0"), (.int(-7), "-7"),
        ]
        for (value, text) in cases {
            #expect(value.serialized() == text)
        }
    }

    @Test func nonFiniteDoublesBecomeNull() throws {
        let value: JSON = .array([.double(.nan), .double(.infinity), .double(-.infinity)])
        #expect(value.serialized() == "[null,null,null]")
        #expect(try JSON.parse(value.serialized()) == .array([.null, .null, .null]))
    }

    @Test func dataAndBytesMatchTheString() {
        #expect(Self.sample.serializedData(.pretty) == Data(Self.sample.serialized(.pretty).utf8))
        #expect(Self.sample.serializedBytes() == Array(Self.sample.serialized().utf8))
    }

    @Test func specialValuesRoundTripExactly() throws {
        var values: [JSON] = JSONTestValues.trickyDoubles.map(JSON.double)
        values += [.int(.min), .int(.max), .int(0), .string("\u{0}\u{2028}😀"), .string("")]
        let document = JSON.array(values)
        for format in [JSONFormat.compact, .pretty] {
            #expect(jsonIdentical(try JSON.parse(document.serialized(format)), document))
        }
    }

    @Test func randomDocumentsRoundTripExactly() throws {
        var rng = SeededGenerator(seed: 0x5EED)
        for _ in 0..<500 {
            let value = JSONTestValues.value(&rng, depth: 5)
            for format in [JSONFormat.compact, .pretty] {
                let text = value.serialized(format)
                let parsed = try JSON.parse(text)
                #expect(jsonIdentical(parsed, value), "\(text)")
                #expect(parsed.serialized(format) == text)
            }
            #expect(jsonIdentical(try JSON.parse(value.serializedData()), value))
        }
    }
}
