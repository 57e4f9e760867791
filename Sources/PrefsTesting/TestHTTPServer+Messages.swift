import Foundation

extension TestHTTPServer {
    /// A request as the server received it.
    ///
    /// ```swift
    /// let server = try TestHTTPServer { request in
    ///     request.headers["if-none-match"] == #""v1""# ? .status(304) : .ok("hello")
    /// }
    /// ```
    package struct Request: Sendable, Hashable {
        /// The method as sent: `GET`, `HEAD`, `POST`…
        package var method: String
        /// The path of the request target as sent (percent-encoding kept), without the query: `/messages.json`.
        package var path: String
        /// The query of the request target without the `?`, or nil when there is none: `lang=en`.
        package var query: String?
        /// The header fields, keyed by **lowercased** name; repeated fields are joined with `", "`.
        package var headers: [String: String]
        /// The body (`Content-Length` bytes), empty when there is none.
        package var body: Data

        /// Makes a request, for calling a handler directly in a unit test.
        ///
        /// ```swift
        /// let response = handler(.init(method: "GET", path: "/feed.json"))
        /// ```
        package init(method: String, path: String, query: String? = nil, headers: [String: String] = [:], body: Data = Data()) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
        }

        /// The value of a header field, whatever the case of `name`.
        ///
        /// ```swift
        /// request.header("If-None-Match")   // same as request.headers["if-none-match"]
        /// ```
        package func header(_ name: String) -> String? {
            headers[name.lowercased()]
        }
    }

    /// A response for the handler to return.
    ///
    /// The server writes `Content-Length` and `Connection: close` itself and closes the connection after
    /// the response; header fields with those names (and `Transfer-Encoding`) given here are ignored so the
    /// framing stays correct. Responses with status 1xx, 204 and 304 carry no body and no `Content-Length`;
    /// a `HEAD` request gets the headers of the response without its body.
    ///
    /// ```swift
    /// .ok(#"[{"id": 1}]"#, headers: ["ETag": #""v1""#, "Content-Type": "application/json"])
    /// .status(304)
    /// .status(503, body: "try later").delayed(by: .seconds(2))
    /// ```
    package struct Response: Sendable {
        /// The status code, such as 200 or 404.
        package var status: Int
        /// Header fields in the order they are sent; names may repeat.
        package var headers: [(name: String, value: String)]
        /// The body.
        package var body: Data
        /// How long to wait before sending anything, to test client timeouts. It does not hold up other
        /// connections, and ``TestHTTPServer/stop()`` cuts it short.
        package var delay: Duration

        /// Makes a response.
        ///
        /// ```swift
        /// TestHTTPServer.Response(status: 201, headers: [("Location", "/items/1")], body: Data())
        /// ```
        package init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data(), delay: Duration = .zero) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        /// A 200 response with a UTF-8 text body.
        ///
        /// ```swift
        /// .ok("hello", headers: ["ETag": #""v1""#])
        /// ```
        package static func ok(_ body: String, headers: KeyValuePairs<String, String> = [:]) -> Response {
            ok(Data(body.utf8), headers: headers)
        }

        /// A 200 response with a binary body.
        ///
        /// ```swift
        /// .ok(Data([0xFF]), headers: ["Content-Type": "application/octet-stream"])
        /// ```
        package static func ok(_ body: Data, headers: KeyValuePairs<String, String> = [:]) -> Response {
            Response(status: 200, headers: headers.map { (name: $0.key, value: $0.value) }, body: body)
        }

        /// A response with any status and an optional UTF-8 body.
        ///
        /// ```swift
        /// .status(404)
        /// .status(304, headers: ["ETag": #""v1""#])
        /// ```
        package static func status(_ code: Int, body: String = "", headers: KeyValuePairs<String, String> = [:]) -> Response {
            Response(status: code, headers: headers.map { (name: $0.key, value: $0.value) }, body: Data(body.utf8))
        }

        /// The same response, sent after `delay`.
        ///
        /// ```swift
        /// .ok("slow").delayed(by: .seconds(3))
        /// ```
        package func delayed(by delay: Duration) -> Response {
            var copy = self
            copy.delay = delay
            return copy
        }
    }
}
