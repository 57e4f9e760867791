import DialogGate
import Foundation
import MessageFeed
import Prefs
import PrefsTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("TestFeedServer")
@MainActor
struct TestFeedServerTests {
    private let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "1.0", osVersion: "17.2", localeIdentifier: "en_US")

    /// Fetches that wait as long as a loaded machine needs: under ThreadSanitizer on a 2-core CI machine, with every
    /// suite running at once, a fetch from loopback took longer than the default 10 s timeout.
    private let unhurried = FeedOptions(timeout: .seconds(120))

    private func message(_ id: Int) -> String {
        #"{"id": \#(id), "bundleId": "com.example.app", "title": "Title \#(id)", "text": "Text \#(id)", "confirmLabel": "OK"}"#
    }

    @Test("a MessageCenter fetches the published feed, revalidates it unchanged, and sees the next one")
    func publishAndRevalidate() async throws {
        let server = try TestFeedServer("[\(message(2))]")
        defer { server.stop() }
        let center = MessageCenter(feedURL: server.url, prefs: try Prefs(.memory), context: context, options: unhurried)
        await center.refresh()
        let shown = try #require(center.pendingMessage)
        #expect(shown.id == 2)
        #expect(server.requestCount == 1)
        _ = center.acknowledge(.confirm, for: shown)
        await center.flush()

        await center.refresh(force: true)
        #expect(server.requestCount == 2)
        #expect(server.notModifiedCount == 1)  // the cached feed, revalidated by its ETag
        #expect(center.pendingMessage == nil)  // 2 was acknowledged

        server.publish("[\(message(2)), \(message(3))]")
        await center.refresh(force: true)
        #expect(server.requestCount == 3)
        #expect(server.notModifiedCount == 1)
        #expect(center.pendingMessage?.id == 3)
    }

    @Test("a failing host is an error the center reports, and publishing ends it")
    func failure() async throws {
        let server = try TestFeedServer("[\(message(5))]")
        defer { server.stop() }
        let center = MessageCenter(feedURL: server.url, prefs: try Prefs(.memory), context: context, options: unhurried)
        server.fail(status: 503)
        await center.refresh(force: true)
        #expect(center.lastError != nil)
        #expect(center.pendingMessage == nil)
        server.publish("[\(message(6))]")
        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: server.url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "[\(message(6))]")
    }

    @Test("another path is a 404, and a stopped server refuses connections")
    func otherPathAndStop() async throws {
        let server = try TestFeedServer("[]", path: "/v2/messages.json")
        #expect(server.url.path == "/v2/messages.json")
        let session = URLSession(configuration: .ephemeral)
        let other = server.url.deletingLastPathComponent().appendingPathComponent("feed.json")
        let (_, response) = try await session.data(from: other)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        #expect(server.requestCount == 0)
        server.stop()
        await #expect(throws: (any Error).self) { _ = try await session.data(from: server.url) }
    }
}
