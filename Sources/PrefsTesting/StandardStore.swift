import Foundation
import Prefs

/// Runs `body` with ``Prefs/standard`` being `store`, for this test only: `Prefs.standard` and every `@Pref` made
/// without a store inside `body` use it, in `body`'s task and the tasks it starts (not in detached tasks or other
/// threads), while tests running in parallel each see their own store. Setting `Prefs.standard` inside `body` replaces
/// it for the rest of `body` only. Nothing is locked, and the process's own standard store is left alone.
///
/// ```swift
/// @Test func countsLaunches() throws {
///     let store = try Prefs(.memory)
///     withStandardStore(store) {
///         LaunchModel().launched()        // its @Pref(.launchCount) writes to `store`
///         #expect(Prefs.standard[.launchCount] == 1)
///     }
/// }
/// ```
public func withStandardStore<Result>(_ store: Prefs, _ body: () throws -> Result) rethrows -> Result {
    try Prefs.withStandard(store, body)
}

/// Runs the asynchronous `body` with ``Prefs/standard`` being `store`, for this test only; see
/// ``withStandardStore(_:_:)``.
///
/// ```swift
/// @Test func syncsSettings() async throws {
///     let store = try Prefs(.memory)
///     await withStandardStore(store) {
///         await SettingsModel().load()    // its @Pref properties read `store`
///     }
/// }
/// ```
public func withStandardStore<Result>(
    _ store: Prefs, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
) async rethrows -> Result {
    try await Prefs.withStandard(store, isolation: isolation, body)
}

/// Serializes tests that set ``Prefs/standard``, the one global of the library, across every suite and test target in
/// the process: Swift Testing runs suites in parallel.
private let standardStoreLock = NSLock()

/// Runs `body` while no other test that uses this function runs; `body` sets the process's `Prefs.standard` as it
/// needs. Deprecated: it runs such tests one at a time; ``withStandardStore(_:_:)`` gives each test its
/// own store, and runs them in parallel.
///
/// ```swift
/// withStandardStore { Prefs.standard = memory }   // now: withStandardStore(memory) { … }
/// ```
@available(*, deprecated, message: "use withStandardStore(_:_:), which gives the body its own store without a lock")
public func withStandardStore<Result>(_ body: () throws -> Result) rethrows -> Result {
    standardStoreLock.lock()
    defer { standardStoreLock.unlock() }
    return try body()
}
