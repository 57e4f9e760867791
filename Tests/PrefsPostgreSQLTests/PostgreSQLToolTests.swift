import Foundation
import TestFixtures
import Prefs
import PrefsJSON
import PrefsSupport
import PrefsPostgreSQL
import PrefsTestHarness
import PrefsTesting
import Testing

/// Runs the built `prefs-tool` as a child process, away from the real default store.
private func tool(_ arguments: [String], stdin: String? = nil) async throws -> ChildProcess.Result {
    try await ChildProcess.run(
        "prefs-tool", arguments, environment: ["XDG_CONFIG_HOME": "/nonexistent-prefs-tool-test", "PREFS_STORE": "", "PREFS_NAMESPACE": ""],
        stdin: stdin.map { Data($0.utf8) })
}

@Suite("prefs-tool on PostgreSQL")
struct PostgreSQLToolTests {
    @Test("get, set, list, reset, export, import and migrate both ways, per namespace, never showing the password")
    func endToEnd() async throws {
        let url = try server().tcpURL(password: "hunter2-secret")
        let namespace = freshNamespace()
        let store = ["--store", url, "--namespace", namespace]
        var all = ""
        func run(_ arguments: [String], stdin: String? = nil, expecting status: Int32 = 0) async throws -> String {
            let result = try await tool(store + arguments, stdin: stdin)
            all += result.stdout + result.stderr
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            return result.stdout
        }
        _ = try await run(["set", "launchCount", "3", "--type", "int"])
        _ = try await run(["set", "name", "ada"])
        #expect(try await run(["get", "launchCount"]) == "3\n")
        let list = try await run(["list"])
        #expect(list.contains("launchCount") && list.contains("name"), "\(list)")
        _ = try await run(["reset", "name"])
        _ = try await run(["get", "name"], expecting: 1)

        // The values are the library's: a store opened on the namespace reads them.
        let prefs = try Prefs(.postgreSQL(url, namespace: namespace))
        #expect(prefs[.launchCount] == 3)

        // Another namespace of the same database is another store.
        let other = try await tool(["--store", url, "--namespace", namespace + "-other", "list", "--json"])
        #expect(other.status == 0 && !other.stdout.contains("launchCount"), "\(other.stdout)")

        // Export, then import into a third namespace.
        let exported = try await run(["export", "-"])
        let third = try await tool(["--store", url, "--namespace", namespace + "-3", "import", "-"], stdin: exported)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(try Prefs(.postgreSQL(url, namespace: namespace + "-3"))[.launchCount] == 3)

        // migrate PostgreSQL → SQLite → PostgreSQL (another namespace), values and declarations unchanged.
        let directory = try TemporaryDirectory()
        let sqlite = directory.file("copy.sqlite").path
        try prefs.declare(.launchCount)
        _ = try await run(["migrate", "--to", sqlite])
        let copy = try Prefs(.sqlite(URL(fileURLWithPath: sqlite)))
        #expect(try copy.snapshot() == prefs.snapshot())
        #expect(try copy.declaredKeys() == prefs.declaredKeys())
        let back = try await tool(["--store", sqlite, "--namespace", namespace + "-back", "migrate", "--to", url])
        #expect(back.status == 0, "\(back.stderr)")
        all += back.stdout + back.stderr
        let returned = try Prefs(.postgreSQL(url, namespace: namespace + "-back"))
        #expect(try returned.snapshot() == prefs.snapshot())
        #expect(try returned.declaredKeys() == prefs.declaredKeys())

        // Errors name the database without the password.
        let closed = try ClosedPort()  // refuses every connection while the test runs
        defer { withExtendedLifetime(closed) {} }
        let refused = try await tool([
            "--store", "postgresql://prefs:hunter2-secret@127.0.0.1:\(closed.port)/postgres", "--namespace", "n", "list",
        ])
        #expect(refused.status == 74)
        #expect(refused.stderr.contains("prefs:***@127.0.0.1"), "\(refused.stderr)")
        all += refused.stdout + refused.stderr
        #expect(!all.contains("hunter2"), "the password was shown: \(all)")

        // A PostgreSQL store without a namespace is a usage error.
        let missing = try await tool(["--store", url, "list"])
        #expect(missing.status == 64 && missing.stderr.contains("--namespace"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("hunter2"))
    }

    @Test("migrate copies one namespace of a server into another (--to-namespace), and refuses the source itself")
    func migrateBetweenNamespaces() async throws {
        let url = try server().tcpURL(password: "hunter2-secret")
        let namespace = freshNamespace()
        let source = try Prefs(.postgreSQL(url, namespace: namespace))
        try source.set(7, for: .launchCount)
        try source.declare(.launchCount)

        let copied = try await tool(["--store", url, "--namespace", namespace, "migrate", "--to", url, "--to-namespace", namespace + "-copy"])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stderr.contains("namespace \"\(namespace)-copy\""), "\(copied.stderr)")
        #expect(!(copied.stdout + copied.stderr).contains("hunter2"))
        let copy = try Prefs(.postgreSQL(url, namespace: namespace + "-copy"))
        #expect(try copy.snapshot() == source.snapshot())
        #expect(try copy.declaredKeys() == source.declaredKeys())

        // The same namespace is the source store: refused, nothing written.
        let itself = try await tool(["--store", url, "--namespace", namespace, "migrate", "--to", url])
        #expect(itself.status == 64 && itself.stderr.contains("it is the source store"), "\(itself.stderr)")
        #expect(!itself.stderr.contains("hunter2"))

        // --to-namespace names a PostgreSQL target's namespace only.
        let directory = try TemporaryDirectory()
        let misplaced = try await tool(["--store", url, "--namespace", namespace, "migrate", "--to", directory.file("c.json").path, "--to-namespace", "x"])
        #expect(misplaced.status == 64 && misplaced.stderr.contains("--to-namespace"), "\(misplaced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("c.json").path))
    }

    @Test("watch sees another instance's write when it is notified, not at its next check (--interval 60 s)")
    func watchHearsNotifications() async throws {
        let url = try server().url
        let namespace = freshNamespace()
        let prefs = try Prefs(.postgreSQL(url, namespace: namespace))
        try prefs.set(1, for: .launchCount)
        let (process, out, err) = try ChildProcess.start(
            "prefs-tool", ["--store", url, "--namespace", namespace, "watch", "launchCount", "--interval", "60000"],
            environment: ["PREFS_STORE": "", "PREFS_NAMESPACE": ""])
        defer { process.signal(SIGKILL) }  // a failed wait leaves no watcher behind (no-op once reaped)
        _ = try await ChildProcess.read(err.fileHandleForReading) { $0.hasPrefix("watching ") }
        try prefs.set(2, for: .launchCount)
        // Polling alone would print this after 60 s; the deadline fails the test before.
        let printed = try await ChildProcess.read(
            out.fileHandleForReading, untilLine: { $0.hasSuffix("\tlaunchCount\tint\t2\t(was 1)") }, timeout: .seconds(40))
        kill(process.processIdentifier, SIGINT)
        let result = try await ChildProcess.finish(process, out, err)
        #expect(result.status == 0, "\(result.stderr)")
        #expect((printed + result.stdout).split(separator: "\n").count == 1, "\(printed + result.stdout)")
    }
}
