import Foundation
package import PrefsJSON
import Synchronization
import PrefsSupport

extension Prefs {
    /// The namespace for static typed keys. Declare keys in an extension; use them with `prefs[.name]`.
    ///
    /// ```swift
    /// extension Prefs.Keys {
    ///     static let launchCount = Key<Int>("launchCount", initial: 0)
    ///     static let username = Key<String?>("username")
    /// }
    /// prefs[.launchCount]                       // 0 until written
    /// try prefs.update(.launchCount) { $0 += 1 } // an atomic read-modify-write
    /// ```
    ///
    /// `Keys` is a class so that `static let` keys declared on it are found through `Key<Value>`,
    /// which inherits from it (static stored properties are not allowed in generic types).
    ///
    /// Keys are `Hashable`: two keys are equal when a store records them alike (the same name, value type, initial
    /// value and former names; a key whose initial value is computed at each read records none), so they go in sets and
    /// dictionaries, and a key enum's case equals the typed key it stands for.
    // @unchecked Sendable: every stored property is a `let` of a Sendable type (the declaration's storage is an atomic
    // reference, set once); the class is not open.
    public class Keys: @unchecked Sendable, Hashable {
        /// The name the value is stored under.
        public let name: String
        /// `name`'s hash, computed once: a cache hit hashes nothing (see ``CacheName``). Declared right after `name`,
        /// so that a read finds both in the object's first cache line.
        let nameHash: Int
        /// Names this key had before; the first read moves a value found under one of them to `name`.
        public let formerNames: [String]
        /// The type and initial value, as recorded in the store for tools in other processes. Made at its first use
        /// (a key's first write, a `declare`, a comparison), not when the key is: encoding an initial value (a Codable's
        /// goes through `JSONEncoder`) is no cost of a launch that only reads.
        package var declaration: KeyDeclaration {
            if let made = madeDeclaration.load(ordering: .acquiring) { return made.takeUnretainedValue().declaration }
            let box = Unmanaged.passRetained(DeclarationBox.interned(makeDeclaration()))
            let (stored, current) = madeDeclaration.compareExchange(expected: nil, desired: box, ordering: .acquiringAndReleasing)
            guard stored else {
                box.release()  // another thread made it first: the same declaration
                return current.unsafelyUnwrapped.takeUnretainedValue().declaration
            }
            return box.takeUnretainedValue().declaration
        }
        private let madeDeclaration = Atomic<Unmanaged<DeclarationBox>?>(nil)

        /// The declaration once made (see ``declaration``), in an object so that one atomic reference publishes it.
        /// Keys recorded alike share one (``interned(_:)``): a store's keys share a handful of declarations (the same
        /// type and initial value), and an object of its own on every key took some 80 bytes a key once declared
        /// (8 MB at 100,000 keys, the memory store's largest part after its tables).
        final class DeclarationBox: Sendable {
            let declaration: KeyDeclaration
            private init(_ declaration: KeyDeclaration) { self.declaration = declaration }

            /// The box of every live key whose declaration equals `declaration`, or a new one. Held weakly: a box lives
            /// as long as a key that uses it. A dead one's entry goes when the table has doubled since it last did.
            ///
            /// The box found or made last is compared first: keys are declared in runs of one type and initial value
            /// (an app's keys at their first writes, a `declare` of many), and a comparison costs a tenth of hashing
            /// the declaration to look it up.
            static func interned(_ declaration: KeyDeclaration) -> DeclarationBox {
                table.withLock { table in
                    if let last = table.last.box, last.declaration == declaration { return last }
                    if let box = table.boxes[declaration]?.box {
                        table.last = Weak(box: box)
                        return box
                    }
                    if table.boxes.count >= table.sweepAt {
                        table.boxes = table.boxes.filter { $0.value.box != nil }
                        table.sweepAt = max(64, table.boxes.count * 2)
                    }
                    let box = DeclarationBox(declaration)
                    table.boxes[declaration] = Weak(box: box)
                    table.last = Weak(box: box)
                    return box
                }
            }

            private struct Weak { weak var box: DeclarationBox? }
            private static let table = Locked<(boxes: [KeyDeclaration: Weak], last: Weak, sweepAt: Int)>(([:], Weak(), 64))
        }

        /// The box that holds this key's declaration once made, nil before (tests compare boxes by identity).
        var declarationBox: DeclarationBox? { madeDeclaration.load(ordering: .acquiring)?.takeUnretainedValue() }

        init(name: String, formerNames: [String]) {
            self.name = name
            nameHash = name.hashValue
            self.formerNames = formerNames
        }

        /// The declaration, made at its first use (``declaration``). Every key is a typed key, which overrides it.
        func makeDeclaration() -> KeyDeclaration {
            KeyDeclaration(type: .json, initial: nil, formerNames: formerNames)
        }

        deinit {
            madeDeclaration.load(ordering: .acquiring)?.release()
        }

        /// Whether the keys are recorded alike: the same ``name`` and declaration (value type, initial value, former names).
        public static func == (lhs: Keys, rhs: Keys) -> Bool {
            lhs === rhs || (lhs.name == rhs.name && lhs.declaration == rhs.declaration)
        }

        /// Hashes the name (keys that are equal have the same name).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
        }

        /// `Key<Value>` spelled without the `Prefs.` prefix inside `extension Prefs.Keys`.
        public typealias Key<Value: PrefsStorable> = Prefs.Key<Value>

        /// The value a read returns while nothing is stored, in stored form; nil for `nil` (and for an initial value
        /// that cannot be encoded). A typed key encodes its initial value as it is now.
        func initialStoredValue() -> StoredValue? { declaration.initialValue }

        /// A launch argument's value as this key reads it, in stored form (see ``LaunchArguments/converted(_:to:)``),
        /// or why it cannot be read so. A typed key checks that it decodes as its type too.
        func readArgument(_ argument: StoredValue) throws(ValueMismatch) -> StoredValue {
            try LaunchArguments.converted(argument, to: declaration.type)
        }
    }

    /// A typed key with its initial value: the value read while nothing is stored.
    ///
    /// ```swift
    /// extension Prefs.Keys {
    ///     static let launchCount = Key<Int>("launchCount", initial: 0)
    /// }
    /// ```
    ///
    /// `Value` is a ``PrefsStorable`` type: every initializer requires it. The class itself does not, so that the first
    /// key of each type in a process costs no search of the process's conformance tables (about 60 µs a type at
    /// launch: the runtime checks a generic type's requirements when it makes the type from its name).
    public final class Key<Value>: Keys, @unchecked Sendable {
        /// The value read while nothing is stored under ``Keys/name``: the one the key was declared with, or, for a
        /// key declared with a closure (``init(_:formerNames:initial:)``), the closure's value now.
        public var initial: Value { makeInitial() }
        /// Returns the initial value: the declared one, or the closure's. A closure either way, so that a read of a key
        /// with a fixed initial value costs one call, not a generic enum's metadata lookup and projection.
        private let makeInitial: @Sendable () -> Value
        /// Reads a stored value that does not decode as `Value` (an older shape), or returns nil; nil without a migration.
        private let migration: (@Sendable (StoredValue) throws -> Value?)?
        /// `Value`'s conformance, which the initializers have (as `Value` itself, opened by ``typed(_:)``).
        private let storable: any PrefsStorable.Type
        /// Whether the initial value is fixed (recorded in the declaration), not computed at each read.
        private let initialIsFixed: Bool

        /// Runs `body` with `Value` as the ``PrefsStorable`` type it is, for the overrides below (which cannot require it).
        private func typed<Result, Failure: Error>(_ body: (any TypedKeyOperations) throws(Failure) -> Result) throws(Failure) -> Result {
            // `Storable` is `Value`: the cast compares the two types, and looks up no conformance.
            func open<Storable: PrefsStorable, R, F: Error>(_: Storable.Type, _ body: (any TypedKeyOperations) throws(F) -> R) throws(F) -> R {
                try body(self as! Key<Storable>)
            }
            return try open(storable, body)
        }

        override func makeDeclaration() -> KeyDeclaration {
            typed { $0.typedDeclaration() }
        }

        override func initialStoredValue() -> StoredValue? {
            typed { $0.typedInitialStoredValue() }
        }

        override func readArgument(_ argument: StoredValue) throws(ValueMismatch) -> StoredValue {
            try typed { (key) throws(ValueMismatch) in try key.typedReadArgument(argument) }
        }

        /// `fixed`: whether `makeInitial` returns one value (recorded in the declaration), not one computed at each read.
        init(
            validating name: String, makeInitial: @escaping @Sendable () -> Value, fixed: Bool, formerNames: [String],
            migration: (@Sendable (StoredValue) throws -> Value?)? = nil
        ) throws(PrefsError) where Value: PrefsStorable {
            try KeyName.validate(name)
            for former in formerNames { try KeyName.validateLegacy(former) }  // old code's names, as UserDefaults took them
            self.makeInitial = makeInitial
            self.migration = migration
            storable = Value.self
            initialIsFixed = fixed
            super.init(name: name, formerNames: formerNames)
        }
    }
}

extension Prefs.Key where Value: PrefsStorable {
    /// Declares a key. An invalid name (empty, longer than 256 bytes, with control
    /// characters) is a programming error and stops the program here, at the declaration, with the reason.
    /// Use ``init(validating:initial:formerNames:)`` for names that come from input.
    public convenience init(_ name: String, initial: Value, formerNames: [String] = []) {
        do {
            try self.init(validating: name, initial: initial, formerNames: formerNames)
        } catch {
            preconditionFailure("Prefs.Key: \(error)")
        }
    }

    /// Declares a key whose initial value is computed at each read while nothing is stored, as Defaults' dynamic
    /// default values are: a date, a fresh identifier, a value that depends on the device.
    ///
    /// ```swift
    /// extension Prefs.Keys {
    ///     static let trialEnds = Key<Date>("trialEnds") { Date.now.addingTimeInterval(14 * 86_400) }
    /// }
    /// prefs[.trialEnds]   // two weeks from now, until a date is stored
    /// ```
    ///
    /// `initial` is called on the reading thread, each time a read finds nothing stored (store the value to keep
    /// it). The store records no initial value in the key's declaration, so `prefs-tool` lists none.
    public convenience init(_ name: String, formerNames: [String] = [], initial: @escaping @Sendable () -> Value) {
        do {
            try self.init(validating: name, makeInitial: initial, fixed: false, formerNames: formerNames)
        } catch {
            preconditionFailure("Prefs.Key: \(error)")
        }
    }

    /// Declares a key whose stored values may be in a shape an earlier version of the app wrote: a value that
    /// does not decode as `Value` is handed to `migrate` before the key falls back to its initial value.
    ///
    /// ```swift
    /// struct Settings: Codable, PrefsStorable { var fullName: String; var fontSize: Int }
    /// struct SettingsV1: Codable, PrefsStorable { var name: String }   // what version 1 stored
    ///
    /// extension Prefs.Keys {
    ///     static let settings = Key<Settings>("settings", initial: Settings(fullName: "", fontSize: 12), migrating: { stored in
    ///         Settings(fullName: try stored.decode(SettingsV1.self).name, fontSize: 12)
    ///     })
    /// }
    /// prefs[.settings].fullName   // version 1's `name`
    /// ```
    ///
    /// `migrate` gets the stored value as it is (``StoredValue/jsonText`` is its JSON; ``StoredValue/decode(_:)``
    /// reads it as an old type with the store's own decoding: dates, data, JSON kept as text). It returns the value
    /// in the current shape, or nil (or throws) when the value is no shape it knows: the key then reads its initial
    /// value and reports a ``ValueMismatch`` diagnostic, as without a migration. Try several old shapes in turn,
    /// newest first.
    ///
    /// A read never writes: the migrated value is what reads return (and cache), while the store keeps the old
    /// bytes until the key's next write stores the current shape. `migrate` runs on the reading thread, once per
    /// value read from the store; it must not call the store.
    public convenience init(
        _ name: String, initial: Value, formerNames: [String] = [], migrating migrate: @escaping @Sendable (StoredValue) throws -> Value?
    ) {
        do {
            try self.init(validating: name, makeInitial: { initial }, fixed: true, formerNames: formerNames, migration: migrate)
        } catch {
            preconditionFailure("Prefs.Key: \(error)")
        }
    }

    /// Declares a key whose name comes from input; throws ``PrefsError/invalidKeyName(_:reason:)``.
    public convenience init(validating name: String, initial: Value, formerNames: [String] = []) throws(PrefsError) {
        try self.init(validating: name, makeInitial: { initial }, fixed: true, formerNames: formerNames)
    }
}

/// What a typed key does with its value's conformance, reached from the type-erased overrides of ``Prefs/Key``.
private protocol TypedKeyOperations {
    func typedDeclaration() -> KeyDeclaration
    func typedInitialStoredValue() -> StoredValue?
    func typedReadArgument(_ argument: StoredValue) throws(ValueMismatch) -> StoredValue
}

extension Prefs.Key: TypedKeyOperations where Value: PrefsStorable {
    fileprivate func typedDeclaration() -> KeyDeclaration {
        let initialJSON = initialIsFixed ? try? initial.storedJSON() : nil  // a Codable initial that cannot encode is recorded as unknown
        return KeyDeclaration(type: Value.valueType, initial: initialJSON == .null ? nil : initialJSON, formerNames: formerNames)
    }

    fileprivate func typedInitialStoredValue() -> StoredValue? {
        guard let stored = try? StoredValue(initial), stored.json != .null else { return nil }
        return stored
    }

    fileprivate func typedReadArgument(_ argument: StoredValue) throws(ValueMismatch) -> StoredValue {
        try LaunchArguments.read(argument, as: Value.self).stored
    }

    /// Decodes `stored` as `Value`; when it does not decode, as the key's migration reads it. Throws the decoding's
    /// mismatch (with the migration's error, when it threw one) when neither reads it. An explicit `nil` is never
    /// migrated.
    package func decode(_ stored: StoredValue) throws(ValueMismatch) -> Value {
        do {
            return try stored.decode(Value.self)
        } catch {
            guard let migration, !stored.isNil else { throw error }
            do {
                if let migrated = try migration(stored) { return migrated }
            } catch let failure {
                var mismatch = error
                if let old = failure as? ValueMismatch {  // an old shape's decoding: which shape, and why
                    mismatch.reason += "; the migration, reading \(old.swiftType ?? old.expected.description): \(old.reason)"
                } else {
                    mismatch.reason += "; the migration: \(DecodeFailure.reason(of: failure))"
                }
                throw mismatch
            }
            throw error
        }
    }
}

extension Prefs.Key where Value: PrefsStorable & ExpressibleByNilLiteral {
    /// Declares an optional key whose initial value is `nil`.
    public convenience init(_ name: String, formerNames: [String] = []) {
        self.init(name, initial: nil, formerNames: formerNames)
    }
}

/// What a store records about a declared key, so `prefs-tool` in another process can list it.
package struct KeyDeclaration: Sendable, Hashable {
    package var type: ValueType
    /// The initial value's JSON form; nil for an optional key whose initial value is nil, and for a key whose initial
    /// value is computed at each read.
    package var initial: JSON?
    /// The names the key had before (``Prefs/Keys/formerNames``), so tools read and reset a renamed value as the app does.
    package var formerNames: [String]

    package init(type: ValueType, initial: JSON?, formerNames: [String] = []) {
        self.type = type
        self.initial = initial
        self.formerNames = formerNames
    }

    /// The initial value as a ``StoredValue``, if there is one.
    package var initialValue: StoredValue? { initial.map { StoredValue(type: type, json: $0) } }

    /// Why `value` cannot be read as this key's type, as a typed key of that type reads it (the app then reads
    /// the initial value), or nil when it can. Tools check what they write or import with it.
    ///
    /// ```swift
    /// let declaration = KeyDeclaration(type: .int, initial: .int(0))
    /// declaration.mismatch(with: StoredValue(type: .string, json: .string("three")))?.reason   // "a string is never read as int"
    /// declaration.mismatch(with: StoredValue(type: .int, json: .int(3)))                      // nil
    /// ```
    ///
    /// An explicit `nil` (a JSON `null`, written by ``Prefs/storeNil(for:)``) fits every declaration: the
    /// declaration does not say whether the key is optional, and a key that is not reads its initial value.
    package func mismatch(with value: StoredValue) -> ValueMismatch? {
        if value.isNil { return nil }
        guard type.canDecode(from: value.type) else {
            return ValueMismatch(stored: value, expected: type, reason: "a \(value.type) is never read as \(type)")
        }
        if let problem = StoredValue(type: type, json: value.json).shapeProblem() {
            return ValueMismatch(stored: value, expected: type, reason: problem)
        }
        return nil
    }
}
