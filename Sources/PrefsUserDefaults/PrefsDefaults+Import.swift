import Foundation
import Prefs

extension PrefsDefaults {
    /// What ``importPropertyList(at:replacingExisting:)`` did.
    ///
    /// ```swift
    /// let report = try defaults.importPropertyList(at: PropertyListImport.userDefaultsFile(named: "com.example.app"))
    /// print(report)   // imported 12 values from …; 1 not imported: "huge": …
    /// ```
    public struct ImportReport: Sendable, Hashable, CustomStringConvertible {
        /// The file read.
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
        let contents = try PropertyListImport.read(url)
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
        return ImportReport(source: url.path, imported: imported, keptExisting: kept, unsupported: contents.unsupported, notes: contents.notes)
    }
}
