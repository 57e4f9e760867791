import Foundation
import PrefsTestHarness
import PrefsTesting
import Testing

/// An app written from a previous release's README still builds against this one: each release's examples
/// (`Tests/Releases/VERSION/README-examples.swift`, with the migrations the changelog gives marked `// 0.2:`) are
/// typechecked by the toolchain's compiler against the modules this package built, as a separate program, so that the
/// deprecation warnings they are expected to raise stay out of the project's own build.
@Suite("The previous release's README examples")
struct PreviousReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The compiler beside `swift` on the PATH.
    static func compiler() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        return path.split(separator: ":").map { "\($0)/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("release 0.1's README examples typecheck against this release, with the deprecations the changelog lists")
    func releaseZeroOne() async throws {
        let swiftc = try #require(Self.compiler(), "swiftc on the PATH")
        let directory = try TemporaryDirectory()
        // The libcurl shim's module, as .ci/api maps it (the feed layer's C calls).
        let maps = directory.file("CCurlShim")
        try FileManager.default.createDirectory(at: maps, withIntermediateDirectories: true)
        let header = Self.root.appendingPathComponent("Sources/CCurlShim/include/CCurlShim.h").path
        try Data("module CCurlShim {\n    header \"\(header)\"\n    export *\n}\n".utf8).write(to: maps.appendingPathComponent("module.modulemap"))
        let modules = ChildProcess.productsDirectory.appendingPathComponent("Modules").path
        let result = try await ChildProcess.runSystem(
            swiftc,
            [
                "-typecheck", "-swift-version", "6", "-parse-as-library", "-module-name", "PreviousReadme",
                "-I", modules, "-I", Self.root.appendingPathComponent("Sources/CSQLite").path,
                "-I", Self.root.appendingPathComponent("Sources/CLibPQ").path, "-I", maps.path,
                Self.root.appendingPathComponent("Tests/Releases/0.1/README-examples.swift").path,
            ])
        let output = result.stdout + result.stderr
        #expect(result.status == 0, "\(output)")
        let diagnostics = output.split(separator: "\n").filter { $0.contains(": error:") || $0.contains(": warning:") }.map {
            String($0.split(separator: ": ", maxSplits: 1).last ?? "")
        }
        // `.ok` twice (renamed `.hideForSession` in 0.2) and `acknowledge(_:)` (renamed `acknowledge(_:for:)`).
        #expect(
            diagnostics == [
                "warning: 'ok' is deprecated: renamed to 'hideForSession' [#DeprecatedDeclaration]",
                "warning: 'ok' is deprecated: renamed to 'hideForSession' [#DeprecatedDeclaration]",
                "warning: 'acknowledge' is deprecated: pass the message you presented [#DeprecatedDeclaration]",
            ], "\(output)")
    }
}
