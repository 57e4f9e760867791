import Foundation
import Prefs
import PrefsSupport

/// The diagnostics a store reported, collected from its `onDiagnostic` handler on any thread.
public final class DiagnosticLog: Sendable {
    private let entries = Locked<[Prefs.Diagnostic]>([])
    public init() {}
    public func append(_ diagnostic: Prefs.Diagnostic) { entries.withLock { $0.append(diagnostic) } }
    public var all: [Prefs.Diagnostic] { entries.withLock { $0 } }
}

/// Waits (polling every 5 ms) until `condition` holds or `timeout` passes; returns whether it held. `condition` runs on
/// the caller's actor (a `@MainActor` test's state needs no `@Sendable`).
///
/// The default timeout, a minute, is for a loaded CI machine running every suite at once: a condition that holds
/// returns at its first poll after, so only a failing test waits that long.
///
/// ```swift
/// #expect(await eventually { other[.launchCount] == 3 })
/// ```
public func eventually(
    timeout: Duration = .seconds(60),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}
