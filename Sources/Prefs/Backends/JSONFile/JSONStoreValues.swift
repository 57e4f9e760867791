import Foundation
internal import PrefsJSON

extension JSONStoreDocument {
    /// The `"values"` of a store document, by key: each entry as the file holds it (its bytes) until it is read, or
    /// decoded.
    ///
    /// Opening a store checks the whole file (`JSON.parse(_:keepingMembersOf:)`) but builds no tree for its values: an app that
    /// reads 20 of 1,000 keys at launch decodes those 20. An entry is decoded by ``JSONStoreDocument/storedValue(from:)``
    /// from the tree the same parser builds for its bytes, so it reads exactly as a document decoded whole would;
    /// what needs every value (an encoding, a format-1 conversion, an integrity check) decodes the rest.
    ///
    /// ```swift
    /// var values = document.values
    /// values.decodedValue(forKey: "launchCount")   // decoded now, and kept decoded
    /// values["theme"] = StoredValue(type: .string, json: .string("dark"))
    /// ```
    ///
    /// A value type: the file's bytes are an immutable `Data`, shared by copies.
    struct Values: Sendable {
        /// One entry: its bytes in ``source``, or its decoded value.
        enum Entry: Sendable {
            case raw(Range<Int>)
            case decoded(StoredValue)
        }

        private var entries: [String: Entry]
        /// The file the raw entries' ranges are offsets in (from its first byte); empty once none is raw.
        private var source: Data

        init() {
            entries = [:]
            source = Data()
        }

        init(_ values: [String: StoredValue]) {
            entries = values.mapValues(Entry.decoded)
            source = Data()
        }

        /// The entries of a file, each the range of a JSON value in `file` that was checked as the whole file was
        /// parsed (`JSON.parse(_:keepingMembersOf:)`).
        init(_ ranges: [String: Range<Int>], in file: Data) {
            entries = ranges.mapValues(Entry.raw)
            source = file
        }

        var count: Int { entries.count }
        /// How many entries are still the file's bytes, not decoded.
        var undecodedCount: Int {
            entries.values.reduce(0) { count, entry in
                if case .raw = entry { count + 1 } else { count }
            }
        }
        var isEmpty: Bool { entries.isEmpty }
        var keys: Dictionary<String, Entry>.Keys { entries.keys }

        /// The value under `key`, decoded (a raw entry is decoded for this access and stays raw); setting it stores
        /// a decoded value, nil removes the entry.
        subscript(key: String) -> StoredValue? {
            get { entries[key].map(decode) }
            set { entries[key] = newValue.map(Entry.decoded) }
        }

        /// The value under `key`, decoding its entry once: it stays decoded for the next read.
        mutating func decodedValue(forKey key: String) -> StoredValue? {
            guard let index = entries.index(forKey: key) else { return nil }
            switch entries.values[index] {
            case .decoded(let value):
                return value
            case .raw(let range):
                let value = decode(range)
                entries.values[index] = .decoded(value)
                return value
            }
        }

        /// Decodes every raw entry and keeps them decoded, then lets go of the file's bytes.
        mutating func decodeAll() {
            guard !source.isEmpty else { return }
            var index = entries.startIndex  // not `entries.indices`, which would hold the table and make it copy
            while index != entries.endIndex {
                if case .raw(let range) = entries.values[index] { entries.values[index] = .decoded(decode(range)) }
                entries.formIndex(after: &index)
            }
            source = Data()
        }

        /// Every value, decoded (raw entries stay raw).
        func decoded() -> [String: StoredValue] {
            entries.mapValues(decode)
        }

        /// Every value, decoded and transformed (raw entries stay raw).
        func mapValues<T>(_ transform: (StoredValue) throws -> T) rethrows -> [String: T] {
            try entries.mapValues { try transform(decode($0)) }
        }

        mutating func reserveCapacity(_ capacity: Int) {
            entries.reserveCapacity(capacity)
        }

        /// Applies value changes (``Changeset/values``): a set stores the decoded value, a removal removes the entry.
        mutating func apply(_ changes: [String: Changeset.Change]) {
            // Room for every change at once, as Changeset.apply(to:declarations:) makes for a dictionary.
            entries.reserveCapacity(entries.count + changes.count)
            for (key, change) in changes {
                switch change {
                case .set(let value): entries[key] = .decoded(value)
                case .remove: entries.removeValue(forKey: key)
                }
            }
        }

        private func decode(_ entry: Entry) -> StoredValue {
            switch entry {
            case .decoded(let value): value
            case .raw(let range): decode(range)
            }
        }

        /// The stored value of the JSON value at `range` of the file.
        private func decode(_ range: Range<Int>) -> StoredValue {
            let bytes = source[source.startIndex + range.lowerBound..<source.startIndex + range.upperBound]  // shares the file's bytes
            let parsed = Result { () throws(JSONParseError) -> JSON in try JSON.parse(bytes) }
            switch parsed {
            case .success(let entry):
                return JSONStoreDocument.storedValue(from: entry)
            case .failure(let error):
                // Unreachable: every range is one that JSON.parse(_:keepingMembersOf:) kept after JSONParserCore.skipTree
                // checked it, which accepts exactly what JSON.parse accepts (the tests hold both to the same inputs),
                // at two levels below a depth limit of 256 that this parse counts from the entry; `source` never changes.
                preconditionFailure("a checked store entry did not parse: \(error)")
            }
        }
    }
}

extension JSONStoreDocument.Values: Hashable {
    /// Equal when they hold the same keys with equal decoded values, whatever is still raw.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.decoded() == rhs.decoded()
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(decoded())
    }
}
