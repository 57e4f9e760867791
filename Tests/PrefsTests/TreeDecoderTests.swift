import Foundation
@testable import Prefs
import PrefsTestHarness
import Testing

/// A `Codable` value is decoded from the store's own parsed tree (``TreeDecoding``) instead of by `JSONDecoder`; every
/// value must decode exactly as `JSONDecoder` decodes it, and every input it does not decode must give `JSONDecoder`'s
/// own result (value or error). Each case is compared with `JSONDecoder` configured as the store's (``CodableStorage``).
@Suite("Tree decoder: Codable values decode exactly as JSONDecoder")
struct TreeDecoderTests {
    enum Kind: String, Codable, Equatable { case light, dark }

    enum Payload: Codable, Equatable {
        case none
        case number(Int)
        case pair(String, Double)
        case labelled(name: String, tags: [String])
    }

    struct Inner: Codable, Equatable {
        var name: String
        var values: [Int]
        var when: Date?
        var blob: Data?
        var link: URL?
    }

    struct Outer: Codable, Equatable, PrefsStorable {
        var id: Int64
        var ratio: Double
        var small: Float
        var flag: Bool
        var kind: Kind
        var payload: Payload
        var inner: Inner
        var list: [Inner]
        var map: [String: Double]
        var intMap: [Int: String]
        var optional: String?
        var nested: [[Int8]]
        var unsigned: UInt64
        var tiny: UInt8
    }

    /// One value of `Value`, stored under member `v`.
    struct Box<Value: Codable & Sendable & Equatable>: Codable, Equatable, PrefsStorable {
        var v: Value
    }

    /// A type that recovers from errors itself: a decoder that gave up on a member must not make it recover where
    /// `JSONDecoder` would have read the member.
    struct Forgiving: Codable, Equatable, PrefsStorable {
        var count: Int
        var label: String

        enum CodingKeys: String, CodingKey { case count, label }

        init(count: Int, label: String) {
            self.count = count
            self.label = label
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = (try? container.decode(Int.self, forKey: .count)) ?? -1
            label = (try? container.decode(String.self, forKey: .label)) ?? "?"
        }
    }

    static let outer = Outer(
        id: -9_223_372_036_854_775_808, ratio: 0.1 + 0.2, small: 12.34, flag: true, kind: .dark,
        payload: .labelled(name: "é e\u{301} 😀 \u{0} \"quoted\" \\ /slash", tags: ["a", ""]),
        inner: Inner(
            name: "中文", values: [Int.max, Int.min, 0, -1], when: Date(timeIntervalSinceReferenceDate: 700_000_000.25),
            blob: Data([0, 1, 2, 255]), link: URL(string: "https://example.com/path?q=1&r=%20#frag")),
        list: [
            Inner(name: "", values: [], when: nil, blob: Data(), link: nil),
            Inner(name: "x", values: [1], when: Date(timeIntervalSince1970: -1e9), blob: nil, link: URL(string: "file:///tmp/a%20b")),
        ],
        map: ["pi": 3.141592653589793, "big": 1.7976931348623157e308, "denormal": .leastNonzeroMagnitude, "neg": -2.5e-8, "int": 42],
        intMap: [1: "one", -7: "minus seven"], optional: nil, nested: [[1, -128, 127], []], unsigned: UInt64(Int64.max), tiny: 255)

    /// The value as the store keeps it: the text `JSONEncoder` wrote.
    static func stored(_ text: String) -> StoredValue { StoredValue(type: .json, uncheckedJSONText: text) }

    /// `JSONDecoder`'s result for `text`, configured as the store's.
    static func reference<Value: Decodable>(_: Value.Type, _ text: String) -> Result<Value, any Error> {
        Result { try CodableStorage.decoder.decode(Value.self, from: Data(text.utf8)) }
    }

    /// Whether two values are the same, down to the sign of a zero: equal, and encoded to the same bytes.
    static func same<Value: Codable & Equatable>(_ a: Value, _ b: Value) -> Bool {
        // A value JSONEncoder refuses (a date past ISO 8601's range) is compared by `==` alone.
        a == b && (try? CodableStorage.encoder.encode(a)) == (try? CodableStorage.encoder.encode(b))
    }

    /// Checks that the tree decoder's result for `text`, when it gives one, is JSONDecoder's, and that the store's
    /// decoding (tree or JSONDecoder) gives JSONDecoder's value or JSONDecoder's error. Returns whether the tree decoder
    /// decoded it.
    @discardableResult
    static func check<Value: Codable & Equatable & PrefsStorable>(
        _: Value.Type, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
        let fast = TreeDecoding.decode(Value.self, from: stored(text))
        let expected = reference(Value.self, text)
        if let fast {
            guard case .success(let value) = expected else {
                Issue.record("tree decoder read \(text) as \(fast); JSONDecoder failed: \(expected)", sourceLocation: sourceLocation)
                return true
            }
            #expect(same(fast, value), "\(text): tree \(fast), JSONDecoder \(value)", sourceLocation: sourceLocation)
        }
        let full = Result { try Value(storedValue: stored(text)) }
        switch (full, expected) {
        case (.success(let value), .success(let reference)):
            #expect(same(value, reference), "\(text)", sourceLocation: sourceLocation)
        case (.failure(let error), .failure(let referenceError)):
            // The store's message is JSONDecoder's error, summarized: the same kind at the same coding path.
            let summary = (referenceError as? DecodingError)?.summary ?? "\(referenceError)"
            #expect((error as? DecodeFailure)?.reason == summary, "\(text): \(error) vs \(summary)", sourceLocation: sourceLocation)
        case (.success(let value), .failure(let error)):
            // Only a document embedded in a string (UserDefaults' forms) reads where JSONDecoder alone fails.
            #expect(text.hasPrefix("\""), "\(text): store read \(value), JSONDecoder failed: \(error)", sourceLocation: sourceLocation)
        case (.failure(let error), .success(let value)):
            Issue.record("\(text): store failed (\(error)), JSONDecoder read \(value)", sourceLocation: sourceLocation)
        }
        return fast != nil
    }

    static func text<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try CodableStorage.encoder.encode(value), as: UTF8.self)
    }

    @Test("what JSONEncoder wrote decodes from the tree, without JSONDecoder, to the same value")
    func encodedValues() throws {
        #expect(try Self.check(Outer.self, Self.text(Self.outer)), "the tree decoder decodes an ordinary nested value itself")
        for payload in [Payload.none, .number(-3), .pair("", -0.5), .labelled(name: "n", tags: [])] {
            var outer = Self.outer
            outer.payload = payload
            outer.optional = "present"
            #expect(try Self.check(Outer.self, Self.text(outer)))
        }
        #expect(try Self.check(Forgiving.self, Self.text(Forgiving(count: 3, label: "x"))))
        #expect(try Self.check(Box<[String: [Int]]>.self, Self.text(Box(v: ["a": [1, 2], "é": []]))))
        #expect(try Self.check(Box<[Date]>.self, Self.text(Box(v: [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: 1.5)]))))
        #expect(try Self.check(Box<Int?>.self, #"{"v":null}"#))
        try Self.check(Box<Int?>.self, #"{}"#)  // `v` is of the generic type: decode, not decodeIfPresent, so a missing key
    }

    @Test("random values round-trip exactly: numbers of every size and sign, strings of every plane")
    func randomValues() throws {
        var generator = SystemRandomNumberGenerator()
        var decodedByTree = 0
        for _ in 0..<300 {
            var outer = Self.outer
            outer.id = Int64.random(in: .min ... .max, using: &generator)
            outer.ratio = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            if !outer.ratio.isFinite { outer.ratio = -Double.random(in: -1e300...1e300, using: &generator) }
            outer.small = Float.random(in: -1e30...1e30, using: &generator)
            outer.unsigned = UInt64.random(in: 0...UInt64(Int64.max), using: &generator)
            outer.inner.values = (0..<5).map { _ in Int.random(in: .min ... .max, using: &generator) }
            outer.inner.name = String(
                String.UnicodeScalarView((0..<8).compactMap { _ in Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &generator)) }))
            outer.inner.when = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &generator)) / 1000)
            outer.map = ["x": Double.random(in: -1...1, using: &generator) * pow(10, Double(Int.random(in: -300...300, using: &generator)))]
            if try Self.check(Outer.self, Self.text(outer)) { decodedByTree += 1 }
        }
        #expect(decodedByTree > 150, "most random values decode from the tree (\(decodedByTree) of 300)")
    }

    @Test("numbers whose conversion might differ are left to JSONDecoder, which decides")
    func numbers() throws {
        for literal in [
            "0", "-0", "-0.0", "0.0", "1.0", "1e2", "1E2", "-1.5e-3", "1e-400", "1e400", "4.9e-324", "2.2250738585072014e-308",
            "9007199254740993", "123456789012345678", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "18446744073709551615", "0.1", "16777217", "3.4028236e38", "1.00000000000000011102230246251565404236316680908203125",
        ] {
            try Self.check(Box<Double>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Float>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Int>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Int8>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<UInt64>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<[Double]>.self, #"{"v":[\#(literal), 1]}"#)
            try Self.check(Box<Date>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Decimal>.self, #"{"v":\#(literal)}"#)
        }
        #expect(try Self.check(Box<Double>.self, #"{"v":-1.5e-3}"#), "an ordinary fraction decodes from the tree")
        #expect(try !Self.check(Box<Double>.self, #"{"v":-0}"#), "-0 is left to JSONDecoder (-0.0, where the tree holds 0)")
        #expect(try !Self.check(Box<Int>.self, #"{"v":1.0}"#), "an integer from 1.0 is left to JSONDecoder")
        // `-0` inside a string is text: a UUID or a date decodes from the tree; after a string, `-0` is a number again.
        #expect(try Self.check(Box<String>.self, #"{"v":"8F2C1B77-0A3B-4C2D-9E1F-0B1C2D3E4F50"}"#), "a UUID's -0A")
        #expect(try Self.check(Box<String>.self, #"{"v":"-0"}"#), "a string that is -0")
        #expect(try Self.check(Box<[String]>.self, #"{"v":["a\"-0x", "\\", "-0"]}"#), "escaped quotes and backslashes")
        #expect(try !Self.check(Box<[Double]>.self, #"{"v":[-0]}"#))
        #expect(try !Self.check(Box<[Double]>.self, #"{"s":"\\","v":[-0]}"#), "-0 after a string that ends in an escaped backslash")
        #expect(try !Self.check(Box<[Double]>.self, #"{"s":"a\"b","v":[-0]}"#), "-0 after a string holding an escaped quote")
        // A type that catches the error of a member the tree decoder gave up on still reads JSONDecoder's value.
        try Self.check(Forgiving.self, #"{"count":1.0,"label":"x"}"#)
        #expect(try Forgiving(storedValue: Self.stored(#"{"count":1.0,"label":"x"}"#)).count == 1)
    }

    @Test("strings, dates, data and URLs: unicode, escapes, and what does not parse")
    func textForms() throws {
        for literal in [
            #""plain""#, #""\u00e9 e\u0301 \ud83d\ude00 \u0000 \/ \" \\ \t""#, #""\ud800""#, #""\udc00x""#, #""""#,
            #""2024-01-02T03:04:05.678Z""#, #""2024-01-02""#, #""2024-13-02T00:00:00Z""#, #""yesterday""#,
            #""aGVsbG8=""#, #""aGVsbG8""#, #""not base64!""#,
            #""https://example.com/a b""#, #""http://[::1]:80/""#, #""%""#, #""file:///tmp/x""#,
            "null", "true", "[]", "{}", "12",
        ] {
            try Self.check(Box<String>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Date>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Data>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<URL>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<String?>.self, #"{"v":\#(literal)}"#)
            try Self.check(Box<Bool>.self, #"{"v":\#(literal)}"#)
        }
        #expect(try Self.check(Box<Date>.self, #"{"v":"2024-01-02T03:04:05.678Z"}"#), "an ISO-8601 date decodes from the tree")
        #expect(try Self.check(Box<URL>.self, #"{"v":"https://example.com/x?y=1"}"#), "a URL decodes from the tree")
        #expect(try Self.check(Box<Data>.self, #"{"v":"aGVsbG8="}"#), "base64 data decodes from the tree")
        // Keys: NFC and NFD spellings of one key are one Swift string.
        try Self.check(Box<[String: Int]>.self, #"{"v":{"\u00e9":1,"e\u0301":2}}"#)
        try Self.check(Box<[String: Int]>.self, #"{"v":{"é":1}}"#)
    }

    @Test("malformed documents and shapes give JSONDecoder's error kind and path")
    func malformed() throws {
        for document in [
            "", " ", "{", "nul", "[1,]", #"{"v":1,}"#, #"{"v":01}"#, #"{"v":1} x"#, "\u{FEFF}{\"v\":1}", #"{"v":1,"v":2}"#, #"{'v':1}"#,
            #"{"v":NaN}"#, #"{"v":Infinity}"#, #"{"v":"\x"}"#, "{\"v\":\"\u{1}\"}", #"[1]"#, #""{\"v\":1}""#, "  {\"v\" : 1 }  ",
        ] {
            try Self.check(Box<Int>.self, document)
        }
        for document in [#"{}"#, #"{"id":1}"#, #"{"v":[1,"a"]}"#, #"{"v":{"a":true}}"#, #"{"v":[[1],[300]]}"#] {
            try Self.check(Box<[[Int8]]>.self, document)
            try Self.check(Box<[String: Double]>.self, document)
            try Self.check(Outer.self, document)
        }
        #expect(try Self.check(Box<Int>.self, "  {\"v\" : 1 }  "), "whitespace around a document is JSON")
    }
}
