import Foundation
import Prefs
import PrefsPostgreSQL

/// The PostgreSQL store of the modes that take `json|sqlite PATH`: given as kind `postgresql:NAMESPACE` with the
/// connection URL as PATH (`prefs-test-child update postgresql:ns 'postgresql:///postgres?host=/tmp/…' KEY COUNT`).
/// Nil for the file kinds.
func postgreSQLStorage(kind: String, url: String) -> Prefs.Storage? {
    guard kind.hasPrefix("postgresql:") else { return nil }
    let namespace = String(kind.dropFirst("postgresql:".count))
    return .postgreSQL(url, namespace: namespace, options: PostgreSQLOptions(statementTimeout: .seconds(60)))
}
