import Foundation

/// Connection strings with their secrets replaced by `***`, for descriptions, errors and diagnostics.
public enum PostgreSQLRedaction {
    /// `conninfo` with any password hidden: the password of a `postgresql://user:password@host/db` URL, a `password=`
    /// query parameter, or a `password=…` pair of the `key=value` form. Other parameters (`sslmode`, `host`) stay.
    ///
    /// ```swift
    /// PostgreSQLRedaction.redact("postgresql://app:s3cret@db.internal/prefs?sslmode=verify-full")
    /// // "postgresql://app:***@db.internal/prefs?sslmode=verify-full"
    /// ```
    public static func redact(_ conninfo: String) -> String {
        let trimmed = conninfo.trimmingCharacters(in: .whitespaces)
        for scheme in ["postgresql://", "postgres://"] where trimmed.lowercased().hasPrefix(scheme) {
            return redactURL(trimmed, schemeLength: scheme.count)
        }
        return redactKeywords(trimmed)
    }

    private static func redactURL(_ url: String, schemeLength: Int) -> String {
        let scheme = String(url.prefix(schemeLength))
        var rest = Substring(url.dropFirst(schemeLength))
        // The authority ends at the first '/', '?' or '#'; userinfo ends at its last '@'.
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                authority = String(userinfo[..<colon]) + ":***" + authority[at...]
            }
        }
        var tail = String(rest)
        if let question = tail.firstIndex(of: "?") {
            let path = tail[..<question]
            let query = tail[tail.index(after: question)...]
            let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
                let name = part.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                return isSecret(name.removingPercentEncoding ?? name) ? "\(name)=***" : String(part)
            }
            tail = path + "?" + parts.joined(separator: "&")
        }
        return scheme + authority + tail
    }

    private static func isSecret(_ name: String) -> Bool {
        ["password", "sslpassword"].contains(name.lowercased())
    }

    /// `host=db password='a b' sslmode=require` → `host=db password=*** sslmode=require`.
    private static func redactKeywords(_ conninfo: String) -> String {
        var result = ""
        var index = conninfo.startIndex
        while index < conninfo.endIndex {
            // Copy whitespace.
            if conninfo[index].isWhitespace {
                result.append(conninfo[index])
                index = conninfo.index(after: index)
                continue
            }
            // A keyword up to '='.
            var keyword = ""
            while index < conninfo.endIndex, conninfo[index] != "=", !conninfo[index].isWhitespace {
                keyword.append(conninfo[index])
                index = conninfo.index(after: index)
            }
            result += keyword
            while index < conninfo.endIndex, conninfo[index].isWhitespace { index = conninfo.index(after: index) }
            guard index < conninfo.endIndex, conninfo[index] == "=" else { continue }
            result += "="
            index = conninfo.index(after: index)
            while index < conninfo.endIndex, conninfo[index].isWhitespace { index = conninfo.index(after: index) }
            // A value: quoted (with backslash escapes) or up to whitespace.
            var value = ""
            if index < conninfo.endIndex, conninfo[index] == "'" {
                value.append("'")
                index = conninfo.index(after: index)
                while index < conninfo.endIndex, conninfo[index] != "'" {
                    if conninfo[index] == "\\", conninfo.index(after: index) < conninfo.endIndex {
                        value.append(conninfo[index])
                        index = conninfo.index(after: index)
                    }
                    value.append(conninfo[index])
                    index = conninfo.index(after: index)
                }
                if index < conninfo.endIndex {
                    value.append("'")
                    index = conninfo.index(after: index)
                }
            } else {
                while index < conninfo.endIndex, !conninfo[index].isWhitespace {
                    value.append(conninfo[index])
                    index = conninfo.index(after: index)
                }
            }
            result += isSecret(keyword) ? "***" : value
        }
        return result
    }

    /// The password a connection string carries (URL userinfo, `password` parameter or pair), percent-decoded, so
    /// that messages quoting it can be scrubbed (empty when there is none).
    static func passwords(in conninfo: String) -> [String] {
        var found: [String] = []
        let trimmed = conninfo.trimmingCharacters(in: .whitespaces)
        if let range = trimmed.range(of: "://") {
            let rest = trimmed[range.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let raw = String(authority[authority.index(after: colon)..<at])
                found.append(raw)
                if let decoded = raw.removingPercentEncoding { found.append(decoded) }
            }
            if let question = rest.firstIndex(of: "?") {
                for part in rest[rest.index(after: question)...].split(separator: "&") {
                    let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                    if pair.count == 2, isSecret(pair[0]) {
                        found.append(pair[1])
                        if let decoded = pair[1].removingPercentEncoding { found.append(decoded) }
                    }
                }
            }
        } else {
            // key=value form: find password=VALUE pairs.
            let scanner = Scanner(string: trimmed)
            scanner.charactersToBeSkipped = nil
            while !scanner.isAtEnd {
                _ = scanner.scanUpToString("password")
                guard scanner.scanString("password") != nil else { break }
                _ = scanner.scanCharacters(from: .whitespaces)
                guard scanner.scanString("=") != nil else { continue }
                _ = scanner.scanCharacters(from: .whitespaces)
                if scanner.scanString("'") != nil {
                    if let value = scanner.scanUpToString("'") { found.append(value) }
                } else if let value = scanner.scanUpToCharacters(from: .whitespaces) {
                    found.append(value)
                }
            }
        }
        return found.filter { $0.count >= 3 }  // a one- or two-character "password" would scrub every such letter out of a message
    }

    /// `message` with every occurrence of the given secrets replaced by `***`.
    static func scrub(_ message: String, secrets: [String]) -> String {
        var result = message
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }
}
