// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Prefs",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Prefs", targets: ["Prefs"]),
        .library(name: "PrefsUserDefaults", targets: ["PrefsUserDefaults"]),
        .library(name: "DialogGate", targets: ["DialogGate"]),
        .library(name: "PrefsPostgreSQL", targets: ["PrefsPostgreSQL"]),
        .library(name: "PrefsSync", targets: ["PrefsSync"]),
        .library(name: "PrefsTesting", targets: ["PrefsTesting"]),
        .executable(name: "prefs-tool", targets: ["prefs-tool"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Internal layers (not products): a lock and file identities; the JSON value tree, parser and serializer;
        // the SQLite wrapper.
        .target(name: "PrefsSupport"),
        .target(name: "PrefsJSON"),
        .target(name: "PrefsSQLite", dependencies: ["CSQLite", "PrefsSupport"]),
        .target(name: "Prefs", dependencies: ["PrefsSupport", "PrefsJSON", "PrefsSQLite"]),
        // UserDefaults' API over a Prefs store, and property-list import: a product of its own.
        .target(name: "PrefsUserDefaults", dependencies: ["Prefs", "PrefsJSON", "PrefsSupport"]),
        // libpq, for the PostgreSQL store only: Prefs itself never links it.
        .systemLibrary(
            name: "CLibPQ",
            path: "Sources/CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Sync across devices: per-key last-writer-wins by hybrid logical clock, over a transport.
        .target(name: "PrefsSync", dependencies: ["Prefs", "PrefsSupport"]),
        .target(name: "PrefsPostgreSQL", dependencies: ["Prefs", "PrefsJSON", "PrefsSupport", "CLibPQ", "PrefsSync"]),
        // libcurl through dlopen, for the feed loader on Linux (see Sources/CCurlShim/include/CCurlShim.h).
        .target(name: "CCurlShim", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // The messages feed's format: decoding and linting, versions, targeting. Values and rules only: a feed publisher's
        // checks link neither a store nor libcurl.
        .target(name: "MessageFeed", dependencies: ["PrefsJSON", "PrefsSupport"]),
        // Fetching and caching the feed, above its format: conditional requests, backoff, the last good feed in a store.
        .target(name: "MessageFeedFetching", dependencies: ["MessageFeed", "Prefs", "PrefsJSON", "PrefsSupport", "CCurlShim"]),
        // Local dialogs and remote messages for apps; re-exports MessageFeed and MessageFeedFetching.
        .target(name: "DialogGate", dependencies: ["Prefs", "PrefsJSON", "PrefsSupport", "MessageFeed", "MessageFeedFetching"]),
        // What an app's tests use (a product); this project's own harness (child processes, another user, a loopback
        // HTTP server, the server's faults) is the test-only target below.
        .target(name: "PrefsTesting", dependencies: ["Prefs", "PrefsJSON", "PrefsSupport", "PrefsSync"]),
        .target(name: "PrefsTestHarness", dependencies: ["PrefsTesting", "Prefs", "PrefsJSON", "PrefsSupport"], path: "Tests/TestHarness"),
        // Test support in C: a pass-through SQLite VFS reporting syncs, for the simulated power cuts.
        .target(name: "CSQLiteCrashVFS", dependencies: ["CSQLite"]),
        .executableTarget(name: "prefs-tool", dependencies: ["Prefs", "PrefsUserDefaults", "DialogGate", "MessageFeed", "MessageFeedFetching", "PrefsJSON", "PrefsPostgreSQL", "PrefsSync"]),
        .executableTarget(name: "prefs-test-child", dependencies: ["Prefs", "PrefsJSON", "PrefsUserDefaults", "PrefsPostgreSQL", "PrefsSync", "PrefsSupport", "PrefsTesting", "PrefsTestHarness"]),
        .executableTarget(name: "dialoggate-test-child", dependencies: ["Prefs", "PrefsJSON", "DialogGate", "MessageFeed", "MessageFeedFetching"]),
        .executableTarget(name: "prefs-torture", dependencies: ["Prefs", "PrefsJSON", "PrefsSQLite", "PrefsPostgreSQL", "DialogGate", "MessageFeed", "MessageFeedFetching", "PrefsTesting", "PrefsTestHarness", "PrefsSupport"], path: "Torture/prefs-torture"),
        // Fixtures shared by the test targets (keys, the backends the conformance suites run over, canned feeds, a clock).
        .target(
            name: "TestFixtures",
            dependencies: ["Prefs", "PrefsJSON", "PrefsSupport", "PrefsPostgreSQL", "PrefsTesting", "PrefsTestHarness", "DialogGate", "MessageFeed", "MessageFeedFetching"],
            path: "Tests/TestFixtures"
        ),
        // One test target per library module, plus the tool, the test support and the README's examples.
        .testTarget(name: "PrefsJSONTests", dependencies: ["PrefsJSON", "Prefs", "PrefsTesting", "PrefsTestHarness"]),
        .testTarget(name: "PrefsSQLiteTests", dependencies: ["PrefsSQLite"]),
        .testTarget(name: "PrefsTests", dependencies: ["Prefs", "PrefsJSON", "PrefsSQLite", "PrefsSupport", "PrefsTesting", "PrefsTestHarness", "TestFixtures", "prefs-test-child", "CSQLiteCrashVFS", "PrefsUserDefaults"]),
        .testTarget(name: "PrefsUserDefaultsTests", dependencies: ["PrefsUserDefaults", "Prefs", "PrefsJSON", "PrefsSupport", "PrefsTesting", "PrefsTestHarness", "TestFixtures"]),
        .testTarget(name: "MessageFeedTests", dependencies: ["MessageFeed", "PrefsJSON", "PrefsSupport", "PrefsTesting", "PrefsTestHarness", "TestFixtures"]),
        .testTarget(name: "MessageFeedFetchingTests", dependencies: ["MessageFeedFetching", "MessageFeed", "Prefs", "PrefsJSON", "PrefsSupport", "PrefsTesting", "PrefsTestHarness", "TestFixtures"]),
        .testTarget(name: "DialogGateTests", dependencies: ["DialogGate", "MessageFeed", "MessageFeedFetching", "Prefs", "PrefsJSON", "PrefsSupport", "PrefsUserDefaults", "PrefsTesting", "PrefsTestHarness", "TestFixtures", "dialoggate-test-child", "prefs-tool"]),
        .testTarget(
            name: "PrefsPostgreSQLTests",
            dependencies: ["PrefsPostgreSQL", "PrefsSync", "Prefs", "PrefsJSON", "PrefsSupport", "DialogGate", "PrefsTesting", "PrefsTestHarness", "TestFixtures", "prefs-test-child", "prefs-tool"],
            exclude: ["Fixtures"]),
        .testTarget(name: "PrefsSyncTests", dependencies: ["PrefsSync", "Prefs", "PrefsTesting", "PrefsTestHarness"]),
        .testTarget(name: "PrefsToolTests", dependencies: ["PrefsSync", "Prefs", "PrefsJSON", "PrefsUserDefaults", "DialogGate", "MessageFeed", "MessageFeedFetching", "PrefsTesting", "PrefsTestHarness", "TestFixtures", "prefs-tool", "prefs-test-child", "PrefsSupport"]),
        .testTarget(name: "PrefsTestingTests", dependencies: ["PrefsTesting", "PrefsTestHarness", "Prefs", "DialogGate", "MessageFeed", "prefs-test-child"]),
        .testTarget(name: "ReadmeTests", dependencies: ["Prefs", "PrefsUserDefaults", "DialogGate", "PrefsTesting", "PrefsTestHarness", "PrefsPostgreSQL", "PrefsSupport", "PrefsJSON", "PrefsSync"]),
        // The same examples pasted into @MainActor view controllers, in a target whose code is main-actor isolated by
        // default (as an app target in Xcode 26 is), and the seeds' flows run from there.
        .testTarget(
            name: "ReadmeMainActorTests",
            dependencies: ["Prefs", "PrefsUserDefaults", "DialogGate", "PrefsTesting", "PrefsPostgreSQL", "PrefsSync"],
            swiftSettings: [.unsafeFlags(["-default-isolation", "MainActor"])]
        ),
    ]
)

// One place for the settings every target shares (swift-log's pattern).
// The C targets (CSQLiteCrashVFS, CCurlShim) take no Swift settings.
for target in package.targets where target.type != .system && !["CSQLiteCrashVFS", "CCurlShim"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
