/// Keys declared as the cases of a `String` enum, as `UserDefaults` code often declares them (`enum UserDefaultsKey`).
///
/// Each case names its initial value, which also fixes its type:
///
/// ```swift
/// enum AppKey: String, PrefsKeyEnum {
///     case dialogNoMore = "dialog_neverAgain", lastMessageId
///     var initialValue: any PrefsStorable {
///         switch self {
///         case .dialogNoMore: false
///         case .lastMessageId: 0
///         }
///     }
/// }
/// let neverAgain: Bool = prefs[AppKey.dialogNoMore]
/// prefs[AppKey.lastMessageId] = 3
/// try prefs.declare(AppKey.self)    // records every case for prefs-tool
/// ```
public protocol PrefsKeyEnum: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// The value read while nothing is stored. Its type is the case's type.
    var initialValue: any PrefsStorable { get }
    /// Names this key had before (default: none).
    var formerNames: [String] { get }
}

extension PrefsKeyEnum {
    public var formerNames: [String] { [] }

    /// The typed key for this case. Asking for a type other than the initial value's is a programming
    /// error, reported here with both types.
    public func key<Value: PrefsStorable>(as _: Value.Type = Value.self) -> Prefs.Key<Value> {
        guard let initial = initialValue as? Value else {
            preconditionFailure("\(Self.self).\(self) holds \(type(of: initialValue)) values, not \(Value.self)")
        }
        return Prefs.Key(rawValue, initial: initial, formerNames: formerNames)
    }

    /// The key with its type erased, for listing, declaring and resetting.
    public var anyKey: Prefs.Keys {
        func open<Value: PrefsStorable>(_ initial: Value) -> Prefs.Keys {
            Prefs.Key(rawValue, initial: initial, formerNames: formerNames)
        }
        return open(initialValue)
    }
}
