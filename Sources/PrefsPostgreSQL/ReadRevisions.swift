/// The revision at which a transaction read each key: one key held as itself (an `update` reads one, and a dictionary
/// for it cost more than the rest of its bookkeeping), more in a dictionary.
struct ReadRevisions {
    private var one: (key: String, revision: Int64)?
    private var more: [String: Int64] = [:]

    init() {}

    init(_ key: String, revision: Int64) {
        one = (key, revision)
    }

    /// The revision `key` was read at; a read of a key already read keeps the later revision.
    subscript(key: String) -> Int64? {
        if let one { return one.key == key ? one.revision : nil }
        return more[key]
    }

    mutating func record(_ key: String, revision: Int64) {
        if let first = one {
            if first.key == key {
                one = (key, revision)
                return
            }
            more[first.key] = first.revision
            one = nil
        } else if more.isEmpty {
            one = (key, revision)
            return
        }
        more[key] = revision
    }

    var count: Int { one == nil ? more.count : 1 }
    var isEmpty: Bool { count == 0 }

    /// The one key read and its revision, when exactly one was.
    var single: (key: String, value: Int64)? {
        if let one { return (one.key, one.revision) }
        return more.count == 1 ? more.first : nil
    }

    var keys: [String] { one.map { [$0.key] } ?? Array(more.keys) }

    /// Every key read and its revision.
    var all: [String: Int64] { one.map { [$0.key: $0.revision] } ?? more }
}
