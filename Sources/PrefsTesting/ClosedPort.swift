#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 that refuses every connection for as long as this object lives: bound, never listened on,
/// so no other socket (another test's server started in parallel) can take it. A port that was only free a moment
/// ago can be handed to the next server that asks the kernel for one, and a "connection refused" test then talks to
/// that server instead.
///
/// ```swift
/// let refused = try ClosedPort()
/// let url = URL(string: "http://127.0.0.1:\(refused.port)/messages.json")!   // ECONNREFUSED, every time
/// ```
package final class ClosedPort: Sendable {
    /// The port; connecting to it is refused.
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestHTTPServer.StartError(operation: "socket", code: errno) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian  // 127.0.0.1
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw TestHTTPServer.StartError(operation: "bind 127.0.0.1:0", code: code)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(descriptor)
    }
}
