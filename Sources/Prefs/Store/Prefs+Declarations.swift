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
    func declareOnFirstUse(_ key: Keys) {
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
    public subscript<Key: PrefsKeyEnum, Value: PrefsStorable>(key: Key) -> Value {
        get { self[key.key(as: Value.self)] }
        set { self[key.key(as: Value.self)] = newValue }
    }

    /// Reads an enum key, telling a stored value apart from the initial value.
    public func lookup<Key: PrefsKeyEnum, Value: PrefsStorable>(_ key: Key, as _: Value.Type = Value.self) -> Lookup<Value> {
        lookup(key.key(as: Value.self))
    }

    /// Writes an enum key.
    public func set<Key: PrefsKeyEnum, Value: PrefsStorable>(_ value: Value, for key: Key) throws {
        try set(value, for: key.key(as: Value.self))
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
