#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP client for the few tests that must send what URLSession never would: nothing at all, a
/// malformed request, a chunked body.
struct RawHTTPClient: ~Copyable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`, with 5 s send and receive timeouts so a test can never hang.
    init(port: UInt16) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            _ = close(descriptor)
            throw Failure(description: "connect: errno \(code)")
        }
    }

    deinit {
        _ = close(descriptor)
    }

    /// Sends all of `text`.
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        let sent = bytes.withUnsafeBytes { sendBytes(descriptor, $0.baseAddress, bytes.count, flags) }
        guard sent == bytes.count else { throw Failure(description: "send: errno \(errno)") }
    }

    /// Reads whatever arrives next (one `recv`, up to 4 KiB).
    func readSome() -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, 4096, 0) }
        return String(decoding: chunk[..<max(count, 0)], as: UTF8.self)
    }

    /// Reads until the server closes the connection (or 5 s pass) and returns everything as text.
    func readToEnd() -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, 4096, 0) }
            guard count > 0 else { break }
            received.append(contentsOf: chunk[..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// The C `send`, out of reach of ``RawHTTPClient/send(_:)``'s name.
private func sendBytes(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(descriptor, buffer, count, flags)
}
