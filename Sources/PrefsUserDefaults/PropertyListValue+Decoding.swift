import Foundation
import Prefs
internal import PrefsJSON

extension PropertyListValue {
    /// A stored value as UserDefaults' `object(forKey:)` returns it: numbers and booleans as `NSNumber`
    /// (so `as? Int`, `as? Double` and `as? Bool` work as on Apple platforms), `String`, `Date`, `Data`, `URL`,
    /// `[Any]` and `[String: Any]`. A `json` value is read through the tags of the tagged form; a JSON `null`
    /// (possible in a `Codable` value a typed key wrote) reads as `NSNull`.
    ///
    /// Throws when the JSON form does not fit the stored type, saying why.
    ///
    /// ```swift
    /// let stored = StoredValue(type: .array(.int), json: .array([.int(1), .int(2)]))
    /// try PropertyListValue.decode(stored) as? [Int]   // [1, 2]
    /// ```
    public static func decode(_ stored: StoredValue) throws -> Any {
        switch stored.type {
        case .bool: return NSNumber(value: try Bool(storedJSON: stored.json))
        case .int: return NSNumber(value: try Int(storedJSON: stored.json))
        case .uint: return NSNumber(value: try UInt64(storedJSON: stored.json))
        case .double: return NSNumber(value: try Double(storedJSON: stored.json))
        case .string: return try String(storedJSON: stored.json)
        case .date: return try Date(storedJSON: stored.json)
        case .data: return try Data(storedJSON: stored.json)
        case .url: return try URL(storedJSON: stored.json)
        case .json, .other: return untagged(stored.json)
        case .array(let element):
            guard case .array(let items) = stored.json else { throw DecodeFailure.expected("an array", found: stored.json) }
            var result: [Any] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                do {
                    result.append(try decode(StoredValue(type: element, json: item)))
                } catch {
                    throw DecodeFailure("element \(index): \(DecodeFailure.reason(of: error))")
                }
            }
            return result
        case .dictionary(let value):
            guard case .object(let members) = stored.json else { throw DecodeFailure.expected("an object", found: stored.json) }
            var result: [String: Any] = [:]
            result.reserveCapacity(members.count)
            for (key, member) in members {
                do {
                    result[key] = try decode(StoredValue(type: value, json: member))
                } catch {
                    throw DecodeFailure("member \(PrefsError.quoted(key)): \(DecodeFailure.reason(of: error))")
                }
            }
            return result
        }
    }

    /// A `json` value with its tags read: `{"$date": "…"}` is a `Date`, and so on. An object that looks like
    /// a tag but whose content does not fit it (`{"$date": 3}`) is an ordinary dictionary.
    static func untagged(_ json: JSON) -> Any {
        switch json {
        case .null: return NSNull()
        case .bool(let bool): return NSNumber(value: bool)
        case .int(let int): return NSNumber(value: int)
        case .double(let double): return NSNumber(value: double)
        case .string(let string): return string
        case .array(let items): return items.map(untagged)
        case .object(let members):
            if members.count == 1, let (tag, content) = members.first, tags.contains(tag), let value = tagValue(tag, content) {
                return value
            }
            return members.mapValues(untagged)
        }
    }

    private static func tagValue(_ tag: String, _ content: JSON) -> Any? {
        do {
            switch tag {
            case "$date": return try Date(storedJSON: content)
            case "$data": return try Data(storedJSON: content)
            case "$url": return try URL(storedJSON: content)
            case "$double":
                guard case .string = content else { return nil }  // only the non-finite spellings are tagged
                return NSNumber(value: try Double(storedJSON: content))
            case "$dict":
                guard case .object(let members) = content else { return nil }
                return members.mapValues(untagged)
            default: return nil
            }
        } catch {
            return nil  // not one of ours: the caller reads the object as an ordinary dictionary, nothing is lost
        }
    }
}
