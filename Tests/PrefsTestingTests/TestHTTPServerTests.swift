import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PrefsTestHarness
import PrefsTesting
import Testing

@Suite("TestHTTPServer")
struct TestHTTPServerTests {
    /// A session that never answers from a cache, as a feed fetcher's tests need.
    private func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }

    private func get(
        _ session: URLSession, _ url: URL, headers: [String: String] = [:], method: String = "GET", body: Data? = nil,
        timeout: TimeInterval = 10
    ) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = timeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    /// Waits for the first of `events` (a handler's signal), failing instead of hanging if it never comes.
    private func first(_ events: AsyncStream<String>, _ what: String) async throws -> String? {
        try await withDeadline(.seconds(60), what) {
            var iterator = events.makeAsyncIterator(); return await iterator.next()
        }
    }

    // MARK: - Responses

    @Test("GET returns the body and the headers exactly")
    func getBodyAndHeaders() async throws {
        let body = #"[{"id": 1, "title": "Hi"}]"#
        let server = try TestHTTPServer { _ in
            .ok(body, headers: ["ETag": #""v1""#, "Content-Type": "application/json", "X-Note": "a  b, c"])
        }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let (data, response) = try await get(session, server.url("/messages.json"))
        #expect(String(decoding: data, as: UTF8.self) == body)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "ETag") == #""v1""#)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.value(forHTTPHeaderField: "X-Note") == "a  b, c")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "\(body.utf8.count)")
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
    }

    @Test("request headers such as If-None-Match reach the handler; 304 has an empty body")
    func conditionalRequest() async throws {
        let server = try TestHTTPServer { request in
            request.header("If-None-Match") == #""v1""#
                ? .status(304, headers: ["ETag": #""v1""#])
                : .ok("fresh", headers: ["ETag": #""v1""#])
        }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let (first, firstResponse) = try await get(session, server.url("/feed"))
        #expect(firstResponse.statusCode == 200 && String(decoding: first, as: UTF8.self) == "fresh")
        let (second, secondResponse) = try await get(session, server.url("/feed"), headers: ["If-None-Match": #""v1""#])
        #expect(secondResponse.statusCode == 304)
        #expect(second.isEmpty)
        #expect(secondResponse.value(forHTTPHeaderField: "ETag") == #""v1""#)

        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.first?.headers["if-none-match"] == nil)
        #expect(requests.last?.headers["if-none-match"] == #""v1""#)
        #expect(requests.last?.header("IF-NONE-MATCH") == #""v1""#)
    }

    @Test("404 and other statuses pass through with their bodies")
    func statuses() async throws {
        let server = try TestHTTPServer { request in
            request.path == "/gone" ? .status(410, body: "gone") : .status(404, body: "no such feed")
        }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let (missing, missingResponse) = try await get(session, server.url("/nope"))
        #expect(missingResponse.statusCode == 404)
        #expect(String(decoding: missing, as: UTF8.self) == "no such feed")
        let (_, goneResponse) = try await get(session, server.url("/gone"))
        #expect(goneResponse.statusCode == 410)
    }

    @Test("POST bodies (small and large) reach the handler byte for byte")
    func postBody() async throws {
        let server = try TestHTTPServer { request in .ok(Data(request.body.reversed())) }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        for size in [0, 5, 200_000] {
            let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let (echo, response) = try await get(
                session, server.url("/upload"), headers: ["Content-Type": "application/octet-stream"], method: "POST", body: body)
            #expect(response.statusCode == 200)
            #expect(echo == Data(body.reversed()))
        }
        #expect(server.requests.map(\.method) == ["POST", "POST", "POST"])
        #expect(server.requests.map(\.body.count) == [0, 5, 200_000])
        #expect(server.requests.last?.headers["content-type"] == "application/octet-stream")
    }

    @Test("HEAD gets the headers without the body")
    func head() async throws {
        let server = try TestHTTPServer { _ in .ok("twelve bytes", headers: ["ETag": #""h""#]) }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let (data, response) = try await get(session, server.url("/feed"), method: "HEAD")
        #expect(response.statusCode == 200)
        #expect(data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "ETag") == #""h""#)
        #expect(server.requests.map(\.method) == ["HEAD"])
    }

    // MARK: - Recording

    @Test("requests records method, path, query and body in arrival order")
    func recording() async throws {
        let server = try TestHTTPServer { _ in .ok("") }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        _ = try await get(session, server.url("/a"))
        _ = try await get(session, server.url("b?lang=en&x=1"))
        _ = try await get(session, server.url("/c d"), method: "POST", body: Data("hi".utf8))
        let requests = server.requests
        #expect(requests.map(\.method) == ["GET", "GET", "POST"])
        #expect(requests.map(\.path) == ["/a", "/b", "/c%20d"])
        #expect(requests.map(\.query) == [nil, "lang=en&x=1", nil])
        #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["", "", "hi"])
        #expect(requests.allSatisfy { $0.headers["host"] == "127.0.0.1:\(server.port)" })
    }

    @Test("concurrent requests are each answered")
    func concurrent() async throws {
        let server = try TestHTTPServer { request in .ok(request.path) }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<16 {
                group.addTask { String(decoding: try await get(session, server.url("/item/\(index)")).0, as: UTF8.self) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(bodies) == Set((0..<16).map { "/item/\($0)" }))
        #expect(server.requests.count == 16)
    }

    // MARK: - Timeouts and stopping

    /// The client timeout is 1 s, not 0.5 s: swift-corelibs-foundation truncates `timeoutInterval` to whole
    /// seconds (`Int(timeoutInterval) * 1000` ms), so 0.5 s becomes 0 and fails at once, before the server
    /// is even involved. The lower bound on the elapsed time below guards against that vacuous pass.
    @Test("a delayed response hits the client timeout while other requests are served promptly")
    func delayedResponse() async throws {
        let (arrivals, arrived) = AsyncStream<String>.makeStream()
        let server = try TestHTTPServer { request in
            arrived.yield(request.path)
            return request.path == "/slow" ? .ok("late").delayed(by: .seconds(600)) : .ok("quick")
        }
        defer { server.stop() }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }
        let clock = ContinuousClock()

        let started = clock.now
        let slow = Task { try await get(session, server.url("/slow"), timeout: 1) }
        #expect(try await first(arrivals, "the slow request") == "/slow")

        // The slow connection is being held; another one is still answered at once.
        let (quick, _) = try await get(session, server.url("/quick"))
        #expect(String(decoding: quick, as: UTF8.self) == "quick")

        await #expect {
            try await slow.value
        } throws: { error in
            (error as? URLError)?.code == .timedOut
        }
        // It was the client's 1 s timeout that ended it (.timedOut: the server's 600 s delay would have sent "late"),
        // and not an instant failure: a timeout cannot end a request before it is due, so this lower bound is exact.
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(900), "took \(elapsed)")
        #expect(server.requests.map(\.path) == ["/slow", "/quick"])
    }

    /// stop() does not wait for a held response: the client's request is cut by the server, before the response's
    /// 900 s delay and the client's own 600 s timeout (either would end it with a body or with `.timedOut`).
    @Test("stop() returns while a client holds a connection, cutting the held response; it is idempotent")
    func stopWithOpenConnection() async throws {
        let (arrivals, arrived) = AsyncStream<String>.makeStream()
        let server = try TestHTTPServer { request in
            arrived.yield(request.path)
            return .ok("never").delayed(by: .seconds(900))
        }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let pending = Task { try await get(session, server.url("/held"), timeout: 600) }
        #expect(try await first(arrivals, "the held request") == "/held")
        try await withDeadline(.seconds(60), "stop()") {
            server.stop()
            server.stop()
        }
        await #expect {
            try await pending.value
        } throws: { error in
            guard let code = (error as? URLError)?.code else { return false }
            return code != .timedOut  // cut by stop(), not by the client's timeout
        }
        #expect(server.requests.map(\.path) == ["/held"])
    }

    @Test("after stop(), connecting fails")
    func connectAfterStop() async throws {
        let server = try TestHTTPServer { _ in .ok("up") }
        let session = makeSession()
        defer { session.finishTasksAndInvalidate() }

        let (data, _) = try await get(session, server.url("/"))
        #expect(String(decoding: data, as: UTF8.self) == "up")
        server.stop()
        await #expect {
            try await get(session, server.url("/"), timeout: 5)
        } throws: { error in
            // Darwin reports .cannotConnectToHost; swift-corelibs-foundation passes curl's
            // "Couldn't connect to server" through as .unknown.
            [.cannotConnectToHost, .unknown].contains((error as? URLError)?.code)
                && "\(error)".contains("onnect")
        }
        #expect(server.requests.count == 1)
    }

    @Test("stop() returns while a client is connected but silent, and closes its connection")
    func stopWithSilentClient() async throws {
        let server = try TestHTTPServer { _ in .ok("") }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /half")  // no end of head: the server waits in recv
        try await withDeadline(.seconds(60), "the server accepting the connection") { await server.accepted(1) }
        try await withDeadline(.seconds(60), "stop()") { server.stop() }
        #expect(client.readToEnd() == "")  // closed without a response
        #expect(server.requests.isEmpty)
    }

    @Test(
        "malformed requests get a 400 and are not recorded",
        arguments: [
            "NONSENSE\r\n\r\n",
            "GET /x HTTP/1.1\r\nno colon here\r\n\r\n",
            "GET /x HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
            "GET x HTTP/1.1\r\n\r\n",
        ])
    func malformed(request: String) throws {
        let server = try TestHTTPServer { _ in .ok("") }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send(request)
        let reply = client.readToEnd()
        #expect(reply.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(reply)")
        #expect(reply.contains("\r\nConnection: close\r\n"))
        #expect(server.requests.isEmpty)
    }

    @Test("a chunked request body is refused with 501")
    func chunked() throws {
        let server = try TestHTTPServer { _ in .ok("") }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        let reply = client.readToEnd()
        #expect(reply.hasPrefix("HTTP/1.1 501 Not Implemented\r\n"), "\(reply)")
        #expect(reply.hasSuffix("Transfer-Encoding chunked is not supported; send Content-Length\n"))
    }

    @Test("the wire format: status line, handler headers in order, Content-Length, Connection: close")
    func wireFormat() throws {
        let server = try TestHTTPServer { _ in
            TestHTTPServer.Response(
                status: 200,
                headers: [("ETag", #""a""#), ("Set-Cookie", "x=1"), ("Set-Cookie", "y=2"), ("Content-Length", "999"), ("connection", "keep-alive")],
                body: Data("body".utf8)
            )
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /w?q=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a:  2 \r\n\r\n")
        #expect(
            client.readToEnd() == "HTTP/1.1 200 OK\r\nETag: \"a\"\r\nSet-Cookie: x=1\r\nSet-Cookie: y=2\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody")
        let request = try #require(server.requests.first)
        #expect(request.path == "/w" && request.query == "q=1")
        #expect(request.headers == ["host": "h", "x-a": "1, 2"])
    }

    @Test("Expect: 100-continue gets an interim 100 before the body is sent")
    func expectContinue() throws {
        let server = try TestHTTPServer { request in .ok(request.body) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /p HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(client.readSome() == "HTTP/1.1 100 Continue\r\n\r\n")
        try client.send("hello")
        #expect(client.readToEnd().hasSuffix("\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"))
    }

    @Test("a 304 carries neither body nor Content-Length")
    func notModifiedOnTheWire() throws {
        let server = try TestHTTPServer { _ in .status(304, body: "ignored", headers: ["ETag": #""v""#]) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\n\r\n")
        #expect(client.readToEnd() == "HTTP/1.1 304 Not Modified\r\nETag: \"v\"\r\nConnection: close\r\n\r\n")
    }

    @Test("url(_:) keeps valid paths and queries and encodes the rest")
    func urls() throws {
        let server = try TestHTTPServer { _ in .ok("") }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        #expect(server.url("/messages.json").absoluteString == base + "/messages.json")
        #expect(server.url("messages.json?lang=en").absoluteString == base + "/messages.json?lang=en")
        #expect(server.url("/a%20b").absoluteString == base + "/a%20b")
        #expect(server.url("/a b?q=x y").absoluteString == base + "/a%20b?q=x%20y")
    }

    @Test("each server gets its own port on 127.0.0.1")
    func ports() throws {
        let first = try TestHTTPServer { _ in .ok("1") }
        let second = try TestHTTPServer { _ in .ok("2") }
        defer { first.stop(); second.stop() }
        #expect(first.port != 0 && second.port != 0 && first.port != second.port)
        #expect(first.baseURL.host == "127.0.0.1")
    }
}
