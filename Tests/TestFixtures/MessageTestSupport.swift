@testable import DialogGate
@testable import MessageFeed
@testable import MessageFeedFetching
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Prefs
import PrefsTestHarness
import PrefsTesting
import PrefsJSON
import PrefsSupport

/// The date the message tests start at, 2026-03-01T12:00:00Z; a ``TestClock`` moves from there by hand,
/// so time rules are tested without sleeping.
package let feedEpoch = Date(timeIntervalSince1970: 1_772_366_400)

extension FeedOptions {
    /// The options of tests that fetch from a server on loopback and do not test the timeout. The default 10 s is not
    /// enough there: under ThreadSanitizer on a loaded 2-core CI machine, tests that block the cooperative pool for
    /// seconds (child processes, lock timeouts) once delayed five fetches past it at the same moment.
    package static var unhurried: FeedOptions { FeedOptions(timeout: .seconds(120)) }
}

/// A loader that answers from a closure and records the requests: shows that a refused URL never reaches
/// the network, and plays cases a real server cannot.
package final class CannedLoader: FeedLoader {
    private let requests = Locked<[URLRequest]>([])
    private let answer: @Sendable (URLRequest) -> FeedResponse

    package init(_ answer: @escaping @Sendable (URLRequest) -> FeedResponse) {
        self.answer = answer
    }

    package var recorded: [URLRequest] { requests.withLock { $0 } }

    package func load(_ request: URLRequest, options: FeedOptions) async throws -> FeedResponse {
        requests.withLock { $0.append(request) }
        return answer(request)
    }
}

/// A mutable server response, so one server can play several scenarios in a row.
package final class Scenario: Sendable {
    private let response: Locked<TestHTTPServer.Response>

    package init(_ response: TestHTTPServer.Response) {
        self.response = Locked(response)
    }

    package func set(_ response: TestHTTPServer.Response) {
        self.response.withLock { $0 = response }
    }

    package var current: TestHTTPServer.Response { response.withLock { $0 } }
}

package enum Feeds {
    package static let seedBundle = "com.createchsol.AppAlertExample"

    /// The seed's exact one-message feed.
    package static let seed = """
        [
           {
              "id": 1,
              "bundleId": "com.createchsol.AppAlertExample",
              "title": "App Alert",
              "text": "Warning:  There is a bug in the application and I am working on it.",
              "confirmLabel" : "OK"
           }
        ]
        """

    /// The seed's "Multiple Applications" sample.
    package static let multipleApplications = """
        [
          {
             "id":3,
             "bundleId":"com.createchsol.AppAlertExample",
             "title":"App Alert",
             "text":"Warning:  There is a bug in the application and I am working on it.",
             "confirmLabel":"OK",
             "osVersions": ["17.0.1", "17.2"],
             "appVersions": ["1.0"],
             "link":{
                "title":"More information",
                "url":"https://www.createchsol.com"
             }
          },
          {
             "id":1,
             "bundleId":"com.createchsol.MyWineCellar",
             "title":"Special Offer",
             "text":"Pro user subscription is on sale until the end of the month.",
             "confirmLabel":"OK"
          }
        ]
        """

    /// A one-line message object with the required fields and `extra` members (`"k": v, …`).
    package static func message(id: Int, bundleId: String = seedBundle, _ extra: String = "") -> String {
        let base = #"{"id": \#(id), "bundleId": "\#(bundleId)", "title": "Title \#(id)", "text": "Text \#(id)", "confirmLabel": "OK""#
        return base + (extra.isEmpty ? "" : ", " + extra) + "}"
    }

    /// A one-line message of feed format 2, wrapped as `{"minimumReaderVersion": N, "message": {…}}`, with `extra`
    /// members (`"conditions": {…}`, `"update": {…}`, …).
    package static func wrapped(id: Int, bundleId: String = seedBundle, readerVersion: Int = 2, _ extra: String = "") -> String {
        #"{"minimumReaderVersion": \#(readerVersion), "message": \#(message(id: id, bundleId: bundleId, extra))}"#
    }

    /// A feed of one-line messages.
    package static func of(_ messages: String...) -> String {
        of(messages)
    }

    /// A feed of one-line messages, from an array.
    package static func of(_ messages: [String]) -> String {
        "[\n" + messages.joined(separator: ",\n") + "\n]"
    }
}

extension MessageContext {
    /// The seed's app on iOS 17.2 in English.
    package static let seedApp = MessageContext(
        bundleIdentifier: Feeds.seedBundle, appVersion: "1.0", osVersion: "17.2", localeIdentifier: "en_US"
    )

    package func with(appVersion: String? = nil, osVersion: String? = nil, locale: String? = nil) -> MessageContext {
        var copy = self
        if let appVersion { copy.appVersion = appVersion }
        if let osVersion { copy.osVersion = osVersion }
        if let locale { copy.localeIdentifier = locale }
        return copy
    }
}

/// A server that answers every request with `body` as JSON.
package func jsonServer(_ body: String, headers: KeyValuePairs<String, String> = [:]) throws -> TestHTTPServer {
    let response = TestHTTPServer.Response.ok(body, headers: headers)
    return try TestHTTPServer { _ in response }
}
