#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX socket calls ``TestHTTPServer`` needs, with the platform differences in one place.
///
/// Every function takes and returns raw descriptors; ownership (who closes what, and when) is the
/// server's business, decided under its lock.
enum LoopbackSocket {
    /// Opens a TCP listener bound to 127.0.0.1 on an ephemeral port, non-blocking and close-on-exec.
    static func openListener() throws(TestHTTPServer.StartError) -> (descriptor: Int32, port: UInt16) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw .init(operation: "socket", code: errno) }
        do throws(TestHTTPServer.StartError) {
            setCloseOnExec(descriptor)
            var address = sockaddr_in()
            #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            #endif
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0  // the kernel picks a free port
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian  // 127.0.0.1, and nothing else
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw .init(operation: "bind 127.0.0.1:0", code: errno) }
            guard listen(descriptor, 128) == 0 else { throw .init(operation: "listen", code: errno) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            guard named == 0 else { throw .init(operation: "getsockname", code: errno) }
            // Non-blocking, so accept() under the server's lock can never wait.
            guard fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0 else {
                throw .init(operation: "fcntl O_NONBLOCK", code: errno)
            }
            return (descriptor, UInt16(bigEndian: address.sin_port))
        } catch {
            _ = close(descriptor)
            throw error
        }
    }

    /// Accepts one pending connection from a non-blocking listener, or nil when none is waiting.
    ///
    /// The new socket is made blocking (BSD lets it inherit `O_NONBLOCK`), close-on-exec, free of
    /// `SIGPIPE` on Darwin, and gets receive and send timeouts so a silent client cannot hold its thread
    /// forever.
    static func acceptConnection(from listener: Int32) -> Int32? {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return nil }
        setCloseOnExec(connection)
        _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) & ~O_NONBLOCK)
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return connection
    }

    /// Waits up to `milliseconds` for `descriptor` to become readable (or hung up); false on timeout.
    static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Reads up to `count` bytes; nil at end of stream, on error or on timeout.
    static func receive(_ descriptor: Int32, upTo count: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, count, 0) }
            if received > 0 { return Array(chunk[..<received]) }
            if received < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Writes all of `bytes`; false if the peer went away. Never raises `SIGPIPE`.
    @discardableResult
    static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0  // SO_NOSIGPIPE was set in acceptConnection(from:)
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(descriptor, $0.baseAddress.map { $0 + offset }, bytes.count - offset, flags)
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Shuts down one or both directions, waking any thread blocked in `recv` or `poll` on it.
    static func shutdownConnection(_ descriptor: Int32, writeOnly: Bool = false) {
        #if canImport(Glibc)
        _ = shutdown(descriptor, Int32(writeOnly ? SHUT_WR : SHUT_RDWR))
        #else
        _ = shutdown(descriptor, writeOnly ? SHUT_WR : SHUT_RDWR)
        #endif
    }

    /// Closes a descriptor.
    static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// The text for an errno value: "Address already in use".
    static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    // MARK: - Private

    /// Marks a descriptor close-on-exec, so child processes spawned by tests do not inherit it.
    private static func setCloseOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
    }
}
