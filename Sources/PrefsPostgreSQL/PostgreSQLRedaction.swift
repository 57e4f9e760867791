import Foundation

/// Connection strings with their secrets replaced by `***`, for descriptions, errors and diagnostics.
public enum PostgreSQLRedaction {
    /// `conninfo` with any password hidden: the password of a `postgresql://user:password@host/db` URL (up to the
    /// last `@` before the host, so an unencoded `@`, `/`, `?` or `#` in it stays hidden), a `password=` or
    /// `sslpassword=` parameter of the URL, or such a pair of the `key=value` form (quoted or not). Other settings
    /// (`sslmode`, `host`) stay. A string the store cannot parse is shown only up to what cannot hold a secret.
    ///
    /// ```swift
    /// PostgreSQLRedaction.redact("postgresql://app:s3cret@db.internal/prefs?sslmode=verify-full")
    /// // "postgresql://app:***@db.internal/prefs?sslmode=verify-full"
    /// PostgreSQLRedaction.redact("host=db.internal user=app password='a b' sslmode=require")
    /// // "host=db.internal user=app password=*** sslmode=require"
    /// ```
    public static func redact(_ conninfo: String) -> String {
        if let parsed = try? PostgreSQLConnectionString.parse(conninfo) { return parsed.redacted }
        return redactUnparseable(conninfo.trimmingCharacters(in: .whitespaces))
    }

    /// A malformed string, shown without anything that could be a secret: a URL's scheme and what follows its last
    /// `@` (or nothing past the scheme when it has none); of `key=value` pairs, only the keywords.
    private static func redactUnparseable(_ text: String) -> String {
        if PostgreSQLConnectionString.isURL(text) {
            let scheme = text.prefix(while: { $0 != "/" }) + "//"
            guard let at = text.lastIndex(of: "@") else { return scheme + "…" }
            let tail = text[text.index(after: at)...]
            // Parameters may hold a password: only the host list and the database.
            return scheme + "***@" + tail.prefix(while: { $0 != "?" }) + (tail.contains("?") ? "?…" : "")
        }
        return "(a connection string that cannot be read)"
    }

    /// The secrets of a connection string (a password, decoded as libpq decodes it), so that messages quoting one can
    /// be scrubbed; empty when it has none.
    static func passwords(in conninfo: String) -> [String] {
        (try? PostgreSQLConnectionString.parse(conninfo))?.secrets ?? []
    }

    /// `message` with every occurrence of the given secrets replaced by `***`. A secret of one or two characters is
    /// left alone (it would scrub every such letter out of a message); libpq never shows one by itself.
    static func scrub(_ message: String, secrets: [String]) -> String {
        var result = message
        for secret in secrets.sorted(by: { $0.count > $1.count }) where secret.count >= 3 {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }
}
