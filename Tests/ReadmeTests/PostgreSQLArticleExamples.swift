import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsTesting
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

/// PostgreSQLFleet.md, the staleness bound: compiled, not run.
func postgreSQLFleetBoundAsWritten(url: String) throws -> Prefs {
    let options = PostgreSQLOptions(stalenessBound: .milliseconds(250))
    let prefs = try Prefs(.postgreSQL(url, namespace: "user-42", options: options))
    return prefs
}

/// PostgreSQLFleet.md, compare-and-set on a revision: run on the test server below.
func postgreSQLFleetCompareAndSetAsWritten(prefs: Prefs) throws {
    var count = try prefs.revisioned(.launchCount)
    while true {
        do {
            try prefs.set(count.value + 1, for: .launchCount, ifRevision: count.revision)
            break
        } catch let conflict as Prefs.RevisionConflict<Int> {
            count = conflict.current  // another instance wrote first: decide again
        }
    }
}

/// PostgreSQLFleet.md, automatic history retention: compiled, not run.
func postgreSQLFleetRetentionAsWritten(url: String) throws -> Prefs {
    let options = PostgreSQLOptions(historyRevisions: 1_000, historyAge: .seconds(86_400))
    let prefs = try Prefs(.postgreSQL(url, namespace: "user-42", options: options))
    return prefs
}

/// PostgreSQLFleet.md, namespaces and retention: compiled, not run (db.internal).
func postgreSQLFleetNamespacesAsWritten() throws {
    let database = PostgreSQLDatabase("postgresql://admin@db.internal/prefs")
    for namespace in try database.namespaces() where namespace.values == 0 { try database.deleteNamespace(namespace.name) }
    try database.deleteNamespaces(inactiveFor: .seconds(365 * 86_400))   // users gone for a year
    try database.setHistoryRetention(.seconds(7 * 86_400), for: "user-42")
    try database.prune()   // from a daily job: history past its retention, tombstones older than 30 days
}

@Suite("PostgreSQL articles")
struct PostgreSQLArticleTests {
    @Test("the setup article's test server, as an app's own test uses it")
    func setupArticleTestServer() throws {
        let server = try TestPostgreSQLServer.shared()
        let prefs = try Prefs(.postgreSQL(server.url, namespace: "test-\(UUID())"))
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(prefs[.launchCount] == 1)  // a namespace of its own: no other test wrote there
    }

    @Test("the articles' calls, on the test server: a namespace per user, an atomic update")
    func articlesRun() throws {
        let server = try TestPostgreSQLServer.shared()
        let namespace = "readme-\(UUID().uuidString.prefix(8))"
        let prefs = try Prefs(.postgreSQL(server.url, namespace: namespace), pollInterval: .milliseconds(100))
        try prefs.update(.launchCount) { $0 += 1 }
        #expect(try Prefs(.postgreSQL(server.url, namespace: namespace))[.launchCount] == 1)
        #expect(try Prefs(.postgreSQL(server.url, namespace: namespace + "-other"))[.launchCount] == 0)
        // The fleet article's compare-and-set loop, from two stores.
        let other = try Prefs(.postgreSQL(server.url, namespace: namespace, options: PostgreSQLOptions(applicationName: "article")))
        try postgreSQLFleetCompareAndSetAsWritten(prefs: prefs)
        try postgreSQLFleetCompareAndSetAsWritten(prefs: other)
        #expect(try prefs.revisioned(.launchCount).value == 3)
        // And its namespace calls, on a database of its own.
        let database = "article_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let admin = PostgreSQLDatabase(server.url(database: database))
        try Prefs(.postgreSQL(server.url(database: database), namespace: "user-42")).set(1, for: .launchCount)
        try admin.setHistoryRetention(.seconds(7 * 86_400), for: "user-42")
        #expect(try admin.namespaces().map(\.historyRetention) == [.seconds(7 * 86_400)])
        #expect(try admin.deleteNamespaces(inactiveFor: .seconds(365 * 86_400)).isEmpty)
        let report = try admin.prune()
        #expect(report.historyEntries == 0 && report.tombstones == 0)
    }
}
