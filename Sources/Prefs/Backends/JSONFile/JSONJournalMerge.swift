import Foundation
internal import PrefsJSON

/// How a JSON store's snapshot and the journal beside it combine into what readers see: one function, used by the
/// backend when it reads the files and by the integrity check.
///
/// - A journal continues the snapshot whose generation it names (see ``JSONJournal``). When the snapshot is still the
///   file the journal began on (its header's size and CRC-32), every record applies.
/// - When the snapshot changed since (a person edited it, in place or by an editor's rename, keeping its generation):
///   **for each key the edit changed, the edit wins** over the journal's records; keys the edit did not touch keep
///   their journaled values. A key was changed by the edit when its value in the snapshot no longer has the digest the
///   journal recorded for it (`"was"`, see ``JSONJournal/KeyDigests``). The same for declarations.
/// - A journal of another generation, or beside a format-1 snapshot, does not belong to the snapshot and is never
///   applied. When it holds changes the snapshot lacks (not a journal a compaction already folded in), those are
///   named, so that the store reports them rather than let them vanish.
enum JSONJournalMerge {
    /// Keys of a store, by what they name: values and declarations.
    struct Keys: Sendable, Hashable {
        var values: Set<String> = []
        var declarations: Set<String> = []

        var isEmpty: Bool { values.isEmpty && declarations.isEmpty }

        /// The names, sorted, once each (a key with both a value and a declaration is one name).
        var names: [String] { values.union(declarations).sorted() }
    }

    /// What combining found.
    struct Outcome {
        /// The store readers see.
        var document: JSONStoreDocument
        /// Whether the journal continues the snapshot (its records, or those of keys the edit did not change, applied).
        var journalApplies = false
        /// Keys a hand edit of the snapshot changed while the journal held changes to them: the edit was kept.
        var edited = Keys()
        /// Keys a journal that does not belong to the snapshot would change: its changes were not applied.
        var unapplied = Keys()
    }

    /// Combines `snapshot` (a file of `snapshotDigest`, computed only when the journal records what keys held) with the
    /// journal read beside it: its `generation`, the snapshot its header records, its `records` (nil without a journal)
    /// and their ``JSONJournal/KeyDigests``.
    static func combine(
        snapshot: JSONStoreDocument,
        snapshotDigest: @autoclosure () -> JSONJournal.SnapshotDigest,
        journalGeneration: String?,
        journalSnapshot: JSONJournal.SnapshotDigest?,
        records: [Changeset]?,
        was: JSONJournal.KeyDigests
    ) -> Outcome {
        var outcome = Outcome(document: snapshot)
        guard let records else { return outcome }
        guard let generation = JSONJournal.generation(of: snapshot), journalGeneration == generation else {
            outcome.unapplied = changesMissing(from: snapshot, records)
            return outcome
        }
        outcome.journalApplies = true
        if !was.isEmpty, journalSnapshot != snapshotDigest() {  // with no digest, no key could be found edited
            outcome.edited = editedKeys(snapshot, was: was)
        }
        for record in records {
            outcome.document.apply(record, keeping: outcome.edited)
        }
        return outcome
    }

    /// Keys whose value (or declaration) in `snapshot` no longer has the digest the journal recorded for it.
    static func editedKeys(_ snapshot: JSONStoreDocument, was: JSONJournal.KeyDigests) -> Keys {
        var edited = Keys()
        for (key, digest) in was.values where JSONJournal.digest(snapshot.values[key]) != digest {
            edited.values.insert(key)
        }
        for (key, digest) in was.declarations where JSONJournal.digest(snapshot.declarations[key]) != digest {
            edited.declarations.insert(key)
        }
        return edited
    }

    /// Keys whose last change in `records` the snapshot does not hold. Empty for a journal a compaction folded into
    /// this snapshot (a crash between writing the snapshot and replacing the journal leaves one).
    static func changesMissing(from snapshot: JSONStoreDocument, _ records: [Changeset]) -> Keys {
        var touched = Keys()
        for record in records {
            touched.values.formUnion(record.values.keys)
            touched.declarations.formUnion(record.declarations.keys)
            touched.declarations.formUnion(record.removedDeclarations)
        }
        guard !touched.isEmpty else { return touched }
        var replayed = JSONStoreDocument()
        for key in touched.values { replayed.values[key] = snapshot.values[key] }
        for key in touched.declarations { replayed.declarations[key] = snapshot.declarations[key] }
        for record in records { replayed.apply(record) }
        var missing = Keys()
        for key in touched.values where replayed.values[key] != snapshot.values[key] { missing.values.insert(key) }
        for key in touched.declarations where replayed.declarations[key] != snapshot.declarations[key] { missing.declarations.insert(key) }
        return missing
    }
}

extension JSONStoreDocument {
    /// Applies a journal record, except its changes to `kept` keys (those a hand edit changed: the edit wins).
    mutating func apply(_ changes: Changeset, keeping kept: JSONJournalMerge.Keys) {
        guard !kept.isEmpty else { return apply(changes) }
        var allowed = changes
        for key in kept.values { allowed.values[key] = nil }
        for key in kept.declarations {
            allowed.declarations[key] = nil
            allowed.removedDeclarations.remove(key)
        }
        apply(allowed)
    }
}
