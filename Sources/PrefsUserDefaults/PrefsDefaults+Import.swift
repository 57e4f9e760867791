import Foundation
import Prefs

extension PrefsDefaults {
    /// What ``importPropertyList(at:replacingExisting:)`` or ``importValues(from:suiteName:replacingExisting:)`` did.
    ///
    /// ```swift
    /// let report = try defaults.importPropertyList(at: PropertyListImport.userDefaultsFile(named: "com.example.app"))
    /// print(report)   // imported 12 values from …; 1 not imported: "huge": …
    /// ```
    public struct ImportReport: Sendable, Hashable, CustomStringConvertible {
        /// The file read (its path), or the UserDefaults domain read (`UserDefaults domain "com.example.app"`).
        public var source: String
        /// The keys written, sorted.
        public var imported: [String]
        /// The keys left alone because the store already held them (only with `replacingExisting: false`), sorted.
        public var keptExisting: [String]
        /// The keys whose values could not be imported, and why.
        public var unsupported: [PropertyListImport.Unsupported]
        /// Notes on imported keys (archived URLs read as URLs, archived data kept as data).
        public var notes: [PropertyListImport.Note]

        /// A summary, then one line per unsupported key and per note.
        public var description: String {
            var lines = ["imported \(imported.count) value\(imported.count == 1 ? "" : "s") from \(source)"]
            if !keptExisting.isEmpty { lines.append("kept \(keptExisting.count) existing: \(keptExisting.map(PrefsError.quoted).joined(separator: ", "))") }
            if !unsupported.isEmpty { lines.append("\(unsupported.count) not imported:") }
            lines += unsupported.map { "  \($0)" }
            lines += notes.map { "note: \($0)" }
            return lines.joined(separator: "\n")
        }
    }

    /// Imports a UserDefaults property list (XML or binary) into this store in one transaction, as
    /// ``PropertyListImport/read(_:)`` reads it; posts one change notification for the imported keys.
    ///
    /// With `replacingExisting` (the default) a value in the file replaces the stored value of the same key;
    /// without it, keys the store already holds are kept and listed in `ImportReport.keptExisting`.
    /// Throws ``PropertyListImport/Error`` for a file that is not a property list, and the store's error when the
    /// transaction fails; either way the store is unchanged.
    ///
    /// ```swift
    /// let defaults = try PrefsDefaults(.sqlite(url))
    /// let report = try defaults.importPropertyList(at: PropertyListImport.userDefaultsFile(named: "com.example.app"))
    /// for problem in report.unsupported { log(problem.description) }
    /// ```
    @discardableResult
    public func importPropertyList(at url: URL, replacingExisting: Bool = true) throws -> ImportReport {
        try importContents(try PropertyListImport.read(url), source: url.path, replacingExisting: replacingExisting)
    }

    /// Imports the values a running `UserDefaults` keeps for the app (or for `suiteName`) into this store, in one
    /// transaction, for an app moving off `UserDefaults` or `@AppStorage` without finding its property-list file. Types
    /// are kept (Bool, integers, Double, String, Date, Data, arrays and dictionaries of them, as ``PropertyListValue``
    /// maps them); a value Prefs cannot hold is listed in `ImportReport.unsupported`, never dropped silently; posts one
    /// change notification for the imported keys.
    ///
    /// It reads the persistent domain, what the app stored: `userDefaults.persistentDomain(forName:)` of `suiteName`,
    /// or, when nil (`UserDefaults.standard`), of the app's bundle identifier (the process name without a bundle), after
    /// `synchronize()`, so that values set in this process and not yet written are read too (swift-corelibs-foundation
    /// reads the standard domain from its file). The registered defaults, launch arguments and the global domain are
    /// not the app's stored values, and are not imported.
    ///
    /// Unlike ``importPropertyList(at:replacingExisting:)``, it keeps by default what the store already holds (listed
    /// in `ImportReport.keptExisting`), so an import at every launch until the old store is gone never overwrites a
    /// value the app has written since; `replacingExisting: true` replaces them. Throws the store's error when the
    /// transaction fails; the store is then unchanged.
    ///
    /// ```swift
    /// let report = try defaults.importValues(from: .standard)
    /// let shared = try defaults.importValues(from: UserDefaults(suiteName: "group.com.example.app")!, suiteName: "group.com.example.app")
    /// for problem in report.unsupported { log(problem.description) }
    /// ```
    @discardableResult
    public func importValues(from userDefaults: UserDefaults, suiteName: String? = nil, replacingExisting: Bool = false) throws(PrefsError) -> ImportReport {
        let name = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        userDefaults.synchronize()  // its result says nothing the import needs: what the domain holds is read next
        let domain = userDefaults.persistentDomain(forName: name) ?? [:]
        return try PrefsError.converting {
            try importContents(
                PropertyListImport.contents(of: domain), source: "UserDefaults domain \(PrefsError.quoted(name))", replacingExisting: replacingExisting)
        }
    }

    /// Writes `contents` in one transaction (keeping the keys the store holds unless `replacingExisting`), tells
    /// ``changedKeys()`` and `NotificationCenter`, and reports what it did.
    private func importContents(_ contents: PropertyListImport.Contents, source: String, replacingExisting: Bool) throws -> ImportReport {
        let keys = contents.values.keys.sorted()
        let kept = try prefs.transaction { transaction -> [String] in
            var kept: [String] = []
            for key in keys {
                guard let value = contents.values[key] else { continue }
                if !replacingExisting, try transaction.storedValue(forKey: key) != nil {
                    kept.append(key)
                    continue
                }
                try transaction.setStoredValue(value, forKey: key)
            }
            return kept
        }
        let imported = keys.filter { !kept.contains($0) }
        announce(Set(imported))
        return ImportReport(source: source, imported: imported, keptExisting: kept, unsupported: contents.unsupported, notes: contents.notes)
    }
}
