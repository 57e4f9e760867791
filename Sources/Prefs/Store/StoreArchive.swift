import Foundation
internal import PrefsJSON

/// An archive of a store: every stored value with its type, and every key declaration. Written as one JSON
/// document, what `prefs-tool export` writes and `import` reads.
///
/// The document has the JSON store's format (see the Storage article), so an export is itself a valid JSON store, in
/// the oldest format that holds it exactly: format 1, which release 0.1 imports, unless a value or declaration uses
/// what only format 2 says (a `uint`, a key's former names). A newer format is refused on import
/// (``PrefsError/unsupportedFormatVersion(path:found:supported:)``).
/// ```swift
/// let data = try StoreArchive.export(prefs)
/// let archive = try StoreArchive.contents(of: data, source: "backup.json")   // validated: names, types, shapes
/// try other.importArchive(archive)
/// ```
package struct StoreArchive: Sendable, Hashable {
    /// The archive's values, by key.
    package var values: [String: StoredValue]
    /// The archive's key declarations, by key.
    package var declarations: [String: KeyDeclaration]

    package init(values: [String: StoredValue] = [:], declarations: [String: KeyDeclaration] = [:]) {
        self.values = values
        self.declarations = declarations
    }

    /// The archive of `values` and `declarations` (pretty, sorted keys, trailing newline).
    package static func encode(_ values: [String: StoredValue], declarations: [String: KeyDeclaration] = [:]) -> Data {
        var document = JSONStoreDocument()
        document.values = JSONStoreDocument.Values(values)
        document.declarations = JSONStoreDocument.Declarations(declarations)
        let formatOneSaysAll =
            values.values.allSatisfy { !$0.type.mentionsUnsigned } && declarations.values.allSatisfy { $0.formatOneForm == $0 }
        if formatOneSaysAll { document.formatVersion = JSONStoreDocument.journallessFormatVersion }
        return document.encoded()
    }

    /// The archive of every value and declaration in `prefs`. Throws, writing nothing, when a value could not be
    /// read back by ``decode(_:source:)`` (see ``validate(_:source:)``): an export is only as good as its import.
    package static func export(_ prefs: Prefs) throws(PrefsError) -> Data {
        let values = try prefs.snapshot()
        try validate(values, source: prefs.storage.path ?? prefs.storage.description)
        return encode(values, declarations: try PrefsError.converting { try prefs.declaredKeys() })
    }

    /// Reads an archive's values and checks every entry (``validate(_:source:)``).
    package static func decode(_ data: Data, source: String) throws(PrefsError) -> [String: StoredValue] {
        try contents(of: data, source: source).values
    }

    /// Reads an archive's values and declarations, checking every value (``validate(_:source:)``) and every
    /// declared key's name.
    package static func contents(of data: Data, source: String) throws(PrefsError) -> StoreArchive {
        let document = try JSONStoreDocument(data: data, path: source)
        let (values, declarations) = (document.values.decoded(), document.declarations.decoded())
        try validate(values, source: source)
        for key in declarations.keys.sorted() {
            if let problem = KeyName.problem(with: key) {
                throw .corruptStore(path: source, reason: "$.declared\(JSONPath.member(key)): \(problem)")
            }
        }
        return StoreArchive(values: values, declarations: declarations)
    }

    /// Checks every entry: a valid key name, a known type, a value of that type's shape. Throws
    /// ``PrefsError/corruptStore(path:reason:)`` naming `source`, the entry's JSON path and the first problem.
    package static func validate(_ values: [String: StoredValue], source: String) throws(PrefsError) {
        for key in values.keys.sorted() {
            guard let value = values[key] else { continue }
            if let problem = KeyName.legacyProblem(with: key) {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)): \(problem)")
            }
            if case .other(let name) = value.type {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)).type: unknown type \"\(name)\"")
            }
            if let problem = value.shapeProblem() {
                throw .corruptStore(path: source, reason: "$.values\(JSONPath.member(key)).value: \(problem)")
            }
        }
    }

    // MARK: - Archive files

    /// The contents of the regular file at `path`, an archive to read; nil when there is none. Only a regular file
    /// is read: a FIFO or a device is refused with ``PrefsError/corruptStore(path:reason:)`` rather than waited on or
    /// read for ever; a directory throws ``PrefsError/io(path:operation:errno:)`` with `EISDIR`.
    package static func read(contentsOf path: String) throws(PrefsError) -> Data? {
        try FileSystem.contents(of: path)?.0
    }

    /// Replaces the file at `path` atomically with `data`, with mode 0600, as the stores replace their files: the
    /// temporary file beside it is 0600 from its creation, so no other user can read the archive while it is written.
    ///
    /// `path` is resolved once, each folder and link checked by the trust rule (see <doc:Promises>), and everything
    /// after goes through the folder's descriptor. A `path` that is a symbolic link is written through, as a shell's
    /// `>` and `cp` do: the link stays and its target is replaced; but not a link another user owns
    /// (``PrefsError/untrustedLink(path:owner:)``), a folder another user could change
    /// (``PrefsError/untrustedFolder(path:owner:mode:)``), another user's file in a shared folder
    /// (``PrefsError/untrustedFile(path:owner:)``), nor a chain of more than 40 links
    /// (``PrefsError/io(path:operation:errno:)`` with `ELOOP`).
    ///
    /// A pipe, a terminal or a device that this user or root owns (`/dev/stdout`, `/dev/null`) is written in place
    /// instead, as a shell's `>` writes it: it is opened once and written only when the opened descriptor is one. Any
    /// other file that is not a regular file (a socket, a block device) is neither written nor replaced:
    /// ``PrefsError/io(path:operation:errno:)`` with `EPERM`.
    package static func write(_ data: Data, to path: String) throws(PrefsError) {
        try Directory.write(data, toDestination: path)
    }
}

extension Prefs {
    /// Writes an archive's values and declarations in one atomic step, under the store's writer lock.
    ///
    /// Every value is checked against its key's declaration (the archive's, else the store's) as a typed key would
    /// read it; one that does not fit throws ``PrefsError/typeMismatch(key:_:)`` and nothing is written, unless
    /// `checkingDeclarations` is false (to reproduce a store whose app reads such a value as its initial value). With
    /// `replacing`, every other stored value and declaration is removed, so the store then holds exactly the
    /// archive; otherwise the archive's keys replace the store's and other keys stay.
    package func importArchive(_ archive: StoreArchive, replacing: Bool = false, checkingDeclarations: Bool = true) throws {
        for (name, value) in archive.values {
            try KeyName.validateLegacy(name)
            try Self.checkLimits(value, key: name)
        }
        for name in archive.declarations.keys { try KeyName.validate(name) }
        try transaction { transaction in
            var declarations = archive.declarations
            if !replacing { declarations.merge(try transaction.backend.declarations()) { archived, _ in archived } }
            for name in archive.values.keys.sorted() where checkingDeclarations {
                guard let value = archive.values[name], let declaration = declarations[name] else { continue }
                if let mismatch = declaration.mismatch(with: value) { throw PrefsError.typeMismatch(key: name, mismatch) }
            }
            if replacing {
                for name in try transaction.storedKeys() where archive.values[name] == nil {
                    transaction.changes.values[name] = .remove
                }
            }
            for (name, value) in archive.values { transaction.changes.values[name] = .set(value) }
            transaction.changes.declarations = archive.declarations
            if replacing {
                transaction.changes.removedDeclarations = Set(try transaction.backend.declarations().keys).subtracting(archive.declarations.keys)
            }
        }
    }
}
