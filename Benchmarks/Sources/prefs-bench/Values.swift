import BenchSQLite
import Foundation
import Prefs

// The two value types every workload runs with, and the keys and values of one data set.

/// A value type the benchmark stores: it knows how to go through every baseline too.
protocol BenchValue: PrefsStorable, Codable, Equatable {
    /// "Int" or "String", as printed in the tables.
    static var label: String { get }
    /// The type column Prefs writes ("int", "string").
    static var typeName: String { get }
    static var initialValue: Self { get }
    static func make(_ index: Int, variant: Int) -> Self

    func bind(to statement: OpaquePointer, at index: Int32)
    static func column(of statement: OpaquePointer, at index: Int32) -> Self
    func store(in defaults: UserDefaults, forKey key: String)
    static func read(from defaults: UserDefaults, forKey key: String) -> Self
    /// The value as a property-list object (for `UserDefaults.setPersistentDomain`).
    var propertyListValue: Any { get }
}

extension Int: BenchValue {
    static var label: String { "Int" }
    static var typeName: String { "int" }
    static var initialValue: Int { 0 }
    static func make(_ index: Int, variant: Int) -> Int { index &* 31 &+ variant &+ 1 }

    func bind(to statement: OpaquePointer, at index: Int32) { sqlite3_bind_int64(statement, index, Int64(self)) }
    static func column(of statement: OpaquePointer, at index: Int32) -> Int { Int(sqlite3_column_int64(statement, index)) }
    func store(in defaults: UserDefaults, forKey key: String) { defaults.set(self, forKey: key) }
    static func read(from defaults: UserDefaults, forKey key: String) -> Int { defaults.integer(forKey: key) }
    var propertyListValue: Any { NSNumber(value: self) }
}

extension String: BenchValue {
    static var label: String { "String" }
    static var typeName: String { "string" }
    static var initialValue: String { "" }
    /// About 30 bytes: a short preference string (a name, an identifier, a path component).
    static func make(_ index: Int, variant: Int) -> String { "value-\(index)-\(variant)-lorem-ipsum" }

    func bind(to statement: OpaquePointer, at index: Int32) {
        sqlite3_bind_text(statement, index, self, -1, prefs_bench_sqlite_transient())
    }
    static func column(of statement: OpaquePointer, at index: Int32) -> String {
        guard let text = sqlite3_column_text(statement, index) else { return "" }
        return String(cString: text)
    }
    func store(in defaults: UserDefaults, forKey key: String) { defaults.set(self, forKey: key) }
    static func read(from defaults: UserDefaults, forKey key: String) -> String { defaults.string(forKey: key) ?? "" }
    var propertyListValue: Any { NSString(string: self) }
}

/// The keys and values of one workload size, made before any timing.
struct DataSet<V: BenchValue> {
    let n: Int
    /// "k0" … "k(N-1)" (after a prefix, if any): the names written.
    let names: [String]
    /// Names never written: reads give the initial value.
    let absentNames: [String]
    let keys: [Prefs.Key<V>]
    let absentKeys: [Prefs.Key<V>]
    /// Two variants of the N values, so that successive rounds really change what is stored.
    let values: [[V]]

    /// `prefix` goes before every name: `"com.example.app.settings."` names the keys as an app that namespaces them
    /// does, alike in their first 25 bytes.
    init(n: Int, prefix: String = "") throws {
        self.n = n
        names = (0..<n).map { "\(prefix)k\($0)" }
        absentNames = (0..<n).map { "absent\($0)" }
        keys = try names.map { try Prefs.Key(validating: $0, initial: V.initialValue) }
        absentKeys = try absentNames.map { try Prefs.Key(validating: $0, initial: V.initialValue) }
        values = (0..<2).map { variant in (0..<n).map { V.make($0, variant: variant) } }
    }

    func values(round: Int) -> [V] { values[(round + 2) % 2] }

    /// The values as a dictionary, as the Dictionary and JSON baselines hold them.
    func dictionary(round: Int = 0) -> [String: V] {
        Dictionary(uniqueKeysWithValues: zip(names, values(round: round)))
    }

    /// The label of a table section, e.g. "N = 10k, Int".
    var label: String { "N = \(Format.count(n)), \(V.label)" }
}
