import Foundation
import Prefs

/// UserDefaults' domains. The persistent domain of a name is the Prefs store at the default location for that name
/// (`Storage.default(identifier:)`; `Storage.appGroup(_:)` for a name that starts with `group.`): this instance's own
/// store for its ``PrefsDefaults/domainName``. Volatile domains live in this instance's memory;
/// `NSRegistrationDomain` is ``PrefsDefaults/register(defaults:)``'s; `NSArgumentDomain` is the store's launch
/// arguments, which its typed keys read too.
extension PrefsDefaults {
    /// The registration domain's name, as `UserDefaults.registrationDomain`.
    public static let registrationDomain = "NSRegistrationDomain"
    /// The argument domain's name, as `UserDefaults.argumentDomain`: the `-NAME VALUE` pairs of the launch arguments
    /// the store reads (the process's, unless it was opened with others), above every other value, never written.
    ///
    /// ```swift
    /// // launched with -launchCount 5
    /// defaults.volatileDomain(forName: PrefsDefaults.argumentDomain)   // ["launchCount": "5"]
    /// defaults.integer(forKey: "launchCount")                          // 5, whatever is stored
    /// ```
    public static let argumentDomain = "NSArgumentDomain"

    // MARK: - Persistent domains

    /// Every stored value of the domain `domainName`, or nil when that domain has no store.
    ///
    /// ```swift
    /// let settings = defaults.persistentDomain(forName: "com.example.app") ?? [:]
    /// ```
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        reporting("persistentDomain(forName:)") { () -> [String: Any]? in
            try withDomainStore(domainName, create: false) { prefs in
                var result: [String: Any] = [:]
                for (key, stored) in try prefs.snapshot() {
                    if let object = decoded(stored, key: key) { result[key] = object }
                }
                return result
            }
        } ?? nil
    }

    /// Replaces every stored value of the domain `domainName` with `domain`, in one transaction. A value that is not a
    /// property-list type writes nothing and is reported as a `Diagnostic`.
    ///
    /// ```swift
    /// defaults.setPersistentDomain(["launchCount": 0], forName: "com.example.app")
    /// ```
    public func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        reporting("setPersistentDomain(_:forName:)") {
            var values: [String: StoredValue] = [:]
            for (key, value) in domain {
                do {
                    values[key] = try PropertyListValue.encode(value)
                } catch {
                    throw PrefsError.encodingFailed(key: key, reason: "\(error)")
                }
            }
            let changed = try withDomainStore(domainName, create: true) { prefs -> Set<String> in
                let existing = Set(try prefs.snapshot().keys)
                var changes: [String: StoredValue?] = values.mapValues { .some($0) }
                for key in existing where values[key] == nil { changes[key] = .some(nil) }
                try prefs.setStoredValues(changes)
                return existing.union(values.keys)
            }
            if domainName == self.domainName, let changed { announce(changed) }
        }
    }

    /// Removes every stored value of the domain `domainName`: apps reset all their settings with
    /// `removePersistentDomain(forName: Bundle.main.bundleIdentifier!)`.
    ///
    /// ```swift
    /// defaults.removePersistentDomain(forName: "com.example.app")
    /// ```
    public func removePersistentDomain(forName domainName: String) {
        reporting("removePersistentDomain(forName:)") {
            let removed = try withDomainStore(domainName, create: false) { prefs -> Set<String> in
                let existing = Set(try prefs.snapshot().keys)
                try prefs.resetAll()
                return existing
            }
            if domainName == self.domainName, let removed { announce(removed) }
        }
    }

    /// Runs `body` with the store of `domainName`: this instance's own, or the one at the default location for the
    /// name (opened for the call; nil when it has no file and `create` is false).
    private func withDomainStore<Result>(_ domainName: String, create: Bool, _ body: (Prefs) throws -> Result) throws -> Result? {
        if domainName == self.domainName { return try body(prefs) }
        let storage = try Self.storage(forSuite: domainName)
        guard create || storage.path.map({ FileManager.default.fileExists(atPath: $0) }) == true else { return nil }
        let other = try Prefs(storage)
        let result = try body(other)
        try other.close()
        return result
    }

    // MARK: - Volatile domains

    /// The names of the volatile domains: the registration and argument domains, and those set with
    /// ``setVolatileDomain(_:forName:)``.
    public var volatileDomainNames: [String] {
        [Self.registrationDomain, Self.argumentDomain] + volatileDomains.withLock { $0.keys.sorted() }
    }

    /// The values of a volatile domain (the registration domain's are ``register(defaults:)``'s, the argument
    /// domain's the store's launch arguments: strings, and the arrays and dictionaries of property-list text such as
    /// `(a, b)`, as UserDefaults gives them); empty when unknown.
    ///
    /// ```swift
    /// defaults.volatileDomain(forName: PrefsDefaults.registrationDomain)   // what register(defaults:) was given
    /// ```
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        let values: [String: StoredValue]
        switch domainName {
        case Self.registrationDomain: values = registered.withLock { $0 }
        case Self.argumentDomain: values = prefs.launchArgumentValues
        default: values = volatileDomains.withLock { $0[domainName] ?? [:] }
        }
        return values.reduce(into: [:]) { result, entry in
            if let object = decoded(entry.value, key: entry.key) { result[entry.key] = object }
        }
    }

    /// Sets a volatile domain, in memory only. Setting the registration domain replaces what
    /// ``register(defaults:)`` registered; setting the argument domain replaces the store's launch arguments, for
    /// every reader of the store in this process, typed keys included (nothing is written). A value that is not a
    /// property-list type is skipped and reported.
    ///
    /// ```swift
    /// defaults.setVolatileDomain(["lastMessageId": 0], forName: PrefsDefaults.argumentDomain)   // as -lastMessageId 0
    /// ```
    public func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        let values = encodedSkippingUnsupported(domain, operation: "setVolatileDomain(_:forName:)")
        switch domainName {
        case Self.registrationDomain: registered.withLock { $0 = values }
        case Self.argumentDomain: prefs.setLaunchArgumentValues(values)
        default: volatileDomains.withLock { $0[domainName] = values }
        }
    }

    /// Removes a volatile domain set with ``setVolatileDomain(_:forName:)`` (the registration domain: every
    /// registration; the argument domain: every launch argument, so the stored values read again).
    ///
    /// ```swift
    /// defaults.removeVolatileDomain(forName: PrefsDefaults.argumentDomain)
    /// ```
    public func removeVolatileDomain(forName domainName: String) {
        switch domainName {
        case Self.registrationDomain: registered.withLock { $0 = [:] }
        case Self.argumentDomain: prefs.setLaunchArgumentValues([:])
        default: volatileDomains.withLock { _ = $0.removeValue(forKey: domainName) }
        }
    }

    /// Runs `body`; a failure becomes a `Diagnostic` on the store, as UserDefaults' domain calls cannot throw.
    private func reporting<Result>(_ operation: String, _ body: () throws -> Result) -> Result? {
        do {
            return try body()
        } catch {
            prefs.report(Prefs.Diagnostic(key: nil, kind: .writeFailed(error, during: operation), store: prefs.storage.description))
            return nil
        }
    }
}
