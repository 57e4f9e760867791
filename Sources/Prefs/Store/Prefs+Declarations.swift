extension Prefs {
    /// Records keys in the store with their type and initial value, so that `prefs-tool` in another process
    /// can list them. Keys are also recorded on their first use; declare them up front to list them before.
    ///
    /// ```swift
    /// try prefs.declare(.launchCount, .username)
    /// try prefs.declare(AppKey.self)   // every case of a PrefsKeyEnum
    /// ```
    public func declare(_ keys: Keys...) throws {
        try declare(keys)
    }

    /// Records `keys`; see ``declare(_:)-(Keys...)``.
    public func declare(_ keys: [Keys]) throws {
        var changes = Changeset()
        for key in keys where try recordedDeclaration(for: key.name) != key.declaration {
            changes.declarations[key.name] = key.declaration
        }
        state.withLock { state in for key in keys { state.declared.insert(key.name) } }
        try commit(changes)
    }

    /// Records every case of a key enum.
    public func declare<Keys: PrefsKeyEnum>(_: Keys.Type) throws {
        try declare(Keys.allCases.map(\.anyKey))
    }

    /// Records declarations as they are (for tools copying a store).
    public func recordDeclarations(_ declarations: [String: KeyDeclaration]) throws {
        for name in declarations.keys { try KeyName.validate(name) }
        try commit(Changeset(declarations: declarations))
    }

    /// Forgets recorded declarations (for tools removing what they recorded by mistake). A key this process uses
    /// is recorded again by its next use.
    package func removeDeclarations(_ names: [String]) throws {
        state.withLock { state in
            for name in names {
                state.declared.remove(name)
                state.pendingDeclarations.removeValue(forKey: name)
            }
        }
        try commit(Changeset(removedDeclarations: Set(names)))
    }

    /// Every declaration recorded in the store, by any process, read fresh from the backend.
    public func declaredKeys() throws -> [String: KeyDeclaration] {
        try io.withBackend { backend in try backend.declarations() }
    }

    /// The declaration the store holds for `name`, counting those waiting to be written.
    func recordedDeclaration(for name: String) throws -> KeyDeclaration? {
        if let pending = state.withLock({ $0.pendingDeclarations[name] }) { return pending }
        return try io.withBackend { backend in try backend.declaration(forKey: name) }
    }

    /// Notes `key` the first time this process reads it. Nothing is read or written here: the declaration is
    /// compared with the store's and written, if it differs, with the next write, on `flush()` or `close()`, or by a
    /// background write shortly after. A read never waits for a declaration.
    package func declareOnFirstUse(_ key: Keys) {
        let schedule = state.withLock { state -> Bool in
            state.declared.insert(key.name)
            state.pendingDeclarations[key.name] = key.declaration
            guard !state.declarationWriteScheduled else { return false }
            state.declarationWriteScheduled = true
            return true
        }
        if schedule { scheduleDeclarationWrite() }
    }

    /// The pending declarations the store does not already hold. Called with the backend, under its lock.
    /// A declaration whose recorded form cannot be read is written again: harmless.
    static func unrecorded(_ pending: [String: KeyDeclaration], in backend: any PrefsBackend) -> [String: KeyDeclaration] {
        pending.filter { name, declaration in
            let recorded: KeyDeclaration?? = try? backend.declaration(forKey: name)
            return recorded != .some(declaration)
        }
    }

    /// Takes the declarations waiting to be written (the caller writes them or puts them back).
    func takePendingDeclarations() -> [String: KeyDeclaration] {
        state.withLock { state in
            defer { state.pendingDeclarations = [:] }
            return state.pendingDeclarations
        }
    }

    func restorePendingDeclarations(_ declarations: [String: KeyDeclaration]) {
        guard !declarations.isEmpty else { return }
        state.withLock { $0.pendingDeclarations.merge(declarations) { current, _ in current } }
    }

    /// Writes pending declarations now; a failure is reported and they stay pending.
    func writePendingDeclarations() {
        do {
            try commit(Changeset())
        } catch {
            report(Diagnostic(key: nil, kind: .writeFailed("recording key declarations: \(error)"), store: storage.description))
        }
    }

    private func scheduleDeclarationWrite() {
        Background.after(.milliseconds(500)) { [weak self] in
            guard let self, self.state.withLock({ state in
                state.declarationWriteScheduled = false
                return !state.closed
            }) else { return }
            self.writePendingDeclarations()
        }
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
    /// a diagnostic and writes nothing; a read as a type the case's values cannot convert to stops with both types
    /// (a programming error, like a wrong cast).
    public subscript<Key: PrefsKeyEnum, Value: PrefsStorable>(key: Key) -> Value {
        get {
            if key.initialValue is Value { return self[key.key(as: Value.self)] }
            func read<Stored: PrefsStorable>(_ initial: Stored) -> Value {
                let stored = self[Prefs.Key(key.rawValue, initial: initial, formerNames: key.formerNames)]
                do {
                    return try Value(storedJSON: stored.storedJSON())
                } catch {
                    preconditionFailure("\(Key.self).\(key) holds \(Stored.self) values, which cannot be read as \(Value.self): \(error)")
                }
            }
            return read(key.initialValue)
        }
        set {
            do { try set(newValue, for: key) } catch {
                report(Diagnostic(key: key.rawValue, kind: .writeFailed("\(error)"), store: storage.description))
            }
        }
    }

    /// Reads an enum key, telling a stored value apart from the initial value.
    public func lookup<Key: PrefsKeyEnum, Value: PrefsStorable>(_ key: Key, as _: Value.Type = Value.self) -> Lookup<Value> {
        lookup(key.key(as: Value.self))
    }

    /// Writes an enum key. A value of another type is converted to the case's type when its stored form reads as
    /// one (`1` for a `Double` case); otherwise this throws ``PrefsError/encodingFailed(key:reason:)`` and writes nothing.
    public func set<Key: PrefsKeyEnum, Value: PrefsStorable>(_ value: Value, for key: Key) throws {
        if key.initialValue is Value { return try set(value, for: key.key(as: Value.self)) }
        func write<Stored: PrefsStorable>(_ initial: Stored) throws {
            let converted: Stored
            do {
                converted = try Stored(storedJSON: value.storedJSON())
            } catch {
                throw PrefsError.encodingFailed(key: key.rawValue, reason: "\(Key.self).\(key) holds \(Stored.self) values, and \(Value.self) \(value) is not one (\(error))")
            }
            try set(converted, for: Prefs.Key(key.rawValue, initial: initial, formerNames: key.formerNames))
        }
        try write(key.initialValue)
    }

    /// Whether a value is stored for an enum key.
    public func isStored<Key: PrefsKeyEnum>(_ key: Key) -> Bool {
        isStored(key.anyKey)
    }

    /// Removes the stored values of enum keys.
    public func reset<Key: PrefsKeyEnum>(_ keys: Key...) throws {
        try reset(keys.map(\.anyKey))
    }
}
