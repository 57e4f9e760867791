import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("JSON parser")
struct JSONParserTests {
    // MARK: - Values

    @Test func parsesEveryKindExactly() throws {
        let value = try JSON.parse(#" { "a": [1, -2, 3.5, true, false, null, "x"], "b": {"c": ""}, "d": [] } "#)
        #expect(
            value
                == .object([
                    "a": .array([.int(1), .int(-2), .double(3.5), .bool(true), .bool(false), .null, .string("x")]),
                    "b": .object(["c": .string("")]),
                    "d": .array([]),
                ]))
    }

    @Test func integersStayIntegersAcrossTheInt64Range() throws {
        #expect(try JSON.parse("9223372036854775807") == .int(.max))
        #expect(try JSON.parse("-9223372036854775808") == .int(.min))
        #expect(try JSON.parse("-0") == .int(0))
        #expect(try JSON.parse("0") == .int(0))
        #expect(try JSON.parse("[10, -10]") == .array([.int(10), .int(-10)]))
    }

    @Test func numbersWithFractionOrExponentAreDoubles() throws {
        #expect(try JSON.parse("1.0") == .double(1))
        #expect(try JSON.parse("1E2") == .double(100))
        #expect(try JSON.parse("1e-2") == .double(0.01))
        #expect(try JSON.parse("0.1") == .double(0.1))
        #expect(try JSON.parse("5e-324") == .double(.leastNonzeroMagnitude))
        #expect(try JSON.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try JSON.parse("123456789012345678901234567890e-10") == .double(12345678901234567890.123456789))
        #expect(try JSON.parse("0.000000000000000000001") == .double(1e-21))
        #expect(try JSON.parse("1e-400") == .double(0))
        guard case .double(let negativeZero) = try JSON.parse("-0.0") else {
            Issue.record("-0.0 is not a double")
            return
        }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
    }

    @Test func doublesRoundTripThroughTheirShortestText() throws {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<20_000 {
            let value = JSONTestValues.double(&rng)
            let parsed = try JSON.parse(value.description)
            guard case .double(let result) = parsed else {
                Issue.record("\(value.description) parsed as \(parsed)")
                continue
            }
            #expect(result.bitPattern == value.bitPattern, "\(value.description)")
        }
    }

    @Test func fastDecimalPathAgreesWithTheStandardLibrary() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let digits = String(rng.next() % 1_000_000_000_000_000)
            let exponent = Int(rng.next() % 61) - 30
            let point = Int(rng.next() % UInt64(digits.count + 1))
            let integerPart = point == 0 ? "0" : String(digits.prefix(point))
            let fractionPart = point == digits.count ? "0" : String(digits.dropFirst(point))
            let normalized = integerPart + "." + fractionPart + "e\(exponent)"
            #expect(try JSON.parse(normalized) == .double(Double(normalized) ?? .nan), "\(normalized)")
        }
    }

    @Test func stringsDecodeEveryEscape() throws {
        let value = try JSON.parse(#""\u00e9\n\t\"\\\/\b\f\r\uD83D\uDE00 \u0000 é😀""#)
        #expect(value == .string("é\n\t\"\\/\u{8}\u{C}\r😀 \u{0} é😀"))
    }

    @Test func longStringsTakeTheFastPathAndEscapesAnywhere() throws {
        let body = String(repeating: "abcdefghé€😀", count: 50)
        #expect(try JSON.parse("\"\(body)\"") == .string(body))
        for position in 0..<20 {
            let prefix = String(repeating: "x", count: position)
            #expect(try JSON.parse("\"\(prefix)\\n\(body)\"") == .string(prefix + "\n" + body))
        }
    }

    @Test func byteOrderMarkIsSkipped() throws {
        #expect(try JSON.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == .array([.int(1)]))
        #expect(try JSON.parse("\u{FEFF}{\"a\":true}") == .object(["a": .bool(true)]))
    }

    @Test func everyInputTypeParsesTheSame() throws {
        let text = #"{"k": [1, 2.5, "s"]}"#
        let expected = try JSON.parse(text)
        #expect(try JSON.parse(Data(text.utf8)) == expected)
        #expect(try JSON.parse(Array(text.utf8)) == expected)
        #expect(try JSON.parse(Array(text.utf8)[...]) == expected)
        #expect(try JSON.parse(text.utf8) == expected)
    }

    @Test func lastWinsKeepsTheLastDuplicate() throws {
        let value = try JSON.parse(#"{"a": 1, "b": 0, "a": 2}"#, options: .init(duplicateKeys: .lastWins))
        #expect(value == .object(["a": .int(2), "b": .int(0)]))
    }

    @Test func duplicateKeysAreFoundAsSoonAsTheyAreRead() throws {
        #expect(throws: JSONParseError(location: SourceLocation(line: 1, column: 8, offset: 7), message: #"duplicate key "a""#)) {
            try JSON.parse(#"{"a":1,"a":{"b":1,"b":2}}"#)
        }
        // Large objects switch from comparing keys to a set.
        let members = (0..<40).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
        let text = "{" + members + #", "k3": 0}"#
        #expect(
            throws: JSONParseError(
                location: SourceLocation(line: 1, column: text.count - 7, offset: text.utf8.count - 8),
                message: #"duplicate key "k3""#)
        ) {
            try JSON.parse(text)
        }
        let lastWins = try JSON.parse(text, options: .init(duplicateKeys: .lastWins))
        #expect(lastWins["k3"] == .int(0))
        #expect(lastWins["k39"] == .int(39))
        #expect(try JSON.parse("{" + members + "}")["k17"] == .int(17))
    }

    @Test func depthLimitIsExactAndDeepInputNeverOverflowsTheStack() throws {
        let options = JSONParseOptions(maxDepth: 3)
        #expect(try JSON.parse("[[[1]]]", options: options) == .array([.array([.array([.int(1)])])]))
        #expect(throws: JSONParseError.self) { try JSON.parse("[[[[1]]]]", options: options) }
        #expect(throws: JSONParseError.self) { try JSON.parse(#"{"a":{"b":{"c":{}}}}"#, options: options) }
        let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        let parsed = try JSON.parse(deep, options: .init(maxDepth: .max))
        // Counted without recursion: serializing 5,000 levels recurses 5,000 frames, which overflows a
        // cooperative-pool thread's stack under AddressSanitizer.
        var depth = 1, node = parsed
        while case .array(let elements) = node, elements.count == 1 { depth += 1; node = elements[0] }
        #expect(depth == 5_000 && node == .array([]))
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(throws: JSONParseError.self) { try JSON.parse(hostile) }
    }

    // MARK: - Errors

    /// Bad inputs with the exact `line:column: message` they must produce.
    static let failures: [(input: [UInt8], error: String, offset: Int)] = [
        (Array(#"{"a": 1"#.utf8), "1:8: expected ',' or '}' after object member, found end of input", 7),
        (Array("[1, 2,]".utf8), "1:7: expected a value, found ']' (trailing commas are not allowed)", 6),
        (Array(#"{"a": 1,}"#.utf8), "1:9: expected a string key, found '}' (trailing commas are not allowed)", 8),
        (Array("xyz".utf8), "1:1: expected a value, found 'xyz'", 0),
        ([], "1:1: empty document", 0),
        (Array("  \n ".utf8), "2:2: empty document", 4),
        (Array("{\n  \"k\": \"a".utf8) + [0xC3, 0x28] + Array("\"}".utf8), "2:10: invalid UTF-8", 11),
        ([0x5B, 0xFF, 0x5D], "1:2: invalid UTF-8", 1),
        (Array(#"{"id": 1, "id": 2}"#.utf8), #"1:11: duplicate key "id""#, 10),
        (Array("9223372036854775808".utf8), "1:1: number 9223372036854775808 is out of range", 0),
        (Array("[-9223372036854775809]".utf8), "1:2: number -9223372036854775809 is out of range", 1),
        (Array("99999999999999999999".utf8), "1:1: number 99999999999999999999 is out of range", 0),
        (Array("[1e400]".utf8), "1:2: number 1e400 is out of range", 1),
        (Array("\"a\nb\"".utf8), "1:3: control character U+000A in string must be escaped", 2),
        (Array("{} x".utf8), "1:4: unexpected character 'x' after the document", 3),
        (Array("[1 2]".utf8), "1:4: expected ',' or ']' after array element, found '2'", 3),
        (Array(#"{"a" 1}"#.utf8), "1:6: expected ':' after object key, found '1'", 5),
        (Array("{a: 1}".utf8), "1:2: expected a string key or '}', found 'a'", 1),
        (Array(#""\uD800""#.utf8), #"1:2: lone surrogate \uD800 in string"#, 1),
        (Array(#""\uDE00x""#.utf8), #"1:2: lone surrogate \uDE00 in string"#, 1),
        (Array(#""\uD800\u0041""#.utf8), #"1:2: lone surrogate \uD800 in string"#, 1),
        (Array(#""\u12G4""#.utf8), #"1:6: expected 4 hex digits after '\u', found 'G'"#, 5),
        (Array(#""\q""#.utf8), #"1:3: expected one of " \ / b f n r t u after '\', found 'q'"#, 2),
        (Array("01".utf8), "1:1: leading zeros are not allowed in numbers", 0),
        (Array("[1.]".utf8), "1:4: expected a digit after the decimal point, found ']'", 3),
        (Array("1e+".utf8), "1:4: expected a digit in the exponent, found end of input", 3),
        (Array("-x".utf8), "1:2: expected a digit after '-', found 'x'", 1),
        (Array(#""abc"#.utf8), "1:5: expected '\"' to close the string, found end of input", 4),
        (Array("[\u{7}]".utf8), "1:2: expected a value, found U+0007", 1),
        (Array("[tru]".utf8), "1:2: expected a value, found 'tru'", 1),
        (Array("[truex]".utf8), "1:2: expected a value, found 'truex'", 1),
        (Array("[NaN]".utf8), "1:2: expected a value, found 'NaN'", 1),
        (Array("[\r\n1,\r\n x]".utf8), "3:2: expected a value, found 'x'", 8),
        (Array("[\r1,\n\n x]".utf8), "4:2: expected a value, found 'x'", 7),
        (Array(#"["éé", x]"#.utf8), "1:8: expected a value, found 'x'", 9),
        (Array("[\u{2028}]".utf8), "1:2: expected a value, found U+2028", 1),
        (Array("[é]".utf8), "1:2: expected a value, found 'é'", 1),
        ([0xEF, 0xBB, 0xBF] + Array(" x".utf8), "1:2: expected a value, found 'x'", 4),
        ([0xEF, 0xBB, 0xBF], "1:1: empty document", 3),
    ]

    @Test(arguments: 0..<failures.count)
    func badInputFailsWithLocationAndMessage(_ index: Int) {
        let (input, expected, offset) = Self.failures[index]
        do {
            let value = try JSON.parse(input)
            Issue.record("parsed \(value) from \(String(decoding: input, as: UTF8.self))")
        } catch {
            #expect(error.description == expected)
            #expect(error.location.offset == offset)
        }
    }

    @Test func nestingDeeperThanTheDefaultLimitFails() {
        let input = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(
            throws: JSONParseError(
                location: SourceLocation(line: 1, column: 257, offset: 256),
                message: "nesting deeper than 256 levels")
        ) {
            try JSON.parse(input)
        }
        let limit = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(throws: Never.self) { try JSON.parse(limit) }
    }

    @Test func sizeLimitIsCheckedBeforeParsing() {
        #expect(
            throws: JSONParseError(
                location: SourceLocation(line: 1, column: 1, offset: 0),
                message: "document is larger than 4 bytes")
        ) {
            try JSON.parse("[1,2]", options: .init(maxBytes: 4))
        }
        #expect(throws: Never.self) { try JSON.parse("[1,2]", options: .init(maxBytes: 5)) }
    }

    @Test func errorsAreTypedAsJSONParseError() {
        let result = Result { () throws(JSONParseError) -> JSON in try JSON.parse("[") }
        guard case .failure(let error) = result else {
            Issue.record("parsed an unterminated array")
            return
        }
        #expect(error.message == "expected a value, found end of input")
        #expect(error.location == SourceLocation(line: 1, column: 2, offset: 1))
    }

    // MARK: - Text shape

    @Test("shape(ofText:) counts nesting on the bytes, brackets in strings and escaped quotes aside, as the parser does")
    func textShapeDepth() throws {
        for text in [
            "0", "[]", "[[1],[2,[3]]]", #"{"a":[1,"]"]}"#, #"["\"[[[","{"]"#, #"{"k\\":{"x":"\\"}}"#,
            "[" + String(repeating: "[", count: 200) + String(repeating: "]", count: 201),
        ] {
            let parsed = try JSON.parse(text)
            var depth = 0
            while parsed.nests(deeperThan: depth) { depth += 1 }
            #expect(JSON.shape(ofText: text).depth == depth, "\(text.prefix(40))")
        }
    }

    @Test("shape(ofText:) flags a run of 19 digits or more outside strings, where an integer may leave Int's range")
    func textShapeLongIntegers() {
        #expect(!JSON.shape(ofText: "[922337203685477580, -1.25e300]").hasLongInteger)
        #expect(JSON.shape(ofText: "9223372036854775807").hasLongInteger)
        #expect(JSON.shape(ofText: #"{"a":18446744073709551615}"#).hasLongInteger)
        #expect(!JSON.shape(ofText: #"{"18446744073709551615":"18446744073709551615"}"#).hasLongInteger, "digits in strings")
        #expect(JSON.shape(ofText: "0.1000000000000000055511151231257827").hasLongInteger, "a long fraction is looked at too")
    }
}
