import Foundation
import PrefsTesting
import Prefs
import PrefsSupport

/// A second local account, `prefs-mallory`, for tests of what another user on the same machine can do to a store
/// in a directory they share. Tests that use it run only as root (`.enabled(if: OtherUser.canRun)`), as CI does.
///
/// ```swift
/// let mallory = try OtherUser.ensure()
/// let shared = try OtherUser.sharedDirectory()           // mode 1777, like /tmp
/// _ = try await mallory.shell("ln -s /etc/passwd '\(shared.file("qa.json").path)'")
/// ```
package struct OtherUser: Sendable {
    package static let name = "prefs-mallory"
    package let uid: uid_t
    package let gid: gid_t

    /// Whether this process can create the account and act as it: it runs as root, on Linux (`useradd`, `setpriv`).
    package static var canRun: Bool {
        #if os(Linux)
        geteuid() == 0
        #else
        false
        #endif
    }

    private static let creation = Locked<OtherUser?>(nil)

    /// The account, created when missing with `useradd --system --no-create-home` (idempotent; a concurrent
    /// creation by another test process is waited for).
    package static func ensure() throws -> OtherUser {
        try creation.withLock { cached in
            if let cached { return cached }
            for _ in 0..<20 {
                if let entry = accountIDs(named: name) {
                    let user = OtherUser(uid: entry.uid, gid: entry.gid)
                    cached = user
                    return user
                }
                // A short local command; exit 9 (exists) or 10 (passwd locked) are retried.
                let status = try SpawnedProcess.run(
                    "/usr/sbin/useradd", ["--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name])
                // Real time is the point: the other useradd holding /etc/passwd's lock lets go by itself.
                if status != 0 { usleep(100_000) }
            }
            throw POSIXError(.EPERM)
        }
    }

    /// A new directory like /tmp (mode 1777, owned by root), removed when released.
    package static func sharedDirectory() throws -> TemporaryDirectory {
        try reachableDirectory(prefix: "prefs-shared", mode: 0o1777)
    }

    /// A new directory this user can enter (`mode`, owned by root), removed when released: under the system's
    /// temporary directory when every folder above it lets others in, else under `/tmp` (a `TMPDIR` inside a private
    /// home is no place to share).
    package static func reachableDirectory(prefix: String = "prefs-reachable", mode: mode_t = 0o755) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: prefix, in: reachableParent)
        guard chmod(directory.url.path, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return directory
    }

    /// A copy of this package's built executable `name` that this user can run, and the directory holding it (keep it
    /// alive while the copy runs). The build folder lies in the clone, which may be private (a home of mode 700, a
    /// `mktemp -d`): another user cannot even reach what is there. The executable needs nothing else from the build
    /// folder (its libraries are the toolchain's and the system's).
    package static func reachableExecutable(_ name: String) throws -> (directory: TemporaryDirectory, path: String) {
        let directory = try reachableDirectory(prefix: "prefs-bin")
        let copy = directory.file(name)
        try FileManager.default.copyItem(at: ChildProcess.executable(name), to: copy)
        guard chmod(copy.path, 0o755) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return (directory, copy.path)
    }

    /// The system's temporary directory when others may pass through every folder from `/` down to it, else `/tmp`.
    static var reachableParent: URL {
        let temporary = FileManager.default.temporaryDirectory.resolvingSymlinksInPath()
        var path = temporary.path
        while !path.isEmpty {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & 0o001 != 0 else { return URL(fileURLWithPath: "/tmp") }
            if path == "/" { break }
            path = (path as NSString).deletingLastPathComponent
        }
        return temporary
    }

    /// Runs `script` with `/bin/bash -c` as this user (`setpriv --reuid --regid --clear-groups`), in a child process.
    package func shell(_ script: String) async throws -> ChildProcess.Result {
        try await ChildProcess.runSystem(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/bin/bash", "-c", script,
            ])
    }

    /// Starts `script` as this user and returns the running process with its pipes, for work that must overlap
    /// with the test's own (``ChildProcess/finish(_:_:_:)`` collects it).
    package func start(_ script: String) throws -> (SpawnedProcess, Pipe, Pipe) {
        try ChildProcess.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/bin/bash", "-c", script,
            ], environment: nil, stdin: nil)
    }
}

/// The owner and permission bits of a file, not following a final link; nil when there is nothing at `path`.
package func fileOwnerAndMode(_ path: String) -> (uid: uid_t, mode: mode_t)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_mode & 0o7777)
}
