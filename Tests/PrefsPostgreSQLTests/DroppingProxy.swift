import Foundation
import PrefsSupport
import PrefsTestHarness
import PrefsTesting

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of the test server that, once armed, forwards the next client message holding
/// one of the armed byte strings to the server, then drops the server's answer and closes the connection: the server
/// has run (and committed) what it got, and the client never learns it. As a network that fails right after a commit
/// is sent.
final class DroppingProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let serverPort: Int
    private let armed = Locked<[Data]>([])
    /// How many answers were dropped.
    let dropped = Locked(0)

    init(serverPort: Int) throws {
        self.serverPort = serverPort
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw ProxyFailed(code: errno)
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = listener, serverPort = serverPort, armed = armed, dropped = dropped
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Self.forward(client: client, serverPort: serverPort, armed: armed, dropped: dropped)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// The next client message containing one of `patterns` loses its answer, and its connection.
    func arm(_ patterns: [String]) {
        armed.withLock { $0 = patterns.map { Data($0.utf8) } }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private static func forward(client: Int32, serverPort: Int, armed: Locked<[Data]>, dropped: Locked<Int>) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: UInt16(serverPort))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(client)
            close(server)
            return
        }
        let dropNext = Locked(false)
        let ended = Locked(0)
        @Sendable func end() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            if ended.withLock({ count in
                count += 1
                return count == 2
            }) {
                close(client)
                close(server)
            }
        }
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(client, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                let chunk = Data(buffer[0..<count])
                let hit = armed.withLock { patterns -> Bool in
                    guard patterns.contains(where: { chunk.range(of: $0) != nil }) else { return false }
                    patterns = []
                    return true
                }
                if hit { dropNext.withLock { $0 = true } }
                guard write(server, buffer, count) == count else { break }
            }
            end()
        }
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(server, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                if dropNext.withLock({ $0 }) {
                    dropped.withLock { $0 += 1 }
                    break
                }
                guard write(client, buffer, count) == count else { break }
            }
            end()
        }
    }
}

struct ProxyFailed: Error {
    var code: Int32
}
