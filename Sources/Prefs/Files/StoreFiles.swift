import Foundation

/// The file operations the stores use, for tools that read and write files beside them the same way: symbolic links
/// resolved as the stores resolve them (refusing links another user planted in a shared sticky directory), regular
/// files read without blocking on a FIFO, files replaced atomically.
@_spi(Tooling) public enum StoreFiles {
    /// `path` with its symbolic links followed; nil for a cycle or a chain of more than 32 links.
    public static func resolvingLinks(_ path: String) -> String? {
        FileSystem.resolvingLinksIfFinite(path)
    }

    /// ``resolvingLinks(_:)``, throwing ``PrefsError/untrustedLink(path:owner:)`` for a link another user owns in a
    /// shared sticky directory.
    public static func resolvingTrustedLinks(_ path: String) throws(PrefsError) -> String? {
        try FileSystem.resolvingTrustedLinks(path)
    }

    /// The contents of the regular file at `path`; nil when there is none. Throws for anything else at the path.
    public static func contents(of path: String) throws(PrefsError) -> Data? {
        try FileSystem.contents(of: path)?.0
    }

    /// Replaces the file at `path` with `data` atomically (a temporary file renamed over it); `sync` makes it durable
    /// before returning. With `keepingMode`, the new file keeps the old one's permissions.
    public static func replace(_ path: String, with data: Data, sync: Bool, keepingMode: Bool = true) throws(PrefsError) {
        _ = try FileSystem.replace(path, with: data, sync: sync, keepingMode: keepingMode)
    }
}
