import Foundation
import Prefs
import PrefsSupport

/// A real HTTP/1.1 server on 127.0.0.1, for tests of code that fetches over the network.
///
/// It binds an ephemeral port on the loopback address only, serves each connection on its own thread,
/// records every request, answers with whatever the handler returns (`Content-Length` framing,
/// `Connection: close`) and closes the connection after the response. A delayed response holds only its
/// own connection. ``stop()`` never hangs, even while clients keep connections open.
///
/// ```swift
/// let server = try TestHTTPServer { request in
///     switch request.path {
///     case "/messages.json":
///         request.header("If-None-Match") == #""v2""#
///             ? .status(304)
///             : .ok(#"[{"id": 2}]"#, headers: ["ETag": #""v2""#])
///     default:
///         .status(404)
///     }
/// }
/// defer { server.stop() }
/// let (data, _) = try await session.data(from: server.url("/messages.json"))
/// server.requests.map(\.path)   // ["/messages.json"]
/// ```
package final class TestHTTPServer: Sendable {
    /// Computes the response to a request; called on the connection's thread.
    ///
    /// ```swift
    /// let handler: TestHTTPServer.Handler = { _ in .ok("hello") }
    /// ```
    package typealias Handler = @Sendable (Request) -> Response

    /// Why the server could not start: the socket call that failed and its `errno`.
    ///
    /// ```swift
    /// do { _ = try TestHTTPServer { _ in .ok("") } }
    /// catch { print(error) }   // e.g. bind 127.0.0.1:0 failed: Address already in use (errno 98)
    /// ```
    package struct StartError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The call that failed, such as `bind 127.0.0.1:0`.
        package let operation: String
        /// The `errno` value it set.
        package let code: Int32

        /// `<operation> failed: <strerror text> (errno <code>)`.
        package var description: String {
            "\(operation) failed: \(LoopbackSocket.message(for: code)) (errno \(code))"
        }
    }

    /// The port the server listens on, chosen by the kernel.
    ///
    /// ```swift
    /// server.port   // e.g. 40213
    /// ```
    package let port: UInt16

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    ///
    /// ```swift
    /// server.baseURL.absoluteString   // "http://127.0.0.1:40213"
    /// ```
    package let baseURL: URL

    private let core: ServerCore

    /// Binds 127.0.0.1 on an ephemeral port and starts serving on a background thread. Connections are
    /// accepted from the moment it returns.
    ///
    /// ```swift
    /// let server = try TestHTTPServer { _ in .ok("hello") }
    /// ```
    /// - Throws: ``StartError`` when a socket call fails.
    package init(handler: @escaping Handler) throws(StartError) {
        let listener = try LoopbackSocket.openListener()
        guard let url = URL(string: "http://127.0.0.1:\(listener.port)") else {
            LoopbackSocket.closeDescriptor(listener.descriptor)
            throw StartError(operation: "URL for port \(listener.port)", code: EINVAL)
        }
        port = listener.port
        baseURL = url
        let core = ServerCore(listener: listener.descriptor, handler: handler)
        self.core = core
        // The thread holds the core, not the server, so dropping the server still runs deinit → stop().
        Thread.detachNewThread { core.acceptLoop() }
    }

    deinit {
        core.stop()
    }

    /// The URL of `path` on this server; `path` may include a query. Characters not allowed in a URL are
    /// percent-encoded; text that is already valid is used as is.
    ///
    /// ```swift
    /// server.url("/messages.json?lang=en")   // http://127.0.0.1:PORT/messages.json?lang=en
    /// ```
    package func url(_ path: String) -> URL {
        let absolutePath = path.hasPrefix("/") ? path : "/" + path
        if let url = URL(string: baseURL.absoluteString + absolutePath) { return url }
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = Int(port)
        let query = absolutePath.firstIndex(of: "?")
        components.path = String(absolutePath[..<(query ?? absolutePath.endIndex)])
        components.query = query.map { String(absolutePath[absolutePath.index(after: $0)...]) }
        // With a scheme, a host and a path starting with "/", URLComponents always produces a URL.
        return components.url ?? baseURL
    }

    /// Every request received so far, in arrival order (recorded before the handler runs).
    ///
    /// ```swift
    /// server.requests.map(\.path)   // ["/messages.json", "/messages.json"]
    /// ```
    package var requests: [Request] {
        core.state.withLock { $0.requests }
    }

    /// Returns once the server has accepted `count` connections since it started: a test that needs a connection
    /// to be open on the server's side (a silent client) awaits this instead of sleeping.
    ///
    /// ```swift
    /// await server.accepted(1)
    /// ```
    package func accepted(_ count: Int) async {
        await withCheckedContinuation { continuation in
            core.state.withLock { state in
                if state.accepted >= count { continuation.resume() } else { state.acceptWaiters.append((count, continuation)) }
            }
        }
    }

    /// Closes the listener and shuts down open connections, cutting short any delayed response.
    ///
    /// Returns at once; after it returns, connecting to ``port`` fails. Calling it again does nothing, and
    /// `deinit` calls it.
    ///
    /// ```swift
    /// server.stop()
    /// ```
    package func stop() {
        core.stop()
    }
}

// MARK: - The serving machinery

/// The state shared by the server, its accept thread and its connection threads.
///
/// Descriptor ownership is decided under the lock, so no thread ever touches a descriptor number after it
/// was closed (and perhaps reused by someone else): `stop()` only shuts the listener down and the accept
/// thread closes it on its way out; accept
/// happens under the lock after checking `stopped`; a connection is closed only by its own thread, under
/// the lock, while `stop()` only shuts connections down, also under the lock.
private final class ServerCore: Sendable {
    struct State: Sendable {
        var listener: Int32
        var stopped = false
        var connections: Set<Int32> = []
        var requests: [TestHTTPServer.Request] = []
        var accepted = 0
        var acceptWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let state: Locked<State>
    let handler: TestHTTPServer.Handler

    init(listener: Int32, handler: @escaping TestHTTPServer.Handler) {
        state = Locked(State(listener: listener))
        self.handler = handler
    }

    var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            // On Linux, a socket closed while the accept thread sits in poll() on it stays alive (and keeps
            // completing handshakes, later reset) until poll returns; shutdown() takes it out of LISTEN at once.
            // Only shut down here: the accept thread may be in poll() on the listener, so it closes it itself
            // on its way out (closing a descriptor another thread is using is a race, and ThreadSanitizer says so).
            LoopbackSocket.shutdownConnection(state.listener)
            for connection in state.connections {
                LoopbackSocket.shutdownConnection(connection)
            }
        }
    }

    /// Accepts connections until stopped, waking every 50 ms to notice `stop()`.
    func acceptLoop() {
        enum Outcome { case stopped, none, accepted(Int32) }
        defer { state.withLock { LoopbackSocket.closeDescriptor($0.listener) } }
        while true {
            guard let listener = state.withLock({ $0.stopped ? nil : $0.listener }) else { return }
            // If stop() closes the listener meanwhile, poll just returns early; the check below catches it.
            guard LoopbackSocket.waitReadable(listener, milliseconds: 50) else { continue }
            let outcome: Outcome = state.withLock { state in
                guard !state.stopped else { return .stopped }
                guard let connection = LoopbackSocket.acceptConnection(from: state.listener) else { return .none }
                state.connections.insert(connection)
                state.accepted += 1
                let accepted = state.accepted
                for waiter in state.acceptWaiters where waiter.count <= accepted { waiter.continuation.resume() }
                state.acceptWaiters.removeAll { $0.count <= accepted }
                return .accepted(connection)
            }
            switch outcome {
            case .stopped: return
            case .none: continue
            case .accepted(let connection): Thread.detachNewThread { self.serve(connection) }
            }
        }
    }

    /// Reads one request, answers it and closes the connection.
    private func serve(_ connection: Int32) {
        defer {
            state.withLock { state in
                state.connections.remove(connection)
                LoopbackSocket.closeDescriptor(connection)
            }
        }
        var reader = HTTPRequestReader(descriptor: connection)
        let response: TestHTTPServer.Response
        var includeBody = true
        switch reader.read() {
        case .success(let request):
            state.withLock { $0.requests.append(request) }
            response = handler(request)
            includeBody = request.method != "HEAD"
            guard wait(response.delay) else { return }
        case .failure(let failure):
            guard let rejection = failure.response else { return }
            response = rejection
        }
        guard LoopbackSocket.sendAll(connection, response.wireBytes(includeBody: includeBody)) else { return }
        lingerUntilClientCloses(connection)
    }

    /// Sleeps for `delay` in short steps; false as soon as the server is stopped.
    private func wait(_ delay: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + delay
        while !isStopped {
            let remaining = deadline - clock.now
            if remaining <= .zero { return true }
            let step = min(remaining, .milliseconds(20))
            Thread.sleep(forTimeInterval: step.timeInterval)
        }
        return false
    }

    /// Half-closes, then drains whatever the client still sends (for at most 1 s): closing a socket with
    /// unread input resets the connection, which could destroy a response the client has not read yet.
    private func lingerUntilClientCloses(_ connection: Int32) {
        LoopbackSocket.shutdownConnection(connection, writeOnly: true)
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline, LoopbackSocket.waitReadable(connection, milliseconds: 100) {
            guard LoopbackSocket.receive(connection, upTo: 4096) != nil else { return }
        }
    }
}
