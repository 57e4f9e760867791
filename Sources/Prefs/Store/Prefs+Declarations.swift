internal import PrefsJSON
extension Prefs {
    /// Records keys in the store with their type, initial value and former names, so that `prefs-tool` in another
    /// process can list them. A key is also recorded by its first `set` in a process (not by a batch or transaction); a
    /// read never writes, so declare keys up front (at launch) for `prefs-tool` to list them before they are written.
    ///
    /// ```swift
    /// try prefs.declare(.launchCount, .username)
    /// try prefs.declare(AppKey.self)   // every case of a PrefsKeyEnum
    /// ```
    public func declare(_ keys: Keys...) throws(PrefsError) {
        try declare(keys)
    }

    /// Records `keys`; see ``declare(_:)-(Prefs.Keys...)``.
    public func declare(_ keys: [Keys]) throws(PrefsError) {
        state.withLock { state in
            // Room for the names the cache has no slot for (a slot of a key set or read already takes its key).
            var added = 0
            for key in keys where state.cache.known(CacheName(key)) == nil { added += 1 }
            state.cache.reserveCapacity(state.cache.table.count + added)
        }
        // In commits of at most `declarationsPerCommit` keys (one for any app's usual few hundred): a change set of every
        // key at once held some 150 bytes a key until it committed (100,000 keys: 15 MB beside the store's own, more
        // while its table grew). Declarations are no values: a typed read never waits for one, and a key whose commit
        // failed is recorded again by its next set.
        var start = keys.startIndex
        repeat {
            let chunk = keys[start..<min(start + Self.declarationsPerCommit, keys.endIndex)]
            var changes = Changeset()
            changes.declarations.reserveCapacity(chunk.count)
            let recorded = try recordedDeclarations(for: chunk.map(\.name))  // one read a chunk (a round trip on a server)
            for key in chunk where recorded[key.name] != key.declaration {
                changes.declarations[key.name] = key.declaration
            }
            state.withLock { state in
                for key in chunk { state.noteKnown(key, declared: true) }
            }
            try commit(changes)
            start = chunk.endIndex
        } while start < keys.endIndex
    }

    /// How many declarations ``declare(_:)-([Prefs.Keys])`` records in one commit.
    static let declarationsPerCommit = 1024

    /// Records every case of a key enum.
    public func declare<Keys: PrefsKeyEnum>(_: Keys.Type) throws(PrefsError) {
        try declare(Keys.allCases.map(\.anyKey))
    }

    /// Records declarations as they are (for tools copying a store).
    package func recordDeclarations(_ declarations: [String: KeyDeclaration]) throws {
        for name in declarations.keys { try KeyName.validate(name) }
        try commit(Changeset(declarations: declarations))
    }

    /// Forgets recorded declarations (for tools removing what they recorded by mistake). A key this process uses
    /// is recorded again by its next use.
    package func removeDeclarations(_ names: [String]) throws {
        state.withLock { state in
            state.declarationEpoch &+= 1
            for name in names {
                state.forgetDeclared(CacheName(name))
            }
        }
        try commit(Changeset(removedDeclarations: Set(names)))
    }

    /// Every declaration recorded in the store, by any process, read fresh from the backend.
    package func declaredKeys() throws -> [String: KeyDeclaration] {
        try io.withBackend { backend in try backend.declarations() }
    }

    /// The value a read of `name` returns while nothing is stored, for code that reads by name (``PrefsDefaults``'
    /// getters): the initial value of a key this process declared (``declare(_:)-(Prefs.Keys...)``) or observed
    /// (``values(for:lossless:)->AsyncStream<Value>``, ``observable(_:isolation:)``, ``Pref``) in this store, else that of the declaration recorded in
    /// the store by any process; nil when neither has one (or it is `nil`). A declaration that cannot be read is
    /// reported as a diagnostic and reads as none.
    package func initialStoredValue(forKey name: String) -> StoredValue? {
        if let key = state.withLock({ $0.knownKey(name) }) { return key.initialStoredValue() }
        do {
            return try recordedDeclaration(for: name)?.initialValue
        } catch {
            report(Diagnostic(key: name, kind: .refreshFailed(error, during: "reading its declaration"), store: storage.description))
            return nil
        }
    }

    /// Every key's value while nothing is stored, as ``initialStoredValue(forKey:)`` gives it, by name.
    package func initialStoredValues() -> [String: StoredValue] {
        var values: [String: StoredValue] = [:]
        do {
            for (name, declaration) in try declaredKeys() { values[name] = declaration.initialValue }
        } catch {
            report(Diagnostic(key: nil, kind: .refreshFailed(error, during: "reading the declarations"), store: storage.description))
        }
        for (name, key) in state.withLock({ $0.knownKeys() }) { values[name] = key.initialStoredValue() }
        return values
    }

    /// The declaration the store holds for `name`.
    func recordedDeclaration(for name: String) throws(PrefsError) -> KeyDeclaration? {
        try PrefsError.converting { try io.withBackend { backend in try backend.declaration(forKey: name) } }
    }

    /// The recorded declarations of `names`, by name (a name with none recorded is absent).
    func recordedDeclarations(for names: [String]) throws(PrefsError) -> [String: KeyDeclaration] {
        try PrefsError.converting { try io.withBackend { backend in try backend.declarations(forKeys: names) } }
    }
}

// MARK: - Enum keys

extension Prefs {
    /// The value of an enum key case; its type is the case's initial value's type.
    ///
    /// ```swift
    /// let neverAgain: Bool = prefs[AppKey.dialogNoMore]
    /// ```
    ///
    /// A value of another type is converted to the case's type when its stored form reads as one, so a number
    /// literal works for a `Double` case (`prefs[Volume.level] = 1`). A write that cannot be converted is reported as
    /// a diagnostic and writes nothing.
    ///
    /// Reading a case as a type its values cannot convert to (`let n: Int = prefs[AppKey.volume]` where `volume` holds
    /// 0.5) is a programming error, but never a crash in a shipped app: it is reported as a ``Diagnostic`` naming both
    /// types, and the read returns the case's initial value converted to the requested type when it can be, else the
    /// empty value of that type (`false`, `0`, `""`, `[]`, `nil`). Only a type with no empty value (a `Codable` struct
    /// with required members) stops, with both types in the message. Catch the mistake in a test with
    /// ``checkReads(_:as:)``.
    public subscript<Key: PrefsKeyEnum, Value: PrefsStorable>(key: Key) -> Value {
        get {
            if key.initialValue is Value { return self[key.key(as: Value.self)] }
            return convertedRead(key).value
        }
        set {
            do { try set(newValue, for: key) } catch {
                report(Diagnostic(key: key.rawValue, kind: .writeFailed(error, during: nil), store: storage.description))
            }
        }
    }

    /// Reads an enum key case as a type other than its own: the converted value, whether it was stored, and the
    /// mismatch when it cannot be converted (reported once; the value is then the fallback).
    /// A launch argument's value is converted as a stored one is, and tells so (`isArgument`).
    private func convertedRead<Key: PrefsKeyEnum, Value: PrefsStorable>(
        _ key: Key
    ) -> (value: Value, isStored: Bool, mismatch: ValueMismatch?, isArgument: Bool) {
        func read<Stored: PrefsStorable>(_ initial: Stored) -> (Value, Bool, ValueMismatch?, Bool) {
            let lookup = self.lookup(key.typedKey(initial: initial))
            var isArgument = false
            if case .argument = lookup { isArgument = true }
            let reason = "the enum case \(Key.self).\(key) holds \(Stored.self) values"
            var mismatch: ValueMismatch?
            do {
                let json = try lookup.value.storedJSON()
                do {
                    return (try Value(storedJSON: json), lookup.isStored, nil, isArgument)
                } catch {
                    let found = ValueMismatch(
                        stored: StoredValue(type: Stored.valueType, json: json), expected: Value.valueType,
                        reason: "\(reason); \(DecodeFailure.reason(of: error))", swiftType: "\(Value.self)")
                    mismatch = found
                    reportMismatch(found, key: key.rawValue)
                }
            } catch {
                let during = "\(reason) that cannot be encoded"
                report(Diagnostic(key: key.rawValue, kind: .writeFailed(error, during: during), store: storage.description))
            }
            guard let fallback: Value = Self.fallback(for: initial) else {
                preconditionFailure("\(reason), which cannot be read as \(Value.self), and \(Value.self) has no empty value to return instead")
            }
            return (fallback, lookup.isStored, mismatch, isArgument)
        }
        return read(key.initialValue)
    }

    /// What a read of an enum key as an unconvertible type returns: the case's initial value converted, else the
    /// type's empty value.
    private static func fallback<Stored: PrefsStorable, Value: PrefsStorable>(for initial: Stored) -> Value? {
        if let json = try? initial.storedJSON(), let converted = try? Value(storedJSON: json) { return converted }
        let empties: [JSON] = [.null, .bool(false), .int(0), .double(0), .string(""), .array([]), .object([:])]
        return empties.lazy.compactMap { try? Value(storedJSON: $0) }.first
    }

    /// Reads every case of a key enum as `type` and returns the problems, one per case whose values cannot be read as
    /// that type: empty when every read works. For tests: `#expect(prefs.checkReads(AppKey.self, as: Int.self).isEmpty)`
    /// for the cases your code reads as `Int`.
    public func checkReads<Key: PrefsKeyEnum, Value: PrefsStorable>(_ cases: [Key], as _: Value.Type) -> [String] {
        cases.compactMap { key -> String? in
            if key.initialValue is Value { return nil }
            func check<Stored: PrefsStorable>(_ initial: Stored) -> String? {
                let stored = self[key.typedKey(initial: initial)]
                do {
                    _ = try Value(storedJSON: stored.storedJSON())
                    return nil
                } catch {
                    return "\(Key.self).\(key) holds \(Stored.self) values, which cannot be read as \(Value.self): \(error)"
                }
            }
            return check(key.initialValue)
        }
    }

    /// Reads an enum key, telling a stored value apart from the initial value.
    /// Read as a type the case's values cannot convert to, it is `.unreadable` (or `.initial`), as the subscript explains.
    public func lookup<Key: PrefsKeyEnum, Value: PrefsStorable>(_ key: Key, as _: Value.Type = Value.self) -> Lookup<Value> {
        if key.initialValue is Value { return lookup(key.key(as: Value.self)) }
        let read: (value: Value, isStored: Bool, mismatch: ValueMismatch?, isArgument: Bool) = convertedRead(key)
        if let mismatch = read.mismatch, read.isStored || read.isArgument { return .unreadable(initial: read.value, mismatch) }
        if read.isArgument { return .argument(read.value) }
        return read.isStored ? .stored(read.value) : .initial(read.value)
    }

    /// Writes an enum key. A value of another type is converted to the case's type when its stored form reads as
    /// one (`1` for a `Double` case); otherwise this throws ``PrefsError/encodingFailed(key:reason:)`` and writes nothing.
    public func set<Key: PrefsKeyEnum, Value: PrefsStorable>(_ value: Value, for key: Key) throws(PrefsError) {
        if key.initialValue is Value { return try set(value, for: key.key(as: Value.self)) }
        func write<Stored: PrefsStorable>(_ initial: Stored) throws(PrefsError) {
            let converted: Stored
            do {
                converted = try Stored(storedJSON: value.storedJSON())
            } catch {
                throw PrefsError.encodingFailed(
                    key: key.rawValue, reason: "\(Key.self).\(key) holds \(Stored.self) values, and \(Value.self) \(value) is not one (\(error))")
            }
            try set(converted, for: key.typedKey(initial: initial))
        }
        try write(key.initialValue)
    }

    /// Whether a value is stored for an enum key.
    public func isStored<Key: PrefsKeyEnum>(_ key: Key) -> Bool {
        isStored(key.anyKey)
    }

    /// Removes the stored values of enum keys.
    public func reset<Key: PrefsKeyEnum>(_ keys: Key...) throws(PrefsError) {
        try reset(keys.map(\.anyKey))
    }
}
