import Foundation
import Prefs

/// Serializes tests that set ``Prefs/standard``, the one global of the library, across every suite and test target in
/// the process: Swift Testing runs suites in parallel.
private let standardStoreLock = NSLock()

/// Runs `body` while no other test that uses this function runs; `body` sets `Prefs.standard` as it needs.
public func withStandardStore<Result>(_ body: () throws -> Result) rethrows -> Result {
    standardStoreLock.lock()
    defer { standardStoreLock.unlock() }
    return try body()
}
