// swift-tools-version:6.0
import PackageDescription

// prefs-bench: every Prefs backend against its baselines (Foundation's UserDefaults, raw sqlite3, LMDB, a Dictionary,
// JSONEncoder/JSONDecoder, raw libpq), as ratios measured in one run. A package of its own, so that the root package
// builds and tests without the benchmark's baselines (LMDB: Debian's liblmdb-dev). Another package, it sees the root
// package's public API only, as an app does: what it measures is what an app can call.
//
//   cd Benchmarks && swift run -c release prefs-bench --quick
let package = Package(
    name: "PrefsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Prefs", path: "..")],
    targets: [
        // The system libraries the baselines call directly. The root package's CSQLite and CLibPQ are not products.
        .systemLibrary(name: "BenchSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "BenchLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
        // glibc's mallinfo2, for the live heap per key of the memory workload.
        .systemLibrary(name: "BenchHeap"),
        // sched_setaffinity, for the PostgreSQL workload's one-client rows (client and server on one CPU).
        .systemLibrary(name: "BenchCPU"),
        .executableTarget(
            name: "prefs-bench",
            dependencies: [
                .product(name: "Prefs", package: "Prefs"),
                .product(name: "DialogGate", package: "Prefs"),
                .product(name: "PrefsPostgreSQL", package: "Prefs"),
                .product(name: "PrefsTesting", package: "Prefs"),
                "BenchSQLite", "BenchLibPQ", "CLMDB", "BenchHeap", "BenchCPU",
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
