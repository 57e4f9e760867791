import Foundation
import Prefs
import PrefsJSON

/// Declarations: what `prefs-tool` lists, and what a key's first write and `declare` compare against before recording
/// a key's declaration again. Rows of `prefs_declared`, with their former names in `prefs_renamed`.
extension PostgreSQLBackend {
    package func declarations() throws -> [String: KeyDeclaration] {
        let operation = "reading the declarations of namespace \(Self.quoted(namespace))"
        return try withConnection(retrying: true, operation: operation) { connection, deadline in
            Self.declarations(in: try connection.execute(Self.declarationsSQL, [namespace], deadline: deadline, operation: operation))
        }
    }

    package func declaration(forKey key: String) throws -> KeyDeclaration? {
        try declarations(forKeys: [key])[key]
    }

    /// One statement for any number of keys, their former names joined in: `declare` of an app's keys at launch is one
    /// round trip a thousand keys, where it took two a key.
    package func declarations(forKeys keys: [String]) throws -> [String: KeyDeclaration] {
        // The rows are by canonical name; the answer is by the names asked for. A name with a NUL has none: PostgreSQL's
        // text cannot hold one, so no such key was ever recorded (and libpq would cut the name short at it).
        var asked: [String: [String]] = [:]
        for key in keys where !key.utf8.contains(0) { asked[Self.canonicalName(key), default: []].append(key) }
        guard !asked.isEmpty else { return [:] }
        let what = keys.count == 1 ? "the declaration of key \(Self.quoted(keys[0]))" : "the declarations of \(keys.count) keys"
        let operation = "reading \(what) in namespace \(Self.quoted(namespace))"
        return try withConnection(retrying: true, operation: operation) { connection, deadline in
            let found = Self.declarations(
                in: try connection.execute(
                    Self.declarationsOfKeysSQL, [namespace, Self.arrayLiteral(Array(asked.keys))], deadline: deadline, operation: operation))
            var result: [String: KeyDeclaration] = [:]
            for (canonical, declaration) in found {
                for name in asked[canonical] ?? [] { result[name] = declaration }
            }
            return result
        }
    }

    /// The declarations the rows of ``declarationsSQL`` or ``declarationsOfKeysSQL`` hold, by key: a row's former name
    /// is appended to its key's (a declaration of a type this release does not know is left out).
    private static func declarations(in result: PostgreSQLConnection.Result) -> [String: KeyDeclaration] {
        var found: [String: KeyDeclaration] = [:]
        for row in result.rows {
            guard let key = row[0], var declaration = found[key] ?? Self.declaration(type: row[1], initial: row[2]) else { continue }
            if let former = row[3] { declaration.formerNames.append(former) }
            found[key] = declaration
        }
        return found
    }

    /// The namespace's declarations (`$1`), one row per former name in order (one row with `former` NULL for a key
    /// without), and then only those of the keys in the array `$2`.
    static let declarationsSQL = selectDeclarations(where: "d.namespace = $1")
    static let declarationsOfKeysSQL = selectDeclarations(where: "d.namespace = $1 AND d.key = ANY($2::text[])")

    private static func selectDeclarations(where condition: String) -> String {
        """
        SELECT d.key, d.type, d.initial, r.former FROM prefs_declared AS d \
        LEFT JOIN prefs_renamed AS r ON r.namespace = d.namespace AND r.key = d.key \
        WHERE \(condition) ORDER BY d.key, r.position
        """
    }
}
