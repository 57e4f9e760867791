import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import PrefsUserDefaults
import Testing

/// App Groups: `Storage.appGroup(_:)` and `PrefsDefaults(suiteName: "group.…")`, the store an app and its extensions share.
@Suite("App Groups")
struct AppGroupTests {
    @Test("on Apple platforms the group's shared container holds the store; without one (no entitlement) it throws, naming the group")
    func containerResolution() throws {
        let container = URL(fileURLWithPath: "/private/var/mobile/Containers/Shared/AppGroup/5F1E")
        var asked: [String] = []
        let url = try Prefs.Storage.appGroupURL("group.com.example.app") { group in
            asked.append(group)
            return container
        }
        #expect(asked == ["group.com.example.app"])
        #expect(url.path == container.path + "/Library/Application Support/Prefs/group.com.example.app.sqlite")

        let missing = Result { () throws(PrefsError) in try Prefs.Storage.appGroupURL("group.com.example.app") { _ in nil } }
        guard case .failure(.appGroupUnavailable(let group, let reason)) = missing else {
            Issue.record("expected appGroupUnavailable, got \(missing)")
            return
        }
        #expect(group == "group.com.example.app")
        #expect(reason.contains("App Groups entitlement"), "\(reason)")
        let message = PrefsError.appGroupUnavailable(group: group, reason: reason).description
        #expect(message.hasPrefix("App Group \"group.com.example.app\": the system gives no shared container for it"), "\(message)")

        let invalid = Result { () throws(PrefsError) in try Prefs.Storage.appGroupURL("group/../escape") { _ in container } }
        guard case .failure(.invalidIdentifier) = invalid else {
            Issue.record("a group name that could leave the container is refused: \(invalid)")
            return
        }
    }

    @Test("on Linux a group's store is the one every program of the user shares, at the default location")
    func linuxLocation() throws {
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.url.path]
        let url = try Prefs.Storage.appGroupURL("group.com.example.app", container: nil, environment: environment)
        #expect(url.path == directory.url.path + "/prefs/group.com.example.app.sqlite")
        #if os(Linux)
        #expect(try Prefs.Storage.appGroup("group.com.example.app").path == Prefs.Storage.default(identifier: "group.com.example.app").path)
        #endif
    }

    /// The app and its widget are two programs: `prefs-test-child` and a copy of it under another name (another process
    /// name, hence another default store of its own), which both open the `group.` suite.
    @Test("an app and its extension, two executables, share a group suite's values and see each other's writes")
    func twoExecutablesShare() async throws {
        let directory = try TemporaryDirectory()
        let widget = directory.file("example-widget")
        try FileManager.default.copyItem(at: ChildProcess.executable("prefs-test-child"), to: widget)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.file("config").path
        let store = directory.file("config/prefs/group.com.example.app.sqlite").path
        let app = "prefs-test-child"

        let first = try await ChildProcess.run(app, ["suite", "group.com.example.app", "launchCount", "5"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == store + "\n")

        let watcher = try ChildSession.start(widget.path, ["suite-watch", "group.com.example.app", "launchCount"], environment: environment)
        #expect(await watcher.nextLine() == "path \(store)")
        #expect(await watcher.nextLine() == "value 5", "the widget reads what the app wrote")
        let second = try await ChildProcess.run(app, ["suite", "group.com.example.app", "launchCount", "6"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(await watcher.nextLine() == "value 6", "the widget's observer sees the app's write")
        let watched = try await watcher.finish()
        #expect(watched.status == 0, "\(watched.stderr)")

        let back = try await ChildSession.start(widget.path, ["suite", "group.com.example.app", "fromWidget", "9"], environment: environment).finish()
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout == store + "\n")
        let read = try await ChildProcess.run(app, ["domain", "com.example.app", "group.com.example.app"], environment: environment)
        #expect(read.stdout == "fromWidget=9\nlaunchCount=6\n", "the app reads what the widget wrote")
    }
}
