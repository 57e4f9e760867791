import Foundation
import PrefsTesting
import Prefs

/// Another user's process that swaps what is at one name in a shared directory, in a tight loop, while a test runs
/// the operations it races against: the attacker of the race tests. It is a real process of ``OtherUser``'s, a small C
/// program the test compiles with the toolchain's `clang` (a swap every few microseconds, `renameat2(RENAME_EXCHANGE)`
/// in one call), placed in the shared directory as root's file, so that the other user can run it but not change it.
///
/// ```swift
/// let swapper = try await LinkSwapper.start(as: mallory, in: shared.url, name: "X", entries: [.file, .link(to: victim)])
/// for _ in 0..<300 { try? StoreArchive.write(secret, to: shared.file("X").path) }
/// let swaps = try await swapper.stop()
/// ```
///
/// Each round puts every entry at the name in turn: it is made under a side name (`.NAME.sideN`, when missing) and
/// renamed over the name, or with `exchange`, swapped with what is at the name (`RENAME_EXCHANGE`, so the name is
/// never missing). A swap the kernel refuses (the test's own file now at the name, in a sticky directory) is skipped;
/// the test removes its file to let the game go on. The loop ends at `stop()`, or after `seconds`.
package struct LinkSwapper: Sendable {
    /// What the swapper puts at the name.
    package enum Entry: Sendable {
        /// An empty regular file of the other user's, mode 0666.
        case file
        /// A symbolic link to `target`.
        case link(to: String)
        /// A hard link to the other user's file `target` (so that what is written through the name stays readable).
        case hardLink(to: String)
        /// An empty directory of the other user's, mode 0777.
        case directory

        var arguments: [String] {
            switch self {
            case .file: ["file", "-"]
            case .link(let target): ["link", target]
            case .hardLink(let target): ["hardlink", target]
            case .directory: ["dir", "-"]
            }
        }
    }

    private let process: UncheckedSendable<(SpawnedProcess, Pipe, Pipe)>
    private let stopFile: String

    /// Compiles the swapper into `directory` (as root's file, mode 0755), starts it as `user` and returns once it runs.
    package static func start(
        as user: OtherUser, in directory: URL, name: String, entries: [Entry], exchange: Bool = false, seconds: Double = 20
    ) async throws -> LinkSwapper {
        let marker = directory.appendingPathComponent(".swapper-\(UUID().uuidString)").path
        let executable = try compile(into: marker + ".bin")
        let arguments = [directory.path, name, exchange ? "1" : "0", String(seconds), marker + ".ready", marker + ".stop"] + entries.flatMap(\.arguments)
        let started = try user.start(([executable] + arguments).map(shellQuoted).joined(separator: " "))
        let swapper = LinkSwapper(process: UncheckedSendable(started), stopFile: marker + ".stop")
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: marker + ".ready") {
            guard clock.now < deadline else {
                _ = try? await swapper.stop()
                throw POSIXError(.ETIMEDOUT)
            }
            // Real time is the point: another user's process (setpriv, then a compiled swapper) writes its ready file when it runs.
            try await Task.sleep(for: .milliseconds(2))
        }
        return swapper
    }

    /// Ends the loop and returns how many swaps it made.
    @discardableResult
    package func stop() async throws -> Int {
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        let (process, out, err) = process.value
        let result = try await ChildProcess.finish(process, out, err)
        guard result.status == 0, let swaps = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SwapperFailed(status: result.status, output: result.stdout + result.stderr)
        }
        return swaps
    }

    /// The swapper ended badly (its output says why), or could not be compiled.
    package struct SwapperFailed: Error, CustomStringConvertible {
        package var status: Int32
        package var output: String
        package var description: String { "the link swapper exited with \(status): \(output)" }
    }

    /// Compiles ``source`` to `path` with the first `clang` (else `cc`) on the `PATH`.
    private static func compile(into path: String) throws -> String {
        let source = path + ".c"
        try Data(self.source.utf8).write(to: URL(fileURLWithPath: source))
        defer { unlink(source) }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        guard
            let compiler = (["clang", "cc"].lazy.flatMap { name in directories.lazy.map { $0 + "/" + name } })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw SwapperFailed(status: 127, output: "no clang or cc on the PATH") }
        let status = try SpawnedProcess.run(compiler, ["-O2", "-o", path, source])
        guard status == 0, chmod(path, 0o755) == 0 else { throw SwapperFailed(status: status, output: "\(compiler) failed to compile the swapper") }
        return path
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Arguments: DIRECTORY NAME EXCHANGE SECONDS READY STOP, then KIND TARGET for each entry.
    private static let source = #"""
        #define _GNU_SOURCE
        #include <fcntl.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/stat.h>
        #include <sys/syscall.h>
        #include <time.h>
        #include <unistd.h>

        static double now(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return t.tv_sec + t.tv_nsec / 1e9;
        }

        int main(int argc, char **argv) {
            if (argc < 7 || (argc - 7) % 2 != 0 || (argc - 7) / 2 > 16 || chdir(argv[1]) != 0) return 2;
            const char *name = argv[2];
            int exchange = atoi(argv[3]), count = (argc - 7) / 2;
            double end = now() + atof(argv[4]);
            char side[16][256];
            for (int i = 0; i < count; i++) snprintf(side[i], sizeof side[i], ".%s.side%d", name, i);
            close(open(argv[5], O_CREAT | O_WRONLY, 0644));
            long swaps = 0;
            for (long round = 0;; round++) {
                if ((round & 255) == 0 && (now() > end || access(argv[6], F_OK) == 0)) break;
                for (int i = 0; i < count; i++) {
                    const char *kind = argv[7 + 2 * i], *target = argv[8 + 2 * i];
                    if (kind[0] == 'l') {
                        symlink(target, side[i]);
                    } else if (kind[0] == 'h') {
                        link(target, side[i]);
                    } else if (kind[0] == 'd') {
                        if (mkdir(side[i], 0777) == 0) chmod(side[i], 0777);
                    } else {
                        int fd = open(side[i], O_CREAT | O_EXCL | O_WRONLY, 0666);
                        if (fd >= 0) { fchmod(fd, 0666); close(fd); }
                    }
                    if (exchange && syscall(SYS_renameat2, AT_FDCWD, side[i], AT_FDCWD, name, 2 /* RENAME_EXCHANGE */) == 0) {
                        swaps++;
                        continue;
                    }
                    if (rename(side[i], name) == 0) swaps++;
                }
            }
            printf("%ld\n", swaps);
            return 0;
        }
        """#
}
