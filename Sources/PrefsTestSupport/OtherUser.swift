import Foundation
@_spi(Tooling) import Prefs
import PrefsSupport

/// A second local account, `prefs-mallory`, for tests of what another user on the same machine can do to a store
/// in a directory they share. Tests that use it run only as root (`.enabled(if: OtherUser.canRun)`), as CI does.
///
/// ```swift
/// let mallory = try OtherUser.ensure()
/// let shared = try OtherUser.sharedDirectory()           // mode 1777, like /tmp
/// _ = try await mallory.shell("ln -s /etc/passwd '\(shared.file("qa.json").path)'")
/// ```
@_spi(Harness) public struct OtherUser: Sendable {
    public static let name = "prefs-mallory"
    public let uid: uid_t
    public let gid: gid_t

    /// Whether this process can create the account and act as it: it runs as root, on Linux (`useradd`, `setpriv`).
    public static var canRun: Bool {
        #if os(Linux)
        geteuid() == 0
        #else
        false
        #endif
    }

    private static let creation = Locked<OtherUser?>(nil)

    /// The account, created when missing with `useradd --system --no-create-home` (idempotent; a concurrent
    /// creation by another test process is waited for).
    public static func ensure() throws -> OtherUser {
        try creation.withLock { cached in
            if let cached { return cached }
            for _ in 0..<20 {
                if let entry = getpwnam(name) {
                    let user = OtherUser(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
                    cached = user
                    return user
                }
                // A short local command; exit 9 (exists) or 10 (passwd locked) are retried.
                let status = try SpawnedProcess.run(
                    "/usr/sbin/useradd", ["--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name])
                if status != 0 { usleep(100_000) }
            }
            throw POSIXError(.EPERM)
        }
    }

    /// A new directory like /tmp (mode 1777, owned by root), removed when released.
    public static func sharedDirectory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "prefs-shared")
        guard chmod(directory.url.path, 0o1777) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return directory
    }

    /// Runs `script` with `/bin/bash -c` as this user (`setpriv --reuid --regid --clear-groups`), in a child process.
    public func shell(_ script: String) async throws -> ChildProcess.Result {
        try await ChildProcess.runSystem(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/bin/bash", "-c", script,
            ])
    }

    /// Starts `script` as this user and returns the running process with its pipes, for work that must overlap
    /// with the test's own (``ChildProcess/finish(_:_:_:)`` collects it).
    public func start(_ script: String) throws -> (SpawnedProcess, Pipe, Pipe) {
        try ChildProcess.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/bin/bash", "-c", script,
            ], environment: nil, stdin: nil)
    }
}

/// The owner and permission bits of a file, not following a final link; nil when there is nothing at `path`.
@_spi(Harness) public func fileOwnerAndMode(_ path: String) -> (uid: uid_t, mode: mode_t)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_mode & 0o7777)
}
