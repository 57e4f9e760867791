import Foundation

/// A fresh directory under the temporary directory, removed after `body` returns or throws.
func withSQLiteTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("prefs-sqlite-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Per-file test error distinct from SQLite's.
struct SQLiteTestError: Error, Equatable {
    var label: String
}
