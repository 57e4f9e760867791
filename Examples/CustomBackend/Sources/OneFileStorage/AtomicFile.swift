import Foundation
import Prefs

/// Replaces a file whole, so that a reader sees the old file or the new one, never half of one.
enum AtomicFile {
    /// Writes `data` to a temporary file beside `url`, flushes it to disk (`fsync(2)`), and renames it over `url`.
    static func replace(_ url: URL, with data: Data) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        do {
            try writeDurably(data, to: temporary)
            guard rename(temporary, url.path) == 0 else { throw PrefsError.io(path: url.path, operation: "rename", errno: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Writes `data` to a new file at `path` and flushes it to disk, so that renaming it is durable.
    private static func writeDurably(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PrefsError.io(path: path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw PrefsError.io(path: path, operation: "write", errno: errno)
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw PrefsError.io(path: path, operation: "fsync", errno: errno) }
    }
}
