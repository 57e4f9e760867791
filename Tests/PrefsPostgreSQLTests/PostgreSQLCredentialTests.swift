import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 28, item 5: connection strings parsed as libpq parses them (the user part of a URL ending at its last `@`),
/// `key=value` strings accepted and redacted, and no password in any description, error or prefs-tool output.
@Suite("PostgreSQL credentials")
struct PostgreSQLCredentialTests {
    /// Passwords with each character that URLs and `key=value` strings treat specially.
    static let passwords = [
        "S3cr3t?x9", "S3cr#t-x9", "se@cret-tail", "pass/word-9", "50%off-zz", "two wor ds", "quo\"te'd", "all?#@/% \"'-9",
    ]

    /// `password` written into a URL as a person would, unencoded.
    static func rawURL(password: String, port: Int, user: String = "qa") -> String {
        "postgresql://\(user):\(password)@127.0.0.1:\(port)/postgres"
    }

    /// `password` percent-encoded, as libpq's documentation asks.
    static func encodedURL(password: String, port: Int, user: String = "qa") -> String {
        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        return "postgresql://\(user):\(encoded)@127.0.0.1:\(port)/postgres"
    }

    /// `password` as a quoted value of a `key=value` string.
    static func keywordString(password: String, port: Int, user: String = "qa") -> String {
        let quoted = password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        return "host=127.0.0.1 port=\(port) dbname=postgres user=\(user) password='\(quoted)' sslmode=disable"
    }

    /// Every five characters of `password` in a row (fewer may appear in any message).
    static func fragments(of password: String) -> [String] {
        let characters = Array(password)
        guard characters.count >= 5 else { return [] }
        return (0...(characters.count - 5)).map { String(characters[$0..<($0 + 5)]) }
    }

    static func leaks(_ text: String, _ password: String) -> String? {
        ([password] + fragments(of: password)).first { text.contains($0) }
    }

    @Test("redaction hides the whole password of a URL up to its last @, and of a key=value pair, quoted or not", arguments: passwords)
    func redaction(password: String) throws {
        for url in [Self.rawURL(password: password, port: 5432), Self.encodedURL(password: password, port: 5432)] {
            let redacted = PostgreSQLRedaction.redact(url)
            #expect(redacted == "postgresql://qa:***@127.0.0.1:5432/postgres", "\(url) → \(redacted)")
        }
        let keywords = PostgreSQLRedaction.redact(Self.keywordString(password: password, port: 5432))
        #expect(keywords == "host=127.0.0.1 port=5432 dbname=postgres user=qa password=*** sslmode=disable", "\(keywords)")
        let parameter = PostgreSQLRedaction.redact(
            "postgresql://qa@db/prefs?password=\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&sslmode=require")
        #expect(parameter == "postgresql://qa@db/prefs?password=***&sslmode=require", "\(parameter)")
    }

    @Test(
        "more redaction: an unquoted key=value password, sslpassword, several hosts, a malformed string",
        arguments: [
            ("host=db password=s3cret\\ x user=app", "host=db password=*** user=app"),
            ("postgresql://app@db/prefs?sslpassword=k3y&sslmode=verify-full", "postgresql://app@db/prefs?sslpassword=***&sslmode=verify-full"),
            ("postgresql://app:pw-123@h1:5432,h2:5433/prefs", "postgresql://app:***@h1:5432,h2:5433/prefs"),
            ("postgresql://app:pw@[::1]:5432/prefs", "postgresql://app:***@[::1]:5432/prefs"),
            ("host=db password='never closed", "(a connection string that cannot be read)"),
            ("postgresql://app:p@ss@db:5432/prefs?x", "postgresql://***@db:5432/prefs?…"),
        ])
    func moreRedaction(input: String, expected: String) {
        #expect(PostgreSQLRedaction.redact(input) == expected)
    }

    @Test("a refused connection's error names the database without any piece of the password, URL or key=value", arguments: passwords)
    func errorsHidePasswords(password: String) throws {
        let refused = try ClosedPort()  // refuses every connection while the test runs; no other server takes it
        defer { withExtendedLifetime(refused) {} }
        let port = refused.port
        for conninfo in [
            Self.rawURL(password: password, port: port), Self.encodedURL(password: password, port: port), Self.keywordString(password: password, port: port),
        ] {
            let storage = Prefs.Storage.postgreSQL(conninfo, namespace: "n", options: PostgreSQLOptions(connectTimeout: .seconds(2)))
            #expect(Self.leaks(storage.description, password) == nil, "\(storage.description)")
            do {
                _ = try Prefs(storage)
                Issue.record("connected to a port nobody listens on")
            } catch let thrown {
                let error = try #require(postgreSQLError(thrown), "\(thrown)")
                // The host is 127.0.0.1 whatever the password holds: libpq never took a piece of it for a host name.
                #expect(error.sqlState == "08001", "\(error)")
                #expect("\(error)".contains("127.0.0.1"), "\(error)")
                #expect(Self.leaks("\(error)", password) == nil, "\(error)")
            }
        }
    }

    @Test("the password reaches the server intact: a role with scram-sha-256 authentication connects with it, URL (raw and encoded) and key=value")
    func passwordsAuthenticate() throws {
        let server = try TestPostgreSQLServer()
        defer { server.stop() }
        let hba = server.dataDirectory + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all all 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        for (index, password) in Self.passwords.enumerated() {
            let role = "pw\(index)"
            let literal = password.replacingOccurrences(of: "'", with: "''")
            try server.psql("CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD '\(literal)'")
            var conninfos = [
                Self.encodedURL(password: password, port: server.port, user: role), Self.keywordString(password: password, port: server.port, user: role),
            ]
            // Unencoded, a '%' followed by two hex digits would be decoded; these have none.
            conninfos.append(Self.rawURL(password: password, port: server.port, user: role))
            for conninfo in conninfos {
                let prefs = try Prefs(.postgreSQL(conninfo, namespace: "n-\(index)", options: PostgreSQLOptions(applicationName: "pw-\(index)")))
                try prefs.update(.launchCount) { $0 += 1 }
            }
            #expect(try Prefs(.postgreSQL(server.url, namespace: "n-\(index)"))[.launchCount] == 3)
            // A wrong password: refused with the server's 28P01, and nothing of either password shown.
            let wrong = Self.encodedURL(password: password + "x", port: server.port, user: role)
            do {
                _ = try Prefs(.postgreSQL(wrong, namespace: "n", options: PostgreSQLOptions(applicationName: "wrong-\(index)")))
                Issue.record("a wrong password connected")
            } catch let thrown {
                let error = try #require(postgreSQLError(thrown), "\(thrown)")
                #expect(error.sqlState == "28P01", "\(error)")
                #expect(Self.leaks("\(error)", password) == nil, "\(error)")
            }
        }
    }

    @Test("prefs-tool takes a key=value store, and neither check, list nor an error shows any piece of the password")
    func toolNeverShowsPasswords() async throws {
        let server = try server()
        let namespace = freshNamespace()
        var output = ""
        for (index, password) in Self.passwords.enumerated() {
            for conninfo in [
                Self.rawURL(password: password, port: server.port, user: TestPostgreSQLServer.user),
                Self.keywordString(password: password, port: server.port, user: TestPostgreSQLServer.user),
            ] {
                let set = try await prefsTool(["--store", conninfo, "--namespace", namespace, "set", "launchCount", "\(index)", "--type", "int"])
                #expect(set.status == 0, "\(set.stderr)")
                for command in [["check"], ["list"], ["get", "launchCount"]] {
                    let result = try await prefsTool(["--store", conninfo, "--namespace", namespace] + command)
                    #expect(result.status == 0, "\(command): \(result.stderr)")
                    #expect(Self.leaks(result.stdout + result.stderr, password) == nil, "\(command): \(result.stdout)\(result.stderr)")
                    output += result.stdout + result.stderr
                }
                // Through PREFS_STORE, as the help recommends.
                let check = try await prefsTool(["--namespace", namespace, "check"], environment: ["PREFS_STORE": conninfo])
                #expect(check.status == 0 && check.stdout.hasPrefix("ok: "), "\(check.stdout)\(check.stderr)")
                #expect(Self.leaks(check.stdout + check.stderr, password) == nil, "\(check.stdout)")
                // Refused: the error names the database, not the password.
                let closed = try ClosedPort()  // refuses every connection while the test runs
                defer { withExtendedLifetime(closed) {} }
                let refused = try await prefsTool([
                    "--store", conninfo.replacingOccurrences(of: "\(server.port)", with: "\(closed.port)"), "--namespace", namespace,
                    "list",
                ])
                #expect(refused.status == 74, "\(refused.stderr)")
                #expect(Self.leaks(refused.stdout + refused.stderr, password) == nil, "\(refused.stderr)")
            }
        }
        #expect(output.contains("ok: "))
    }
}
