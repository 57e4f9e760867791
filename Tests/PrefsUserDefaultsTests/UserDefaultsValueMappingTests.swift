import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsUserDefaults

/// `PropertyListValue`: how `Any` values map to stored values and back.
@Suite("PropertyListValue mapping")
struct UserDefaultsValueMappingTests {
    @Test("a boolean NSNumber is told apart from the integers 0 and 1 by its class, also from a plist")
    func booleanNSNumber() throws {
        let boolean = NSNumber(value: true)
        let one = NSNumber(value: 1)
        #expect(String(cString: boolean.objCType) == "c")
        #expect(String(cString: one.objCType) != "c")
        #expect(type(of: boolean) != type(of: one))
        #expect(try PropertyListValue.encode(boolean) == StoredValue(type: .bool, json: .bool(true)))
        #expect(try PropertyListValue.encode(NSNumber(value: false)) == StoredValue(type: .bool, json: .bool(false)))
        #expect(try PropertyListValue.encode(one) == StoredValue(type: .int, json: .int(1)))
        #expect(try PropertyListValue.encode(NSNumber(value: Int8(1))) == StoredValue(type: .int, json: .int(1)))
        #expect(try PropertyListValue.encode(NSNumber(value: 1.0)) == StoredValue(type: .double, json: .double(1)))
        #expect(try PropertyListValue.encode(NSNumber(value: Float(0.1))) == StoredValue(type: .double, json: .double(Double(Float(0.1)))))
        #expect(try PropertyListValue.encode(NSNumber(value: UInt64(1) << 63)) == StoredValue(type: .double, json: .double(0x1p63)))

        let xml = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>t</key><true/><key>f</key><false/><key>one</key><integer>1</integer><key>zero</key><integer>0</integer>
            <key>real</key><real>1</real>
            </dict></plist>
            """.utf8)
        let parsed = try #require(try PropertyListSerialization.propertyList(from: xml, format: nil) as? [String: Any])
        let encoded = try parsed.mapValues { try PropertyListValue.encode($0) }
        #expect(encoded["t"] == StoredValue(type: .bool, json: .bool(true)))
        #expect(encoded["f"] == StoredValue(type: .bool, json: .bool(false)))
        #expect(encoded["one"] == StoredValue(type: .int, json: .int(1)))
        #expect(encoded["zero"] == StoredValue(type: .int, json: .int(0)))
        #expect(encoded["real"] == StoredValue(type: .double, json: .double(1)), "a <real> stays a double even when integral")
    }

    @Test("collections of one element type are [T] and [string: T]; others are tagged json")
    func collectionTypes() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1.5)
        #expect(try PropertyListValue.encode([1, 2]) == StoredValue(type: .array(.int), json: .array([.int(1), .int(2)])))
        #expect(try PropertyListValue.encode(["a": date]) == StoredValue(type: .dictionary(.date), json: .object(["a": .string("2001-01-01T00:00:01.5Z")])))
        #expect(
            try PropertyListValue.encode([["$date": "not a tag"]])
                == StoredValue(
                    type: .array(.dictionary(.string)), json: .array([.object(["$date": .string("not a tag")])])
                ), "typed collections need no escaping")
        #expect(try PropertyListValue.encode([Any]()) == StoredValue(type: .json, json: .array([])))
        #expect(try PropertyListValue.encode([String: Any]()) == StoredValue(type: .json, json: .object([:])))
        #expect(try PropertyListValue.encode([[1], ["a"]]).type == .json)
        #expect(try PropertyListValue.encode([[1, "a"] as [Any]]).type == .json, "a collection holding json is json")

        let mixed: [Any] = [
            true, 1, 2.0, "s", date, Data([1, 2, 3]), URL(fileURLWithPath: "/a b"), Double.nan, -Double.infinity,
            ["$date": "looks like a tag"], ["$url": 1, "other": 2] as [String: Any], [1, 2],
        ]
        let stored = try PropertyListValue.encode(mixed)
        #expect(stored.type == .json)
        #expect(
            stored.json.serialized() == #"""
                [true,1,2.0,"s",{"$date":"2001-01-01T00:00:01.5Z"},{"$data":"AQID"},{"$url":"file:///a%20b"},{"$double":"nan"},{"$double":"-inf"},{"$dict":{"$date":"looks like a tag"}},{"$url":1,"other":2},[1,2]]
                """#)
    }

    @Test("every kind of value reads back as it was written, on every backend", arguments: Backend.allCases)
    func roundTrips(backend: Backend) throws {
        let fixture = try DefaultsFixture(backend)
        let date = Date(timeIntervalSinceReferenceDate: 123.456)
        let url = try #require(URL(string: "https://example.com/a?b=c#d"))
        let values: [String: Any] = [
            "mixed": [true, 1, 2.0, "s", date, Data([9]), url, Double.infinity, ["$date": "x"], [[String: Any]]()] as [Any],
            "nested": ["a": [1, 2], "b": ["c": [date]], "e": [Any]()] as [String: Any],
            "typed": ["x": [[1.5, 2.5], [Double.nan]]],
            "deep": [[["$dict": ["$data": "AQ=="]], 1] as [Any]],
        ]
        for (key, value) in values {
            try fixture.defaults.setChecked(value, forKey: key)
        }
        for reader in [fixture.defaults, PrefsDefaults(try fixture.store.reopen())] {
            for (key, value) in values {
                let back = try #require(reader.object(forKey: key), "\(key)")
                #expect(try PropertyListValue.encode(back) == PropertyListValue.encode(value), "\(key)")
            }
            let mixed = try #require(reader.array(forKey: "mixed"))
            #expect(mixed[4] as? Date == date)
            #expect(mixed[6] as? URL == url)
            #expect((mixed[8] as? [String: String]) == ["$date": "x"])
        }
    }

    @Test("a json value that was not written by PrefsDefaults reads as plain JSON, tags read only when they fit")
    func foreignJSON() throws {
        let json = try JSON.parse(#"{"a": {"$date": 3}, "n": null, "list": [{"$data": "AQ=="}, {"$double": 1.5}]}"#)
        let object = try #require(try PropertyListValue.decode(StoredValue(type: .json, json: json)) as? [String: Any])
        #expect((object["a"] as? [String: Int]) == ["$date": 3])
        #expect(object["n"] is NSNull)
        let list = try #require(object["list"] as? [Any])
        #expect(list[0] as? Data == Data([1]))
        #expect((list[1] as? [String: Double]) == ["$double": 1.5])
    }
}
