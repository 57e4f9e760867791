// swift-tools-version:6.0
import Foundation
import PackageDescription

// prefs-bench measures some of the library's internals too (a feed's targeting report, the journal's line, the test
// PostgreSQL server), as the root package's own tests do, through `package` access: modules share internals that way
// only, never through `@_spi` or `public`. So it joins the root package's access tier with the package name SwiftPM gives
// the root package: its folder's name, lowercased, each character outside [a-z0-9_] an underscore (`prefs`, `main`).
// A mismatch fails the build at once (a `package` symbol not found), never silently.
let rootPackageName: String = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().resolvingSymlinksInPath()
    let name = String(folder.lastPathComponent.lowercased().map { ("a"..."z").contains($0) || ("0"..."9").contains($0) ? $0 : "_" })
    return name.first.map { ("0"..."9").contains($0) } == true ? "_" + name : name
}()

// prefs-bench: every Prefs backend against its baselines (Foundation's UserDefaults, raw sqlite3, LMDB, a Dictionary,
// JSONEncoder/JSONDecoder, raw libpq), as ratios measured in one run. A package of its own, so that the root package
// builds and tests without the benchmark's baselines (LMDB: Debian's liblmdb-dev).
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
        .executableTarget(
            name: "prefs-bench",
            dependencies: [
                .product(name: "Prefs", package: "Prefs"),
                .product(name: "DialogGate", package: "Prefs"),
                .product(name: "PrefsPostgreSQL", package: "Prefs"),
                .product(name: "PrefsTestSupport", package: "Prefs"),
                "BenchSQLite", "BenchLibPQ", "CLMDB", "BenchHeap",
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .unsafeFlags(["-Xfrontend", "-package-name", "-Xfrontend", rootPackageName])]
        ),
    ]
)
