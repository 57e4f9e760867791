import Foundation
import Prefs
import PrefsPostgreSQL
@_spi(Harness) import PrefsTestSupport
import Testing

// The examples of the PrefsPostgreSQL articles (`ReadmeSource` checks every line is here, in order). They name a
// production database, so they are compiled, not run; the test below runs the same calls on the test server.

/// PrefsPostgreSQL.md, the overview: compiled, not run (db.internal).
func postgreSQLOverviewAsWritten() throws {
    let prefs = try Prefs(.postgreSQL("postgresql://app@db.internal/prefs?sslmode=verify-full", namespace: "user-42"))
    try prefs.update(.launchCount) { $0 += 1 }   // atomic across every instance of the fleet
}

/// PostgreSQLSetup.md: compiled, not run (db.internal).
func postgreSQLSetupAsWritten(userID: Int) throws -> Prefs {
    let url = "postgresql://prefs_app@db.internal:5432/prefs?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem"
    let prefs = try Prefs(.postgreSQL(url, namespace: "user-\(userID)"), pollInterval: .milliseconds(100))
    return prefs
}

@Suite("PostgreSQL articles")
struct PostgreSQLArticleTests {
    @Test("the articles' calls, on the test server: a namespace per user, an atomic update")
    func articlesRun() throws {
        let server = try TestPostgreSQLServer.shared()
        let namespace = "readme-\(UUID().uuidString.prefix(8))"
        let prefs = try Prefs(.postgreSQL(server.url, namespace: namespace), pollInterval: .milliseconds(100))
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(try Prefs(.postgreSQL(server.url, namespace: namespace))[.launchCount] == 1)
        #expect(try Prefs(.postgreSQL(server.url, namespace: namespace + "-other"))[.launchCount] == 0)
    }
}
