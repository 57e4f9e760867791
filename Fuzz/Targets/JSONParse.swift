// libFuzzer target: `JSON.parse` and `JSON.parseLocated`.
//
// The two entry points share one parser core and must agree. `parseLocated` keeps duplicate keys (for the
// linter), so it is compared with `parse` in last-wins mode: both accept with the same value, or both
// reject with the same error. Default `parse` (duplicates rejected) accepts exactly the documents the
// located tree finds no duplicate in, or else fails at the first duplicate or at the same syntax error.
// What parses must serialize (compact and pretty) to text that parses back to the same value, and every
// location must lie inside the input. `parse(_:keepingMembersOf:)`, which checks some values without building them,
// must accept and reject exactly as strict `parse` does, and each value it keeps must parse to the one `parse` built.
import Foundation
import Prefs
import PrefsJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonParseTestOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let lastWins = Result { () throws(JSONParseError) in try JSON.parse(bytes, options: .init(duplicateKeys: .lastWins)) }
    let located = Result { () throws(JSONParseError) in try JSON.parseLocated(bytes) }
    let strict = Result { () throws(JSONParseError) in try JSON.parse(bytes) }
    checkKeptMembers(Data(bytes), strict: strict)
    switch (lastWins, located) {
    case (.success(let value), .success(let tree)):
        guard tree.json == value else { fatalError("parse (last wins) and parseLocated disagree on the value") }
        tree.walk { path, node in
            guard (0..<max(count, 1)).contains(node.location.offset), node.location.line >= 1, node.location.column >= 1 else {
                fatalError("location \(node.location) (offset \(node.location.offset)) of \(path) is outside the \(count)-byte input")
            }
        }
        let duplicates = tree.duplicateKeys()
        switch strict {
        case .success(let strictValue):
            guard duplicates.isEmpty, strictValue == value else { fatalError("strict parse accepts a document with duplicate keys \(duplicates.map(\.key))") }
        case .failure(let error):
            guard !duplicates.isEmpty, error.message.hasPrefix("duplicate key") else {
                fatalError("strict parse rejects a document without duplicates: \(error)")
            }
        }
        for format in [JSONFormat.compact, .pretty] {
            let text = value.serializedBytes(format)
            do {
                let again = try JSON.parse(text)
                guard again == value else {
                    fatalError("\(format) serialization does not parse back to the same value: \(String(decoding: text.prefix(200), as: UTF8.self))")
                }
            } catch {
                fatalError("\(format) serialization does not parse: \(error): \(String(decoding: text.prefix(200), as: UTF8.self))")
            }
        }
    case (.failure(let error), .failure(let locatedError)):
        guard error == locatedError else { fatalError("parse (last wins) and parseLocated reject with different errors: \(error) / \(locatedError)") }
        guard (0...count).contains(error.location.offset) else { fatalError("error location \(error.location) outside the input") }
        switch strict {
        case .success: fatalError("strict parse accepts what last-wins parsing rejects: \(error)")
        case .failure(let strictError):
            guard strictError == error || (strictError.message.hasPrefix("duplicate key") && strictError.location.offset < error.location.offset) else {
                fatalError("strict parse fails differently: \(strictError) / \(error)")
            }
        }
        _ = error.description
    case (.success, .failure(let error)):
        fatalError("parse accepts, parseLocated rejects: \(error)")
    case (.failure(let error), .success):
        fatalError("parseLocated accepts, parse rejects: \(error)")
    }
    return 0
}

/// `parse(_:keepingMembersOf:)` against strict `parse`: the same error, or the same document once its kept values are
/// parsed from their bytes.
private func checkKeptMembers(_ data: Data, strict: Result<JSON, JSONParseError>) {
    let names: Set<String> = ["values", "declared", "a"]
    let kept = Result { () throws(JSONParseError) in try JSON.parse(data, keepingMembersOf: names) }
    switch (strict, kept) {
    case (.success(let value), .success(let parsed)):
        var restored = parsed.root
        if case .object(var members) = restored {
            for (name, ranges) in parsed.kept {
                guard members[name] == nil else { fatalError("kept member \(name) is in the tree too") }
                var object: [String: JSON] = [:]
                for (key, range) in ranges {
                    guard range.lowerBound >= 0, range.upperBound <= data.count, let member = try? JSON.parse(data[range]) else {
                        fatalError("the kept value \(name).\(key) at \(range) does not parse")
                    }
                    object[key] = member
                }
                members[name] = .object(object)
            }
            restored = .object(members)
        }
        guard restored == value else { fatalError("parse(_:keepingMembersOf:) and parse disagree on the value") }
    case (.failure(let error), .failure(let keptError)):
        guard error == keptError else { fatalError("parse(_:keepingMembersOf:) and parse reject with different errors: \(keptError) / \(error)") }
    case (.success, .failure(let error)):
        fatalError("parse accepts, parse(_:keepingMembersOf:) rejects: \(error)")
    case (.failure(let error), .success):
        fatalError("parse(_:keepingMembersOf:) accepts, parse rejects: \(error)")
    }
}
