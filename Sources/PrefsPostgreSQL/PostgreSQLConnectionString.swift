import Foundation

/// A libpq connection string parsed by the store itself, so that it can hand libpq its settings one keyword at a time
/// and show the string with its secrets hidden: libpq never sees a URL it could split differently, and no message
/// of libpq's can quote a piece of a password.
///
/// Two forms, as libpq accepts them (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING):
/// - a URL, `postgresql://[user[:password]@][host][:port][,…][/dbname][?keyword=value&…]`, every part percent-decoded.
///   One difference from libpq: the user part ends at the **last** `@` followed by a host list (libpq stops at the
///   first `@` or `/`, so an unencoded `@` or `/` in a password made the rest of it a host name, shown in libpq's
///   error). A `%` not followed by two hex digits is kept as it is.
/// - `keyword=value` pairs separated by spaces; a value in single quotes may hold spaces, `\'` and `\\`; outside quotes
///   a backslash escapes the next character.
/// Anything else (no `=`, not a URL) is a database name, as libpq takes it.
struct PostgreSQLConnectionString: Sendable {
    /// The settings, in order (a later one wins over an earlier one with the same keyword, as in libpq).
    var settings: [(keyword: String, value: String)]
    /// The text with each secret's value replaced by `***`.
    var redacted: String

    /// The values of the secret settings (`password`, `sslpassword`), to scrub from any message.
    var secrets: [String] {
        settings.filter { Self.isSecret($0.keyword) }.map(\.value).filter { !$0.isEmpty }
    }

    /// A malformed connection string; the message never quotes the string.
    struct Malformed: Error, Sendable {
        var message: String
    }

    static func isSecret(_ keyword: String) -> Bool {
        ["password", "sslpassword"].contains(keyword.lowercased())
    }

    static func isURL(_ text: String) -> Bool {
        schemeLength(text) != nil
    }

    private static func schemeLength(_ text: String) -> Int? {
        let lowered = text.prefix(13).lowercased()
        if lowered.hasPrefix("postgresql://") { return 13 }
        if lowered.hasPrefix("postgres://") { return 11 }
        return nil
    }

    /// Whether `text` is a connection string rather than something else (a file path): a `postgresql://` URL, or
    /// `keyword=value` pairs whose first keyword is one of libpq's.
    static func isConnectionString(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if isURL(trimmed) { return true }
        guard trimmed.contains("="), let parsed = try? parseKeywords(trimmed), let first = parsed.settings.first else { return false }
        return libpqKeywords.contains(first.keyword)
    }

    /// libpq's connection keywords (PostgreSQL 15), for telling a `key=value` string from a path with `=` in it.
    static let libpqKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "channel_binding", "connect_timeout",
        "client_encoding", "options", "application_name", "fallback_application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
        "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslrootcert", "sslcrl", "sslcrldir",
        "sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "krbsrvname", "gsslib",
        "service", "target_session_attrs", "load_balance_hosts",
    ]

    static func parse(_ text: String) throws(Malformed) -> PostgreSQLConnectionString {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let length = schemeLength(trimmed) { return try parseURL(trimmed, schemeLength: length) }
        if trimmed.contains("=") { return try parseKeywords(trimmed) }
        // libpq's rule for a dbname that is not a connection string.
        return PostgreSQLConnectionString(settings: trimmed.isEmpty ? [] : [("dbname", trimmed)], redacted: trimmed)
    }

    // MARK: - URL

    private static func parseURL(_ url: String, schemeLength: Int) throws(Malformed) -> PostgreSQLConnectionString {
        let scheme = String(url.prefix(schemeLength))
        let rest = Array(url.dropFirst(schemeLength))
        var settings: [(String, String)] = []
        var redacted = scheme
        // The user part: up to the last '@' whose host list is well formed (up to the next '/', '?' or the end).
        var position = 0
        if let at = userInfoEnd(rest) {
            let userInfo = rest[0..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                let user = String(userInfo[..<colon])
                let password = String(userInfo[userInfo.index(after: colon)...])
                if !user.isEmpty { settings.append(("user", decode(user))) }
                if !password.isEmpty { settings.append(("password", decode(password))) }
                redacted += user + (password.isEmpty ? ":" : ":***") + "@"
            } else {
                let user = String(userInfo)
                if !user.isEmpty { settings.append(("user", decode(user))) }
                redacted += user + "@"
            }
            position = at + 1
        }
        // The host list.
        let netlocEnd = rest[position...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let netloc = String(rest[position..<netlocEnd])
        redacted += netloc
        if !netloc.isEmpty {
            var hosts: [String] = [], ports: [String] = []
            for item in netloc.split(separator: ",", omittingEmptySubsequences: false) {
                guard let (host, port) = splitHost(Substring(item)) else {
                    throw Malformed(message: "the host list of the postgresql:// URL is malformed")
                }
                hosts.append(decode(host))
                ports.append(decode(port))
            }
            if hosts.contains(where: { !$0.isEmpty }) { settings.append(("host", hosts.joined(separator: ","))) }
            if ports.contains(where: { !$0.isEmpty }) { settings.append(("port", ports.joined(separator: ","))) }
        }
        position = netlocEnd
        // The database, then the parameters.
        if position < rest.endIndex, rest[position] == "/" {
            let pathEnd = rest[position...].firstIndex(of: "?") ?? rest.endIndex
            let database = String(rest[(position + 1)..<pathEnd])
            if !database.isEmpty { settings.append(("dbname", decode(database))) }
            redacted += "/" + database
            position = pathEnd
        }
        if position < rest.endIndex, rest[position] == "?" {
            var parts: [String] = []
            for (index, part) in String(rest[(position + 1)...]).split(separator: "&", omittingEmptySubsequences: false).enumerated() {
                guard let equals = part.firstIndex(of: "=") else {
                    if part.isEmpty { parts.append(""); continue }
                    throw Malformed(message: "parameter \(index + 1) of the postgresql:// URL has no '='")
                }
                var keyword = decode(String(part[..<equals]))
                var value = decode(String(part[part.index(after: equals)...]))
                // libpq's alias for JDBC's spelling.
                if keyword == "ssl", value == "true" { (keyword, value) = ("sslmode", "require") }
                settings.append((keyword, value))
                parts.append(isSecret(keyword) ? "\(part[..<equals])=***" : String(part))
            }
            redacted += "?" + parts.joined(separator: "&")
        }
        return PostgreSQLConnectionString(settings: settings, redacted: redacted)
    }

    /// Where the user part ends: the last `@` followed by a well-formed host list, or nil when there is none.
    private static func userInfoEnd(_ rest: [Character]) -> Int? {
        var index = rest.count - 1
        while index >= 0 {
            if rest[index] == "@" {
                let after = rest[(index + 1)...]
                let end = after.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
                let netloc = rest[(index + 1)..<end]
                if !netloc.contains("@"),
                    netloc.split(separator: ",", omittingEmptySubsequences: false).allSatisfy({ splitHost(Substring(String($0))) != nil })
                {
                    return index
                }
            }
            index -= 1
        }
        return nil
    }

    /// `host`, `host:port`, `[v6]`, `[v6]:port`, or empty; nil when malformed.
    private static func splitHost(_ item: Substring) -> (host: String, port: String)? {
        let hostCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_%~"))
        func isHost(_ text: Substring) -> Bool { text.unicodeScalars.allSatisfy(hostCharacters.contains) }
        func isPort(_ text: Substring) -> Bool { text.allSatisfy(\.isASCII) && text.allSatisfy { $0.isNumber || $0 == "%" } }
        if item.hasPrefix("[") {
            guard let close = item.firstIndex(of: "]") else { return nil }
            let host = item[item.index(after: item.startIndex)..<close]
            let tail = item[item.index(after: close)...]
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }) else { return nil }
            if tail.isEmpty { return (String(host), "") }
            guard tail.hasPrefix(":"), isPort(tail.dropFirst()) else { return nil }
            return (String(host), String(tail.dropFirst()))
        }
        if let colon = item.firstIndex(of: ":") {
            let host = item[..<colon], port = item[item.index(after: colon)...]
            guard isHost(host), isPort(port) else { return nil }
            return (String(host), String(port))
        }
        return isHost(item) ? (String(item), "") : nil
    }

    /// Percent-decoding as libpq does, except that a `%` not followed by two hex digits stays as it is.
    static func decode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: - key=value

    /// libpq's `conninfo_parse`: `keyword = value` pairs separated by white space.
    private static func parseKeywords(_ text: String) throws(Malformed) -> PostgreSQLConnectionString {
        let characters = Array(text)
        var settings: [(String, String)] = []
        var redacted = ""
        var index = 0
        func skipSpaces() {
            while index < characters.count, characters[index].isWhitespace { index += 1 }
        }
        while true {
            skipSpaces()
            guard index < characters.count else { break }
            let keywordStart = index
            while index < characters.count, characters[index] != "=", !characters[index].isWhitespace { index += 1 }
            let keyword = String(characters[keywordStart..<index])
            skipSpaces()
            guard index < characters.count, characters[index] == "=" else {
                throw Malformed(message: "setting \(settings.count + 1) of the connection string has no '=' after its keyword")
            }
            index += 1
            skipSpaces()
            var value = ""
            var quoted = false
            if index < characters.count, characters[index] == "'" {
                quoted = true
                index += 1
                var closed = false
                while index < characters.count {
                    let character = characters[index]
                    if character == "\\", index + 1 < characters.count {
                        value.append(characters[index + 1])
                        index += 2
                    } else if character == "'" {
                        index += 1
                        closed = true
                        break
                    } else {
                        value.append(character)
                        index += 1
                    }
                }
                guard closed else { throw Malformed(message: "the value of \(keyword) in the connection string has no closing quote") }
            } else {
                while index < characters.count, !characters[index].isWhitespace {
                    if characters[index] == "\\", index + 1 < characters.count {
                        value.append(characters[index + 1])
                        index += 2
                    } else {
                        value.append(characters[index])
                        index += 1
                    }
                }
            }
            guard !keyword.isEmpty else { throw Malformed(message: "setting \(settings.count + 1) of the connection string has no keyword") }
            settings.append((keyword, value))
            if !redacted.isEmpty { redacted += " " }
            redacted += keyword + "=" + (isSecret(keyword) ? "***" : quoted ? "'" + Self.escapedForQuotes(value) + "'" : Self.escapedBare(value))
        }
        return PostgreSQLConnectionString(settings: settings, redacted: redacted)
    }

    private static func escapedForQuotes(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }

    private static func escapedBare(_ value: String) -> String {
        var result = ""
        for character in value {
            if character.isWhitespace || character == "\\" || character == "'" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
