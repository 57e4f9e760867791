import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// The test process's server (started once, stopped at exit). A failure to start fails the test with the reason
/// (missing server programs: install postgresql; .ci/run does): the PostgreSQL tests never skip.
func server() throws -> TestPostgreSQLServer {
    try TestPostgreSQLServer.shared()
}

/// The PostgreSQL failure a store call threw (as a `PrefsError`), or nil for any other error. A function of
/// `any Error`, so that it reads the same after a typed call (`set`) and an untyped one (`update`, `transaction`).
func postgreSQLError(_ error: any Error) -> PostgreSQLError? {
    (error as? PrefsError)?.postgreSQLError
}

/// A namespace no other test uses.
func freshNamespace(_ label: String = #function) -> String {
    "test-\(label.prefix(while: { $0 != "(" }))-\(UUID().uuidString.prefix(8))"
}

/// A store in a fresh namespace of the shared server; `reopen()` opens the namespace again, as another instance would.
final class PostgreSQLFixture: Sendable {
    let url: String
    let namespace: String
    let options: PostgreSQLOptions
    let prefs: Prefs
    let diagnostics = DiagnosticLog()

    init(namespace: String = freshNamespace(), options: PostgreSQLOptions = .init(), url: String? = nil) throws {
        self.url = try url ?? server().url
        self.namespace = namespace
        self.options = options
        let log = diagnostics
        prefs = try Prefs(.postgreSQL(self.url, namespace: namespace, options: options), pollInterval: .milliseconds(20)) { log.append($0) }
    }

    /// A second, independent store (its own connection) on the same namespace.
    func reopen(pollInterval: Duration = .milliseconds(20)) throws -> Prefs {
        try Prefs(.postgreSQL(url, namespace: namespace, options: options), pollInterval: pollInterval)
    }
}
