import Foundation

/// Reads one HTTP/1.1 request from a connected socket: the request line, the header fields and a
/// `Content-Length` body. Chunked request bodies are refused with 501.
struct HTTPRequestReader {
    /// Why no request could be read, and the response that says so (nil: the client is gone).
    enum Failure: Error {
        case closed
        case rejected(status: Int, reason: String)

        var response: TestHTTPServer.Response? {
            switch self {
            case .closed: nil
            case .rejected(let status, let reason): .status(status, body: reason + "\n", headers: ["Content-Type": "text/plain"])
            }
        }
    }

    static let maximumHeadBytes = 64 * 1024
    static let maximumBodyBytes = 16 * 1024 * 1024

    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Reads the next request, sending `100 Continue` first when the client asks for it.
    mutating func read() -> Result<TestHTTPServer.Request, Failure> {
        guard let headEnd = readHead() else {
            return .failure(
                buffer.count > Self.maximumHeadBytes
                    ? .rejected(status: 431, reason: "request head larger than \(Self.maximumHeadBytes) bytes")
                    : .closed)
        }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        var request: TestHTTPServer.Request
        switch Self.parseHead(head) {
        case .success(let parsed): request = parsed
        case .failure(let failure): return .failure(failure)
        }
        if let encoding = request.headers["transfer-encoding"], encoding.lowercased() != "identity" {
            return .failure(.rejected(status: 501, reason: "Transfer-Encoding \(encoding) is not supported; send Content-Length"))
        }
        let length: Int
        switch Self.contentLength(request.headers["content-length"]) {
        case .success(let value): length = value
        case .failure(let failure): return .failure(failure)
        }
        let bodyStart = headEnd + 4
        if length > 0, buffer.count - bodyStart < length, request.headers["expect"]?.lowercased() == "100-continue" {
            LoopbackSocket.sendAll(descriptor, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        while buffer.count - bodyStart < length {
            guard fill() else { return .failure(.closed) }
        }
        request.body = Data(buffer[bodyStart..<(bodyStart + length)])
        return .success(request)
    }

    // MARK: - Private

    /// Receives until the buffer holds a blank line; returns the index of its `\r\n\r\n`, or nil when the
    /// connection ends first or the head grows too large.
    private mutating func readHead() -> Int? {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4) where buffer[index..<(index + 4)].elementsEqual(terminator) {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            guard buffer.count <= Self.maximumHeadBytes, fill() else { return nil }
        }
    }

    private mutating func fill() -> Bool {
        guard let chunk = LoopbackSocket.receive(descriptor, upTo: 16 * 1024) else { return false }
        buffer.append(contentsOf: chunk)
        return true
    }

    /// Parses `METHOD target HTTP/1.x` and the header lines (names lowercased, repeats joined by ", ").
    static func parseHead(_ head: String) -> Result<TestHTTPServer.Request, Failure> {
        // "\r\n" is one Character in Swift, so this splits on CRLF exactly.
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first ?? ""
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[1].hasPrefix("/"), parts[2].hasPrefix("HTTP/1.") else {
            return .failure(.rejected(status: 400, reason: "bad request line: \(requestLine)"))
        }
        let target = parts[1]
        let questionMark = target.firstIndex(of: "?")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon > line.startIndex,
                !line[..<colon].contains(where: \.isWhitespace)
            else { return .failure(.rejected(status: 400, reason: "bad header line: \(line)")) }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return .success(
            TestHTTPServer.Request(
                method: String(parts[0]),
                path: String(target[..<(questionMark ?? target.endIndex)]),
                query: questionMark.map { String(target[target.index(after: $0)...]) },
                headers: headers
            ))
    }

    /// The body length from a `Content-Length` value (0 when absent).
    static func contentLength(_ value: String?) -> Result<Int, Failure> {
        guard let value else { return .success(0) }
        guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(value) else {
            return .failure(.rejected(status: 400, reason: "bad Content-Length: \(value)"))
        }
        guard length <= maximumBodyBytes else {
            return .failure(.rejected(status: 413, reason: "body larger than \(maximumBodyBytes) bytes"))
        }
        return .success(length)
    }
}

extension TestHTTPServer.Response {
    /// The header fields the server writes itself; the handler's versions are dropped.
    private static let serverOwnedHeaders: Set<String> = ["content-length", "connection", "transfer-encoding"]

    /// The response as bytes on the wire: status line, the handler's headers, `Content-Length` (except for
    /// statuses without a body), `Connection: close`, and the body unless `includeBody` is false (HEAD).
    func wireBytes(includeBody: Bool) -> [UInt8] {
        let hasBody = !((100..<200).contains(status) || status == 204 || status == 304)
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (name, value) in headers where !Self.serverOwnedHeaders.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        if hasBody { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        var bytes = Array(head.utf8)
        if hasBody && includeBody { bytes.append(contentsOf: body) }
        return bytes
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
