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
    /// Reads a stored value of this case that does not decode as its type (a shape an earlier version stored), or
    /// returns nil (the default: no migration). What ``Prefs/Key/init(_:initial:formerNames:migrating:)`` does for a
    /// static key, per case:
    ///
    /// ```swift
    /// enum AppKey: String, PrefsKeyEnum {
    ///     case settings
    ///     var initialValue: any PrefsStorable { Settings(fullName: "", fontSize: 12) }
    ///     func migratedValue(from stored: StoredValue) throws -> (any PrefsStorable)? {
    ///         Settings(fullName: try stored.decode(SettingsV1.self).name, fontSize: 12)
    ///     }
    /// }
    /// ```
    ///
    /// A value of another type than the case's reads as unreadable, as nil does.
    func migratedValue(from stored: StoredValue) throws -> (any PrefsStorable)?
}

extension PrefsKeyEnum {
    public var formerNames: [String] { [] }
    /// No migration: a stored value that does not decode as the case's type reads its initial value.
    public func migratedValue(from stored: StoredValue) throws -> (any PrefsStorable)? { nil }

    /// The typed key for this case, with its initial value, former names and migration.
    func typedKey<Value: PrefsStorable>(initial: Value) -> Prefs.Key<Value> {
        do {
            return try Prefs.Key(
                validating: rawValue, makeInitial: { initial }, fixed: true, formerNames: formerNames,
                migration: { stored in
                    guard let migrated = try self.migratedValue(from: stored) else { return nil }
                    guard let value = migrated as? Value else {
                        throw DecodeFailure("the migration returned \(type(of: migrated)), not \(Value.self)")
                    }
                    return value
                })
        } catch {
            preconditionFailure("Prefs.Key: \(error)")
        }
    }

    /// The typed key for this case. Asking for a type other than the initial value's is a programming
    /// error, reported here with both types.
    public func key<Value: PrefsStorable>(as _: Value.Type = Value.self) -> Prefs.Key<Value> {
        guard let initial = initialValue as? Value else {
            preconditionFailure("\(Self.self).\(self) holds \(type(of: initialValue)) values, not \(Value.self)")
        }
        return typedKey(initial: initial)
    }

    /// The key with its type erased, for listing, declaring and resetting.
    public var anyKey: Prefs.Keys {
        func open<Value: PrefsStorable>(_ initial: Value) -> Prefs.Keys {
            typedKey(initial: initial)
        }
        return open(initialValue)
    }
}
