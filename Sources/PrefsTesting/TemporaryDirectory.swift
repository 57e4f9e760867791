import Foundation

/// A fresh directory under the system's temporary directory (or under `parent`), removed when the value is released.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let url = directory.url.appendingPathComponent("prefs.sqlite")
/// ```
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "prefs-test", in parent: URL = FileManager.default.temporaryDirectory) throws {
        url = parent.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)  // best effort: a leftover temporary directory loses nothing
    }
}
