import Foundation
import Prefs
internal import PrefsJSON
import PrefsSupport

/// UserDefaults' instance API over any `Prefs` store: moving an app to Prefs changes one line.
///
/// ```swift
/// let defaults = try PrefsDefaults(.sqlite(url))   // was: let defaults = UserDefaults.standard
/// if defaults.bool(forKey: "dialog_neverAgain") { return }
/// defaults.set(true, forKey: "dialog_neverAgain")
/// defaults.synchronize()
/// ```
///
/// Values are mapped as ``PropertyListValue`` describes, so typed keys of the same store read them too
/// (`Key<Bool>("dialog_neverAgain", initial: false)`). The getters convert as UserDefaults' do
/// (see `PrefsDefaults+Conversions.swift`). Where UserDefaults traps, this type does not:
/// - `set(_:forKey:)` with a value that is not a property-list type (a custom struct) writes nothing and
///   reports a `Diagnostic` (`writeFailed`) on the store; ``setChecked(_:forKey:)`` throws instead.
/// - Any key name UserDefaults accepts works (white space at either end, control characters, the empty string), except
///   one holding U+0000 or over 1 MiB, which is reported the same way.
/// - A write the store cannot make (a full disk, a closed store) is reported the same way.
///
/// URLs are stored whole (`https://host/path?query#fragment`), not reduced to a path as swift-corelibs-foundation's
/// `UserDefaults` does, and not archived as data as Apple's does: `object(forKey:)` returns the `URL`.
public final class PrefsDefaults: Sendable {
    /// The store the values live in; typed keys and `prefs-tool` see the same values.
    public let prefs: Prefs

    /// The name of this instance's persistent domain (``persistentDomain(forName:)``): the suite name it was opened
    /// with, else the store file's name without its extension (`com.example.app` for `…/com.example.app.sqlite`).
    public let domainName: String?

    /// Values from ``register(defaults:)``: this instance's registration domain, never written to the store.
    let registered = Locked<[String: StoredValue]>([:])
    /// The volatile domains set by ``setVolatileDomain(_:forName:)``, in this instance's memory only.
    let volatileDomains = Locked<[String: [String: StoredValue]]>([:])
    /// The live streams of ``changedKeys()``.
    private let subscribers = Locked<[UUID: AsyncStream<String>.Continuation]>([:])

    /// Posted on `NotificationCenter.default` after a write through a ``PrefsDefaults``, with that instance as
    /// the object and the changed key names under ``changedKeysUserInfoKey`` (like `UserDefaults.didChangeNotification`).
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: PrefsDefaults.didChangeNotification, object: defaults, queue: nil) { note in
    ///     print(note.userInfo?[PrefsDefaults.changedKeysUserInfoKey] ?? [])
    /// }
    /// ```
    public static let didChangeNotification = Notification.Name("PrefsDefaultsDidChange")

    /// The `userInfo` key of ``didChangeNotification`` whose value is the changed key names, `[String]`, sorted.
    ///
    /// ```swift
    /// let keys = note.userInfo?[PrefsDefaults.changedKeysUserInfoKey] as? [String]
    /// ```
    public static let changedKeysUserInfoKey = "PrefsDefaultsChangedKeys"

    /// UserDefaults' API over an open store.
    ///
    /// ```swift
    /// let defaults = PrefsDefaults(prefs)
    /// ```
    public init(_ prefs: Prefs, domainName: String? = nil) {
        self.prefs = prefs
        self.domainName = domainName ?? prefs.storage.path.map { ($0 as NSString).lastPathComponent }.map { ($0 as NSString).deletingPathExtension }
    }

    /// `UserDefaults(suiteName:)`: the store at the default location for `suiteName`
    /// (`Storage.default(identifier:)`), or for the app's bundle identifier (the process name without a bundle)
    /// when nil. A name that starts with `group.` is an App Group's store (`Storage.appGroup(_:)`), which the app and
    /// its extensions share: on Apple platforms in the group's shared container (it throws
    /// `PrefsError.appGroupUnavailable(group:reason:)` when the target lacks the App Groups entitlement, never opening
    /// a store of its own instead), on Linux at `$XDG_CONFIG_HOME/prefs/NAME.sqlite`, which every program of the user
    /// shares. It reads the process's launch arguments above its values, as UserDefaults does (`-launchCount 5`).
    /// Unlike `UserDefaults`, which returns nil for a name it refuses, this throws why
    /// (`PrefsError.invalidIdentifier(_:reason:)`, or the store's open error).
    ///
    /// ```swift
    /// let shared = try PrefsDefaults(suiteName: "group.com.example.app")   // the app and its widget, one store
    /// ```
    public convenience init(suiteName: String?) throws {
        let name = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        self.init(try Prefs(try Self.storage(forSuite: name)), domainName: name)
    }

    /// The store of the suite or domain `name`: an App Group's for a `group.` name, else the default location's.
    static func storage(forSuite name: String) throws(PrefsError) -> Prefs.Storage {
        name.hasPrefix("group.") ? try .appGroup(name) : try .default(identifier: name)
    }

    /// Opens a store and gives UserDefaults' API over it. `launchArguments` are the arguments whose `-NAME VALUE`
    /// pairs it reads above the stored values, as UserDefaults reads its argument domain: by default the process's,
    /// except for `.memory` (see `Prefs.init(_:pollInterval:launchArguments:onDiagnostic:)`).
    ///
    /// ```swift
    /// let defaults = try PrefsDefaults(.sqlite(url))
    /// let inMemory = try PrefsDefaults(.memory)
    /// let qa = try PrefsDefaults(.memory, launchArguments: ["-lastMessageId", "0"])
    /// ```
    public convenience init(
        _ storage: Prefs.Storage,
        pollInterval: Duration = .milliseconds(250),
        launchArguments: [String]? = nil,
        onDiagnostic: (@Sendable (Prefs.Diagnostic) -> Void)? = nil
    ) throws {
        self.init(try Prefs(storage, pollInterval: pollInterval, launchArguments: launchArguments, onDiagnostic: onDiagnostic))
    }

    // MARK: - Writing

    /// Stores a property-list value (`nil` removes the key). A value that is not a property-list type,
    /// an invalid key name or a failed write writes nothing and is reported as a `Diagnostic`.
    ///
    /// ```swift
    /// defaults.set(["a", "b"], forKey: "recent")
    /// defaults.set(nil, forKey: "recent")           // removes it
    /// ```
    public func set(_ value: Any?, forKey defaultName: String) {
        reportingFailure(forKey: defaultName) { try setChecked(value, forKey: defaultName) }
    }

    /// Like ``set(_:forKey:)-(Any?,_)`` but throws: `PrefsError.encodingFailed(key:reason:)` for a value that is
    /// not a property-list type, `PrefsError.invalidKeyName(_:reason:)`, or the store's write error.
    /// Nothing is written when it throws.
    ///
    /// ```swift
    /// do { try defaults.setChecked(Point(x: 1, y: 2), forKey: "origin") }
    /// catch { print(error) }   // value for key "origin" could not be encoded: Point is not a property-list type …
    /// ```
    public func setChecked(_ value: Any?, forKey defaultName: String) throws {
        guard let value else {
            try write([defaultName: nil])
            return
        }
        let stored: StoredValue
        do {
            stored = try PropertyListValue.encode(value)
        } catch {
            throw PrefsError.encodingFailed(key: defaultName, reason: error.description)
        }
        try write([defaultName: stored])
    }

    /// Stores a Boolean.
    ///
    /// ```swift
    /// defaults.set(true, forKey: "dialog_neverAgain")
    /// ```
    public func set(_ value: Bool, forKey defaultName: String) {
        store(StoredValue(type: .bool, json: .bool(value)), forKey: defaultName)
    }

    /// Stores an integer.
    ///
    /// ```swift
    /// defaults.set(3, forKey: "lastMessageId")
    /// ```
    public func set(_ value: Int, forKey defaultName: String) {
        store(StoredValue(type: .int, json: .int(value)), forKey: defaultName)
    }

    /// Stores a `Float` as the double it converts to exactly, as Apple's `UserDefaults` does: `double(forKey:)` then
    /// reads `Double(Float(12.34))`, `12.34000015258789`, `float(forKey:)` the same `Float`, and `string(forKey:)` `"12.34"`.
    ///
    /// ```swift
    /// defaults.set(Float(0.5), forKey: "volume")
    /// ```
    public func set(_ value: Float, forKey defaultName: String) {
        store(PropertyListValue.floatDouble(value).storedValue(), forKey: defaultName)
    }

    /// Stores a double.
    ///
    /// ```swift
    /// defaults.set(0.8, forKey: "quality")
    /// ```
    public func set(_ value: Double, forKey defaultName: String) {
        store(value.storedValue(), forKey: defaultName)
    }

    /// Stores a whole URL (`nil` removes the key).
    ///
    /// ```swift
    /// defaults.set(URL(string: "https://example.com/feed.json?v=2"), forKey: "feed")
    /// ```
    public func set(_ url: URL?, forKey defaultName: String) {
        guard let url else {
            reportingFailure(forKey: defaultName) { try write([defaultName: nil]) }
            return
        }
        store(url.storedValue(), forKey: defaultName)
    }

    /// Same as ``set(_:forKey:)-(Any?,_)`` (UserDefaults' key-value-coding spelling, used by older code).
    ///
    /// ```swift
    /// defaults.setValue(newValue, forKey: "lastMessageId")
    /// ```
    public func setValue(_ value: Any?, forKey key: String) {
        set(value, forKey: key)
    }

    /// Removes the stored value; a value from ``register(defaults:)`` shows through again.
    ///
    /// ```swift
    /// defaults.removeObject(forKey: "lastMessageId")
    /// ```
    public func removeObject(forKey defaultName: String) {
        reportingFailure(forKey: defaultName) { try write([defaultName: nil]) }
    }

    /// Writes pending changes (a JSON store's coalesced mode), then looks for other processes' writes
    /// (`refresh()`); returns true, or false when either fails (reported as a `Diagnostic`).
    /// Other writes are durable when they return, so old code's `synchronize()` calls are harmless.
    ///
    /// ```swift
    /// defaults.synchronize()
    /// ```
    @discardableResult
    public func synchronize() -> Bool {
        do {
            try prefs.flush()
            try prefs.refresh()
            return true
        } catch {
            prefs.report(Prefs.Diagnostic(key: nil, kind: .writeFailed(error, during: "synchronize"), store: prefs.storage.description))
            return false
        }
    }

    // MARK: - Registration

    /// Adds fallback values that the getters return while a key is not stored. They belong to this instance
    /// only: they are not written to the store, other instances and processes do not see them, and a later
    /// registration of the same key replaces the earlier one. A value that is not a property-list type is
    /// skipped and reported as a `Diagnostic`.
    ///
    /// Typed keys need no registration: while neither a stored nor a registered value exists, a getter returns the
    /// initial value of the store's key of that name, as Defaults' and `@AppStorage`'s registered defaults show
    /// through UserDefaults: a key this process declared (`prefs.declare(.launchCount)`) or observed (`@Pref`,
    /// `values(for:)`, `observable(_:)`) in the store, else the declaration any process recorded there.
    ///
    /// ```swift
    /// defaults.register(defaults: ["quality": 0.8, "showTips": true])
    /// defaults.double(forKey: "quality")   // 0.8 until something is stored
    /// ```
    public func register(defaults registrationDictionary: [String: Any]) {
        let encoded = encodedSkippingUnsupported(registrationDictionary, operation: "register(defaults:)")
        registered.withLock { $0.merge(encoded) { _, new in new } }
    }

    /// The values of `dictionary` in stored form; one that is not a property-list type is skipped and reported.
    func encodedSkippingUnsupported(_ dictionary: [String: Any], operation: String) -> [String: StoredValue] {
        var encoded: [String: StoredValue] = [:]
        for (key, value) in dictionary {
            do {
                encoded[key] = try PropertyListValue.encode(value)
            } catch {
                prefs.report(Prefs.Diagnostic(key: key, kind: .writeFailed(error, during: "\(operation) skipped it"), store: prefs.storage.description))
            }
        }
        return encoded
    }

    /// The value a getter sees: a launch argument's (the argument domain), else the stored one, else the registered
    /// one, else the initial value of the store's key of that name (``Prefs/initialStoredValue(forKey:)``). A failed
    /// read is reported and reads as absent.
    func value(forKey defaultName: String) -> StoredValue? {
        if let argument = prefs.launchArgumentValue(forKey: defaultName) { return argument }
        if KeyName.legacyProblem(with: defaultName) == nil {
            do {
                if let stored = try prefs.storedValue(forKey: defaultName) { return stored }
            } catch {
                prefs.report(Prefs.Diagnostic(key: defaultName, kind: .refreshFailed(error, during: nil), store: prefs.storage.description))
            }
        }
        if let registered = registered.withLock({ $0[defaultName] }) { return registered }
        return prefs.initialStoredValue(forKey: defaultName)
    }

    /// The registered values (for ``dictionaryRepresentation()``).
    var registeredValues: [String: StoredValue] {
        registered.withLock { $0 }
    }

    // MARK: - Change notifications

    /// The names of keys changed through this instance, from now on, one element per key per write
    /// (an import yields every imported key). The stream ends when the caller stops iterating.
    ///
    /// ```swift
    /// for await key in defaults.changedKeys() { print("\(key) changed") }
    /// ```
    public func changedKeys() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Writes raw values in one transaction, then tells ``changedKeys()`` streams and `NotificationCenter`.
    func write(_ values: [String: StoredValue?]) throws {
        try prefs.setStoredValues(values)
        announce(Set(values.keys))
    }

    func announce(_ keys: Set<String>) {
        guard !keys.isEmpty else { return }
        let sorted = keys.sorted()
        let continuations = subscribers.withLock { Array($0.values) }
        for continuation in continuations {
            for key in sorted { continuation.yield(key) }
        }
        NotificationCenter.default.post(name: Self.didChangeNotification, object: self, userInfo: [Self.changedKeysUserInfoKey: sorted])
    }

    private func store(_ value: StoredValue, forKey defaultName: String) {
        reportingFailure(forKey: defaultName) { try write([defaultName: value]) }
    }

    /// Runs a write; a failure becomes a `Diagnostic` on the store, as UserDefaults' setters cannot throw.
    private func reportingFailure(forKey defaultName: String, _ body: () throws -> Void) {
        do {
            try body()
        } catch {
            prefs.report(Prefs.Diagnostic(key: defaultName, kind: .writeFailed(error, during: nil), store: prefs.storage.description))
        }
    }
}
