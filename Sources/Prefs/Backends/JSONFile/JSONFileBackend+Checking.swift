import Foundation
internal import PrefsJSON
import PrefsSupport

extension JSONFileBackend {
    /// Problems of the snapshot with its journal applied, and a journal that does not belong to the snapshot yet holds
    /// changes it lacks (acknowledged writes that no reader applies). A torn last journal record is none: a writer
    /// killed mid-append leaves one, it is never applied, and opening reports it
    /// (``Prefs/Diagnostic/Kind/journalTornTail(path:line:bytes:)``); nor is a hand edit the journal was merged with
    /// (``Prefs/Diagnostic/Kind/handEditKept(path:keys:)``).
    func integrityProblems() throws -> [String] {
        let (onDisk, problems) = try readFiles()
        guard let onDisk else { return problems }
        return problems
            + onDisk.values.keys.sorted().compactMap { key in
                onDisk.values[key].flatMap { $0.typeProblem ?? $0.shapeProblem() }.map { "$.values\(JSONPath.member(key)): \($0)" }
            }
    }

    /// The files as they are now parse as a store document and a journal (files that do not throw
    /// ``PrefsError/corruptStore(path:reason:)``), and no journal beside them holds changes nobody applies; values
    /// are not checked against their types, and a torn journal tail (never applied) is no problem.
    func quickCheckProblems() throws -> [String] {
        try readFiles().problems
    }

    /// The snapshot combined with its journal, as the files are now (nil without a snapshot), and what keeps the
    /// journal from applying.
    private func readFiles() throws(PrefsError) -> (document: JSONStoreDocument?, problems: [String]) {
        let reader = JSONJournalFile(folder: folder, name: journal.name)
        let directory = try folder.existing()
        guard let (data, _) = try directory?.contents(of: folder.name) else {
            guard try directory?.status(of: journal.name) != nil else { return (nil, []) }
            let missing = JSONJournalMerge.changesMissing(from: JSONStoreDocument(), try reader.readAll() ?? [])
            guard !missing.isEmpty else { return (nil, []) }
            return (nil, ["\(reader.path): a journal beside no store file, holding changes to \(Self.list(missing.names)) that no reader applies"])
        }
        let snapshot = try JSONStoreDocument(data: data, path: path)
        let records = try reader.readAll()
        let combined = JSONJournalMerge.combine(
            snapshot: snapshot, snapshotDigest: JSONJournal.SnapshotDigest(data), journalGeneration: reader.generation,
            journalSnapshot: reader.snapshot, records: records, was: reader.was)
        guard !combined.unapplied.isEmpty else { return (combined.document, []) }
        let why =
            snapshot.formatVersion == JSONStoreDocument.journallessFormatVersion
            ? "the store file is in format 1, which has no journal"
            : "it continues generation \(reader.generation.map(PrefsError.quoted) ?? "none"), the store file is of \(JSONJournal.generation(of: snapshot).map(PrefsError.quoted) ?? "none")"
        return (
            combined.document,
            [
                "\(reader.path): the journal does not belong to the store file (\(why)); its changes to \(Self.list(combined.unapplied.names)) are not applied (the next write moves it aside)"
            ]
        )
    }

    /// Key names for a message: quoted, the first ten, then how many more.
    static func list(_ names: [String]) -> String {
        guard !names.isEmpty else { return "no key (it cannot be read)" }
        let shown = names.prefix(10).map(PrefsError.quoted).joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }
}
