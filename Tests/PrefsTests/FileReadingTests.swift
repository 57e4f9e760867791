import Foundation
@testable import Prefs
import PrefsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FileSystem.readAll`, which reads a store's file whole: the size it is given is the one `fstat` saw, and the file may
/// have grown or shrunk since.
@Suite("Reading a file whole")
struct FileReadingTests {
    /// Reads `bytes` from a new file, telling `readAll` the file has `size` bytes.
    private func read(_ bytes: [UInt8], sayingSize size: Int) throws -> Data {
        let directory = try TemporaryDirectory()
        let path = directory.file("file").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        return try FileSystem.readAll(fd, size: size, path: path)
    }

    @Test("a file that grew since its size was taken is read to its end, over several chunks of the growth buffer")
    func grownFileReadWhole() throws {
        let bytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try read(bytes, sayingSize: 1_000) == Data(bytes))
        #expect(try read(bytes, sayingSize: 0) == Data(bytes))
    }

    @Test("a file read at its size, or one that shrank since, is read as it is")
    func exactAndShrunkFiles() throws {
        let bytes = Array("{\"values\": {}}".utf8)
        #expect(try read(bytes, sayingSize: bytes.count) == Data(bytes))
        #expect(try read(bytes, sayingSize: 4_096) == Data(bytes))
        #expect(try read([], sayingSize: 0).isEmpty)
    }
}
