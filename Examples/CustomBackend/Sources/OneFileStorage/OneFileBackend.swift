import Foundation
import Prefs

extension Prefs.Storage {
    /// A store kept in one JSON file of ``OneFileBackend``'s own format.
    ///
    /// ```swift
    /// let prefs = try Prefs(.oneFile(url))
    /// ```
    public static func oneFile(_ url: URL) -> Self {
        .custom { try OneFileBackend(url: url) }
    }
}

/// Keeps a store's values in one JSON file: each value as its type and JSON text, replaced whole at every commit by
/// writing a temporary file and renaming it over the old one, so a reader sees the old file or the new one, never
/// half of one. A lock file beside it (`NAME.lock`, `flock(2)`) is the writer lock that stores in other processes
/// share; a file changed by one of them is read again on ``refresh()`` and when a transaction begins.
///
/// ```json
/// {
///   "formatVersion" : 1,
///   "values" : {
///     "launchCount" : { "json" : "3", "type" : "int" }
///   }
/// }
/// ```
public final class OneFileBackend: Prefs.TransactionalBackend {
    /// The format this release writes and the newest it reads.
    public static let formatVersion = 1

    /// The store's file.
    public let url: URL
    private let lock: FileLock
    private var values: [String: StoredValue] = [:]
    /// The file as last read or written; nil while there is none.
    private var stamp: FileStamp?
    /// Whether a transaction read another store's change that ``refresh()`` has not reported yet.
    private var unreported = false

    /// Opens the store at `url`, reading the file when there is one.
    ///
    /// ```swift
    /// let backend = try OneFileBackend(url: URL(fileURLWithPath: "/tmp/prefs.json"))
    /// ```
    public init(url: URL) throws {
        self.url = url
        lock = try FileLock(path: url.path + ".lock")
        _ = try reloadIfChanged()
    }

    /// The call-site form, `.oneFile("/path/prefs.json")`.
    public var description: String { ".oneFile(\(url.path.debugDescription))" }

    public func value(forKey key: String) -> StoredValue? { values[key] }

    public func allValues() -> [String: StoredValue] { values }

    /// Whether another store changed the file since the last call, read here or when a transaction began.
    public func refresh() throws -> Bool {
        let reloaded = try reloadIfChanged()
        defer { unreported = false }
        return reloaded || unreported
    }

    public func beginTransaction() throws {
        try lock.lock()
        do {
            if try reloadIfChanged() { unreported = true }
        } catch {
            lock.unlock()
            throw error
        }
    }

    public func commitTransaction(_ changes: Prefs.Changes) throws {
        if !changes.isEmpty {
            var next = values
            changes.apply(to: &next)
            try write(next)  // when this throws, the store calls rollbackTransaction(), which unlocks
            values = next
        }
        lock.unlock()
    }

    public func rollbackTransaction() {
        lock.unlock()
    }

    public func close() {
        lock.release()
    }

    // MARK: - The file

    /// The file's content.
    private struct Document: Codable {
        struct Entry: Codable {
            var type: String
            var json: String
        }

        var formatVersion: Int
        var values: [String: Entry]
    }

    /// Reads the file when it is not the one last read or written; returns whether it was.
    private func reloadIfChanged() throws -> Bool {
        let current = FileStamp(path: url.path)
        guard current != stamp else { return false }
        values = current == nil ? [:] : try read()
        stamp = current
        return true
    }

    private func read() throws -> [String: StoredValue] {
        let data = try Data(contentsOf: url)
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw PrefsError.corruptStore(path: url.path, reason: "not a one-file store: \(error)")
        }
        guard document.formatVersion <= Self.formatVersion else {
            throw PrefsError.unsupportedFormatVersion(path: url.path, found: document.formatVersion, supported: Self.formatVersion)
        }
        var values: [String: StoredValue] = [:]
        for (key, entry) in document.values {
            guard let type = ValueType(entry.type) else {
                throw PrefsError.corruptStore(path: url.path, reason: "\(key.debugDescription): \(entry.type.debugDescription) is not a type")
            }
            do {
                values[key] = try StoredValue(type: type, jsonText: entry.json)
            } catch {
                throw PrefsError.corruptStore(path: url.path, reason: "\(key.debugDescription): \(error)")
            }
        }
        return values
    }

    /// Replaces the file with one holding `values`.
    private func write(_ values: [String: StoredValue]) throws {
        let document = Document(
            formatVersion: Self.formatVersion,
            values: values.mapValues { Document.Entry(type: $0.type.description, json: $0.jsonText) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.replace(url, with: try encoder.encode(document))
        stamp = FileStamp(path: url.path)
    }
}
