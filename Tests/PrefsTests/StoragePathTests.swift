import Foundation
@testable import Prefs
import PrefsTesting
import Testing

/// A store's URL becomes its path without `URL.path` (whose first call costs a store's launch a sixth of its time on
/// Linux), and must name exactly the file `path` names.
@Suite("Storage: a file URL's path")
struct StoragePathTests {
    static let base = URL(fileURLWithPath: "/tmp/base dir/", isDirectory: true)
    static let urls: [URL] = [
        URL(fileURLWithPath: "/tmp/a b/prefs.sqlite"), URL(fileURLWithPath: "/tmp/x/"), URL(fileURLWithPath: "/"),
        URL(fileURLWithPath: "rel/p.json"), URL(fileURLWithPath: "rel/p.json", relativeTo: base),
        URL(fileURLWithPath: "/tmp/%20weird/ü😀.json"), URL(fileURLWithPath: "/tmp/a?b#c;d.json"),
        URL(string: "file:///tmp/enc%20oded/x.json")!, URL(string: "file:///tmp/dir/")!, URL(string: "file://localhost/tmp/h.json")!,
        URL(fileURLWithPath: "/tmp//double//slash.json"), URL(fileURLWithPath: "/tmp/./dot/../x.json"),
        URL(string: "x.json", relativeTo: base)!, URL(string: "file:///tmp/x//")!, URL(string: "file:////")!,
        URL(string: "file:///tmp/a%2Fb.json")!, URL(string: "file:///tmp/%2f/x.json")!,
    ]

    @Test("fileSystemPath is what URL.path gives", arguments: urls)
    func sameAsPath(url: URL) {
        #expect(url.fileSystemPath == url.path)
    }

    @Test("a store opened by a URL with spaces, percent signs and non-ASCII names is the file that URL's path names")
    func storeAtThePath() throws {
        let directory = try TemporaryDirectory()
        let url = URL(string: "file://" + directory.url.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)! + "/a%20b%25c%C3%BC.sqlite")!
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(5, for: Prefs.Key("n", initial: 0))
        try prefs.close()
        #expect(FileManager.default.fileExists(atPath: directory.url.path + "/a b%cü.sqlite"))
        #expect(try Prefs(.file(url))[Prefs.Key("n", initial: 0)] == 5)
    }
}
