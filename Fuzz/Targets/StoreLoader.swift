// libFuzzer target: the JSON store loader (`StoreArchive.decode`, through the JSON store document reader).
//
// Any input must end in values or a typed `PrefsError`, never a crash; and what loads must survive a round
// trip: encoding the values and loading them again gives the same values.
import Foundation
import Prefs

@_cdecl("LLVMFuzzerTestOneInput")
public func storeLoaderTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let values: [String: StoredValue]
    do {
        values = try StoreArchive.decode(data, source: "fuzz.json")
    } catch {
        _ = error.description  // the message is built from the input: format it too
        return 0
    }
    let encoded = StoreArchive.encode(values)
    do {
        let again = try StoreArchive.decode(encoded, source: "re-encoded.json")
        if again != values {
            let changed = values.keys.sorted().filter { again[$0] != values[$0] }
            fatalError(
                "round trip changed \(changed.count) values, first \(changed.first ?? "?"): \(values[changed.first ?? ""].map(String.init(describing:)) ?? "nil") → \(again[changed.first ?? ""].map(String.init(describing:)) ?? "nil")"
            )
        }
    } catch {
        fatalError("the re-encoded archive does not load: \(error)")
    }
    for value in values.values {
        _ = value.description
        _ = value.shapeProblem()
    }
    return 0
}
