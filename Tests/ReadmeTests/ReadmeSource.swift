import Foundation
import Prefs
import Testing
import PrefsJSON

/// The Swift and JSON code blocks of the README and of the DocC articles are the tested source: every line of every
/// ```swift and ```json block must appear, in the block's order, in this target's test files (`ReadmeExamples.swift`,
/// `TestedArticles.swift`, `PostgreSQLArticleExamples.swift`), where it is compiled and, unless its comment says
/// otherwise, run; and every line of every ```swift block again in the ReadmeMainActorTests target, whose code is
/// main-actor isolated by default and holds the statements inside a `@MainActor` view controller, as an iOS developer
/// pastes them. A README edit that the tests do not follow fails here, naming the block and the line.
///
/// Lines are compared whole, comments included, after trimming and collapsing runs of spaces (so alignment may
/// differ); blank lines are ignored. Lines of the test files may come in between (setup, assertions), never instead.
///
/// A block fenced ```` ```swift Package.swift ```` is an excerpt of a user's manifest, not app code: highlighted as Swift
/// but not compiled here; `ReadmeInstallationTests` checks it against this package's `Package.swift` and CHANGELOG.md.
enum ReadmeSource {
    /// The fence of a manifest excerpt (the README's Installation section).
    static let manifestFence = "swift Package.swift"

    /// This package's root, from this file's path (Tests/ReadmeTests/ReadmeSource.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A fenced code block: where it starts (1-based line of the fence) and its lines.
    struct Block: Equatable {
        var line: Int
        var lines: [String]
    }

    /// The ```swift and ```json blocks of `markdown`.
    static func swiftBlocks(in markdown: String, languages: Set<String> = ["swift", "json"]) -> [Block] {
        var blocks: [Block] = []
        var current: Block?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current != nil {
                if trimmed.hasPrefix("```") {
                    blocks.append(current!)
                    current = nil
                } else {
                    current!.lines.append(String(line))
                }
            } else if trimmed.hasPrefix("```"), languages.contains(String(trimmed.dropFirst(3))) {
                current = Block(line: index + 1, lines: [])
            }
        }
        return blocks
    }

    static func normalized(_ line: some StringProtocol) -> String {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// The documents whose code is tested: the README and every article of the DocC catalogs, by path from the root.
    static func documents() throws -> [String] {
        var paths = ["README.md"]
        for catalog in [
            "Sources/Prefs/Prefs.docc", "Sources/PrefsUserDefaults/PrefsUserDefaults.docc", "Sources/DialogGate/DialogGate.docc",
            "Sources/MessageFeed/MessageFeed.docc", "Sources/PrefsPostgreSQL/PrefsPostgreSQL.docc",
        ] {
            let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)
            paths += names.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        return paths
    }

    /// For each block not found in `source`, its fence line and the first line missing (in order).
    static func drift(of blocks: [Block], in source: String, document: String = "README.md") -> [String] {
        let sourceLines = source.split(separator: "\n").map(normalized)
        var problems: [String] = []
        for block in blocks {
            var position = sourceLines.startIndex
            for (offset, line) in block.lines.enumerated() {
                let wanted = normalized(line)
                if wanted.isEmpty { continue }
                guard let found = sourceLines[position...].firstIndex(of: wanted) else {
                    problems.append(
                        "\(document):\(block.line + 1 + offset) (block at line \(block.line)) is not in the tests, "
                            + "or not in the block's order: \(wanted)")
                    break
                }
                position = found + 1
            }
        }
        return problems
    }

    static func testSources(in folder: String = "Tests/ReadmeTests") throws -> String {
        let directory = root.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .filter { $0.hasSuffix(".swift") && $0 != "ReadmeSource.swift" }
            .map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
    }

    /// The sources of the target that compiles every swift block on the main actor.
    static func mainActorSources() throws -> String {
        try testSources(in: "Tests/ReadmeMainActorTests")
    }
}

@Suite("README: the code blocks are the tested source")
struct ReadmeSourceTests {
    @Test("every line of every swift and json block in README.md and the DocC articles is in the tests, in order")
    func readmeBlocksAreTested() throws {
        let sources = try ReadmeSource.testSources()
        var count = 0
        for document in try ReadmeSource.documents() {
            let text = try String(contentsOf: ReadmeSource.root.appendingPathComponent(document), encoding: .utf8)
            let blocks = ReadmeSource.swiftBlocks(in: text)
            count += blocks.count
            let drift = ReadmeSource.drift(of: blocks, in: sources, document: document)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
        }
        #expect(count >= 12, "the README and the articles were found and have their examples")
    }

    @Test("every line of every swift block is also in the @MainActor target, in order")
    func blocksCompileOnTheMainActor() throws {
        let sources = try ReadmeSource.mainActorSources()
        #expect(sources.contains("@MainActor\nfinal class ArticleViewController {"))
        var count = 0
        for document in try ReadmeSource.documents() {
            let text = try String(contentsOf: ReadmeSource.root.appendingPathComponent(document), encoding: .utf8)
            let blocks = ReadmeSource.swiftBlocks(in: text, languages: ["swift"])
            count += blocks.count
            let drift = ReadmeSource.drift(of: blocks, in: sources, document: document)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
        }
        #expect(count >= 12)
        // The check can fail: a block the main-actor target does not hold is reported.
        let extra = ReadmeSource.Block(line: 1, lines: ["let unseen = Prefs.standard[.launchCount]"])
        #expect(ReadmeSource.drift(of: [extra], in: sources).count == 1)
    }

    /// The check itself can fail: a README changed by one character, or with two lines swapped, is reported.
    @Test("a README edit the tests do not follow is reported, with its line")
    func driftIsReported() throws {
        let readme = try String(contentsOf: ReadmeSource.root.appendingPathComponent("README.md"), encoding: .utf8)
        let sources = try ReadmeSource.testSources()
        let edited = readme.replacingOccurrences(of: "SettingsModel().username = \"ada\"", with: "SettingsModel().username = \"bob\"")
        #expect(edited != readme)
        let problems = ReadmeSource.drift(of: ReadmeSource.swiftBlocks(in: edited), in: sources)
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("README.md:\(lineNumber(of: "SettingsModel().username = \"bob\"", in: edited))") == true)

        // Two lines that stand once in the tests: swapped in the README, the second is no longer after the first.
        let swapped = Block.swapping("    if let message = messages.pendingMessage {", "    await messages.refresh()", in: readme)
        #expect(swapped != readme)
        #expect(ReadmeSource.drift(of: ReadmeSource.swiftBlocks(in: swapped), in: sources).count == 1, "order counts")
    }

    private func lineNumber(of text: String, in markdown: String) -> Int {
        (markdown.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(text) } ?? -1) + 1
    }

    private enum Block {
        static func swapping(_ first: String, _ second: String, in markdown: String) -> String {
            var lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let a = lines.firstIndex(where: { $0.hasPrefix(first) }),
                let b = lines.firstIndex(where: { $0.hasPrefix(second) })
            else { return markdown }
            lines.swapAt(a, b)
            return lines.joined(separator: "\n")
        }
    }
}

@Suite("README: the Installation section matches the package")
struct ReadmeInstallationTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: ReadmeSource.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The first capture of each match of `regex` in `text`.
    static func captures(of regex: Regex<(Substring, Substring)>, in text: String) -> [String] {
        text.matches(of: regex).map { String($0.output.1) }
    }

    @Test("the manifest excerpt names this package's products, by the URL's identity, from its latest release")
    func manifestExcerpt() throws {
        let readme = try Self.read("README.md")
        let blocks = ReadmeSource.swiftBlocks(in: readme, languages: [ReadmeSource.manifestFence])
        try #require(blocks.count == 1, "one ```\(ReadmeSource.manifestFence) block")
        let excerpt = blocks[0].lines.joined(separator: "\n")
        #expect(!ReadmeSource.swiftBlocks(in: readme).contains { $0.lines.joined().contains(".package(url:") }, "not compiled as app code")

        let products = Set(Self.captures(of: #/\.(?:library|executable)\(name: "([^"]+)"/#, in: try Self.read("Package.swift")))
        #expect(products.contains("Prefs") && products.contains("prefs-tool"), "the manifest's products were found")

        // SwiftPM names a URL dependency by its identity: the URL's last component without `.git`, lower-cased.
        let urls = Self.captures(of: #/\.package\(url: "([^"]+)"/#, in: excerpt)
        try #require(urls.count == 1)
        let identity = String(urls[0].split(separator: "/").last ?? "").replacingOccurrences(of: ".git", with: "").lowercased()
        let dependencies = excerpt.matches(of: #/\.product\(name: "([^"]+)", package: "([^"]+)"\)/#)
        #expect(!dependencies.isEmpty)
        for dependency in dependencies {
            #expect(products.contains(String(dependency.output.1)), "\(dependency.output.1) is a product of Package.swift")
            #expect(dependency.output.2 == identity, "package: \"\(identity)\", the URL's identity")
        }

        // `from:` is this release (Release.version, which PrefsToolTests holds equal to CHANGELOG.md's latest heading).
        #expect(Self.captures(of: #/from: "([^"]+)"/#, in: excerpt) == [Release.version])

        // Every product has its line in the section, saying what it is for.
        let start = try #require(readme.range(of: "\n## Installation\n"))
        let section = String(readme[start.upperBound...]).components(separatedBy: "\n## ")[0]
        for product in products.sorted() {
            #expect(section.contains("\n- `\(product)`"), "the Installation section says what \(product) is for")
        }
    }
}

@Suite("README: its links lead somewhere")
struct ReadmeLinkTests {
    /// The `](target)` links of `markdown` that are not URLs.
    static func relativeLinks(in markdown: String) -> [String] {
        var links: [String] = []
        var rest = Substring(markdown)
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = String(after[..<close])
            if !target.contains("://"), !target.hasPrefix("mailto:"), !target.hasPrefix("<") { links.append(target) }
            rest = after[close...]
        }
        return links
    }

    /// GitHub's anchor for a heading: lower case, punctuation other than `-` dropped, spaces as `-`.
    static func anchor(of heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
            })
    }

    @Test("every relative link of README.md, CHANGELOG.md and CONTRIBUTING.md names a file of the repository, and its #anchor a heading")
    func linksResolve() throws {
        for document in ["README.md", "CHANGELOG.md", "CONTRIBUTING.md"] {
            let text = try String(contentsOf: ReadmeSource.root.appendingPathComponent(document), encoding: .utf8)
            let links = Self.relativeLinks(in: text)
            if document == "README.md" { #expect(links.contains("CHANGELOG.md")) }
            for link in links {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? document : parts[0]
                let url = ReadmeSource.root.appendingPathComponent(file)
                #expect(FileManager.default.fileExists(atPath: url.path), "\(document): \(link) names no file")
                guard parts.count == 2, file.hasSuffix(".md"),
                    let target = try? String(contentsOf: url, encoding: .utf8)
                else { continue }
                let anchors = target.split(separator: "\n").filter { $0.hasPrefix("#") }
                    .map { Self.anchor(of: $0.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)) }
                #expect(anchors.contains(parts[1]), "\(document): \(link) names no heading of \(file)")
            }
        }
    }

    @Test("CHANGELOG.md stays a changelog: at most 25 KB, and every entry one or two lines")
    func changelogStaysShort() throws {
        let text = try String(contentsOf: ReadmeSource.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(text.utf8.count <= 25_000, "CHANGELOG.md is \(text.utf8.count) bytes: condense older entries")
        // An entry is a top-level bullet and its indented continuation lines; the upgrade checklists nest bullets.
        var entry: [Substring] = []
        func check() {
            if entry.count > 2 { Issue.record("an entry of \(entry.count) lines: \(entry.first ?? "")") }
            entry = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("- ") {
                check()
                entry = [line]
            } else if line.hasPrefix("  "), !entry.isEmpty, !line.trimmingCharacters(in: .whitespaces).hasPrefix("- ") {
                entry.append(line)
            } else {
                check()
            }
        }
        check()
    }

    @Test("links are found, anchors made as GitHub makes them")
    func theRuleItself() {
        #expect(Self.relativeLinks(in: "a [b](c.md#d) [e](https://x/y) [f](g)") == ["c.md#d", "g"])
        #expect(Self.anchor(of: "Upgrading from 0.1.0") == "upgrading-from-010")
        #expect(Self.anchor(of: "Formats and releases") == "formats-and-releases")
    }
}
