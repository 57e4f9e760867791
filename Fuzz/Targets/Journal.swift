// libFuzzer target: the JSON store's journal reader (`JSONJournal.read`, what opening and refreshing a JSON store
// run on `FILE.journal`).
//
// Any input must end in records or a typed `PrefsError`, never a crash. What reads must hold together: the good
// lines are a prefix of the input, reading only that prefix gives the same records with no torn tail, and the records
// written again as a journal read back equal.
import Foundation
import Prefs

@_cdecl("LLVMFuzzerTestOneInput")
public func journalTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let read: (generation: String?, records: [Changeset], goodBytes: Int, tornLine: Int?)
    do {
        read = try JSONJournal.read(data, path: "fuzz.journal")
    } catch {
        _ = error.description  // the message is built from the input: format it too
        return 0
    }
    guard read.goodBytes <= data.count else { fatalError("\(read.goodBytes) good bytes in an input of \(data.count)") }
    guard (read.tornLine == nil) == (read.goodBytes == data.count) else {
        fatalError("a torn tail (line \(read.tornLine.map(String.init) ?? "none")) disagrees with \(read.goodBytes) good bytes of \(data.count)")
    }
    guard read.generation != nil || read.records.isEmpty else { fatalError("records without a header") }
    do {
        let prefix = try JSONJournal.read(data.prefix(read.goodBytes), path: "prefix.journal")
        guard prefix.records == read.records, prefix.generation == read.generation, prefix.tornLine == nil else {
            fatalError("the good lines alone read differently")
        }
    } catch {
        fatalError("the good lines alone do not read: \(error)")
    }
    guard let generation = read.generation else { return 0 }
    var written = JSONJournal.header(generation: generation)
    for (index, record) in read.records.enumerated() { written += JSONJournal.record(seq: index + 1, changes: record) }
    do {
        let again = try JSONJournal.read(written, path: "rewritten.journal")
        guard again.records == read.records, again.generation == generation, again.tornLine == nil, again.goodBytes == written.count else {
            fatalError("the records written again read back differently")
        }
    } catch {
        fatalError("the records written again do not read: \(error)")
    }
    return 0
}
