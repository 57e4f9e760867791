// libFuzzer target: the UserDefaults property-list importer (`PropertyListImport.read(_:path:)`), which reads
// plist files another program wrote: XML or binary, with NSKeyedArchiver data inside.
//
// Any input must end in contents or a typed `PropertyListImport.Error`, never a crash; every value imported
// must have a shape that fits its type and survive the JSON store's archive round trip.
import Foundation
import Prefs
import PrefsJSON
import PrefsUserDefaults

@_cdecl("LLVMFuzzerTestOneInput")
public func propertyListTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let contents: PropertyListImport.Contents
    do {
        contents = try PropertyListImport.read(data, path: "fuzz.plist")
    } catch {
        _ = error.description
        return 0
    }
    for (key, value) in contents.values {
        if let problem = value.shapeProblem() { fatalError("imported \(key) has a shape that does not fit its type: \(problem)") }
    }
    do {
        let again = try StoreArchive.decode(StoreArchive.encode(contents.values), source: "imported.json")
        guard again == contents.values else { fatalError("imported values change through the JSON archive") }
    } catch {
        fatalError("imported values do not load back from the JSON archive: \(error)")
    }
    _ = contents.unsupported.map(\.description)
    _ = contents.notes.map(\.description)
    return 0
}
