import Foundation
import Prefs
internal import PrefsJSON

/// The getters, converting as UserDefaults documents. Each reads a launch argument's value (the argument domain), else
/// the stored value, else the registered one.
/// A stored value whose JSON form does not fit its type reads as absent and is reported once as a
/// `Diagnostic` (`typeMismatch`); its bytes stay in the store.
extension PrefsDefaults {
    /// The value as a property-list object (see ``PropertyListValue/decode(_:)``), or nil.
    ///
    /// ```swift
    /// let id = defaults.object(forKey: "lastMessageId") as? Int
    /// ```
    public func object(forKey defaultName: String) -> Any? {
        value(forKey: defaultName).flatMap { decoded($0, key: defaultName) }
    }

    /// A stored string; a number or Boolean as its text (`1` → `"1"`, `1.5` → `"1.5"`, `2.0` → `"2"`, `true` → `"1"`);
    /// nil for anything else (dates, data, URLs, collections), as UserDefaults does.
    ///
    /// ```swift
    /// defaults.set(42, forKey: "answer")
    /// defaults.string(forKey: "answer")   // "42"
    /// ```
    public func string(forKey defaultName: String) -> String? {
        switch scalar(forKey: defaultName) {
        case .bool(let bool)?: bool ? "1" : "0"
        case .int(let int)?: String(int)
        case .double(let double)?: Self.numberText(double)
        case .string(let string)?: string
        case nil: nil
        }
    }

    /// An array (of any stored element type), or nil.
    ///
    /// ```swift
    /// let recent = defaults.array(forKey: "recent") as? [String] ?? []
    /// ```
    public func array(forKey defaultName: String) -> [Any]? {
        object(forKey: defaultName) as? [Any]
    }

    /// A string-keyed dictionary, or nil.
    ///
    /// ```swift
    /// let sizes = defaults.dictionary(forKey: "windowSizes") ?? [:]
    /// ```
    public func dictionary(forKey defaultName: String) -> [String: Any]? {
        object(forKey: defaultName) as? [String: Any]
    }

    /// An array whose elements are all strings, or nil (also when one element is a number), as UserDefaults does.
    ///
    /// ```swift
    /// let tags = defaults.stringArray(forKey: "tags") ?? []
    /// ```
    public func stringArray(forKey defaultName: String) -> [String]? {
        guard let array = array(forKey: defaultName) else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(array.count)
        for element in array {
            guard let string = element as? String else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// Stored data, or nil (a string is not read as data, as UserDefaults does).
    ///
    /// ```swift
    /// let token = defaults.data(forKey: "token")
    /// ```
    public func data(forKey defaultName: String) -> Data? {
        object(forKey: defaultName) as? Data
    }

    /// An integer: a stored integer; a double truncated toward zero (0 when outside `Int`); a Boolean as 1 or 0;
    /// a string by its leading integer (`"1234"` → 1234, `"12.7"` → 12, `" -3px"` → -3); else 0.
    ///
    /// ```swift
    /// let lastMessageId = defaults.integer(forKey: "lastMessageId")   // 0 until stored
    /// ```
    public func integer(forKey defaultName: String) -> Int {
        switch scalar(forKey: defaultName) {
        case .bool(let bool)?: bool ? 1 : 0
        case .int(let int)?: int
        case .double(let double)?: Int(exactly: double.rounded(.towardZero)) ?? 0
        case .string(let string)?: TextNumber.leadingInteger(string)
        case nil: 0
        }
    }

    /// A double: a stored number; a Boolean as 1 or 0; a string by its leading decimal number (`"2.5"` → 2.5); else 0.
    ///
    /// ```swift
    /// let quality = defaults.double(forKey: "quality")
    /// ```
    public func double(forKey defaultName: String) -> Double {
        switch scalar(forKey: defaultName) {
        case .bool(let bool)?: bool ? 1 : 0
        case .int(let int)?: Double(int)
        case .double(let double)?: double
        case .string(let string)?: TextNumber.leadingDouble(string)
        case nil: 0
        }
    }

    /// ``double(forKey:)`` as a `Float`.
    ///
    /// ```swift
    /// let volume = defaults.float(forKey: "volume")
    /// ```
    public func float(forKey defaultName: String) -> Float {
        Float(double(forKey: defaultName))
    }

    /// A Boolean: a stored Boolean; a number other than 0 is true; a string `"YES"` or `"true"` (any case) is
    /// true, `"NO"` or `"false"` false, and a numeric string is true unless it is 0; anything else is false.
    ///
    /// ```swift
    /// if defaults.bool(forKey: "dialog_neverAgain") { return }
    /// ```
    public func bool(forKey defaultName: String) -> Bool {
        Self.bool(scalar(forKey: defaultName))
    }

    private static func bool(_ scalar: Scalar?) -> Bool {
        switch scalar {
        case .bool(let bool)?: return bool
        case .int(let int)?: return int != 0
        case .double(let double)?: return double != 0
        case .string(let string)?: return TextNumber.isTrue(string)
        case nil: return false
        }
    }

    /// A stored URL; a string as a file path with `~` expanded (a string with a scheme, like `https://…`, as that URL);
    /// data holding a URL archived by `NSKeyedArchiver` (how Apple's UserDefaults stores URLs); else nil.
    ///
    /// ```swift
    /// defaults.set("~/Documents", forKey: "folder")
    /// defaults.url(forKey: "folder")   // file:///home/me/Documents
    /// ```
    public func url(forKey defaultName: String) -> URL? {
        switch object(forKey: defaultName) {
        case let url as URL: return url
        case let string as String: return Self.url(fromPathOrURL: string)
        case let data as Data: return PropertyListImport.archivedURL(in: data)
        default: return nil
        }
    }

    /// Every value a getter sees: the typed keys' initial values (see ``register(defaults:)``), overlaid by the
    /// registered values, overlaid by every value in the store, overlaid by the launch arguments' (the argument
    /// domain). A stored value that cannot be read is left out and reported as a `Diagnostic`.
    ///
    /// ```swift
    /// for (key, value) in defaults.dictionaryRepresentation() { print(key, value) }
    /// ```
    public func dictionaryRepresentation() -> [String: Any] {
        var values = prefs.initialStoredValues()
        values.merge(registeredValues) { _, registered in registered }
        do {
            values.merge(try prefs.snapshot()) { _, stored in stored }
        } catch {
            prefs.report(Prefs.Diagnostic(key: nil, kind: .refreshFailed(error, during: nil), store: prefs.storage.description))
        }
        values.merge(prefs.launchArgumentValues) { _, argument in argument }
        var result: [String: Any] = [:]
        for (key, stored) in values {
            if let object = decoded(stored, key: key) { result[key] = object }
        }
        return result
    }

    // MARK: - Conversion helpers

    /// A value's scalar content for the number, Boolean and string getters; nil for other kinds.
    enum Scalar: Equatable {
        case bool(Bool), int(Int), double(Double), string(String)
    }

    func scalar(forKey defaultName: String) -> Scalar? {
        object(forKey: defaultName).flatMap(Self.scalar(of:))
    }

    static func scalar(of object: Any) -> Scalar? {
        if let string = object as? String { return .string(string) }
        guard type(of: object) is NSNumber.Type, let number = object as? NSNumber else { return nil }
        if PropertyListValue.isBoolean(number) { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "f", "d": return .double(number.doubleValue)
        default: return .int(number.intValue)
        }
    }

    /// The property-list object of a stored value; nil for an explicit `nil` (`Prefs.storeNil(for:)`), which
    /// UserDefaults cannot hold and which hides registered and initial values as a stored value does.
    func decoded(_ stored: StoredValue, key: String) -> Any? {
        if stored.isNil { return nil }
        do {
            return try PropertyListValue.decode(stored)
        } catch {
            prefs.reportMismatch(ValueMismatch(stored: stored, expected: stored.type, reason: DecodeFailure.reason(of: error)), key: key)
            return nil
        }
    }

    /// A double as `NSNumber.description` writes it on Apple platforms: `1.5`, `2` (not `2.0`), `1e+20`.
    static func numberText(_ double: Double) -> String {
        // A Float stored as the double it converts to prints as the Float (`12.34`, not `12.34000015258789`), as
        // Apple's NSNumber of a float does. A double that happens to be exactly a Float prints the same way.
        var text = double.description
        if let float = Float(exactly: double), float.description.count < text.count { text = float.description }
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// A string from `url(forKey:)`: a URL when it has a scheme, else a file path with `~` expanded.
    static func url(fromPathOrURL string: String) -> URL? {
        if !string.hasPrefix("/"), !string.hasPrefix("~"),
            let colon = string.firstIndex(of: ":"), colon != string.startIndex,
            string[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            string.first?.isLetter == true,
            let url = URL(string: string)
        {
            return url
        }
        guard !string.isEmpty else { return nil }
        return URL(fileURLWithPath: (string as NSString).expandingTildeInPath)
    }
}
