// swift-tools-version:6.0
import PackageDescription

// A backend of its own for Prefs, written with Prefs' public API only, and proven by the public conformance suite.
let package = Package(
    name: "CustomBackend",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "OneFileStorage", targets: ["OneFileStorage"])
    ],
    dependencies: [
        // This repository's root package; an app names it by URL instead (see the README's Installation section).
        .package(name: "Prefs", path: "../..")
    ],
    targets: [
        .target(name: "OneFileStorage", dependencies: [.product(name: "Prefs", package: "Prefs")]),
        .testTarget(
            name: "OneFileStorageTests",
            dependencies: ["OneFileStorage", .product(name: "Prefs", package: "Prefs"), .product(name: "PrefsTesting", package: "Prefs")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
