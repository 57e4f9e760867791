import Foundation
internal import PrefsJSON

/// What a store document's `"values"` and `"declared"` objects hold: an element made from its entry's JSON, which the
/// document checked when it read the file, so that making it cannot fail.
protocol JSONStoreEntry: Sendable, Hashable {
    static func decoded(fromEntry json: JSON) -> Self
}

extension StoredValue: JSONStoreEntry {
    static func decoded(fromEntry json: JSON) -> StoredValue {
        JSONStoreDocument.storedValue(from: json)  // total: any JSON is a value, tagged or bare
    }
}

extension KeyDeclaration: JSONStoreEntry {
    static func decoded(fromEntry json: JSON) -> KeyDeclaration {
        do {
            return try JSONStoreDocument.declaration(from: json, key: "", named: "declared", path: "")
        } catch {
            // Unreachable: JSONStoreDocument.init(data:path:) checks every declaration of the file it reads
            // (checkDeclarations) before it keeps any as bytes, and an entry set later is a KeyDeclaration already.
            preconditionFailure("a checked key declaration did not decode: \(error)")
        }
    }
}

extension JSONStoreDocument {
    /// The values by key (`"values"`).
    typealias Values = Entries<StoredValue>
    /// The key declarations by key (`"declared"`).
    typealias Declarations = Entries<KeyDeclaration>

    /// The entries of a store document's `"values"` or `"declared"` object, by key: each as the file holds it (its
    /// bytes) until it is read, or decoded.
    ///
    /// Opening a store checks the whole file (`JSON.parse(_:keepingMembersOf:)`) but builds no tree for these entries:
    /// an app that reads 20 of 1,000 keys at launch decodes those 20. An entry is decoded from the tree the same parser
    /// builds for its bytes (``JSONStoreEntry/decoded(fromEntry:)``), so it reads exactly as a document decoded whole
    /// would; what needs every entry (an encoding, a format-1 conversion, an integrity check) decodes the rest.
    ///
    /// ```swift
    /// var values = document.values
    /// values.decodedValue(forKey: "launchCount")   // decoded now, and kept decoded
    /// values["theme"] = StoredValue(type: .string, json: .string("dark"))
    /// ```
    ///
    /// A value type: the file's bytes are an immutable `Data`, shared by copies. `Element` is a ``JSONStoreEntry``;
    /// the type requires only `Sendable` (a marker, which the runtime never checks), so that making
    /// `[(key: String, place: Place)]` at a write does not search the process's conformance records for it.
    struct Entries<Element: Sendable>: Sendable {
        /// The entries decoded, or set since the file was read.
        private var elements: [String: Element]
        /// The entries still as the file holds them: the range of each one's JSON value in ``source``. No key is in both.
        private var raw: [String: Range<Int>]
        /// The file the raw entries' ranges are offsets in (from its first byte); empty once none is raw.
        private var source: Data

        init() {
            self.init([:])
        }

        init(_ elements: [String: Element]) {
            self.elements = elements
            raw = [:]
            source = Data()
        }

        /// The entries of a file, each the range of a JSON value in `file` that was checked as the whole file was
        /// parsed (`JSON.parse(_:keepingMembersOf:)`).
        init(_ ranges: [String: Range<Int>], in file: Data) {
            elements = [:]
            raw = ranges
            source = ranges.isEmpty ? Data() : file
        }

        var count: Int { elements.count + raw.count }
        var isEmpty: Bool { elements.isEmpty && raw.isEmpty }
        var keys: [String] { Array(elements.keys) + Array(raw.keys) }
        /// How many entries are still the file's bytes, not decoded.
        var undecodedCount: Int { raw.count }

        /// Where one entry is: a position in the decoded entries or in the raw ones (see ``inKeyOrder()``). Valid
        /// while these entries are not changed.
        enum Place {
            case decoded([String: Element].Index)
            case raw([String: Range<Int>].Index)
        }

        /// Every key in the order a document writes its members (`JSON.keyPrecedes`), with where its entry is: an
        /// encoding reads each with ``element(at:)`` in turn, so that no more than one raw entry is decoded at a time.
        /// Positions, not elements, are sorted with the keys (``KeyOrder``), and reading one hashes nothing.
        func inKeyOrder() -> [(key: String, place: Place)] {
            var all: [(key: String, place: Place)] = []
            all.reserveCapacity(count)
            for index in elements.indices { all.append((elements.keys[index], .decoded(index))) }
            for index in raw.indices { all.append((raw.keys[index], .raw(index))) }
            return KeyOrder.sorted(all) { $0.key }
        }
    }
}

extension JSONStoreDocument.Entries where Element: JSONStoreEntry {
    /// The element under `key`, decoded (a raw entry is decoded for this access and stays raw); setting it stores
    /// a decoded element, nil removes the entry.
    subscript(key: String) -> Element? {
        get {
            if let element = elements[key] { return element }
            return raw[key].map(decode)
        }
        set {
            elements[key] = newValue
            if !raw.isEmpty { raw.removeValue(forKey: key) }
        }
    }

    /// The element under `key`, decoding its entry once: it stays decoded for the next read.
    mutating func decodedValue(forKey key: String) -> Element? {
        if let element = elements[key] { return element }
        guard !raw.isEmpty, let range = raw.removeValue(forKey: key) else { return nil }  // (a removal hashes even when empty)
        let element = decode(range)
        elements[key] = element
        return element
    }

    /// Decodes every raw entry and keeps them decoded, then lets go of the file's bytes.
    mutating func decodeAll() {
        guard !raw.isEmpty else { return }
        elements.reserveCapacity(elements.count + raw.count)
        for (key, range) in raw { elements[key] = decode(range) }
        raw = [:]
        source = Data()
    }

    /// The element at `place`, one of ``inKeyOrder()``'s (a raw entry decoded for this access).
    func element(at place: Place) -> Element {
        switch place {
        case .decoded(let index): elements.values[index]
        case .raw(let index): decode(raw.values[index])
        }
    }

    /// Every element, decoded (raw entries stay raw).
    func decoded() -> [String: Element] {
        guard !raw.isEmpty else { return elements }
        var all = elements
        all.reserveCapacity(count)
        for (key, range) in raw { all[key] = decode(range) }
        return all
    }

    /// Removes the entries of `removed`, then stores `set` (each replacing an entry under its key).
    mutating func apply(removing removed: Set<String>, setting set: [String: Element]) {
        for key in removed {
            elements.removeValue(forKey: key)
            if !raw.isEmpty { raw.removeValue(forKey: key) }
        }
        if elements.isEmpty {
            elements = set  // shares the change set's table instead of copying it
        } else {
            // As `apply(_:)` of values: a loop, not `merge`'s lazy map, and a reservation only for more than one.
            if set.count > 1 { elements.reserveCapacity(elements.count + set.count) }
            for (key, element) in set { elements[key] = element }
        }
        if !raw.isEmpty {
            for key in set.keys { raw.removeValue(forKey: key) }
        }
    }

    /// The element of the JSON value at `range` of the file.
    private func decode(_ range: Range<Int>) -> Element {
        let bytes = source[source.startIndex + range.lowerBound..<source.startIndex + range.upperBound]  // shares the file's bytes
        switch Result(catching: { () throws(JSONParseError) -> JSON in try JSON.parse(bytes) }) {
        case .success(let entry):
            return Element.decoded(fromEntry: entry)
        case .failure(let error):
            // Unreachable: every range is one that JSON.parse(_:keepingMembersOf:) kept after JSONParserCore.skipTree
            // checked it, which accepts exactly what JSON.parse accepts (the tests hold both to the same inputs),
            // at two levels below a depth limit of 256 that this parse counts from the entry; `source` never changes.
            preconditionFailure("a checked store entry did not parse: \(error)")
        }
    }
}

extension JSONStoreDocument.Entries where Element == StoredValue {
    /// Applies value changes (``Changeset/values``): a set stores the decoded value, a removal removes the entry.
    mutating func apply(_ changes: ChangeTable) {
        if changes.count > 1 { elements.reserveCapacity(elements.count + changes.count) }  // room for every change at once
        for (key, change) in changes {
            switch change {
            case .set(let value): elements[key] = value
            case .remove: elements.removeValue(forKey: key)
            }
            if !raw.isEmpty { raw.removeValue(forKey: key) }
        }
    }
}

extension JSONStoreDocument.Entries: Equatable, Hashable where Element: JSONStoreEntry {
    /// Equal when they hold the same keys with equal decoded elements, whatever is still raw.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.decoded() == rhs.decoded()
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(decoded())
    }
}
