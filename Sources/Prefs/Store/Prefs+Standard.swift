import Foundation
import PrefsSupport

extension Prefs {
    private static let standardStore = Locked<Prefs?>(nil)

    /// The store that ``standard`` is within a task that overrides it (PrefsTesting's `withStandardStore(_:_:)`), read
    /// before the process's own; setting ``standard`` there replaces it for that task and its child tasks only.
    @TaskLocal package static var standardOverride: StandardOverride?

    /// A task's own ``standard`` (see ``standardOverride``).
    package final class StandardOverride: Sendable {
        let store: Locked<Prefs>

        package init(_ store: Prefs) {
            self.store = Locked(store)
        }
    }

    /// Runs `body` with ``standard`` being `store` in this task and the tasks it starts (not in detached tasks or
    /// other threads), without touching the process's standard store: tests running in parallel each see their own.
    package static func withStandard<Result>(_ store: Prefs, _ body: () throws -> Result) rethrows -> Result {
        try $standardOverride.withValue(StandardOverride(store), operation: body)
    }

    /// The asynchronous form of ``withStandard(_:_:)``.
    package static func withStandard<Result>(
        _ store: Prefs, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $standardOverride.withValue(StandardOverride(store), operation: body, isolation: isolation)
    }

    /// The store that ``Pref`` wrappers use when given none. Set it once at launch; tests give each test its own
    /// (PrefsTesting's `withStandardStore(_:_:)`).
    ///
    /// ```swift
    /// Prefs.standard = try Prefs(.default(identifier: "com.example.app"))   // at launch
    /// ```
    ///
    /// Until it is set, the first use opens `.default(identifier:)` with the app's bundle identifier (or, without a
    /// bundle, the process name), as `UserDefaults.standard` does; if that cannot be opened, an in-memory store, with
    /// a diagnostic saying why (and written to standard error), so nothing is silently lost without a word.
    public static var standard: Prefs {
        get {
            if let override = standardOverride { return override.store.withLock { $0 } }
            return standardStore.withLock { current in
                if let current { return current }
                let made = openDefaultStandard()
                current = made
                return made
            }
        }
        set {
            if let override = standardOverride {
                override.store.withLock { $0 = newValue }
                return
            }
            standardStore.withLock { $0 = newValue }
        }
    }

    private static func openDefaultStandard() -> Prefs {
        let identifier = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        do {
            return try Prefs(.default(identifier: identifier))
        } catch {
            let fallback = Prefs(memory: ())
            let diagnostic = Diagnostic(
                key: nil,
                kind: .writeFailed(
                    error,
                    during:
                        "opening Prefs.standard's default store for \(PrefsError.quoted(identifier)); values are kept in memory only. Set Prefs.standard at launch"
                ), store: fallback.storage.description)
            fallback.report(diagnostic)
            FileHandle.standardError.write(Data("Prefs: \(diagnostic)\n".utf8))
            return fallback
        }
    }

    /// An empty memory store, which cannot fail to open.
    convenience init(memory: Void) {
        do { try self.init(.memory) } catch { preconditionFailure("a memory store cannot fail to open: \(error)") }
    }

    /// Writes `value` for `key` without blocking the caller: the write runs on the store's writer queue (in the order
    /// the calls were made) and this returns when it is done, with its error. Use it from the main actor, where
    /// ``set(_:for:)-(_,Prefs.Key<Value>)`` or the subscript would wait for another process's lock (up to the lock or busy timeout, 5 s by
    /// default) on the main thread.
    public func write<Value>(_ value: Value, for key: Key<Value>) async throws(PrefsError) {
        let written = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, PrefsError>, Never>) in
            writer.async {
                continuation.resume(returning: Result { () throws(PrefsError) in try self.set(value, for: key) })
            }
        }
        try written.get()
    }
}
