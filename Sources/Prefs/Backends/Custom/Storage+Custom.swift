extension Prefs.Storage {
    /// A backend of your own (see ``Prefs/Backend`` and <doc:WritingABackend>): `make` is called each time a store
    /// opens on this storage, on the opening thread, and its errors are thrown by `Prefs(_:)` (as
    /// ``PrefsError/backend(_:reason:)`` unless they are ``PrefsError`` values).
    ///
    /// ```swift
    /// let prefs = try Prefs(.custom { try KeychainBackend(service: "com.example.app") })
    /// print(prefs.storage)   // .keychain(service: "com.example.app"), the backend's description
    /// ```
    ///
    /// Until a store opens on it, the storage describes itself by the backend's type, as in
    /// `.custom(KeychainBackend)`; the open store's ``Prefs/storage`` has the backend's own ``Prefs/Backend/description``.
    /// Each store opened on the storage gets its own instance: make them share the storage's state (the same file,
    /// service or server), as two stores on one SQLite file do.
    public static func custom<Base: Prefs.Backend>(_ make: @escaping @Sendable () throws -> Base) -> Self {
        custom(named: ".custom(\(Base.self))", make)
    }

    /// ``custom(_:)`` with the backend's type erased (so the factory captures no generic type) and named.
    private static func custom(named description: String, _ make: @escaping @Sendable () throws -> any Prefs.Backend) -> Self {
        Self(kind: .custom(description, { try CustomBackend(description: description, making: make) }), namedByBackend: true)
    }

    /// This storage as the store that opened `backend` names it: a ``custom(_:)`` storage by the backend's
    /// description, any other as it is.
    func named(by backend: any StoreBackend) -> Self {
        guard namedByBackend, case .custom(_, let make) = kind else { return self }
        var named = self
        named.kind = .custom(backend.description, make)
        named.namedByBackend = false
        return named
    }
}
